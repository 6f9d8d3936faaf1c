"""Team games with people's words: Just One, Decrypto and Spymasters on the writers' material.

The human material is ``bench/data/people/w*.json`` (six writers, split by writer in
``SPLIT.json`` into a development half and a test half, each file fixed by its sha256 digest).
Every number is printed per half, test beside development, with a 95% interval (Wilson for
shares, a bootstrap over games or items for means), for each agent beside ``embed:minilm``,
``random`` and the previous default as recorded before the team-play changes
(``bench/data/people_before_teams.json``, with the commit it ran on). Where each AI move came
from (its decision row's source) is printed per agent.

- Just One: the half's words in rounds of 13 cards, 5 seats. ``AI-only``: every seat is the
  agent. ``one person``: seat 0's clues are a writer's own clue for the word (the writer's
  three clues taken in turn), its guesses the agent's. Printed: the share of AI clues kept
  (not removed as the same as another's or as naming the word) and cards found per round.
- Decrypto: the half's writers' games as records (each keyword's eight hints in order, a
  partner who always decodes, an interceptor who never intercepts), replayed with the agent in
  the decoder's seat (miscommunications) and in the interceptor's (interceptions): the Decrypto
  paper's Table 1 protocol (``bot/research/human_replay.py``), 8 turns a game.
- Spymasters: each writer's clue with its targets placed among the starting team's words of a
  board drawn from the bank's other words; the writer's clue and number are given, the agent
  guesses. Printed: targets found per clue (guessing stops at the first wrong card, as the rules
  do), assassin hits. And the agent as spymaster on seeded bundled boards (the single-team
  measure of ``bench/spymasters.py``): the mean clue number and assassin hits.

A power analysis per game says how many items the test half gives and the smallest
difference it can detect (alpha 0.05, power 0.8).

    PYTHONPATH=$PWD .venv/bin/python bench/people_teams.py --half both
    PYTHONPATH=$PWD .venv/bin/python bench/people_teams.py --half dev --agents strategist --games justone
    PYTHONPATH=$PWD .venv/bin/python bench/people_teams.py --record-before   # on unchanged code: the 'before' file
    PYTHONPATH=$PWD .venv/bin/python bench/people_teams.py --agents strategist --games decrypto,spymasters --record-before reading
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import games  # noqa: E402
from bench.stats import Z80 as Z_POWER  # noqa: E402
from bench.stats import Z95 as Z  # noqa: E402
from bench.stats import detectable, wilson  # noqa: E402
from bot.core.agents import AgentRunner  # noqa: E402
from games.base import Action  # noqa: E402
from models.agents.provenance import decision_of  # noqa: E402

PEOPLE = ROOT / "bench" / "data" / "people"
BEFORE = ROOT / "bench" / "data" / "people_before_teams.json"
BEFORE_READING = ROOT / "bench" / "data" / "people_before_reading.json"
"""The default before the reading of people's hints (Decrypto, Spymasters): read after BEFORE, so it names the newer 'previous default'."""
GAMES = ("justone", "decrypto", "spymasters")
HALVES = {"dev": "development", "test": "test"}
JUSTONE_SEATS = 5
SPY_SEATS = 4
SPYMASTER_BOARDS = 8


# --------------------------------------------------------------------------- data and statistics


def writers(half: str) -> list[tuple[str, dict[str, Any]]]:
    """The half's writers' files, each checked against its digest in SPLIT.json."""
    split = json.loads((PEOPLE / "SPLIT.json").read_text(encoding="utf-8"))
    out = []
    for w in split[HALVES[half]]:
        raw = (PEOPLE / f"{w}.json").read_bytes()
        if hashlib.sha256(raw).hexdigest() != split["sha256"][w]:
            raise SystemExit(f"{w}.json differs from the digest in SPLIT.json: refusing to run on it")
        out.append((w, json.loads(raw)))
    return out


def boot(xs: Sequence[float], reps: int = 2000, seed: int = 7) -> tuple[float, float]:
    """95% bootstrap interval of the mean (percentile)."""
    if not xs:
        return float("nan"), float("nan")
    r = random.Random(seed)
    means = sorted(statistics.mean(r.choices(xs, k=len(xs))) for _ in range(reps))
    return means[int(0.025 * reps)], means[int(0.975 * reps) - 1]


def share(k: float, n: int) -> str:
    if n == 0:
        return "n/a"
    lo, hi = wilson(k, n)
    return f"{k / n:.0%} [{lo:.0%}, {hi:.0%}] ({k:g}/{n})"


def mean_ci(xs: Sequence[float]) -> str:
    if not xs:
        return "n/a"
    lo, hi = boot(xs)
    return f"{statistics.mean(xs):.2f} [{lo:.2f}, {hi:.2f}] (n={len(xs)})"


def mde_mean(sd: float, n: int) -> float:
    return (Z + Z_POWER) * sd * math.sqrt(2 / n) if n else float("nan")


def decisions(out: Any) -> list[dict[str, Any]]:
    return [dict(d) for c in out.calls if (d := decision_of(c.prompt)) is not None]


def sources(ds: Sequence[dict[str, Any]]) -> str:
    c = Counter(str(d.get("source", "?")) for d in ds)
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"


def build_factory() -> tuple[Any, Any]:
    from bench.spymasters import build_factory as cached_factory  # the app's vocabulary cache: a later run starts in seconds

    return cached_factory()


# --------------------------------------------------------------------------- Just One


def justone_rounds(half: str) -> list[tuple[list[str], dict[str, list[str]]]]:
    """The half's words in rounds of 13 (a seeded order), with each word's writer clues."""
    from games.justone.config import CARDS

    clues: dict[str, list[str]] = {}
    for _, d in writers(half):
        for word, cs in d["justone"].items():
            clues.setdefault(word.lower(), list(cs))
    words = sorted(clues)
    random.Random(13).shuffle(words)
    return [(words[i:i + CARDS], clues) for i in range(0, len(words) - CARDS + 1, CARDS)]


async def justone_round(agent: str, words: list[str], clues: dict[str, list[str]], person: bool, registry: Any,
                        game_no: int, seed: int) -> dict[str, Any]:
    g = games.get("justone")
    cfg = g.make_config(deal={"words": words, "first": 0})
    s, _ = g.new(cfg, JUSTONE_SEATS, seed)
    runner = AgentRunner(registry, timeout_s=180.0, retries=3, fallback_spec="random")
    ds: list[dict[str, Any]] = []
    for _ in range(2000):
        if g.result(s) is not None:
            break
        for seat in sorted(g.to_act(s)):
            spec = g.legal(s, seat)
            if spec is None:
                continue
            if person and seat == 0 and spec.kind == "clue":
                word = words[len(s.history)]
                action = Action.say("clue", clues[word][len(s.history) % len(clues[word])])
            else:
                out = await runner.decide(g, s, seat, game_id=game_no, spec=agent, seed=seed * 100 + seat)
                ds += decisions(out)
                action = out.action
            s, _ = g.apply(s, seat, action)
            break
    ai = [c for rec in s.history for c in rec.clues if not (person and c.seat == 0)]
    found = sum(1 for rec in s.history if rec.outcome.value == "found")
    return {"ai_clues": len(ai), "ai_kept": sum(1 for c in ai if c.removed is None), "found": found,
            "decisions": ds, "cards": [(rec.word, [(c.text, c.removed.value if c.removed else None) for c in rec.clues],
                                        rec.guess, rec.outcome.value) for rec in s.history]}


async def justone(agent: str, half: str, registry: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for person in (False, True):
        runs = [await justone_round(agent, w, c, person, registry, 100 + i, 1000 + i)
                for i, (w, c) in enumerate(justone_rounds(half))]
        out["one person" if person else "AI-only"] = {
            "ai_clues": sum(r["ai_clues"] for r in runs), "ai_kept": sum(r["ai_kept"] for r in runs),
            "found": [r["found"] for r in runs], "sources": sources([d for r in runs for d in r["decisions"]]),
            "cards": [r["cards"] for r in runs]}
    return out


def show_justone(res: dict[str, dict[str, Any]], half: str) -> None:
    for setting in ("AI-only", "one person"):
        print(f"  Just One, {setting}, {half} half (targets: >= 80% of AI clues kept, >= 7 of 13 cards found):")
        for agent, r in res.items():
            x = r[setting]
            print(f"    {agent:<28} clues kept {share(x['ai_kept'], x['ai_clues']):<28} "
                  f"cards found {mean_ci(x['found']):<28} sources: {x.get('sources', '-')}")


# --------------------------------------------------------------------------- Decrypto


_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def spelled(n: int) -> str:
    """A whole number in words (below a million), the way a person says it at the table."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return _ONES[n // 100] + " hundred" + (" " + spelled(n % 100) if n % 100 else "")
    return spelled(n // 1000) + " thousand" + (" " + spelled(n % 1000) if n % 1000 else "")


def speakable(hint: str) -> str:
    """The rules refuse digits in a hint (they could carry the code): a person says the number in words instead."""
    return re.sub(r"\d+", lambda m: spelled(int(m.group())) if len(m.group()) < 7 else m.group(), hint)


def decrypto_records(half: str) -> list[Any]:
    """The half's writers' Decrypto games as benchmark records (bench/association.py's recipe, numbers spoken)."""
    from bench.association import hinted_record

    out: list[Any] = []
    for _, d in writers(half):
        for spec in d["decrypto"]:
            hints = {k: [speakable(h) for h in spec["hints"][k]] for k in spec["keywords"]}
            out.append(hinted_record(spec["keywords"], hints, 500 + len(out), hint_max_words=12, hint_max_chars=80))
    return out


async def decrypto(agent: str, half: str, registry: Any) -> dict[str, Any]:
    from bot.research.human_replay import ReplaySeat, evaluate

    records = decrypto_records(half)
    out: dict[str, Any] = {}
    for role in (ReplaySeat.DECODER, ReplaySeat.INTERCEPTOR):
        _, _, per_seed = await evaluate(records, role, agent, registry, seeds=1)
        gs = per_seed[0]
        out[role.value] = {"miscommunications": [g.miscommunications for g in gs],
                           "interceptions": [g.interceptions for g in gs], "turns": [g.turns for g in gs],
                           "sources": sources([dict(d) for g in gs for d in g.decisions])}
    return out


def show_decrypto(res: dict[str, dict[str, Any]], half: str) -> None:
    print(f"  Decrypto, writers' hints, {half} half (8 turns a game; fewer miscommunications and more interceptions are better):")
    for agent, r in res.items():
        dec, itc = r["decoder"], r["interceptor"]
        print(f"    {agent:<28} as decoder: miscommunications {share(sum(dec['miscommunications']), sum(dec['turns'])):<26} "
              f"as interceptor: interceptions {share(sum(itc['interceptions']), sum(itc['turns'])):<26} "
              f"sources: decoder {dec.get('sources', '-')}; interceptor {itc.get('sources', '-')}")


# --------------------------------------------------------------------------- Spymasters


def spy_items(half: str) -> list[dict[str, Any]]:
    return [dict(c, writer=w) for w, d in writers(half) for c in d["spymasters"]]


def spy_board(item: dict[str, Any], n: int) -> dict[str, Any]:
    """The writer's targets among red's nine words (red starts), the rest of the board drawn from the bank."""
    from games.spymasters.config import BOARD_SIZE, Card, Team, bundled_words, key_counts
    from games.text import reveals_secret

    r = random.Random(7000 + n)
    targets = [t.lower() for t in item["targets"]]
    bank = [w for w in bundled_words() if w.lower() not in targets and not reveals_secret(item["clue"], w)
            and not reveals_secret(w, item["clue"])]
    others = r.sample(bank, BOARD_SIZE - len(targets))
    counts = key_counts(Team.RED)
    red_left = counts[Card.RED] - len(targets)
    pool = ([Card.RED.value] * red_left + [Card.BLUE.value] * counts[Card.BLUE] + [Card.BYSTANDER.value] * counts[Card.BYSTANDER]
            + [Card.ASSASSIN.value] * counts[Card.ASSASSIN])
    r.shuffle(pool)
    cells = [(t, Card.RED.value) for t in targets] + list(zip(others, pool, strict=True))
    r.shuffle(cells)
    return {"words": [w for w, _ in cells], "key": [k for _, k in cells], "starting": "red", "spymasters": [0, 1]}


async def spy_guess(agent: str, item: dict[str, Any], n: int, registry: Any) -> dict[str, Any]:
    from games.spymasters.config import Card
    from games.spymasters.state import PASS, STOP

    g = games.get("spymasters")
    cfg = g.make_config(deal=spy_board(item, n))
    s, _ = g.new(cfg, SPY_SEATS, 9000 + n)
    runner = AgentRunner(registry, timeout_s=180.0, retries=3, fallback_spec="random")
    s, _ = g.apply(s, 0, Action.say("clue", item["clue"]))
    s, _ = g.apply(s, 0, Action.choose("number", str(int(item["number"]))))
    ds: list[dict[str, Any]] = []
    picked: list[str] = []
    for _ in range(20):
        if g.result(s) is not None or s.phase.value != "guess" or s.turn.value != "red":
            break
        seat = min(g.to_act(s))
        out = await runner.decide(g, s, seat, game_id=20_000 + n, spec=agent, seed=n * 10 + seat)
        ds += decisions(out)
        if out.action.value[0] not in (STOP, PASS):
            picked.append(out.action.value[0])
        s, _ = g.apply(s, seat, out.action)
    targets = {t.lower() for t in item["targets"]}
    first = picked[: int(item["number"])]
    hits = 0
    for w in first:
        if w.lower() not in targets:
            break
        hits += 1
    key = dict(zip(s.words, s.key, strict=True))
    return {"targets": len(targets), "found": hits, "assassin": any(key.get(w) is Card.ASSASSIN for w in picked),
            "picked": picked, "decisions": ds}


async def spymasters(agent: str, half: str, registry: Any) -> dict[str, Any]:
    from bench.spymasters import play_board

    items = spy_items(half)
    guesses = [await spy_guess(agent, it, i, registry) for i, it in enumerate(items)]
    out: dict[str, Any] = {"found": [x["found"] for x in guesses], "targets": [x["targets"] for x in guesses],
                           "assassin": sum(x["assassin"] for x in guesses),
                           "sources": sources([d for x in guesses for d in x["decisions"]]),
                           "picked": [x["picked"] for x in guesses]}
    if half == "dev":  # the AI spymaster plays bundled boards: the same for both halves
        boards = [await play_board(agent, 300 + i, registry, 30_000 + i) for i in range(SPYMASTER_BOARDS)]
        numbers = [c["number"] for b in boards for c in b["clues"] if "number" in c]
        out["spymaster"] = {"numbers": numbers, "assassin": sum(b["assassin"] for b in boards), "boards": len(boards),
                            "sources": dict(Counter(m["source"] for b in boards for m in b["moves"]))}
    return out


def show_spymasters(res: dict[str, dict[str, Any]], half: str) -> None:
    print(f"  Spymasters, the writers' clues, {half} half (targets found before a wrong card, of those the clue names):")
    for agent, r in res.items():
        print(f"    {agent:<28} targets found {share(sum(r['found']), sum(r['targets'])):<26} "
              f"per clue {mean_ci([float(f) for f in r['found']]):<26} assassin {r['assassin']:<3} sources: {r.get('sources', '-')}")
    if half == "dev":
        print(f"  Spymasters, the agent as spymaster on {SPYMASTER_BOARDS} bundled boards (target: mean number >= 1.8; "
              "assassin hits no more than the baseline):")
        for agent, r in res.items():
            sm = r.get("spymaster")
            if sm:
                print(f"    {agent:<28} mean clue number {mean_ci([float(x) for x in sm['numbers']]):<28} "
                      f"assassin hits {sm['assassin']}/{sm['boards']}   sources: {sm['sources']}")


# --------------------------------------------------------------------------- the sections


RUN = {"justone": justone, "decrypto": decrypto, "spymasters": spymasters}
SHOW = {"justone": show_justone, "decrypto": show_decrypto, "spymasters": show_spymasters}


def power(half: str) -> None:
    j = justone_rounds(half)
    clue_n = len(j) * 13 * (JUSTONE_SEATS - 1)
    d = decrypto_records(half)
    sp = spy_items(half)
    print(f"  size ({half} half): Just One {len(j)} rounds, {clue_n} AI clues a setting (detectable difference in clues kept "
          f"near 50%: {detectable(clue_n, 0.5):.0%}; in cards found, sd 2: {mde_mean(2.0, len(j)):.1f} cards); Decrypto {len(d)} "
          f"games, {8 * len(d)} turns (near 30%: {detectable(8 * len(d), 0.3):.0%}); Spymasters {len(sp)} clues, "
          f"{sum(len(x['targets']) for x in sp)} targets (near 50%: {detectable(sum(len(x['targets']) for x in sp), 0.5):.0%})")


async def run_all(agents: Sequence[str], halves: Sequence[str], which: Sequence[str]) -> dict[str, Any]:
    registry, pool = build_factory()
    res: dict[str, Any] = {}
    try:
        for agent in agents:
            warm = getattr(registry(agent, 0), "warm", None)
            if callable(warm):
                warm()
            for half in halves:
                for game in which:
                    t0 = time.perf_counter()
                    res.setdefault(game, {}).setdefault(half, {})[agent] = await RUN[game](agent, half, registry)
                    print(f"  ({game} {half} {agent}: {time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    finally:
        await pool.aclose()
    return res


def before() -> dict[str, dict[str, tuple[str, dict[str, Any]]]]:
    """Per game and half: (the commit it was recorded at, the strategist's results) from the newest 'before' file that has it."""
    out: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {}
    for path in (BEFORE, BEFORE_READING):
        if not path.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        for game, halves in dict(data["results"]).items():
            for half, by in halves.items():
                if by.get("strategist"):
                    out.setdefault(game, {})[half] = (str(data["commit"]), by["strategist"])
    return out


def sections(args: argparse.Namespace) -> None:
    """Print every section (bench/people.py calls this with its own parsed arguments)."""
    halves = ["dev", "test"] if getattr(args, "half", "both") == "both" else [args.half]
    which = [g.strip() for g in getattr(args, "games", ",".join(GAMES)).split(",") if g.strip()]
    agents = [a.strip() for a in getattr(args, "agents", "strategist,embed:minilm,random").split(",") if a.strip()]
    res = asyncio.run(run_all(agents, halves, which))
    old = before()
    record = getattr(args, "record_before", None)
    if record:
        path = BEFORE if record == "teams" else BEFORE_READING
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        keep = {g: {h: {a: r for a, r in by.items() if a == "strategist"} for h, by in hs.items()} for g, hs in res.items()}
        path.write_text(json.dumps({"commit": head, "agent": "strategist", "results": keep}, indent=1) + "\n", encoding="utf-8")
        print(f"recorded {path.relative_to(ROOT)} at {head}")
        return
    for game in which:
        print(f"\n== {game}")
        for half in halves:
            rows = dict(res[game][half])
            if half in old.get(game, {}):
                commit, r = old[game][half]
                rows[f"previous default ({commit})"] = r
            SHOW[game](rows, half)
    print("\n== size of each half")
    for half in halves:
        power(half)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else "")
    p.add_argument("--half", choices=("dev", "test", "both"), default="both")
    p.add_argument("--agents", default="strategist,embed:minilm,random")
    p.add_argument("--games", default=",".join(GAMES))
    p.add_argument("--record-before", nargs="?", const="teams", choices=("teams", "reading"), default=None,
                   help="save the strategist's results as a 'before' file: people_before_teams.json (the default) or people_before_reading.json")
    sections(p.parse_args())


if __name__ == "__main__":
    main()
