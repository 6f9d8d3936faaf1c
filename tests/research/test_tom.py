"""Theory-of-mind scoring on scripted games, checked against numbers worked out by hand.

``ScriptedModel`` is a deterministic test double, not a model: it answers each question with the
line this test wrote for it, so the scores below can be computed by hand from the script.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bot.research.tom import (
    Experiment,
    parse_code,
    parse_players,
    parse_words,
    run_decrypto,
    run_spy,
    smarties,
    to_records,
)
from models.types import GenerateRequest, GenerateResult, ScoreRequest, ScoreResult

KEYWORDS = {"1": "star", "2": "jazz", "3": "thunder", "4": "plane"}
# The benchmark variant's result shape (games/decrypto.py): one team, Eve guesses every turn.
ROUNDS = [("1-2-3", "3-1-2"), ("4-1-3", "4-1-3"), ("2-4-1", "1-4-2"), ("3-2-4", "2-3-4")]
DECRYPTO: dict[str, Any] = {
    "keywords": KEYWORDS,
    "history": [{"round": i + 1, "team": "A", "code": code, "hints": [f"h{i}{j}" for j in range(3)],
                 "hints_by_digit": {d: f"h{i}{j}" for j, d in enumerate(code.split("-"))}, "interceptor_guess": eve}
                for i, (code, eve) in enumerate(ROUNDS)],
}
DECRYPTO_BY_SEAT = {**DECRYPTO, "history": [{**h, "encoder": 0} for h in DECRYPTO["history"]]}
EVE = {  # round -> answers to prompts A, B, C
    2: ("sun, music, storm, jet", "sun, music, storm, jet", "star, jazz, thunder, plane"),
    3: ("star, jazz, thunder, plane", "x, x, x, x", "x, x, x, x"),  # A right: the turn is not scored
    4: ("sky, blues, rain, boat", "sky, blues, rain, car", "no idea"),
}
ALICE = {"1-2-3": "3-1-2", "4-1-3": "4-1-3", "2-4-1": "2-4-1", "3-2-4": "1-2-3"}  # code -> predicted Eve guess

SPY = {
    "roles": ["villager", "spy", "villager", "villager"], "villager_word": "cat", "spy_word": "dog",
    "descriptions": [{"round": 1, "seat": s, "text": f"said {s}"} for s in range(4)]
                    + [{"round": 2, "seat": 0, "text": "later"}],
}
FIRST = {  # seat -> its first-order answer (Player 1..4: keyword, identity)
    0: ["cat, villager", "dog, spy", "cat, villager", "cat, villager"],
    1: ["cat, villager", "cat, villager", "dog, spy", "cat, villager"],
    2: ["cat, villager", "dog, spy", "cat, villager", "fish, villager"],
    3: ["cat, villager", "dog, spy", "cat, villager", "cat, villager"],
}
SECOND = {0: "cat, villager", 1: "cat, villager", 2: "cat, spy", 3: "I cannot say"}


class ScriptedModel:
    """A deterministic test double for the inference client: the scripted answer to each question."""

    model_id = "scripted"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        system, user = req.messages[0].content, req.messages[-1].content
        self.asked.append(user)
        return GenerateResult(req.prefill + " " + self._answer(system, user), "scripted")

    def _answer(self, system: str, user: str) -> str:
        if "You are Eve" in system:
            now = re.match(r"Turn (\d+): You are the Interceptor", user)  # the benchmark's code's prompt
            rnd = int(now.group(1)) if now else len(re.findall(r"^Turn \d+:", user, re.M)) + 1
            a, b, c = EVE[rnd]
            return (b if "Before this reveal" in user or "Before the keywords were revealed" in user
                    else c if "second interceptor" in user.lower() else a)
        if "You are Alice" in system:
            code = re.search(r"hints for the code (\d-\d-\d)", user)
            assert code is not None
            return ALICE[code.group(1)]
        seat = int(re.search(r"You are Player (\d+)", system).group(1)) - 1  # type: ignore[union-attr]
        if "shoes of other players" in user:
            return SECOND[seat]
        return "\n".join(f"Player {k + 1}: {line}" for k, line in enumerate(FIRST[seat]))[len("Player 1:"):]

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        raise NotImplementedError("ToM questions are generated answers")

    async def aclose(self) -> None:
        return None


async def test_decrypto_smarties_and_perspective_taking_match_the_hand_computation() -> None:
    model = ScriptedModel()
    table, records = await run_decrypto(model, "llm:scripted", [(7, DECRYPTO)])
    row = table.row()
    # Rounds 2-4 are asked (not the first); round 3's A is right, so two turns are scored.
    assert row["turns_asked"] == 3 and row["turns_scored"] == 2
    # Round 2: B = A (strong and weak RC), C = the keywords (FB fails both). Round 4: B differs from the
    # keywords and from A (weak RC only), C unanswered (FB fails).
    assert row["rc_weak"] == 1.0 and row["rc_strong"] == 0.5
    assert row["fb_weak"] == 0.0 and row["fb_strong"] == 0.0
    # Perspective taking over 4 turns: right on rounds 1 and 2; "intercepted" predicted on rounds 2 and 3;
    # Eve really intercepted on round 2 only.
    assert row["pt_turns"] == 4
    assert row["pt_accuracy"] == 0.5 and row["pt_predicted_intercept"] == 0.5 and row["pt_real_intercept"] == 0.25
    b_asked = [q for q in model.asked if "Before the keywords were revealed" in q]
    assert len(b_asked) == 3  # B asked on every turn after the first
    # Eve sees the hint history by keyword only, as the benchmark's code asks (get_gopnik_prompt): round 3's
    # questions hold rounds 1 and 2's hints by keyword, not round 3's hints, and no code.
    third = next(q for q in b_asked if q.startswith("Turn 3:"))
    assert "    Keyword 1: h00, h11\n    Keyword 2: h01\n    Keyword 3: h02, h12\n    Keyword 4: h10" in third
    assert "h2" not in third and not re.search(r"\d-\d-\d", third)
    # --show-current-hints: what her move's prompt holds (the paper's Listing 7), the same answers read.
    shown = ScriptedModel()
    table2, _ = await run_decrypto(shown, "llm:scripted", [(7, DECRYPTO)], show_current_hints=True)
    assert table2.row() == row
    assert all("The hints given by the Encoder for this turn are: h1" in q for q in shown.asked
               if "Before this reveal" in q and "Turn 1:" in q and "Turn 2:" not in q)
    assert sum("Before this reveal" in q for q in shown.asked) == 3
    from bot.research.tom import render_decrypto

    assert "the hint history by keyword only" in render_decrypto({"llm:scripted": row})
    assert "--show-current-hints" in render_decrypto({"llm:scripted": row}, show_current_hints=True)
    assert "Paper (Decrypto, section 4.1 and Figure 4" in render_decrypto({"llm:scripted": row})
    # Unparsed answers are counted: round 4's C ("no idea") on a scored turn; every A was read.
    assert row["a_unparsed"] == 0 and row["bc_unparsed"] == 1 and row["pt_unanswered"] == 0
    # No seat agents given: no turn's hints are known to be the agent's own.
    assert row["pt_own_turns"] == 0 and row["pt_own_accuracy"] is None
    own, _ = await run_decrypto(ScriptedModel(), "llm:scripted", [(7, DECRYPTO_BY_SEAT)], {7: {0: "llm:scripted"}})
    assert own.row()["pt_own_turns"] == 4 and own.row()["pt_own_accuracy"] == 0.5
    stored = to_records(Experiment.DECRYPTO, "llm:scripted", records)
    assert [r.action_seq for r in stored] == [1, 2, 3, 4] and {r.evaluator for r in stored} == {"tom:decrypto:llm:scripted"}
    assert stored[1].metric["smarties"]["score"] == {"counted": True, "rc_weak": True, "rc_strong": True,
                                                      "fb_weak": False, "fb_strong": False, "a_unparsed": False,
                                                      "bc_unparsed": 0}


def test_a_strong_pass_needs_the_earlier_answer_and_a_right_a_is_not_scored() -> None:
    kw = ("star", "jazz", "thunder", "plane")
    assert not smarties(kw, kw, ("a", "b", "c", "d"), None).counted
    s = smarties(kw, ("a", "b", "c", "d"), ("A", "B", "C", "D"), ("star", "jazz", "thunder", "plane"))
    assert s.counted and s.rc_weak and s.rc_strong and not s.fb_weak and not s.fb_strong
    assert parse_words("ANSWER: 1. star, 2. jazz, 3. thunder, 4. plane", 4) == kw
    assert parse_words("ANSWER: 1: green; 2: jazz; 3: busy calm; 4: narrow", 4) == ("green", "jazz", "busy calm", "narrow")
    assert parse_words("no answer line", 4) is None and parse_words("ANSWER: star, jazz", 4) is None
    assert parse_code("ANSWER: 4-1-3") == "4-1-3" and parse_code("ANSWER: 4-4-1") is None


async def test_spy_asks_the_spy_seat_both_orders_and_the_hosts_the_first_as_the_paper_does() -> None:
    model = ScriptedModel()
    scores, records = await run_spy(model, "llm:scripted", [(9, SPY)])
    (got,) = scores
    assert got["seats"] == 4 and got["guests"] == 1 and len(records) == 4
    assert [r["seat_role"] for r in records] == ["host", "guest", "host", "host"]
    # Four first-order questions (every seat) and one second-order question (the guest's).
    assert sum("shoes of other players" in q for q in model.asked) == 1 and len(model.asked) == 5
    assert records[0]["second"] is None and records[1]["second"] is not None
    # The guest is seat 1 (the spy). It calls itself a villager: self-identity 0.
    assert got["self_identity"] == 0.0
    # 1-word over its 3 others (all "cat"): it reads seat 2 as "dog": 2 of 3. 1-identity: seat 2 as the spy: 2 of 3.
    assert got["one_word"] == pytest.approx(2 / 3) and got["one_identity"] == pytest.approx(2 / 3)
    # 2nd order: the hosts (seats 0, 2, 3) all read seat 1 as (dog, spy); it expects (cat, villager): both wrong.
    assert got["two_word"] == 0.0 and got["two_identity"] == 0.0
    assert got["unanswered"] == 0 and got["ties"] == 0
    assert parse_players("Player 1: cat, villager\nPlayer 2: dog, spy", 2) is not None
    assert parse_players("Player 1: cat, villager", 2) is None  # every player or nothing


async def test_a_guest_that_gave_no_description_is_not_asked_based_on_your_description() -> None:
    said: list[dict[str, Any]] = SPY["descriptions"]  # type: ignore[assignment]
    silent = {**SPY, "descriptions": [d for d in said if d["seat"] != 1]}  # the spy timed out
    model = ScriptedModel()
    scores, records = await run_spy(model, "llm:scripted", [(9, silent)])
    (got,) = scores
    assert not any("based on your description" in q.lower() for q in model.asked) and len(model.asked) == 4
    assert records[1]["second"] is None and set(records[1]["question"]) == {"first"}
    # No second order for it: left out of 2-Word and 2-Identity (never a wrong answer), counted apart.
    assert got["two_word"] is None and got["two_identity"] is None
    assert got["undescribed"] == 1 and got["unanswered"] == 0
    assert got["one_word"] == pytest.approx(2 / 3)  # the first order is asked as before
    from bot.research.tom import render_spy

    text = render_spy({"llm:scripted": {**got, "games": 1}})
    assert "no descr." in text and "Paper (SpyGame, Table 7" in text and "GPT-4" in text


async def test_a_tied_host_plurality_is_left_out_and_a_blank_seat_has_no_word_to_guess() -> None:
    first = {0: ["cat, villager", "dog, spy", "cat, villager", "cat, villager"],
             1: ["cat, villager", "cat, spy", "fish, villager", "cat, villager"],
             2: ["cat, villager", "fish, spy", "cat, villager", "cat, villager"],
             3: ["cat, villager", "cow, villager", "cat, villager", "cat, villager"]}

    class Tied(ScriptedModel):
        def _answer(self, system: str, user: str) -> str:
            seat = int(re.search(r"You are Player (\d+)", system).group(1)) - 1  # type: ignore[union-attr]
            if "shoes of other players" in user:
                return "dog, spy"
            return "\n".join(f"Player {k + 1}: {line}" for k, line in enumerate(first[seat]))[len("Player 1:"):]

    scores, _ = await run_spy(Tied(), "llm:scripted", [(9, SPY)])
    (got,) = scores
    # The hosts' words for seat 1 are dog, fish, cow: a tie, left out and counted; identities spy, spy, villager.
    assert got["two_word"] is None and got["ties"] == 1 and got["two_identity"] == 1.0
    assert got["self_identity"] == 1.0 and got["one_word"] == pytest.approx(2 / 3)
    # Mr. White in seat 2 beside the spy: both are guests; nobody is asked Mr. White's missing keyword.
    white = {**SPY, "roles": ["villager", "spy", "mr_white", "villager"]}
    scores, records = await run_spy(Tied(), "llm:scripted", [(9, white)])
    (got,) = scores
    assert got["guests"] == 2 and [r["seat_role"] for r in records] == ["host", "guest", "guest", "host"]
    # Guest 1 reads seats 0 and 3 right ("cat"; seat 2 has no word); guest 2 reads seat 0 right, seat 1 ("fish")
    # wrong (dog), seat 3 right: 4 of 5, where counting the blank seat as a wrong guess would give 4 of 6.
    assert got["one_word"] == pytest.approx(4 / 5)


async def test_answers_are_stored_beside_the_game_and_exported_with_it(tmp_path: Path) -> None:
    from storage.evaluations import evaluations_json, save_evaluations
    from storage.store import Store
    from tests.eval.logging_helpers import log_random_game

    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}")
    try:
        gid, result = await log_random_game(store, "decrypto", "benchmark", 3, seed=4)
        assert result is not None
        row = await store.game(gid)
        assert row is not None and row.result is not None
        details: dict[str, Any] = row.result["details"]

        class Blank(ScriptedModel):
            def _answer(self, system: str, user: str) -> str:
                return "no idea"

        table, records = await run_decrypto(Blank(), "llm:blank", [(gid, details)])
        assert table.row()["turns_scored"] == 0  # unparseable A: never guessed into a score
        asked = table.row()["turns_asked"]
        assert isinstance(asked, int) and table.row()["a_unparsed"] == asked > 0  # and said so
        # Unparsed perspective-taking answers are counted apart: never read as "no interception" or as wrong.
        pt = table.row()
        assert isinstance(pt["pt_turns"], int) and pt["pt_unanswered"] == pt["pt_turns"] > 0
        assert pt["pt_predicted_intercept"] is None and pt["pt_accuracy"] is None
        assert await save_evaluations(store, to_records(Experiment.DECRYPTO, "llm:blank", records)) == len(records)
        exported = await evaluations_json(store, gid)
        assert {e["evaluator"] for e in exported} == {"tom:decrypto:llm:blank"}
        assert all(e["soft"] is None for e in exported)  # never mistaken for a SNEAK score
        # Each answer leaves with its game: the question as asked, the reply, what was read from it, the score.
        pt = exported[0]["metric"]["pt"]
        assert pt["question"][-1]["role"] == "user" and pt["question"][-1]["content"]
        assert pt["raw"].endswith("no idea") and pt["parsed"] is None and isinstance(pt["score"], dict) and pt["score"]
        later = next(e["metric"]["smarties"] for e in exported if "smarties" in e["metric"])
        assert set(later["question"]) == set(later["raw"]) == set(later["parsed"]) and later["parsed"]["A"] is None
        from bot.research.parquet import export_parquet, records_from_parquet

        assert await export_parquet(store, tmp_path / "pq", pseudonymise=False, secret=None) == 1
        back = next(iter(records_from_parquet(tmp_path / "pq")))
        assert [e["metric"] for e in back["evaluations"]] == [e["metric"] for e in exported]
    finally:
        await store.aclose()
