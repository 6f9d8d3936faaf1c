"""``hushtable spygame ablation``: the strategic agent with its word guessing or its reasoning switched off
(the agent spec's ``ablate`` option), played on seeded Who-is-Spy deals. Real engines, the real strategic
agent built from its entry's options, the session's real MiniLM index; no language model is asked."""

from __future__ import annotations

import asyncio
import json
import math
import re
from typing import Any

import pytest

import games
from bot.research.spyablation import (
    FULL,
    GameRow,
    Move,
    define_arms,
    design,
    mean_hw,
    ratio_hw,
    render,
    run,
    summarize,
    wilson,
)
from games.base import Choice
from games.labels import fill_spec
from models.agents.base import Source
from models.agents.games import game_agent, spy
from models.agents.llm import agent_from_params
from models.agents.propose import Strategy
from models.agents.reading import clarity, pointing, suspicion, vote_weights
from models.agents.registry import AgentEntry, AgentKind, AgentRegistry
from models.embeddings import VocabIndex
from models.types import Inference
from tests.models.test_embed_agent import index  # noqa: F401  # the session's MiniLM index
from tests.models.test_fair_voting import spy_table

OFF_GUESS = frozenset({spy.GUESS})


async def no_model(name: str) -> Inference:
    raise AssertionError("the algorithmic path asks no language model")


def registry_over(index: VocabIndex, *entries: AgentEntry) -> AgentRegistry:  # noqa: F811
    """The registry's real llm builder (``agent_from_params`` on the entry's options) over the session's index."""
    reg = AgentRegistry([AgentEntry("strategist", AgentKind.LLM, "default"), *entries])
    reg.register(AgentKind.LLM, lambda e, seed: agent_from_params(no_model, e.model, e.params, seed, spec=e.name,
                                                                   index_for=lambda _: index))
    return reg


# The spy (seat 2, "judge") hears three seats describe a lawyer.
LAWYERS = (("lawyer", "judge"), 2, ["represents clients", "attorney", "bench and gavel", "legal counsel"])


# --------------------------------------------------------------------------- the switches in the agent


def test_ablate_is_an_option_of_the_strategic_agents_entry_and_a_bad_one_is_refused(index: VocabIndex) -> None:  # noqa: F811
    assert Strategy.from_params({"ablate": "guess+reason"}).ablate == {"guess", "reason"}
    assert Strategy.from_params({}).ablate == frozenset() == Strategy.from_params({"ablate": "none"}).ablate
    with pytest.raises(ValueError, match="guess, reason.*'bluff'"):
        Strategy.from_params({"ablate": "guess+bluff"})
    reg = registry_over(index, AgentEntry("llm:plain", AgentKind.LLM, "default", {"mode": "plain"}),
                        AgentEntry("llm:noguess", AgentKind.LLM, "default", {"ablate": "guess"}))
    specs = define_arms(reg, "llm:default", ["guess", "reason"])  # the old name of the strategist
    assert specs == {FULL: "strategist", "guess": "strategist?ablate=guess", "reason": "strategist?ablate=reason"}
    assert reg(specs["reason"], 0).strategy.ablate == {"reason"}  # type: ignore[attr-defined]
    assert reg("strategist", 0).strategy.ablate == frozenset()  # type: ignore[attr-defined]
    for name, why in (("random", "no strategy steps"), ("llm:plain", "no strategy steps"), ("llm:noguess", "already")):
        with pytest.raises(ValueError, match=why):
            define_arms(reg, name, ["guess"])
    with pytest.raises(ValueError, match="'bluff'"):
        define_arms(reg, "strategist", ["bluff"])


def test_without_ablation_the_game_agent_is_the_same_object() -> None:
    agent = game_agent("spy")
    assert agent.ablated(frozenset()) is agent
    assert agent.ablated(frozenset({"something-of-another-game"})) is agent
    assert agent.ablated(OFF_GUESS) is agent.ablated(frozenset({"guess"})) is not agent
    assert game_agent("decrypto").ablated(OFF_GUESS) is game_agent("decrypto")


def test_without_word_guessing_each_seat_is_weighed_against_the_prior_not_the_pair(index: VocabIndex) -> None:  # noqa: F811
    s = spy_table(*LAWYERS)
    g = games.get("spy")
    obs, spec = g.observe(s, 2), g.legal(s, 2)
    assert isinstance(spec, Choice)
    full = spy.vote_posterior(index, obs, spec)
    ablated = spy.vote_posterior(index, obs, spec, OFF_GUESS)
    assert full is not None and ablated is not None
    words, prior = spy.alternatives(index, "judge")
    texts = {"0": ["represents clients"], "1": ["attorney"], "3": ["legal counsel"]}
    z = {o: pointing(index, texts[o], words) for o in spec.ids()}
    # Whole, the seat infers the pair from every seat's descriptions and asks who fits the other word: worked out by hand.
    rels = [((m[:, 1:] - m[:, [0]]) * clarity(m)[:, None]).sum(axis=0) for m in z.values()]
    pair = spy.pair_posterior(prior, rels)
    assert full == pytest.approx(vote_weights({o: suspicion(z[o], 0, pair) for o in spec.ids()}))
    # Without the guess it weighs each seat against its own word's neighbours by their prior alone.
    assert ablated == pytest.approx(vote_weights({o: suspicion(z[o], 0, prior) for o in spec.ids()}))
    assert full != pytest.approx(ablated)
    # The spy (judge) votes as a villager would: over the three other seats, all lawyers, with no branch of its own.
    assert set(full) == {"0", "1", "3"}


def test_without_word_guessing_a_description_is_scored_on_ones_own_word_alone(index: VocabIndex) -> None:  # noqa: F811
    words, _ = spy.alternatives(index, "judge")
    for text in ("court ruling", "hearing", "bench and gavel"):
        z = pointing(index, [text], words)[0]
        own, margin = float(z[0]), float(z[0] - z[1:].max())
        bonus = spy.describe_score(index, "judge", text, OFF_GUESS) - min(own, spy.OWN_CAP)
        assert min(abs(bonus), abs(bonus - spy.PEOPLE_BONUS)) < 1e-5
        assert spy.describe_score(index, "judge", text) == pytest.approx(
            min(own, spy.OWN_CAP) + 0.5 * min(margin, spy.MARGIN_CAP) + bonus, abs=1e-5)


def test_without_reasoning_the_agents_vote_reads_no_description(index: VocabIndex) -> None:  # noqa: F811
    s = spy_table(*LAWYERS)
    g = games.get("spy")
    reg = registry_over(index)
    specs = define_arms(reg, "strategist", ["reason"])
    obs, spec = g.observe(s, 2), g.legal(s, 2)

    async def vote(name: str, seed: int) -> Any:
        return await reg(name, seed).act(obs, fill_spec(spec))  # type: ignore[arg-type]

    whole = asyncio.run(vote(specs[FULL], 1))
    evidence = whole.calls[-1].prompt["evidence"]
    assert whole.source is Source.SPECIALIST and max(evidence.values()) > 0.6  # it reads the table: one seat stands out
    ballots = []
    for seed in range(24):
        d = asyncio.run(vote(specs["reason"], seed))
        flat = d.calls[-1].prompt["evidence"]
        assert d.source is Source.SPECIALIST and set(flat) == {"0", "1", "3"}
        assert all(p == pytest.approx(1 / 3) for p in flat.values())  # nobody's descriptions were read
        ballots.append(d.action.value[0])
    assert set(ballots) == {"0", "1", "3"}  # a seeded uniform draw, not the table's favourite every time


# --------------------------------------------------------------------------- the protocol


def test_the_deals_are_seeded_and_put_the_guest_where_its_role_says() -> None:
    spy_deals, vil_deals = design(40, 3, "spy"), design(40, 3, "villager")
    assert spy_deals == design(40, 3, "spy") and spy_deals != design(40, 4, "spy")
    assert all(d.guest == d.spy for d in spy_deals) and all(d.guest != d.spy for d in vil_deals)
    assert len({d.spy for d in spy_deals}) == 4 and len({(d.villager_word, d.spy_word) for d in spy_deals}) > 30
    with pytest.raises(ValueError, match="spy or a villager"):
        design(1, 0, "mr_white")


def test_a_small_run_is_reproducible_and_the_ablated_guest_skips_its_step(index: VocabIndex) -> None:  # noqa: F811
    reg = registry_over(index)
    specs = define_arms(reg, "strategist", ["reason"])

    def once() -> list[GameRow]:
        return asyncio.run(run(reg, specs, "strategist", games=1, seed=5, roles=("spy", "villager")))

    rows = once()
    assert [r.to_json() for r in rows] == [r.to_json() for r in once()]
    assert [(r.role, r.arm, r.deal) for r in rows] == [(role, arm, 0) for role in ("spy", "villager")
                                                       for arm in (FULL, "reason")]
    for r in rows:
        assert 1 <= r.rounds <= 3 and r.voted_rounds <= r.rounds and {m.kind for m in r.moves} <= {"describe", "vote"}
        assert {m.source for m in r.moves} <= {Source.SPECIALIST.value, Source.RULES.value}
    votes = {arm: [m.evidence for r in rows if r.arm == arm for m in r.moves
                   if m.kind == "vote" and m.source == Source.SPECIALIST.value] for arm in (FULL, "reason")}
    assert votes["reason"] and all(len(set(e.values())) == 1 for e in votes["reason"] if e)
    assert any(len(set(e.values())) > 1 for e in votes[FULL] if e)


def test_the_numbers_are_computed_as_printed() -> None:
    def row(arm: str, deal: int, won: bool, rounds: int, votes: int, voted: int) -> GameRow:
        return GameRow(arm, "spy", deal, won, rounds, votes, voted,
                       (Move("describe", "specialist"), Move("vote", "specialist" if deal else "model")))

    rows = [row(FULL, 0, True, 3, 2, 2), row(FULL, 1, False, 1, 3, 1), row(FULL, 2, False, 2, 4, 2),
            row(FULL, 3, True, 3, 1, 2),
            row("guess", 0, False, 1, 3, 1), row("guess", 1, False, 1, 2, 1), row("guess", 2, True, 3, 2, 2),
            row("guess", 3, False, 2, 3, 2)]
    full, guess = summarize(rows)
    assert (full.games, full.wins, full.win) == (4, 2, 0.5) and full.diff is None
    assert full.win_ci == pytest.approx((0.15004, 0.84996), abs=1e-4)  # Wilson, 2 of 4
    assert full.round == pytest.approx((2.25, 1.96 * math.sqrt((0.5625 + 1.5625 + 0.0625 + 0.5625) / 3 / 4)))
    # Voted pooled: 10 votes over 7 rounds; the ratio estimator's residuals 2-20/7, 3-10/7, 4-20/7, 1-20/7.
    r = 10 / 7
    resid = [2 - 2 * r, 3 - r, 4 - 2 * r, 1 - 2 * r]
    assert full.voted == pytest.approx((r, 1.96 * math.sqrt(sum(e * e for e in resid) / 12) / (7 / 4)))
    # Paired by deal: -1, 0, +1, -1.
    assert guess.wins == 1 and guess.diff == pytest.approx((-0.25, 1.96 * math.sqrt((0.5625 + 0.0625 + 1.5625 + 0.5625) / 3 / 4)))
    assert full.sources == {"describe": {"specialist": 4}, "vote": {"specialist": 3, "model": 1}}
    text = render([full, guess], guest="strategist", hosts="strategist", games=4, seed=0)
    lines = text.splitlines()
    full_line = next(x for x in lines if x.startswith("full agent"))
    assert "0.50 [0.15, 0.85]" in full_line and "2.25 ± " in full_line and f"{r:.2f} ± " in full_line
    assert full_line.rstrip().endswith("0.33 / 2.18 / 1.31")  # the paper's Table 5 beside it
    guess_line = next(x for x in lines if x.startswith("w/o word guessing"))
    lo, hi = -0.25 - guess.diff[1], -0.25 + guess.diff[1]  # type: ignore[index]
    assert "0.25 [" in guess_line and f"-0.25 [{lo:+.2f}, {hi:+.2f}]" in guess_line and "0.26 / 2.12 / 1.34" in guess_line
    assert "vote algorithm 3, model 1 (of 4)" in text and "describe algorithm 4 (of 4)" in text
    assert "villager" not in text.split("Where")[0]  # no villager rows were played


def test_interval_helpers_on_edge_cases() -> None:
    assert all(math.isnan(x) for x in wilson(0, 0))
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and 0.25 < hi < 0.35
    assert mean_hw([1.0])[0] == 1.0 and math.isnan(mean_hw([1.0])[1])
    assert all(math.isnan(x) for x in ratio_hw([], []))


def test_the_command_prints_a_stored_run_and_refuses_what_it_cannot_read(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from bot.cli import app

    rows = [GameRow(FULL, "spy", 0, True, 2, 1, 2, (Move("describe", "specialist"),)),
            GameRow("reason", "spy", 0, False, 1, 3, 1, (Move("describe", "specialist"),))]
    path = tmp_path / "rows.jsonl"
    head = {"run": {"guest": "llm:big", "hosts": "strategist", "seed": 7, "games": 1}}
    path.write_text("".join(json.dumps(x) + "\n" for x in [head, *(r.to_json() for r in rows)]), encoding="utf-8")
    out = CliRunner().invoke(app, ["spygame", "ablation", "--from", str(path)])
    assert out.exit_code == 0, out.output
    assert "guest llm:big, hosts strategist; 1 seeded games per arm and role (seed 7)" in out.output
    assert re.search(r"^full agent +1\.00 \[", out.output, re.M) and re.search(r"^w/o reasoning +0\.00 \[.*-1\.00", out.output, re.M)
    path.write_text("not json\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["spygame", "ablation", "--from", str(path)])
    assert bad.exit_code == 2 and "is not a stored ablation run" in bad.output and "Traceback" not in bad.output
    role = CliRunner().invoke(app, ["spygame", "ablation", "--role", "mr_white", "--from", str(path)])
    assert role.exit_code == 2 and "spy or villager" in role.output
