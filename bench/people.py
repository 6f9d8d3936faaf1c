"""Do the AI players hold up with people? Who-is-Spy and the Chameleon with a person's own words, round 1 and to the end.

The people are the six writers of ``bench/data/people/`` (each wrote one part in their own voice, never
seeing the agents), split by writer before any tuning (``SPLIT.json``): the development half (w1, w5, w6) and
the test half (w2, w3, w4). Every number is printed for both halves with a 95% interval, and a power analysis
says what difference a half can detect. A writer file whose sha256 differs from ``SPLIT.json`` is refused.

Each deal is played twice to the end of the game (``bench/fairness.py``'s machinery); round 1's
measures are kept apart from how the deal ended:

- ``human``: seat 0 is an innocent person (a villager, not the chameleon) who says a writer's
  own words for seat 0's word (Who-is-Spy: their descriptions; the Chameleon: their clues for
  that card and secret) and votes for a seeded random other seat (``--person-ballot agent``: the agent
  casts those ballots from seat 0, a diagnostic of how much of a gap the person's words alone make);
- ``ai``: seat 0 is the agent under test, under the same rules (the same text limits), on the
  same deal with the same seeds: the style-matched AI in that seat.

Seats 1-3 are the agent under test; the outsider (spy, chameleon) sits in one of them. Printed
per game, agent and half:

- ``innocent person voted out`` against ``AI in that seat voted out`` and their gap (paired
  bootstrap interval over deals);
- the innocent AI voters' first ballots of round 1 in the human arm: share on the real outsider
  against share on the person, and their margin; beside them the posteriors those ballots were
  drawn from (agents that record one), the reading's share on the person against the AI in that
  seat without the draw's noise;
- Chameleon: the innocent AI clues' SNEAK utility (the embedding evaluator ``embed:minilm``
  with embedding decoys, paper metric) against the category word said as a clue (the baseline)
  and against the people's clues for the same secret; how many AI clues were the category word;
- where the AI moves came from (decision rows) and an AI-only line (the AI arm: the outsider voted out).
- a person as the outsider who says anything at all (``--off-topic``, the half's first deals re-dealt
  with the outsider in seat 0): seat 0 says one of three seeded words of another bundled card (none a
  word of this card) or of other Who-is-Spy pairs (sharing no word with this pair), against the agent
  as the outsider in that seat. Printed: the outsider voted out in round 1 and the innocent AI voters'
  ballots on it. Reading an unplaceable clue as a little innocent must not make a word from elsewhere a
  safe bluff.
- by the end (Who-is-Spy's later rounds; the Chameleon's run-off and the caught chameleon's
  guess): the person against the AI in that seat voted out in any round, the outsider caught,
  and the innocent AI voters' later ballots on the outsider and on the person.

Agents: the default (``strategist``), ``embed:minilm`` and ``random`` run live; the previous
default is printed beside them from ``bench/data/people_before_chameleon.json`` (recorded on the
commit it names, before the Chameleon voters read clues against the whole card;
``people_before_votes.json`` is the earlier one, before the votes were made fair to people).
The team games' sections (``bench/people_teams.py``'s ``sections(args)``) are printed after these.

    PYTHONPATH=$PWD .venv/bin/python bench/people.py --deals 40
    PYTHONPATH=$PWD .venv/bin/python bench/people.py --deals 5 --agents strategist --games spy --halves development
    PYTHONPATH=$PWD .venv/bin/python bench/people.py --deals 40 --agents strategist --record bench/data/people_before_chameleon.json
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import json
import random
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fairness import HUMAN, Deal, first_posteriors, off_topic_rows, play, summarize  # noqa: E402
from bench.spymasters import build_factory  # noqa: E402
from bench.stats import bootstrap, detectable, fmt_diff, fmt_share  # noqa: E402
from games import decks  # noqa: E402
from games.base import normalize, rng  # noqa: E402

PEOPLE = Path(__file__).resolve().parent / "data" / "people"
BEFORE = Path(__file__).resolve().parent / "data" / "people_before_chameleon.json"
DEFAULT_AGENTS = "strategist,embed:minilm,random"
GAMES = ("spy", "chameleon")
HALVES = ("test", "development")
CAST = " (diagnostic: the person's ballots cast by this agent from seat 0, so the words are the arms' only difference)"


class DigestMismatch(RuntimeError):
    """A writer file differs from the digest SPLIT.json recorded before any tuning."""


def load_half(half: str, root: Path = PEOPLE) -> dict[str, dict[str, Any]]:
    """The writers of one half (``development`` or ``test``), each file checked against its recorded sha256."""
    split = json.loads((root / "SPLIT.json").read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for writer in split[half]:
        raw = (root / f"{writer}.json").read_bytes()
        if hashlib.sha256(raw).hexdigest() != split["sha256"][writer]:
            raise DigestMismatch(f"{writer}.json differs from the sha256 recorded in SPLIT.json; the bench refuses to run on changed data.")
        out[writer] = json.loads(raw)
    return out


def spy_deals(writers: Mapping[str, Mapping[str, Any]], n: int) -> list[tuple[Deal, tuple[str, ...]]]:
    """Up to ``n`` (0: all) seeded Who-is-Spy deals (a writer's word as the villagers' word, its pair's other word the spy's)."""
    partner: dict[str, str] = {}
    for a, b in decks.pairs():
        partner.setdefault(normalize(a), b)
        partner.setdefault(normalize(b), a)
    items = [(w, word, tuple(descs)) for w, d in sorted(writers.items()) for word, descs in d["spy"].items()
             if normalize(word) in partner]
    r = random.Random(f"people-spy-{'/'.join(sorted(writers))}")
    r.shuffle(items)
    out = []
    for i, (_, word, descs) in enumerate(items[:n or None]):
        outsider = 1 + rng(i, "people-spy").randrange(3)
        out.append((Deal("spy", 9000 + i, {"deal": {"pair": [word, partner[normalize(word)]], "spies": [outsider]}}, word, outsider),
                    descs))
    return out


def chameleon_deals(writers: Mapping[str, Mapping[str, Any]], n: int) -> list[tuple[Deal, tuple[str, ...]]]:
    """Up to ``n`` (0: all) seeded Chameleon deals on the bundled card a writer's item names, with its secret."""
    names = {normalize(name): name for name, _ in decks.cards()}
    items = [(w, c) for w, d in sorted(writers.items()) for c in d["chameleon"] if normalize(c["category"]) in names]
    r = random.Random(f"people-chameleon-{'/'.join(sorted(writers))}")
    r.shuffle(items)
    out = []
    for i, (_, c) in enumerate(items[:n or None]):
        outsider = 1 + rng(i, "people-chameleon").randrange(3)
        card = names[normalize(c["category"])]
        out.append((Deal("chameleon", 9000 + i, {"deal": {"card": card, "secret": c["secret"], "chameleon": outsider}},
                         c["secret"], outsider), tuple(c["clues"])))
    return out


DEALERS = {"spy": spy_deals, "chameleon": chameleon_deals}


# --------------------------------------------------------------------------- per-deal measures

def innocent_votes(row: Mapping[str, Any], outsider: int) -> list[int | None]:
    """The round-1 first-ballot targets of the voters who are neither seat 0 nor the outsider."""
    return [t for v, t in row["ballot"].items() if int(v) not in (HUMAN, outsider)]


def mean_on(posteriors: Sequence[Mapping[str, float]], seat: int) -> float:
    """The mean probability the voters' posteriors give ``seat``."""
    return sum(p.get(str(seat), 0.0) for p in posteriors) / len(posteriors)


def deal_measures(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per deal of one game and agent: both arms side by side."""
    by_seed: dict[int, dict[str, Mapping[str, Any]]] = {}
    for r in rows:
        by_seed.setdefault(int(r["seed"]), {})[str(r["arm"])] = r
    out = []
    for seed, arms in sorted(by_seed.items()):
        if "human" not in arms or "ai" not in arms:
            continue
        h, a = arms["human"], arms["ai"]
        o = int(h["outsider"])

        hv, av = (innocent_votes(h, o), innocent_votes(a, o))
        hp, ap = first_posteriors(h, (HUMAN, o)), first_posteriors(a, (HUMAN, o))
        mass = ({"hp_person": mean_on(hp, HUMAN), "hp_outsider": mean_on(hp, o), "ap_seat0": mean_on(ap, HUMAN)}
                if hp and ap else {})
        out.append({"seed": seed, "human_out": h["out"] == HUMAN, "ai_out": a["out"] == HUMAN, **mass,
                    "h_on_outsider": sum(t == o for t in hv), "h_on_person": sum(t == HUMAN for t in hv), "h_votes": len(hv),
                    "a_on_outsider": sum(t == o for t in av), "a_on_seat0": sum(t == HUMAN for t in av), "a_votes": len(av),
                    "a_outsider_out": a["out"] == o, "h_outsider_out": h["out"] == o, **to_the_end(h, a, o)})
    return out


def later_votes(row: Mapping[str, Any], outsider: int) -> list[int | None]:
    """The innocent AI voters' ballots after round 1's first (run-offs, later rounds): voters neither seat 0 nor the outsider."""
    return [t for b in row.get("later", ()) for v, t in b["ballot"].items() if int(v) not in (HUMAN, outsider)]


def to_the_end(h: Mapping[str, Any], a: Mapping[str, Any], outsider: int) -> dict[str, Any]:
    """How both arms of a deal ended when it was played to the end (empty for a run that stopped after round 1)."""
    if "end" not in h or "end" not in a:
        return {}
    hl, al = later_votes(h, outsider), later_votes(a, outsider)
    return {"end": True, "h_caught": h["end"]["outsider_caught"], "a_caught": a["end"]["outsider_caught"],
            "h_out_end": h["end"]["seat0_out"], "a_out_end": a["end"]["seat0_out"],
            "h_rounds": h["end"]["rounds"], "a_rounds": a["end"]["rounds"], "h_later": bool(h.get("later")), "a_later": bool(a.get("later")),
            "complete": bool(h["end"]["complete"] and a["end"]["complete"]),
            "hl_on_outsider": sum(t == outsider for t in hl), "hl_on_person": sum(t == HUMAN for t in hl), "hl_votes": len(hl),
            "al_on_outsider": sum(t == outsider for t in al), "al_votes": len(al)}


def print_to_the_end(game: str, m: Sequence[Mapping[str, Any]]) -> None:
    """The later rounds' outcome beside round 1's: the outsider caught by the end, seat 0 out in any round."""
    m = [x for x in m if x.get("end")]
    if not m:
        return
    n = len(m)
    what = ("every round to the end" if game == "spy" else "the run-off and the chameleon's guess included")
    print(f"    by the end ({what}; {n} deals, {n - sum(x['complete'] for x in m)} stopped early: the person had nothing new to say)")
    print(f"    {'  innocent person voted out':40s} {fmt_share(sum(x['h_out_end'] for x in m), n)}")
    print(f"    {'  AI in that seat voted out':40s} {fmt_share(sum(x['a_out_end'] for x in m), n)}")
    print(f"    {'  gap person - AI':40s} {fmt_diff([float(x['h_out_end']) - float(x['a_out_end']) for x in m])}")
    print(f"    {'  outsider caught (with the person)':40s} {fmt_share(sum(x['h_caught'] for x in m), n)}")
    print(f"    {'  outsider caught (AI only)':40s} {fmt_share(sum(x['a_caught'] for x in m), n)}")
    if game == "spy":
        print(f"    {'  rounds played (with the person / AI)':40s} {sum(x['h_rounds'] for x in m) / n:.2f} / {sum(x['a_rounds'] for x in m) / n:.2f}")
    else:
        print(f"    {'  deals with a run-off (person / AI)':40s} {fmt_share(sum(x['h_later'] for x in m), n)} / "
              f"{fmt_share(sum(x['a_later'] for x in m), n)}")
    hl = sum(x["hl_votes"] for x in m)
    print(f"    {'  later AI votes on the outsider':40s} {fmt_share(sum(x['hl_on_outsider'] for x in m), hl)}")
    print(f"    {'  later AI votes on the person':40s} {fmt_share(sum(x['hl_on_person'] for x in m), hl)}")
    al = sum(x["al_votes"] for x in m)
    print(f"    {'  later AI votes on the outsider (AI only)':40s} {fmt_share(sum(x['al_on_outsider'] for x in m), al)}")


def sneak_utility(rows: Sequence[Mapping[str, Any]], human_clues: Mapping[int, Sequence[str]], category_of: Mapping[int, tuple[str, str]],
                  evaluator: Any, decoys: Any) -> dict[str, Any]:
    """SNEAK utility of the innocent AI clues (seats 1-3 not the chameleon, human arm), of the category word said as
    the clue and of the people's clues for the same secrets; how many AI clues were the category word; per deal, the
    AI clues' mean utility minus the category word's (``paired``: without the spread between secrets)."""
    from models.eval.decoys import pick
    from models.eval.instances import Instance
    from models.eval.metrics import normalised

    names = {normalize(name): words for name, words in decks.cards()}

    def utility(card: str, secret: str, message: str) -> float:
        words = tuple(names[normalize(card)])
        inst = Instance(game="chameleon", category=card, candidates=words, secret=secret, message=message)
        messages = [message, *pick(decoys.pool_now(card, words), message)]
        return normalised(evaluator.ally_now(inst, messages).probs[0], len(messages))

    ai, base, people, paired = [], [], [], []  # type: list[float], list[float], list[float], list[float]
    category_said = 0
    for r in rows:
        if r["arm"] != "human" or int(r["seed"]) not in category_of:  # a recorded run may hold more deals than this one
            continue
        seed = int(r["seed"])
        card, secret = category_of[seed]
        deal: list[float] = []
        for said in r["said"]:
            if int(said["seat"]) in (HUMAN, int(r["outsider"])):
                continue
            deal.append(utility(card, secret, str(said["text"])))
            category_said += normalize(str(said["text"])) in {normalize(card), *(normalize(t) for t in card.split())}
        ai.extend(deal)
        base.append(utility(card, secret, card))
        paired += [sum(deal) / len(deal) - base[-1]] if deal else []
        people.extend(utility(card, secret, c) for c in human_clues.get(seed, ()))
    return {"ai": ai, "category": base, "people": people, "category_said": category_said, "paired": paired}


# --------------------------------------------------------------------------- the run

async def run_half(half: str, args: argparse.Namespace, registry: Any) -> dict[str, Any]:
    writers = load_half(half, Path(args.people))
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    out: dict[str, Any] = {"rows": [], "clues": {}, "cards": {}}
    table_no = 0
    for game in [g.strip() for g in args.games.split(",") if g.strip()]:
        deals = DEALERS[game](writers, args.deals)
        if game == "chameleon":
            out["clues"] = {str(d.seed): list(texts) for d, texts in deals}
            out["cards"] = {str(d.seed): [d.options["deal"]["card"], d.word] for d, _ in deals}
        for agent in agents:
            t0 = time.perf_counter()
            skipped = 0
            for deal, texts in deals:
                pair = []
                for human_seat in (True, False):
                    table_no += 1
                    try:
                        row = await play(deal, agent, registry, human_seat=human_seat, human={normalize(deal.word): texts},
                                         table_no=table_no, to_end=True, person_ballot=args.person_ballot)
                    except RuntimeError:  # none of the person's texts passes the rules (e.g. it names the word)
                        break
                    pair.append({**row, "half": half, "person_ballot": args.person_ballot})
                if len(pair) == 2:
                    out["rows"].extend(pair)
                else:
                    skipped += 1
            print(f"  {half} {game} {agent}: {len(deals) - skipped} deals x 2 in {time.perf_counter() - t0:.0f} s"
                  + (f" ({skipped} skipped: no text of the person's the rules accept)" if skipped else ""), flush=True)
            if args.off_topic:
                out.setdefault("off_topic", []).extend(await off_topic_rows(deals[:args.off_topic], agent, registry, half))
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    registry, pool = build_factory(args.define)
    for name in [a.strip() for a in args.agents.split(",") if a.strip()]:
        warm = getattr(registry(name, 0), "warm", None)
        if callable(warm):
            await asyncio.to_thread(warm)
    try:
        return {half: await run_half(half, args, registry) for half in args.halves.split(",") if half.strip()}
    finally:
        await pool.aclose()


def sneak_tools() -> tuple[Any, Any]:
    from models.eval.decoys import EmbeddingDecoys
    from models.eval.evaluators import EmbeddingEvaluator
    from models.worker.embedding_backend import MINILM, embedder_for

    emb = embedder_for(MINILM)
    return EmbeddingEvaluator(emb, "embed:minilm"), EmbeddingDecoys(emb)


def report(result: Mapping[str, Any], before: Mapping[str, Any] | None) -> None:
    tools: tuple[Any, Any] | None = None
    for game in GAMES:
        for half in HALVES:
            data = result.get(half)
            if not data:
                continue
            rows = [r for r in data["rows"] if r["game"] == game]
            if not rows:
                continue
            agents = list(dict.fromkeys(r["agent"] for r in rows))
            cast = CAST if any(r.get("person_ballot") == "agent" for r in rows) else ""
            runs: list[tuple[str, list[dict[str, Any]]]] = [(a + cast, [r for r in rows if r["agent"] == a]) for a in agents]
            if before and before.get("halves", {}).get(half):
                old = [r for r in before["halves"][half]["rows"] if r["game"] == game]
                if old:
                    runs.append((f"previous default {old[0]['agent']} (recorded at {before['commit'][:10]})", old))
            n_deals = len({r["seed"] for r in rows})
            print(f"\n== {game}, round 1 and to the end, {half} half ({n_deals} deals; power: the smallest difference of two shares "
                  f"detectable at alpha 0.05, power 0.8, is {detectable(n_deals):.0%} of deals; of ballots "
                  f"{detectable(2 * n_deals):.0%})")
            for name, rs in runs:
                m = deal_measures(rs)
                if not m:
                    continue
                summary = next(iter(summarize(rs).values()))
                n = len(m)
                hv = sum(x["h_votes"] for x in m)
                av = sum(x["a_votes"] for x in m)
                print(f"  {name}  ({n} deals)")
                print(f"    {'innocent person voted out':40s} {fmt_share(sum(x['human_out'] for x in m), n)}")
                print(f"    {'style-matched AI in that seat voted out':40s} {fmt_share(sum(x['ai_out'] for x in m), n)}")
                print(f"    {'gap person - AI (target <= +5)':40s} {fmt_diff([float(x['human_out']) - float(x['ai_out']) for x in m])}")
                print(f"    {'AI votes on the real outsider':40s} {fmt_share(sum(x['h_on_outsider'] for x in m), hv)}")
                print(f"    {'AI votes on the innocent person':40s} {fmt_share(sum(x['h_on_person'] for x in m), hv)}")
                print(f"    {'margin outsider - person (target >= +20)':40s} "
                      f"{fmt_diff([(x['h_on_outsider'] - x['h_on_person']) / x['h_votes'] for x in m if x['h_votes']])}")
                if pm := [x for x in m if "hp_person" in x]:  # the ballots' posteriors: the reading without the draw's noise
                    print(f"    {'  the posteriors they drew from: person':40s} {100 * sum(x['hp_person'] for x in pm) / len(pm):.1f}%, on the outsider "
                          f"{100 * sum(x['hp_outsider'] for x in pm) / len(pm):.1f}%; on the AI in that seat (AI arm) "
                          f"{100 * sum(x['ap_seat0'] for x in pm) / len(pm):.1f}%: gap {fmt_diff([x['hp_person'] - x['ap_seat0'] for x in pm])}")
                print(f"    {'AI only: votes on the outsider':40s} {fmt_share(sum(x['a_on_outsider'] for x in m), av)}")
                print(f"    {'AI only: votes on seat 0 (innocent AI)':40s} {fmt_share(sum(x['a_on_seat0'] for x in m), av)}")
                print(f"    {'AI only: outsider voted out':40s} {fmt_share(sum(x['a_outsider_out'] for x in m), n)}")
                print(f"    {'outsider voted out (with the person)':40s} {fmt_share(sum(x['h_outsider_out'] for x in m), n)}")
                print_to_the_end(game, m)
                if game == "chameleon" and data.get("cards"):
                    if tools is None:
                        tools = sneak_tools()
                    cards = {int(k): (str(v[0]), str(v[1])) for k, v in data["cards"].items()}
                    clues = {int(k): v for k, v in data["clues"].items()}
                    u = sneak_utility(rs, clues, cards, *tools)
                    ai, base, ppl = u["ai"], u["category"], u["people"]
                    if ai:
                        print(f"    {'SNEAK utility, innocent AI clues':40s} {100 * sum(ai) / len(ai):5.1f} "
                              f"[{100 * bootstrap(ai)[0]:.1f}, {100 * bootstrap(ai)[1]:.1f}] (n={len(ai)})")
                        print(f"    {'  the category word as the clue':40s} {100 * sum(base) / len(base):5.1f} "
                              f"[{100 * bootstrap(base)[0]:.1f}, {100 * bootstrap(base)[1]:.1f}] (n={len(base)})")
                        pd, (lo, hi) = u["paired"], bootstrap(u["paired"])
                        print(f"    {'  AI clues - category word, by deal':40s} {100 * sum(pd) / len(pd):+5.1f} "
                              f"[{100 * lo:+.1f}, {100 * hi:+.1f}] (n={len(pd)} deals; target: clearly above 0)")
                        print(f"    {'  the people clues':40s} {100 * sum(ppl) / len(ppl):5.1f} "
                              f"[{100 * bootstrap(ppl)[0]:.1f}, {100 * bootstrap(ppl)[1]:.1f}] (n={len(ppl)})")
                        print(f"    {'  innocent AI clues that are the category':40s} {u['category_said']} of {len(ai)}")
                if oc := [r for r in data.get("off_topic", []) if r["agent"] + cast == name and r["game"] == game]:
                    where = "the card" if game == "chameleon" else "the pair"
                    print(f"    {'outsider in seat 0, round 1':40s} voted out / the innocent AI ballots on it")
                    for arm, label in (("off topic", f"a person saying a word off {where}"), ("agent", "this agent as the outsider")):
                        xs = [r for r in oc if r["arm"] == arm]
                        print(f"    {'  ' + label:40s} {fmt_share(sum(r['out'] for r in xs), len(xs))}; "
                              f"{fmt_share(sum(r['on'] for r in xs), sum(r['ballots'] for r in xs))}")
                print(f"    {'sources':40s} {json.dumps(summary['sources'], sort_keys=True)}; first try {summary['first_try']:.0%}; "
                      f"choice p50 {summary['choice_p50_s']:.3f} s, text p50 {summary['text_p50_s']:.3f} s")


def team_sections(args: argparse.Namespace) -> None:
    """The team games' sections (Just One, Decrypto, Spymasters), when ``bench/people_teams.py`` provides them."""
    try:
        teams = importlib.import_module("bench.people_teams")
    except ModuleNotFoundError:
        return
    sections = getattr(teams, "sections", None)
    if callable(sections):  # the team games' own list and both halves; this bench's agents
        sections(argparse.Namespace(agents=args.agents, half="both", games=",".join(teams.GAMES)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=0, help="deals per game and half, each played twice (0: all, about 210)")
    parser.add_argument("--agents", default=DEFAULT_AGENTS, help="comma-separated configured agent names")
    parser.add_argument("--games", default=",".join(GAMES), help=f"comma-separated, of {', '.join(GAMES)}")
    parser.add_argument("--halves", default=",".join(HALVES), help="comma-separated, of test, development")
    parser.add_argument("--people", default=str(PEOPLE), help="the writers' files and SPLIT.json")
    parser.add_argument("--define", default="", help="extra agent entries, as HUSHTABLE_AGENTS JSON")
    parser.add_argument("--before", default=str(BEFORE), help="the previous default's recorded run ('' for none)")
    parser.add_argument("--out", default="", help="write the raw rounds here (JSON)")
    parser.add_argument("--record", default="", help="write this run as a recorded 'before' (with the commit) here")
    parser.add_argument("--report-only", default="", help="print a stored --out/--record run instead of playing")
    parser.add_argument("--no-teams", action="store_true", help="leave out bench/people_teams.py's sections")
    parser.add_argument("--off-topic", type=int, default=60,
                        help="deals per game and half re-dealt with a person as the outsider saying a word from elsewhere (0: none)")
    parser.add_argument("--person-ballot", choices=("random", "agent"), default="random",
                        help="the person's ballots: seeded random (the measure) or cast by the agent from seat 0 (a diagnostic)")
    args = parser.parse_args()
    unknown = sorted({g.strip() for g in args.games.split(",") if g.strip()} - set(GAMES))
    if unknown:
        parser.error(f"--games takes {', '.join(GAMES)}; not {', '.join(unknown)}.")
    bad = sorted({h.strip() for h in args.halves.split(",") if h.strip()} - set(HALVES))
    if bad:
        parser.error(f"--halves takes {', '.join(HALVES)}; not {', '.join(bad)}.")
    try:
        for half in HALVES:
            load_half(half, Path(args.people))
    except DigestMismatch as e:
        sys.exit(str(e))
    before = json.loads(Path(args.before).read_text()) if args.before and Path(args.before).exists() else None
    if args.report_only:
        stored = json.loads(Path(args.report_only).read_text())
        report(stored["halves"], before)
        return
    started = time.perf_counter()
    halves = asyncio.run(run(args))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False).stdout.strip()
    stored = {"commit": commit, "deals": args.deals, "seconds": round(time.perf_counter() - started), "halves": halves}
    for path in (args.out, args.record):
        if path:
            Path(path).write_text(json.dumps(stored, indent=None, separators=(",", ":")))
    report(halves, before)
    if not args.no_teams:
        team_sections(args)


if __name__ == "__main__":
    main()
