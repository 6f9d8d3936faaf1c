"""SNEAK evaluator development on the calibration cards: the validity checks where tuning is allowed.

``hushtable sneak validate`` never runs on the calibration cards (every other
bundled card: the embedding temperatures were fitted on them), so that a verdict
is always about cards nothing was tuned on. Developing an evaluator or a
baseline needs the same checks somewhere it may look as often as it likes: this
script runs them on exactly the calibration cards, with the same baselines,
decoys, bootstrap and orderings (``models.eval.validate.score_cards``), and
prints each evaluator's means and checks. Nothing is recorded; a result here is
a development number, never a verdict.

Usage: ``python bench/sneak_calibration.py [-e embed:minilm] [-e embed:assoc] [--cards N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.client import ClientPool  # noqa: E402
from models.eval.baselines import Baseline  # noqa: E402
from models.eval.validate import calibration_cards, score_cards  # noqa: E402
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


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-e", "--evaluator", action="append", help="evaluator spec (repeatable; default embed:minilm)")
    ap.add_argument("--cards", type=int, default=None, help="only the first N calibration cards")
    args = ap.parse_args()
    asyncio.run(main(args.evaluator or ["embed:minilm"], args.cards))
