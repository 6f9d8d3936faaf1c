"""SNEAK evaluator development on the calibration cards: the validity checks where tuning is allowed.

``hushtable sneak validate`` never runs on the calibration cards (every other
bundled card: the embedding temperatures were fitted on them), so that a verdict
is always about cards nothing was tuned on. Developing an evaluator or a
baseline needs the same checks somewhere it may look as often as it likes: this
script runs them on exactly the calibration cards, with the same baselines,
decoys, bootstrap and orderings (``models.eval.validate.score_cards``), and
prints each evaluator's means and checks. Nothing is recorded; a result here is
a development number, never a verdict.

With ``--sources`` it scores only the secret-synonym messages, grouped by where
they come from (a WordNet synonym, or a thesaurus word that many steps under
the secret's sense, up to ``--steps``): how the thesaurus's depth was chosen.

Usage: ``python bench/sneak_calibration.py [-e embed:minilm] [-e embed:assoc] [--cards N] [--sources [--steps K]]``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.client import ClientPool  # noqa: E402
from models.eval.baselines import Baseline, NoMessage, Source, WordNetBaselines  # noqa: E402
from models.eval.decoys import WordNetDecoys  # noqa: E402
from models.eval.evaluators import resolve, warm_up  # noqa: E402
from models.eval.instances import Instance, bench_instances  # noqa: E402
from models.eval.score import evaluate  # noqa: E402
from models.eval.validate import CARD_SIZE, calibration_cards, score_cards  # noqa: E402
from models.eval.wordnet import wordnet  # noqa: E402
from models.worker.embedding_backend import embedder_for  # noqa: E402


async def main(specs: list[str], cards: int | None) -> None:
    chosen = calibration_cards()[:cards] if cards else calibration_cards()
    pool = ClientPool()
    start = time.perf_counter()
    try:
        res = await score_cards(specs, chosen, client_for=pool.get, embedder_for=embedder_for,
                                deck_name="calibration cards (development only, never recorded)")
    finally:
        await pool.aclose()
    print(f"{res.cards} calibration cards, {res.instances} secrets, decoys {res.decoys}; "
          f"{time.perf_counter() - start:.0f} s")
    print("Baseline messages: " + "; ".join(
        f"{b}: " + ", ".join(f"{n} {src}" for src, n in sorted(res.sources.get(b, {}).items()))
        + (f", {res.missing[b]} none" if res.missing.get(b) else "") for b in (x.value for x in Baseline)))
    for v in res.verdicts:
        print(f"\n{v.spec}: {'passes' if v.valid else 'fails'} on the calibration cards — {v.reason()}")
        if v.error:
            continue
        for b in Baseline:
            m = v.means[b.value]
            print(f"  {b.value:<16}U {m['utility']:5.1f}  L {m['leakage']:5.1f}  SS {m['soft']:5.1f}  n {v.n.get(b.value, 0)}")
        for c in v.checks:
            print(f"  {c.text()}")


async def by_source(specs: list[str], cards: int | None, steps: int) -> None:
    """The secret-synonym messages of the calibration cards, scored apart by source and depth under the sense."""
    chosen = calibration_cards()[:cards] if cards else calibration_cards()
    wn = wordnet()
    refs = WordNetBaselines(wn, thesaurus_steps=steps)
    tagged: list[Instance] = []
    for inst in bench_instances(chosen, CARD_SIZE):
        try:
            m = refs.secret_synonym(inst)
        except NoMessage:
            continue
        sense = refs.sense(inst)
        tag = "wordnet synonym" if m.source is Source.WORDNET_SYNONYM or sense is None else \
            f"thesaurus, {refs.steps_under(sense, m.text)} step(s) under"
        tagged.append(dataclasses.replace(inst, message=m.text, role=tag))
    pool = ClientPool()
    try:
        for spec in specs:
            ev = await resolve(spec, client_for=pool.get, embedder_for=embedder_for)
            error = await warm_up(ev)
            if error:
                print(f"{spec}: could not run ({error})")
                continue
            sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
            for res in await evaluate(tagged, [ev], WordNetDecoys(wn)):
                if res.scores is not None:
                    row = sums[res.instance.role]
                    for i, x in enumerate((res.scores.utility, res.scores.leakage, res.scores.soft, 1.0)):
                        row[i] += x
            print(f"{spec}: secret-synonym messages of {len(chosen)} calibration cards by source")
            for tag, (u, lk, ss, n) in sorted(sums.items()):
                print(f"  {tag:<32}U {100 * u / n:5.1f}  L {100 * lk / n:5.1f}  SS {100 * ss / n:5.1f}  n {n:.0f}")
    finally:
        await pool.aclose()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-e", "--evaluator", action="append", help="evaluator spec (repeatable; default embed:minilm)")
    ap.add_argument("--cards", type=int, default=None, help="only the first N calibration cards")
    ap.add_argument("--sources", action="store_true", help="score the secret-synonym messages by source instead")
    ap.add_argument("--steps", type=int, default=1, help="with --sources: thesaurus words this far under the sense")
    args = ap.parse_args()
    if args.sources:
        asyncio.run(by_source(args.evaluator or ["embed:minilm"], args.cards, args.steps))
    else:
        asyncio.run(main(args.evaluator or ["embed:minilm"], args.cards))
