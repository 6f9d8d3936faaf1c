"""Reading the Decrypto benchmark's human-play format: structure, codes, guesses and hints."""

from __future__ import annotations

import json
from pathlib import Path

from bot.research.decrypto_fair import IssueKind, _hint_issues, parse_code, parse_guess, read

FIXTURE = Path(__file__).parent / "fixtures" / "decrypto_fair_small.json"


def test_the_fixture_reads_cleanly() -> None:
    episodes, issues = read(FIXTURE.read_text())
    assert issues == []
    assert [len(e.turns) for e in episodes] == [8, 8, 4]
    assert episodes[0].keywords == ("harbor", "violin", "glacier", "lantern")
    assert episodes[2].turns[1].guess_eve == [1, 1, 2]


def _malformed(data: object) -> list[tuple[int, int | None, str]]:
    _, issues = read(json.dumps(data))
    assert all(i.kind is IssueKind.MALFORMED and not i.fixable for i in issues)
    return [(i.episode, i.turn, i.detail) for i in issues]


def test_malformed_files_and_episodes_are_named() -> None:
    _, issues = read("[{")
    assert issues[0].kind is IssueKind.MALFORMED and "not JSON" in issues[0].detail
    assert "JSON list" in _malformed({"summarized_history": []})[0][2]
    good = json.loads(FIXTURE.read_text())
    broken = json.loads(json.dumps(good))
    del broken[1]["summarized_history"][2]["hints"]
    broken[2]["summarized_history"][1]["turn"] = 5
    broken[0]["summarized_history"][3]["keywords"] = ["a", "b", "c", "d"]
    found = _malformed(broken)
    assert found[0][:2] == (0, 3) and "differ from turn 0" in found[0][2]
    assert found[1][:2] == (1, 2) and "lacks hints" in found[1][2]
    assert found[2][0] == 2 and "numbered 5" in found[2][2]
    broken = json.loads(json.dumps(good))
    broken[0]["summarized_history"][0]["hints"] = ["one", "two"]
    assert _malformed(broken)[0][:2] == (0, 0)


def test_codes_and_guesses() -> None:
    assert parse_code("421") == (4, 2, 1)
    assert [parse_code(c) for c in ("411", "521", "42", "4211", "4-2")] == [None] * 5
    assert parse_guess([4, 2, 1]) == "4-2-1"
    assert [parse_guess(g) for g in ([1, 1, 2], [1, 2], [0, 1, 2], "421", [1, 2, True], None)] == [None] * 6


def test_hints_that_break_our_rules() -> None:
    episodes, _ = read(FIXTURE.read_text())
    ep = episodes[2]
    issues, words, chars = _hint_issues(ep, ep.turns[0])
    assert [(i.kind, i.turn) for i in issues] == [(IssueKind.HINT_TOO_LONG, 0)]
    assert "a very long hint indeed" in issues[0].detail and issues[0].fixable
    assert (words, chars) == (5, 30)
    naming = ep.turns[1].__class__(1, ep.keywords, "231", ("Violins", "agent 007", "x" * 31), None, None, {})
    issues, words, chars = _hint_issues(ep, naming)
    kinds = [(i.kind, i.detail.split("'")[1]) for i in issues]
    assert kinds == [(IssueKind.HINT_NAMES_KEYWORD, "Violins"), (IssueKind.HINT_NUMBER, "agent 007"),
                     (IssueKind.HINT_TOO_LONG, "x" * 31)]
    assert [i.fixable for i in issues] == [False, False, True]
    assert (words, chars) == (2, 31)
