"""`hushtable import decrypto-fair` on our own fixture: strict and lenient, the engine's verdict, stats."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.research.decrypto_fair import IssueKind, play, read
from storage.store import Store

runner = CliRunner()
FIXTURE = Path(__file__).parent / "fixtures" / "decrypto_fair_small.json"


def cli(*args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, r.output


def _issues(data: object) -> list[tuple[int, int | None, IssueKind]]:
    episodes, issues = read(json.dumps(data))
    found = issues + [i for ep in episodes for i in play(ep).issues]
    return [(i.episode, i.turn, i.kind) for i in found]


def test_the_engine_finds_every_issue_of_the_fixture() -> None:
    found = _issues(json.loads(FIXTURE.read_text()))
    assert found == [(1, t, IssueKind.PAST_END) for t in range(2, 8)] + [
        (2, 0, IssueKind.HINT_TOO_LONG), (2, 1, IssueKind.INVALID_GUESS), (2, 3, IssueKind.PAST_END)]


def test_strict_mode_refuses_with_the_list_and_writes_nothing(tmp_path: Path) -> None:
    code, out = cli("import", "decrypto-fair", str(FIXTURE), "--database", f"sqlite:///{tmp_path}/h.db")
    assert code == 2
    assert ("episode 1, turn 2: recorded after the game ended at turn 1 (our turn 2): "
            "The interceptor wins with 2 interceptions on turn 2.") in out
    assert "episode 2, turn 0: hint 1 'a very long hint indeed' breaks our rules" in out
    assert "episode 2, turn 1: guess_eve [1, 1, 2] is not three different digits" in out
    assert "9 issue(s); nothing imported" in out
    assert not (tmp_path / "h.db").exists()


def _lobbies(url: str) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        store = await Store.open(url)
        try:
            rows = await store.games()
            return [{"id": r.id, "status": r.status, "platform": r.platform, "config": r.config,
                     "import": r.lobby["import"], "result": r.result} for r in rows]
        finally:
            await store.aclose()

    return asyncio.run(go())


def test_lenient_import_then_stats(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    code, out = cli("import", "decrypto-fair", str(FIXTURE), "--lenient", "--database", db)
    assert code == 0, out
    assert "episode 0: logged as #1, finished: The encoder and decoder win" in out
    assert "episode 1: logged as #2, finished (6 mark(s)): The interceptor wins with 2 interceptions on turn 2" in out
    assert "episode 2: logged as #3, finished (3 mark(s)): The interceptor wins: the team made 2 miscommunications by turn 3" in out
    assert "[--lenient: not played; kept verbatim with the imported game]" in out

    games = _lobbies(db)
    assert [g["platform"] for g in games] == ["import"] * 3
    third = games[2]["import"]
    assert (third["episode"], third["format"], third["lenient"]) == (2, "decrypto-fair", True)
    assert [(m["turn"], m["kind"]) for m in third["marks"]] == [(0, "hint_too_long"), (1, "invalid_guess"), (3, "past_end")]
    assert third["hint_limits"] == {"words": 5, "chars": 30}
    assert [t["turn"] for t in third["unplayed_turns"]] == [3]
    assert len(games[1]["import"]["unplayed_turns"]) == 6
    assert games[2]["config"]["deal"]["keywords"] == [["harbor", "violin", "glacier", "lantern"]]
    assert (games[2]["config"]["hint_max_words"], games[1]["config"]["hint_max_words"]) == (5, 2)

    code, out = cli("stats", "--database", db, "--source", "import", "--json")
    m = json.loads(out)["metrics"]["decrypto"]["benchmark"]
    # hand count: ep0 survives 8 turns; ep1 2 interceptions by turn 2; ep2 2 miscommunications by turn 3
    assert (m["games"], m["miscommunications"], m["interceptions"]) == (3, 2, 2)
    assert m["team_win_rate"] == 1 / 3 and m["mean_turns"] == (8 + 2 + 3) / 3
    assert m["ended_by"] == {"interceptions": 1, "miscommunications": 1, "both": 0, "survived": 1}

    code, out = cli("import", "decrypto-fair", str(FIXTURE), "--lenient", "--database", db)
    assert code == 0 and out.count("already imported") == 3

    # The logged games export and replay from their config alone (the deal), as the engine decided.
    exported = tmp_path / "out.jsonl"
    assert cli("export", "--database", db, "--out", str(exported))[0] == 0
    code, out = cli("replay", str(exported))
    assert code == 0 and out.count("Winners:") == 3


def test_problems_no_mode_accepts(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    data = json.loads(FIXTURE.read_text())
    data[0]["summarized_history"][0]["hints"][1] = "violins"  # names keyword 2 (a plural)
    data[0]["summarized_history"][2]["code"] = "123"  # turn 0's code again, on a played turn
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(data))
    code, out = cli("import", "decrypto-fair", str(f), "--lenient", "--database", db)
    assert code == 2
    assert "episode 0, turn 0: hint 2 'violins' names keyword 2 (or a form of it) [never accepted]" in out
    assert "no mode accepts; nothing imported" in out
    assert not (tmp_path / "h.db").exists()
    data = json.loads(FIXTURE.read_text())
    data[0]["summarized_history"][2]["code"] = "123"
    f.write_text(json.dumps(data))
    code, out = cli("import", "decrypto-fair", str(f), "--lenient", "--database", db)
    assert code == 2 and "episode 0, turn 2: code '123' repeats turn 0's" in out
    # The same repeat past the end of a game is only a turn not played.
    data = json.loads(FIXTURE.read_text())
    data[1]["summarized_history"][5]["code"] = data[1]["summarized_history"][0]["code"]
    assert (1, 5, IssueKind.PAST_END) in _issues(data) and IssueKind.BAD_CODE not in [k for *_, k in _issues(data)]


def test_an_episode_that_stops_early_is_logged_aborted(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    data = json.loads(FIXTURE.read_text())[:1]
    data[0]["summarized_history"] = data[0]["summarized_history"][:3]
    f = tmp_path / "short.json"
    f.write_text(json.dumps(data))
    code, out = cli("import", "decrypto-fair", str(f), "--database", db)
    assert code == 2 and "episode 0: the episode stops after 3 turn(s), before the game ends" in out
    code, out = cli("import", "decrypto-fair", str(f), "--lenient", "--database", db)
    assert code == 0 and "episode 0: logged as #1, aborted (1 mark(s))" in out
    assert _lobbies(db)[0]["status"] == "aborted"
    assert json.loads(cli("stats", "--database", db, "--json")[1])["games_measured"] == 0


def test_hint_limits_are_checked_options() -> None:
    import games
    from games.base import ConfigError

    eng = games.get("decrypto")
    assert eng.make_config("benchmark", hint_max_words=5).hint_max_words == 5
    for bad in ({"hint_max_words": 0}, {"hint_max_chars": 301}, {"hint_max_words": True}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            eng.make_config("benchmark", **bad)
