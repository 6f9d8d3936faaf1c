"""Is an AI table fair to the person at it? An innocent human against an AI in the same seat, on the same deals.

For Who-is-Spy (the SpyGame setting: 4 seats, 1 spy) and the Chameleon (classic, 4 seats)
each seeded deal is played twice up to the end of round 1's vote:

- ``human``: seat 0 is an innocent person (a villager; not the chameleon) who describes
  the word with human-style descriptions of our own (``bench/data/human_descriptions.txt``:
  phrases and single words as people say them; the Chameleon takes the one-word ones), and
  votes for a seeded random other seat (a person's reading of the table is not ours to model;
  a random ballot favours nobody). ``person_ballot="agent"`` lets the agent under test cast the
  person's ballots from seat 0 instead (it reads the table with the person's word): the
  person's words are then the arms' only difference, a diagnostic of how much of a gap the
  words make, beside the measure;
- ``ai``: seat 0 is an AI of the agent under test;

seats 1-3 are always the agent under test, with the same seeds in both arms. Deals are
drawn only where seat 0's word is covered by the human data, and the outsider sits in
seats 1-3. Printed per game and agent:

- ``seat 0 out``: share of deals where seat 0 was voted out in round 1 (run-off included),
  human arm against AI arm; the fairness gap is their difference;
- ``votes``: the first round-1 ballot of the innocent AI voters (neither seat 0 nor the
  outsider), share on the real outsider and share on seat 0, in each arm;
- where the AI moves came from (decision rows: specialist, model, fallback, rules), and the
  move latency p50/p95 of choices and of free text.

    PYTHONPATH=$PWD .venv/bin/python bench/fairness.py --deals 40
    PYTHONPATH=$PWD .venv/bin/python bench/fairness.py --deals 5 --agents strategist --games spy --out run.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games  # noqa: E402
from bench.spymasters import build_factory  # noqa: E402  # the app's registry over one shared client pool
from bot.core.agents import AgentFactory, AgentRunner  # noqa: E402
from games import decks  # noqa: E402
from games.base import Action, Choice, Game, IllegalAction, Text, normalize, rng, words_of  # noqa: E402
from models.agents.provenance import decision_of  # noqa: E402

HUMAN_DATA = Path(__file__).resolve().parent / "data" / "human_descriptions.txt"
DEFAULT_AGENTS = "strategist,embed:minilm"
HUMAN = 0  # the seat of the person (or of the AI standing in for them)


def load_human(path: Path = HUMAN_DATA) -> dict[str, tuple[str, ...]]:
    """Word -> its human-style descriptions, as written in the data file (keys normalised)."""
    out: dict[str, tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(":")
        entries = tuple(e.strip() for e in rest.split("|") if e.strip())
        if word.strip() and entries:
            out[normalize(word)] = entries
    return out


@dataclass(frozen=True, slots=True)
class Deal:
    """One seeded deal: the game's deal options, seat 0's word and the outsider's seat."""

    game: str
    seed: int
    options: Mapping[str, Any]
    word: str  # seat 0's word (the villagers' word; the Chameleon's secret)
    outsider: int


def spy_deals(human: Mapping[str, Sequence[str]], n: int, base: int = 0) -> list[Deal]:
    """``n`` Who-is-Spy deals whose villager word the human data covers; the spy in seats 1-3."""
    pairs = [(a, b) for a, b in decks.pairs() if normalize(a) in human or normalize(b) in human]
    out = []
    for i in range(n):
        r = rng(base, "fair-spy", i)
        a, b = pairs[r.randrange(len(pairs))]
        sides = [(x, y) for x, y in ((a, b), (b, a)) if normalize(x) in human]
        villager, spy = sides[r.randrange(len(sides))]
        outsider = 1 + r.randrange(3)
        out.append(Deal("spy", 7000 + base + i, {"deal": {"pair": [villager, spy], "spies": [outsider]}}, villager, outsider))
    return out


def chameleon_deals(human: Mapping[str, Sequence[str]], n: int, base: int = 0) -> list[Deal]:
    """``n`` Chameleon deals (classic cards) whose secret the human data covers with one-word clues."""
    def one_word(w: str) -> bool:
        return sum(1 for e in human.get(normalize(w), ()) if len(words_of(e)) == 1) >= 3

    cards = [(name, [w for w in words if one_word(w)]) for name, words in decks.cards()]
    cards = [(name, ws) for name, ws in cards if ws]
    out = []
    for i in range(n):
        r = rng(base, "fair-chameleon", i)
        name, covered = cards[r.randrange(len(cards))]
        secret = covered[r.randrange(len(covered))]
        outsider = 1 + r.randrange(3)
        out.append(Deal("chameleon", 7000 + base + i, {"deal": {"card": name, "secret": secret, "chameleon": outsider}},
                        secret, outsider))
    return out


# The games whose outsider is voted out on descriptions: each with the deals this bench plays.
DEALERS: dict[str, Callable[[Mapping[str, Sequence[str]], int], list[Deal]]] = {
    "spy": spy_deals, "chameleon": chameleon_deals}
GAMES = tuple(DEALERS)
VARIANT = {"spy": "spygame", "chameleon": "classic"}


def round_one_over(game: str, s: Any) -> bool:
    if game == "spy":
        return s.round > 1 or bool(s.eliminated) or s.phase.value == "over"
    return s.phase.value in ("guess", "over")


def voted_out(game: str, s: Any) -> int | None:
    if game == "spy":
        return next((seat for rnd, seat in s.eliminated if rnd == 1), None)
    return s.accused  # type: ignore[no-any-return]


def first_ballot(game: str, s: Any) -> dict[int, int | None]:
    """Round 1's first ballot: voter -> target (None: abstained)."""
    if game == "spy":
        rec = next((v for v in s.votes if v.round == 1), None)
        return dict(rec.ballots) if rec is not None else {}
    return dict(s.ballots[0].votes) if s.ballots else {}


def first_posteriors(row: Mapping[str, Any], leave_out: Sequence[int]) -> list[dict[str, float]]:
    """Each AI voter's posterior behind its first ballot (its first choice with one recorded), voters in ``leave_out``
    left out: what the ballot was drawn from, so shares of it carry none of the draw's noise."""
    firsts: dict[int, dict[str, float]] = {}
    for m in row["moves"]:
        if m["kind"] == "choice" and m.get("posterior") and m["seat"] not in leave_out:
            firsts.setdefault(int(m["seat"]), {str(k): float(v) for k, v in m["posterior"].items()})
    return list(firsts.values())


def human_text(human: Mapping[str, Sequence[str]], deal: Deal, spec: Text, said: int, r: random.Random) -> list[str]:
    """The person's descriptions for this turn in a seeded order (the rules pick the first they accept)."""
    pool = [e for e in human[normalize(deal.word)] if len(words_of(e)) <= spec.max_words and len(e) <= spec.max_chars]
    r.shuffle(pool)
    return pool[said:] + pool[:said]


def later_ballots(game: str, s: Any) -> list[dict[str, Any]]:
    """Every ballot after round 1's first (Who-is-Spy's run-offs and later rounds, the Chameleon's run-off):
    round, stage and voter -> target, and who was still in the game."""
    if game == "spy":
        out = []
        gone: set[int] = set()
        for v in s.votes:
            if not (v.round == 1 and v.stage == "vote"):
                out.append({"round": v.round, "stage": v.stage, "ballot": {str(a): b for a, b in v.ballots},
                            "alive": [x for x in range(s.seats) if x not in gone]})
            if v.eliminated is not None:
                gone.add(v.eliminated)
        return out
    return [{"round": 1, "stage": "runoff", "ballot": {str(a): b for a, b in b.votes}, "alive": list(range(s.seats))}
            for b in s.ballots[1:]]


def ending(game: str, s: Any, outsider: int) -> dict[str, Any]:
    """How the deal ended: the outsider caught (Who-is-Spy: the spy voted out in any round; the Chameleon: accused
    and naming a wrong word), seat 0 voted out in any round, and the rounds played."""
    if game == "spy":
        out = [seat for _, seat in s.eliminated]
        return {"outsider_caught": outsider in out, "seat0_out": HUMAN in out, "rounds": s.round,
                "eliminated": [[r, seat] for r, seat in s.eliminated]}
    return {"outsider_caught": bool(s.history) and s.history[-1].outcome.value == "caught",
            "seat0_out": s.accused == HUMAN, "rounds": 1, "eliminated": [[1, s.accused]] if s.accused is not None else []}


async def play(deal: Deal, agent: str, factory: AgentFactory, *, human_seat: bool,
               human: Mapping[str, Sequence[str]], table_no: int, to_end: bool = False,
               person_ballot: str = "random") -> dict[str, Any]:
    """Round 1 of one deal (``to_end``: the whole game, round 1's measures kept apart); seat 0 a person
    (``human_seat``) or the agent. The person's ballots are seeded random (``person_ballot="random"``) or the
    agent's, cast from seat 0 (``"agent"``)."""
    g: Game = games.get(deal.game)
    s, _ = g.new(g.make_config(VARIANT[deal.game], **deal.options), 4, deal.seed)
    runner = AgentRunner(factory, timeout_s=180.0, retries=3, fallback_spec="embed:minilm")
    r = rng(deal.seed, "fair-human")
    moves: list[dict[str, Any]] = []
    said: list[str] = []
    stopped = False
    for _ in range(400):
        if g.result(s) is not None or (not to_end and round_one_over(deal.game, s)):
            break
        seat = min(g.to_act(s))
        spec = g.legal(s, seat)
        if human_seat and seat == HUMAN and (isinstance(spec, Text) or person_ballot != "agent"):
            if isinstance(spec, Text):
                for text in human_text(human, deal, spec, len(said), r):
                    try:
                        s, _ = g.apply(s, seat, Action.say(spec.kind, text))
                    except IllegalAction:
                        continue
                    said.append(text)
                    break
                else:
                    if round_one_over(deal.game, s):  # a later round: the person has nothing new to say
                        stopped = True
                        break
                    raise RuntimeError(f"no human description of {deal.word!r} the rules accept")
            else:
                assert isinstance(spec, Choice)
                s, _ = g.apply(s, seat, Action.choose(spec.kind, spec.options[r.randrange(len(spec.options))].id))
            continue
        started = time.perf_counter()
        out = await runner.decide(g, s, seat, game_id=table_no, spec=agent, seed=deal.seed * 10 + seat)
        wall = (time.perf_counter() - started) * 1000
        s, _ = g.apply(s, seat, out.action)
        if (isinstance(spec, Choice) and len(spec.options) == 1) or (human_seat and seat == HUMAN):
            continue  # a forced move, or the person's ballot cast by the agent: not the AI seats' moves
        decided = next((d for c in reversed(out.calls) if (d := decision_of(c.prompt)) is not None), None)
        posterior = next((dict(c.prompt["evidence"]) for c in out.calls
                          if isinstance(c.prompt, Mapping) and isinstance(c.prompt.get("evidence"), Mapping)), None)
        moves.append({"seat": seat, "kind": "choice" if isinstance(spec, Choice) else "text", "action": list(out.action.value),
                      "posterior": posterior,
                      "source": str(out.source), "decided_by": decided.get("source") if decided else None, "wall_ms": wall,
                      "first_try": str(out.source) == "ai" and not any(c.error for c in out.calls)})
    texts = ([{"seat": seat, "text": t} for rnd, seat, t in s.descriptions if rnd == 1] if deal.game == "spy"
             else [{"seat": seat, "text": t} for seat, t in s.clues])
    row = {"game": deal.game, "seed": deal.seed, "agent": agent, "arm": "human" if human_seat else "ai", "word": deal.word,
           "outsider": deal.outsider, "out": voted_out(deal.game, s), "ballot": {str(k): v for k, v in first_ballot(deal.game, s).items()},
           "said": texts, "moves": moves}
    if to_end:
        row["later"] = later_ballots(deal.game, s)
        row["end"] = {**ending(deal.game, s, deal.outsider), "complete": g.result(s) is not None and not stopped}
    return row


# --------------------------------------------------------------------------- an outsider who says anything at all

OFF_TOPIC_WORDS = 3


def off_topic(deal: Deal, i: int) -> tuple[Deal, tuple[str, ...]]:
    """``deal`` with the outsider in seat 0, and the words it says (seeded by the deal's number): OFF_TOPIC_WORDS words
    of another bundled Chameleon card, none a word of this card, or of other Who-is-Spy pairs, sharing no word with
    this pair."""
    r = rng(i, f"people-off-topic-{deal.game}")
    if deal.game == "chameleon":
        cards = dict(decks.cards())
        card = deal.options["deal"]["card"]
        own = {normalize(w) for w in cards[card]}
        pool = list(cards[r.choice(sorted(c for c in cards if c != card))])
        moved = Deal("chameleon", deal.seed, {"deal": {**deal.options["deal"], "chameleon": HUMAN}}, deal.word, HUMAN)
    else:
        pair = list(deal.options["deal"]["pair"])
        own = {normalize(w) for w in pair}
        pool = sorted({w for p in decks.pairs() if not own & {normalize(x) for x in p} for w in p})
        moved = Deal("spy", deal.seed, {"deal": {"pair": pair, "spies": [HUMAN]}}, pair[1], HUMAN)
    return moved, tuple(r.sample([w for w in pool if normalize(w) not in own], OFF_TOPIC_WORDS))


async def off_topic_rows(deals: Sequence[tuple[Deal, tuple[str, ...]]], agent: str, registry: Any, half: str) -> list[dict[str, Any]]:
    """Each deal with the outsider in seat 0, played twice: a person saying words off the card (or the pair), and the
    agent as the outsider in that seat. Round 1: the outsider voted out, the innocent AI ballots on it."""
    rows: list[dict[str, Any]] = []
    for i, (deal, _) in enumerate(deals):
        moved, words = off_topic(deal, i)
        pair = []
        for person in (True, False):
            try:
                row = await play(moved, agent, registry, human_seat=person, human={normalize(moved.word): words}, table_no=50_000 + i)
            except RuntimeError:  # every word is a variant of one of this deal's: no such bluff on this deal
                break
            ballots = [t for v, t in row["ballot"].items() if int(v) != HUMAN]
            pair.append({"agent": agent, "half": half, "game": deal.game, "seed": deal.seed, "arm": "off topic" if person else "agent",
                         "out": row["out"] == HUMAN, "on": sum(t == HUMAN for t in ballots), "ballots": len(ballots)})
        if len(pair) == 2:
            rows.extend(pair)
    return rows


def share(xs: Sequence[bool]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def pct(xs: Sequence[float], q: float) -> float:
    if not xs:
        return float("nan")
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * len(ys)))]


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per game and agent: seat 0 voted out in round 1 per arm, the innocent AI voters' ballots, sources, latencies."""
    out: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys((r["game"], r["agent"]) for r in rows):
        mine = [r for r in rows if (r["game"], r["agent"]) == key]
        d: dict[str, Any] = {"deals": len({r["seed"] for r in mine})}
        for arm in ("human", "ai"):
            arm_rows = [r for r in mine if r["arm"] == arm]
            d[f"{arm}_out"] = share([r["out"] == HUMAN for r in arm_rows])
            d[f"{arm}_outsider_out"] = share([r["out"] == r["outsider"] for r in arm_rows])
            votes = [(t, r["outsider"]) for r in arm_rows for v, t in r["ballot"].items()
                     if int(v) not in (HUMAN, r["outsider"])]
            d[f"{arm}_votes_outsider"] = share([t == o for t, o in votes])
            d[f"{arm}_votes_seat0"] = share([t == HUMAN for t, _ in votes])
            d[f"{arm}_votes"] = len(votes)
        moves = [m for r in mine for m in r["moves"]]
        d["sources"] = dict(Counter(str(m["decided_by"]) for m in moves))
        d["first_try"] = share([m["first_try"] for m in moves])
        for kind in ("choice", "text"):
            ms = [m["wall_ms"] / 1000 for m in moves if m["kind"] == kind]
            d[f"{kind}_p50_s"], d[f"{kind}_p95_s"] = pct(ms, 0.5), pct(ms, 0.95)
        out[f"{key[0]}|{key[1]}"] = d
    return out


def print_table(label: str, summary: Mapping[str, Mapping[str, Any]], other: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    def cell(d: Mapping[str, Any] | None, k: str) -> str:
        if d is None or k not in d:
            return "-"
        v = d[k]
        if isinstance(v, float):
            return f"{v:.0%}" if not k.endswith("_s") else f"{v:.3f}"
        return str(v)

    def both(k: str, d: Mapping[str, Any], b: Mapping[str, Any] | None) -> str:
        return f"{cell(b, k)} -> {cell(d, k)}" if other is not None else cell(d, k)

    print(f"\n== fairness, round 1 ({label}{'; before -> after' if other else ''})")
    cols = [("seat 0 out: human", "human_out"), ("seat 0 out: AI", "ai_out"), ("innocent AI votes on outsider (human arm)",
            "human_votes_outsider"), ("on the human", "human_votes_seat0"), ("on outsider (AI arm)", "ai_votes_outsider"),
            ("on seat 0 AI", "ai_votes_seat0"), ("outsider out (human arm)", "human_outsider_out"),
            ("outsider out (AI arm)", "ai_outsider_out"), ("first try", "first_try"), ("choice p50 s", "choice_p50_s"),
            ("text p50 s", "text_p50_s"), ("choice p95 s", "choice_p95_s"), ("text p95 s", "text_p95_s")]
    for key, d in summary.items():
        b = other.get(key) if other else None
        print(f"{key}  ({d['deals']} deals)")
        for name, k in cols:
            print(f"    {name:44s} {both(k, d, b)}")
        gap = d["human_out"] - d["ai_out"]
        margin = d["human_votes_outsider"] - d["human_votes_seat0"]
        print(f"    {'gap human - AI (target <= +10 points)':44s} {gap * 100:+.0f} points")
        print(f"    {'votes outsider - human (target >= +15)':44s} {margin * 100:+.0f} points")
        print(f"    {'sources':44s} {json.dumps(d['sources'], sort_keys=True)}"
              + (f"  (before {json.dumps(b['sources'], sort_keys=True)})" if b else ""))


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    human = load_human(Path(args.data))
    registry, pool = build_factory(args.define)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    for name in agents:
        warm = getattr(registry(name, 0), "warm", None)
        if callable(warm):
            await asyncio.to_thread(warm)
    rows: list[dict[str, Any]] = []
    table_no = 0
    try:
        for game in [x.strip() for x in args.games.split(",") if x.strip()]:
            deals = DEALERS[game](human, args.deals)
            for agent in agents:
                t0 = time.perf_counter()
                for deal in deals:
                    for human_seat in (True, False):
                        table_no += 1
                        rows.append(await play(deal, agent, registry, human_seat=human_seat, human=human, table_no=table_no))
                print(f"  {game} {agent}: {len(deals)} deals x 2 in {time.perf_counter() - t0:.0f} s", flush=True)
    finally:
        await pool.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=40, help="seeded deals per game (each played twice)")
    parser.add_argument("--agents", default=DEFAULT_AGENTS, help="comma-separated configured agent names")
    parser.add_argument("--games", default=",".join(GAMES), help=f"comma-separated, of {', '.join(GAMES)}")
    parser.add_argument("--data", default=str(HUMAN_DATA), help="the human-style descriptions")
    parser.add_argument("--define", default="", help="extra agent entries, as HUSHTABLE_AGENTS JSON")
    parser.add_argument("--out", default="", help="write the raw rounds here (JSON)")
    parser.add_argument("--compare", default="", help="a stored run to print beside this one (before -> after)")
    args = parser.parse_args()
    unknown = sorted({g.strip() for g in args.games.split(",") if g.strip()} - set(DEALERS))
    if unknown:
        parser.error(f"--games takes {', '.join(GAMES)}; not {', '.join(unknown)}.")
    started = time.perf_counter()
    rows = asyncio.run(run(args))
    load = os.getloadavg()
    label = f"{args.deals} deals, {time.perf_counter() - started:.0f} s, {os.cpu_count()} cores, load avg {load[0]:.1f}"
    if args.out:
        Path(args.out).write_text(json.dumps({"label": label, "rows": rows}, indent=1))
    other = None
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        other = summarize(before["rows"])
        print(f"before: {before['label']}")
    print_table(label, summarize(rows), other)


if __name__ == "__main__":
    main()
