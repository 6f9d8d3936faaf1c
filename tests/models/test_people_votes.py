"""Votes that treat a person like an AI in the same seat, and innocent Chameleon clues that fit the secret.

Evidence of innocence saturates, so a phrase that fits one's word clears its speaker as much as an
AI's single word; every vote records the suspicion it gave each seat; an innocent Chameleon AI
never clues the category or a word that fits the whole card. Real all-MiniLM-L6-v2 (bundled), real
engines, the real strategic agent (no language model needed for these moves).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import games
from bench.fairness import HUMAN, OFF_TOPIC_WORDS, Deal, off_topic, off_topic_rows
from bench.people import DigestMismatch, deal_measures, load_half, sneak_utility
from bot.core.agents import AgentRunner
from games import decks
from games.base import Action, Choice, Text, normalize
from models.agents.games import chameleon, spy
from models.agents.reading import INNOCENCE, pointing, suspicion
from models.embeddings import VocabIndex
from models.eval.decoys import DEFAULT_DECOYS
from models.eval.metrics import normalised
from tests.models.test_embed_agent import index  # noqa: F401  # the session's MiniLM index
from tests.models.test_fair_voting import _factory, spy_table


def test_innocence_saturates_so_a_clear_phrase_clears_like_a_sharp_word() -> None:
    prior = np.array([0.0, 0.5, 0.5])
    sharp = np.array([[9.0, 1.0, 1.0]])  # an AI's single word at a tuned similarity
    phrase = np.array([[5.0, 2.5, 2.0]])  # a person's phrase: less sharp, still clearly the word
    s_sharp, s_phrase = suspicion(sharp, 0, prior), suspicion(phrase, 0, prior)
    assert -INNOCENCE <= s_sharp < 0 and -INNOCENCE <= s_phrase < 0
    assert s_phrase <= s_sharp + 0.15 * INNOCENCE, (s_phrase, s_sharp)
    against = suspicion(np.array([[1.0, 9.0, 1.0]]), 0, prior)
    assert against > 3.0  # evidence against a seat is not capped


def _suspicion_of_seat0(index: VocabIndex, pair: tuple[str, str], seat0: str, rest: list[str], voter: int) -> float:  # noqa: F811
    s = spy_table(pair, 2, [seat0, *rest])
    g = games.get("spy")
    spec = g.legal(s, voter)
    assert isinstance(spec, Choice)
    ev = spy.evidence(index, g.observe(s, voter), spec)
    assert ev is not None
    return ev["0"] - float(np.mean([v for k, v in ev.items() if k != "0"]))


@pytest.mark.parametrize(("pair", "phrase", "rest"), [
    (("lawyer", "judge"), "argues cases in court for clients", ["legal", "verdict", "lawsuits"]),
    (("airplane", "helicopter"), "you fly in one on holiday, with wings", ["jet", "rotor", "airliner"]),
])
def test_a_person_phrase_is_suspected_no_more_than_the_ai_in_that_seat(index: VocabIndex, pair: tuple[str, str],  # noqa: F811
                                                                         phrase: str, rest: list[str]) -> None:
    spec = Text("describe", "", ("d",), max_words=12, max_chars=200)
    ai = spy.descriptions(index, pair[0], spec, rest, 12)[0]
    person = _suspicion_of_seat0(index, pair, phrase, rest, 3)
    machine = _suspicion_of_seat0(index, pair, ai, rest, 3)
    assert person <= machine + 0.5, (phrase, person, ai, machine)


def test_each_vote_records_the_suspicion_it_gave_every_seat(index: VocabIndex) -> None:  # noqa: F811
    s = spy_table(("lawyer", "judge"), 2, ["argues cases in court for clients", "legal", "verdict", "lawsuits"])
    g = games.get("spy")
    runner = AgentRunner(_factory(index), timeout_s=60.0, retries=1)
    spec = g.legal(s, 3)
    assert isinstance(spec, Choice)
    out = asyncio.run(runner.decide(g, s, 3, game_id=1, spec="strategist", seed=5))
    recorded = [c.prompt["suspicion"] for c in out.calls if isinstance(c.prompt, dict) and c.prompt.get("suspicion")]
    assert recorded, "the vote's call row holds the suspicion of every option"
    assert set(recorded[0]) == set(spec.ids())
    assert max(recorded[0], key=recorded[0].__getitem__) == "2"


CARDS = [(name, words) for name, words in decks.cards()][::9]


@pytest.mark.parametrize(("name", "words"), CARDS, ids=[n for n, _ in CARDS])
def test_an_innocent_chameleon_ai_never_clues_the_category_nor_the_whole_card(index: VocabIndex, name: str,  # noqa: F811
                                                                               words: tuple[str, ...]) -> None:
    g = games.get("chameleon")
    for secret in list(words)[:4]:
        cfg = g.make_config("classic", deal={"card": name, "secret": secret, "chameleon": 2, "first": 0})
        s, _ = g.new(cfg, 4, 3)
        spec = g.legal(s, 0)
        assert isinstance(spec, Text)
        obs = g.observe(s, 0)
        pool = chameleon.candidates(index, obs, spec, 24)[0]
        assert pool
        for clue in pool:
            assert not chameleon.names_category(clue, name), (name, secret, clue)
        ranked = sorted(pool, key=lambda w: -chameleon.text_score(index, _judge(index), obs, Action.say("clue", w)))
        best = ranked[0]
        assert normalize(best) not in {normalize(w) for w in words}
        assert chameleon.specificity(index, best, secret, words) >= chameleon.MIN_SPECIFIC, (secret, best)
        z = pointing(index, [best], list(words))[0]
        assert z.argmax() != -1  # a number, not a failure


def _judge(index: VocabIndex) -> Any:  # noqa: F811
    from models.agents.judge import EmbeddingJudge

    return EmbeddingJudge(index)


def test_the_bench_refuses_a_writer_file_whose_digest_differs(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2] / "bench" / "data" / "people"
    split = json.loads((root / "SPLIT.json").read_text())
    for w in ("w1", "w2", "w3", "w4", "w5", "w6"):
        (tmp_path / f"{w}.json").write_bytes((root / f"{w}.json").read_bytes())
    (tmp_path / "SPLIT.json").write_text(json.dumps(split))
    assert set(load_half("test", tmp_path)) == {"w2", "w3", "w4"}
    changed = (root / "w3.json").read_bytes().replace(b'"', b'"', 1) + b" "
    assert hashlib.sha256(changed).hexdigest() != split["sha256"]["w3"]
    (tmp_path / "w3.json").write_bytes(changed)
    with pytest.raises(DigestMismatch, match="w3.json differs"):
        load_half("test", tmp_path)


def _row(arm: str, out: int | None, later: list[dict[str, Any]], end: dict[str, Any]) -> dict[str, Any]:
    return {"game": "spy", "seed": 1, "agent": "strategist", "arm": arm, "word": "lawyer", "outsider": 2, "out": out,
            "ballot": {"0": 1, "1": 0, "2": 0, "3": 2}, "said": [], "moves": [], "later": later, "end": {**end, "complete": True}}


def test_the_bench_keeps_how_a_deal_ended_apart_from_round_one() -> None:
    # With the person: seat 0 voted out in round 1, the spy caught in round 2 (seats 1 and 3 on it, seat 2 on seat 1).
    human = _row("human", 0, [{"round": 2, "stage": "vote", "ballot": {"1": 2, "2": 1, "3": 2}, "alive": [1, 2, 3]}],
                 {"outsider_caught": True, "seat0_out": True, "rounds": 2, "eliminated": [[1, 0], [2, 2]]})
    ai = _row("ai", 2, [], {"outsider_caught": True, "seat0_out": False, "rounds": 1, "eliminated": [[1, 2]]})
    [m] = deal_measures([human, ai])
    assert m["human_out"] and not m["ai_out"] and m["h_on_person"] == 1  # round 1's measures as before
    assert m["end"] and m["h_caught"] and m["a_caught"] and m["h_out_end"] and not m["a_out_end"]
    assert (m["h_rounds"], m["a_rounds"]) == (2, 1)
    assert (m["hl_on_outsider"], m["hl_on_person"], m["hl_votes"]) == (2, 0, 2)  # the spy's own later ballot is not counted
    assert m["al_votes"] == 0 and m["complete"]
    # A run recorded without the later rounds keeps round 1's measures and no ending.
    [old] = deal_measures([{k: v for k, v in r.items() if k not in ("later", "end")} for r in (human, ai)])
    assert "end" not in old and old["human_out"]


def test_the_bench_reads_the_posteriors_the_first_ballots_were_drawn_from() -> None:
    def vote(seat: int, post: dict[str, float]) -> dict[str, Any]:
        return {"seat": seat, "kind": "choice", "action": [sorted(post, key=lambda k: -post[k])[0]], "posterior": post}

    ending = {"outsider_caught": False, "seat0_out": False, "rounds": 1, "eliminated": [[1, 0]]}
    human = _row("human", 0, [], ending)
    ai = _row("ai", 2, [], ending)
    # Seat 1 votes twice (round 1, then a run-off): only its first posterior counts; seat 0 and the outsider (2) are left out.
    human["moves"] = [vote(0, {"1": 1.0}), vote(1, {"0": 0.5, "2": 0.3, "3": 0.2}), vote(2, {"0": 1.0}),
                      vote(3, {"0": 0.1, "1": 0.2, "2": 0.7}), vote(1, {"0": 1.0})]
    ai["moves"] = [vote(1, {"0": 0.2, "2": 0.6, "3": 0.2}), vote(3, {"0": 0.0, "1": 0.4, "2": 0.6}), {"seat": 3, "kind": "text"}]
    [m] = deal_measures([human, ai])
    assert m["hp_person"] == pytest.approx(0.3) and m["hp_outsider"] == pytest.approx(0.5)
    assert m["ap_seat0"] == pytest.approx(0.1)
    # Agents that record no posterior (the random one, the embedding baseline) give no such measure.
    for r in (human, ai):
        for mv in r["moves"]:
            mv["posterior"] = None
    assert "hp_person" not in deal_measures([human, ai])[0]


def test_the_off_topic_outsider_sits_in_seat_0_and_says_words_from_elsewhere(index: VocabIndex) -> None:  # noqa: F811
    cards = dict(decks.cards())
    card = next(iter(cards))
    secret = cards[card][0]
    deals = [(Deal("chameleon", 9000 + i, {"deal": {"card": card, "secret": secret, "chameleon": 2}}, secret, 2), ())
             for i in range(2)]
    moved, words = off_topic(deals[0][0], 0)
    assert moved.outsider == HUMAN and moved.options["deal"] == {"card": card, "secret": secret, "chameleon": HUMAN}
    assert len(words) == OFF_TOPIC_WORDS and off_topic(deals[0][0], 0) == (moved, words)  # seeded
    assert not {normalize(w) for w in cards[card]} & {normalize(w) for w in words}
    assert any(set(words) <= set(ws) for name, ws in cards.items() if name != card)
    villager, spy_word = next(iter(decks.pairs()))
    spy_deal = Deal("spy", 9100, {"deal": {"pair": [villager, spy_word], "spies": [3]}}, villager, 3)
    moved_spy, said = off_topic(spy_deal, 0)
    assert moved_spy.options["deal"] == {"pair": [villager, spy_word], "spies": [HUMAN]} and moved_spy.word == spy_word
    assert len(said) == OFF_TOPIC_WORDS and not {normalize(villager), normalize(spy_word)} & {normalize(w) for w in said}
    rows = asyncio.run(off_topic_rows([*deals, (spy_deal, ())], "llm:default", _factory(index), "development"))
    assert [(r["game"], r["arm"]) for r in rows] == [("chameleon", "off topic"), ("chameleon", "agent")] * 2 + [
        ("spy", "off topic"), ("spy", "agent")]
    for r in rows:
        assert r["ballots"] == 3 and 0 <= r["on"] <= 3 and r["out"] in (True, False)


class _Ally:
    """An evaluator whose ally gives the clue a fixed probability by its text (the bench's arithmetic under test)."""

    def __init__(self, probs: dict[str, float]) -> None:
        self.probs = probs

    def ally_now(self, inst: Any, messages: list[str]) -> Any:
        return SimpleNamespace(probs=[self.probs[inst.message], *([0.0] * (len(messages) - 1))])


class _Decoys:
    def pool_now(self, card: str, words: tuple[str, ...]) -> list[str]:
        return [f"decoy{i}" for i in range(40)]


def test_the_chameleon_utility_is_compared_with_the_category_word_deal_by_deal() -> None:
    card, words = next(iter(decks.cards()))
    rows = [{"arm": "human", "seed": s, "outsider": 3,
             "said": [{"seat": 0, "text": "person"}, {"seat": 1, "text": f"a{s}"}, {"seat": 2, "text": f"b{s}"},
                      {"seat": 3, "text": "sly"}]} for s in (1, 2)]
    rows.append({**rows[0], "arm": "ai"})  # the AI arm is not the human arm's comparison
    probs = {"a1": 1.0, "b1": 0.5, "a2": 0.2, "b2": 0.2, card: 0.4, "person": 0.9, "sly": 0.0}
    u = sneak_utility(rows, {1: ["person"]}, {1: (card, words[0]), 2: (card, words[1])}, _Ally(probs), _Decoys())
    n = 1 + DEFAULT_DECOYS
    util = {k: normalised(p, n) for k, p in probs.items()}
    assert u["ai"] == [util["a1"], util["b1"], util["a2"], util["b2"]]  # the person's and the chameleon's clues left out
    assert u["category"] == [util[card]] * 2 and u["people"] == [util["person"]]
    assert u["paired"] == pytest.approx([(util["a1"] + util["b1"]) / 2 - util[card], util["a2"] - util[card]])


def test_the_bench_hands_the_team_games_their_own_list(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    import bench.people_teams as teams
    from bench.people import team_sections

    seen: list[argparse.Namespace] = []
    monkeypatch.setattr(teams, "sections", seen.append)
    team_sections(argparse.Namespace(agents="strategist", games="spy,chameleon", halves="test,development", deals=40))
    [args] = seen
    assert args.games.split(",") == list(teams.GAMES) and args.half == "both" and args.agents == "strategist"
