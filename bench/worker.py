"""Benchmark of the inference worker on the bundled default model (SmolLM2-135M-Instruct).

Runs the same prompts, in one process, through:

1. the naive loop a user would write (one request at a time, plain transformers
   forward / ``generate``, no cache) and the Batcher under 1, 8 and 32
   concurrent games (asyncio tasks; capped by the requests in a round), for
   label scoring and for generation;
2. prompt throughput as a fraction of the machine's matrix-multiply rate,
   measured here with torch (a prompt token costs ~2 x non-embedding params FLOPs);
3. Decrypto-like turns (a ~1000-token rules prompt, a short per-turn suffix)
   with prefix KV reuse on vs off;
4. p50 latency of an AI choice (label scoring) and an AI clue (~8 generated
   tokens) with a warm prefix.

Prints a table and the ratios. ``--quick`` runs a ~1-minute version, ``--smallest`` the
fewest requests that still run every path (what ``bench/gpu.sh --dry-run`` uses); ``--device
cuda`` runs the model on a GPU; ``--json PATH`` also writes the rows and ratios.
``--cpu-options`` instead compares, on the same scoring prompts, float32 against dynamic
int8 quantization of the linear layers and 1 against 2 torch threads: time per forward
and how often the label choice changes (adopt a speed-up only if choices do not move).
Usage: ``python bench/worker.py [--quick | --smallest | --cpu-options] [--model default|/path] [--threads N]
[--device cpu|cuda] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from models.types import GenerateRequest, Message, ScoreRequest  # noqa: E402
from models.worker.batcher import Batcher  # noqa: E402
from models.worker.transformers_backend import TransformersBackend  # noqa: E402

LABELS = ("A", "B", "C", "D")
WORDS = [
    "harbor", "lantern", "meadow", "violin", "glacier", "orchard", "compass", "thunder", "velvet", "canyon",
    "falcon", "pepper", "marble", "ember", "willow", "tide", "quartz", "saddle", "comet", "lagoon",
    "anchor", "biscuit", "cactus", "dynamo", "easel", "feather", "gondola", "hammock", "igloo", "jigsaw",
]


@dataclass(frozen=True, slots=True)
class Row:
    section: str
    name: str
    requests: int
    seconds: float
    tokens: int  # prompt tokens processed (scoring) or completion tokens (generation)

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else float("nan")


# ------------------------------------------------------------------- prompts


def chameleon_prompt(i: int) -> tuple[Message, ...]:
    """A short, distinct scoring prompt (~120 tokens): no two share more than the template."""
    w = [WORDS[(i * 7 + k) % len(WORDS)] for k in range(4)]
    return (
        Message("user", (
            f"Game {i}. You are player {i % 5 + 1} in a round of Chameleon. The category card lists {', '.join(WORDS[i % 9: i % 9 + 12])}. "
            f"The clues given so far were '{w[0]}', '{w[1]}' and '{w[2]}'. Which player is most likely the chameleon? "
            f"A) player one, who said {w[0]} B) player two, who said {w[1]} C) player three, who said {w[2]} D) nobody yet. "
            "Reply with one letter."
        )),
    )


def decrypto_rules(tokenizer_count: Callable[[Sequence[Message]], int], target: int = 1000) -> str:
    rules = (
        "You are the interceptor in a game of Decrypto. The opposing team has four secret keywords, numbered 1 to 4, "
        "fixed for the whole game. Each turn their encoder draws a code of three distinct digits from 1 to 4 and gives "
        "three hints, one for each digit in code order; each hint is one or two words about the meaning of the keyword "
        "with that number. Their decoder, who knows the keywords, guesses the code; you do not know the keywords and "
        "must infer them from the history of hints. You win with two interceptions, or when they make two "
        "miscommunications; they win after eight turns otherwise. After each turn the code, both guesses and the hints "
        "become public. Think about which hints have gone together under the same number in past turns. "
        "Answer every question with the single letter of your choice and nothing else.\n\nHint history so far:\n"
    )
    turn = 0
    while tokenizer_count((Message("system", rules),)) < target:
        code = [(turn + k) % 4 + 1 for k in range(3)]
        hints = ", ".join(f"{d}: {WORDS[(turn * 3 + j * 5) % len(WORDS)]} {WORDS[(turn + j * 11) % len(WORDS)]}" for j, d in enumerate(code))
        rules += f"Turn {turn + 1}: code {'-'.join(map(str, code))}; hints {hints}; decoder right, interceptor wrong.\n"
        turn += 1
    return rules


DIGITS = ("1", "2", "3", "4")


def decrypto_hint(rules: str, i: int) -> tuple[Message, ...]:
    return (Message("system", rules), Message("user", f"Hint '{WORDS[(i * 7) % len(WORDS)]}': which keyword number?"))


def decrypto_turn(rules: str, i: int) -> tuple[Message, ...]:
    h = [WORDS[(i * 5 + k * 3) % len(WORDS)] for k in range(3)]
    return (
        Message("system", rules),
        Message("user", f"New turn {i}: hints {h[0]}, {h[1]}, {h[2]}. A) 1-2-3 B) 2-4-1 C) 3-1-4 D) 4-3-2. Which code?"),
    )


# --------------------------------------------------------------- naive loops


class Naive:
    """What a user would write: one request at a time, plain forward / generate, no cache."""

    def __init__(self, be: TransformersBackend) -> None:
        self.model, self.tok = be.model, be.tokenizer
        self.label_ids = list(be.label_token_ids(LABELS))

    def ids(self, messages: Sequence[Message]) -> torch.Tensor:
        text = self.tok.apply_chat_template([m.to_json() for m in messages], add_generation_prompt=True, tokenize=False)
        return torch.tensor([self.tok(text, add_special_tokens=False)["input_ids"]], device=self.model.device)

    @torch.inference_mode()
    def score(self, messages: Sequence[Message]) -> tuple[list[float], int]:
        ids = self.ids(messages)
        logits = self.model(input_ids=ids).logits[0, -1].float()
        return torch.softmax(logits[self.label_ids], dim=-1).tolist(), ids.shape[1]

    @torch.inference_mode()
    def generate(self, messages: Sequence[Message], n: int) -> tuple[str, int]:
        ids = self.ids(messages)
        # transformers types generate() loosely on the model class; it is GenerationMixin.generate.
        out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False)  # type: ignore[operator]
        new = out[0, ids.shape[1]:]
        return self.tok.decode(new, skip_special_tokens=True), int(new.shape[0])


# ------------------------------------------------------------------- helpers


def naive_scores(naive: Any, reqs: Sequence[Any]) -> int:
    return sum(naive.score(r.messages)[1] for r in reqs)


def naive_generations(naive: Any, reqs: Sequence[Any]) -> int:
    return sum(naive.generate(r.messages, r.max_tokens)[1] for r in reqs)


def timed(fn: Callable[[], int]) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = fn()
    return time.perf_counter() - t0, n


async def run_games(
    batcher: Batcher, reqs: Sequence[ScoreRequest | GenerateRequest], games: int
) -> tuple[float, int, list[float]]:
    """Play ``reqs`` as ``games`` concurrent games, each sending its share one at a time."""
    shares = [list(reqs[g::games]) for g in range(games)]
    latencies: list[float] = []
    counted = 0

    async def game(share: list[ScoreRequest | GenerateRequest]) -> None:
        nonlocal counted
        for r in share:
            t = time.perf_counter()
            if isinstance(r, ScoreRequest):
                res = await batcher.score_labels(r)
                counted += res.prompt_tokens
            else:
                gres = await batcher.generate(r)
                counted += gres.completion_tokens
            latencies.append(time.perf_counter() - t)

    t0 = time.perf_counter()
    await asyncio.gather(*(game(s) for s in shares if s))
    return time.perf_counter() - t0, counted, latencies


def matmul_gflops(device: str = "cpu", seconds: float = 0.5, n: int | None = None, tries: int = 3) -> float:
    """Best of a few short runs on the model's device, in the model's float32: the machine's rate,
    not its rate during someone else's burst. On a GPU the kernels run asynchronously, so each run
    ends with a synchronize (a CPU reference would make the model look faster than the card)."""
    dev = torch.device(device)
    n = n or (4096 if dev.type == "cuda" else 1024)  # a GPU needs a large product to reach its rate
    a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    torch.matmul(a, b)
    sync()
    best = 0.0
    for _ in range(tries):
        reps, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            torch.matmul(a, b)
            reps += 1
            if reps % 64 == 0:
                sync()
        sync()
        best = max(best, 2 * n**3 * reps / (time.perf_counter() - t0) / 1e9)
    return best


def non_embedding_params(model: torch.nn.Module) -> int:
    emb = {id(p) for m in model.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()}
    return sum(p.numel() for p in model.parameters() if id(p) not in emb)


# ---------------------------------------------------------------------- main


async def main(args: argparse.Namespace) -> None:
    if args.threads:
        torch.set_num_threads(args.threads)
    quick = args.quick or args.smallest
    n_score = 4 if args.smallest else 16 if quick else 64  # two rounds: up to 32 requests in flight at once
    n_gen = 2 if args.smallest else 4 if quick else 16
    gen_tokens = 2 if args.smallest else 8 if quick else 12
    n_turns_off = 2 if args.smallest else 3 if quick else 6
    n_turns_on = 2 if args.smallest else 6 if quick else 16  # the first turn stores the prefix, the rest reuse it
    n_lat = 1 if args.smallest else 5 if quick else 9

    t_load = time.perf_counter()
    be = TransformersBackend.load(args.model, device=args.device)
    be_nc = TransformersBackend(be.model, be.tokenizer, model_id=be.model_id, device=args.device, prefix_cache=False)
    print(f"model {be.model_id}: loaded in {time.perf_counter() - t_load:.1f}s; torch threads {torch.get_num_threads()}")
    # Other work on a shared machine lowers any one probe of the matmul rate;
    # probe between sections and keep the best as the machine's rate.
    probes = [matmul_gflops(args.device)]
    gflops = probes[0]
    nonemb = non_embedding_params(be.model)
    print(f"matmul rate {gflops:.0f} GFLOP/s; non-embedding params {nonemb / 1e6:.1f}M; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus (other work on the machine skews every number)\n")

    naive = Naive(be)
    # Warm-up: the first forwards of a fresh process run markedly slower here
    # (weights paged in, allocator and thread pools growing); keep them out of the numbers.
    for i in range(0 if args.smallest else 2 if quick else 4):  # a dry run's timings mean nothing: no warm-up
        naive.score(chameleon_prompt(900 + i))
        be_nc.score_batch([ScoreRequest(chameleon_prompt(950 + i), LABELS)])
        naive.generate(chameleon_prompt(980 + i), 4)
    rows: list[Row] = []

    # 1. label scoring and generation: naive loop vs Batcher (prefix cache off, so this is batching alone).
    # The paths take turns over rounds of the same requests, so a burst of other
    # load on the machine hits all of them alike.
    async def compare(section: str, reqs: Sequence[ScoreRequest | GenerateRequest], rounds: int) -> None:
        acc: dict[str, list[float]] = {}
        for rnd in range(rounds):
            chunk = list(reqs[rnd::rounds])
            if section == "scoring":
                dt, toks = timed(partial(naive_scores, naive, chunk))
            else:
                dt, toks = timed(partial(naive_generations, naive, chunk))
            acc.setdefault("naive loop", [0.0, 0])
            acc["naive loop"][0] += dt
            acc["naive loop"][1] += toks
            for games in sorted({min(g, len(chunk)) for g in (1, 8, 32)}):
                b = Batcher(be_nc, max_batch=8)
                dt, toks, _ = await run_games(b, chunk, games)
                await b.aclose()
                name = f"batcher, {games} games"
                acc.setdefault(name, [0.0, 0])
                acc[name][0] += dt
                acc[name][1] += toks
        rows.extend(Row(section, name, len(reqs), dt, int(toks)) for name, (dt, toks) in acc.items())

    await compare("scoring", [ScoreRequest(chameleon_prompt(i), LABELS) for i in range(n_score)], 2)
    probes.append(matmul_gflops(args.device))
    await compare("generate", [GenerateRequest(chameleon_prompt(100 + i), max_tokens=gen_tokens) for i in range(n_gen)], 2)
    probes.append(matmul_gflops(args.device))

    # 3. Decrypto turns: ~1000-token rules, short suffix; prefix reuse off vs on
    rules = decrypto_rules(be.count_tokens, target=150 if args.smallest else 1000)
    turns = [ScoreRequest(decrypto_turn(rules, i), LABELS) for i in range(max(n_turns_on, n_turns_off))]
    turn_tokens = be.count_tokens(turns[0].messages)
    turn_suffix = turn_tokens - be._prompt(turns[0].messages).boundary
    dt_naive_d = dt_off = 0.0
    toks_naive_d = toks_off = 0
    b = Batcher(be_nc, max_batch=8)
    for turn in turns[:n_turns_off]:  # alternate, so both paths see the same machine load
        dt, toks = timed(partial(naive_scores, naive, [turn]))
        dt_naive_d, toks_naive_d = dt_naive_d + dt, toks_naive_d + toks
        dt, toks, _ = await run_games(b, [turn], 1)
        dt_off, toks_off = dt_off + dt, toks_off + toks
    await b.aclose()
    rows.append(Row("decrypto", "naive loop (no reuse)", n_turns_off, dt_naive_d, toks_naive_d))
    rows.append(Row("decrypto", "batcher, reuse off", n_turns_off, dt_off, toks_off))
    be.prefix_cache.clear()
    b = Batcher(be, max_batch=8)
    dt_first, toks_first, _ = await run_games(b, turns[:1], 1)  # the first turn stores the rules prefix
    dt_warm, toks_warm, _ = await run_games(b, turns[1:n_turns_on], 1)
    dt_on = dt_first + dt_warm
    rows.append(Row("decrypto", "batcher, reuse on", n_turns_on, dt_on, toks_first + toks_warm))
    cached = b.stats.cached_tokens
    # The gain is bounded by prompt length / new tokens per call: also time a
    # short per-hint question (the decoder's "which keyword is this hint?").
    hint_reqs = [ScoreRequest(decrypto_hint(rules, i), DIGITS) for i in range(n_turns_off)]
    hint_tokens = be.count_tokens(hint_reqs[0].messages)
    b_off = Batcher(be_nc, max_batch=8)
    dt_hint_off = dt_hint_on = 0.0
    for r in hint_reqs:  # alternate off and on (warm), as above
        dt_hint_off += (await run_games(b_off, [r], 1))[0]
        dt_hint_on += (await run_games(b, [r], 1))[0]
    await b_off.aclose()

    # 4. p50 latency with a warm prefix: a choice (scoring) and a clue (~8 tokens)
    choice_lat, clue_lat = [], []
    for i in range(n_lat):
        t = time.perf_counter()
        await b.score_labels(ScoreRequest(decrypto_turn(rules, 500 + i), LABELS))
        choice_lat.append(time.perf_counter() - t)
        clue = (Message("system", rules), Message("user", f"You are now the encoder. Give one hint for keyword {i % 4 + 1}, 'harbor'. One word."))
        t = time.perf_counter()
        await b.generate(GenerateRequest(clue, max_tokens=gen_tokens if args.smallest else 8))
        clue_lat.append(time.perf_counter() - t)
    await b.aclose()

    # ----------------------------------------------------------------- report
    print(f"{'section':<10} {'path':<24} {'reqs':>5} {'seconds':>8} {'req/s':>7} {'tokens':>7}")
    for row in rows:
        print(f"{row.section:<10} {row.name:<24} {row.requests:>5} {row.seconds:>8.2f} {row.rate:>7.2f} {row.tokens:>7}")
    print()

    def ratio(section: str, name: str) -> float:
        base = next(r for r in rows if r.section == section and r.name == "naive loop")
        other = next(r for r in rows if r.section == section and r.name == name)
        return other.rate / base.rate

    batching: dict[str, dict[str, float]] = {}
    for section in ("scoring", "generate"):
        names = [r.name for r in rows if r.section == section and r.name.startswith("batcher")]
        batching[section] = {n.removeprefix("batcher, "): ratio(section, n) for n in names}
        parts = ", ".join(f"{n} {x:.2f}x" for n, x in batching[section].items())
        print(f"batching vs naive ({section}, throughput): {parts}   [target: no slowdown]")
    probes.append(matmul_gflops(args.device))
    gflops = max(probes)
    print(f"matmul rate probes {', '.join(f'{g:.0f}' for g in probes)} GFLOP/s (the best, {gflops:.0f}, is the reference); "
          f"load average now {os.getloadavg()[0]:.1f}")
    naive_row = rows[0]
    tps_short = naive_row.tokens / naive_row.seconds
    tps_long = toks_off / dt_off
    def frac(tps: float) -> float:
        return tps * 2 * nonemb / (gflops * 1e9)

    print(f"prompt tokens/s: short prompts (naive) {tps_short:.0f} = {frac(tps_short):.0%} of matmul rate; "
          f"~{turn_tokens}-token prompts (batcher) {tps_long:.0f} = {frac(tps_long):.0%}   [target: >= 70%]")
    per_off, per_on = dt_off / n_turns_off, dt_on / n_turns_on
    per_warm = dt_warm / (n_turns_on - 1)
    print(f"decrypto turn ({turn_tokens} tokens, {turn_suffix} new per turn): reuse off {per_off:.2f}s; on {per_on:.3f}s per turn over {n_turns_on} turns "
          f"(cold first turn included) -> {per_off / per_on:.1f}x; warm turns {per_warm:.3f}s -> {per_off / per_warm:.1f}x "
          f"({cached} prompt tokens served from cache)   [target: >= 10x]")
    print(f"decrypto hint question ({hint_tokens} tokens, {hint_tokens - turn_tokens + turn_suffix} new per call): reuse off "
          f"{dt_hint_off / len(hint_reqs):.2f}s, on (warm) {dt_hint_on / len(hint_reqs):.3f}s -> {dt_hint_off / dt_hint_on:.1f}x")
    print(f"naive loop on the same turns: {dt_naive_d / n_turns_off:.2f}s per turn -> reuse on is {dt_naive_d / n_turns_off / per_on:.1f}x faster")
    print(f"p50 latency, warm prefix: choice {statistics.median(choice_lat):.3f}s [target < 0.5s], "
          f"clue (8 tokens) {statistics.median(clue_lat):.3f}s [target < 3s]")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "model": be.model_id, "device": args.device, "size": "smallest" if args.smallest else "quick" if quick else "full",
            "rows": [{"section": r.section, "path": r.name, "requests": r.requests, "seconds": r.seconds,
                      "requests_per_s": r.rate, "tokens": r.tokens} for r in rows],
            "batching_vs_one_at_a_time": batching,
            "prefix_reuse_speedup": per_off / per_on,
            "p50_choice_s": statistics.median(choice_lat), "p50_clue_s": statistics.median(clue_lat),
        }, indent=2), encoding="utf-8")


def cpu_options(n_prompts: int = 6) -> None:
    """float32 vs dynamic int8 (linear layers), 1 vs 2 threads: seconds per scoring forward and choice agreement."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from models.worker.default_model import ensure_converted

    folder = ensure_converted()
    tok = AutoTokenizer.from_pretrained(str(folder))
    fp32 = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()  # type: ignore[no-untyped-call]  # transformers is untyped
    int8 = torch.ao.quantization.quantize_dynamic(fp32, {torch.nn.Linear}, dtype=torch.qint8)  # type: ignore[no-untyped-call]  # torch.ao is untyped
    prompts = [chameleon_prompt(i) for i in range(n_prompts)]
    ids = [torch.tensor([tok(tok.apply_chat_template([m.to_json() for m in p], add_generation_prompt=True, tokenize=False),
                             add_special_tokens=False)["input_ids"]]) for p in prompts]
    labels = [tok(lab, add_special_tokens=False)["input_ids"][0] for lab in "ABCD"]

    def run(model: torch.nn.Module) -> tuple[list[torch.Tensor], float]:
        probs, times = [], []
        with torch.inference_mode():
            for x in ids:
                t = time.perf_counter()
                logits = model(input_ids=x).logits[0, -1]
                times.append(time.perf_counter() - t)
                probs.append(torch.softmax(logits[labels].float(), -1))
        return probs, statistics.median(times)

    print(f"{'threads':>7} {'fp32 s':>8} {'int8 s':>8} {'speed-up':>8} {'same choice':>11} {'max |dp|':>8}  (load avg {os.getloadavg()[0]:.1f})")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        a, ta = run(fp32)
        b, tb = run(int8)
        agree = sum(int(x.argmax() == y.argmax()) for x, y in zip(a, b, strict=True))
        dp = max(float((x - y).abs().max()) for x, y in zip(a, b, strict=True))
        print(f"{threads:>7} {ta:8.3f} {tb:8.3f} {ta / tb:7.2f}x {agree:>6}/{len(ids)} {dp:8.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a ~1-minute version")
    parser.add_argument("--smallest", action="store_true", help="the fewest requests that run every path (a dry run)")
    parser.add_argument("--device", default="cpu", help="where the model runs: cpu, cuda, cuda:1 ...")
    parser.add_argument("--json", default=None, help="also write the rows and ratios to this file")
    parser.add_argument("--model", default="default", help="'default', a HF model folder or a .gguf file")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    parser.add_argument("--cpu-options", action="store_true", help="int8 quantization and thread counts vs float32")
    cli = parser.parse_args()
    if cli.cpu_options:
        cpu_options()
    else:
        asyncio.run(main(cli))
