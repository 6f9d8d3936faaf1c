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
    assert "[--lenient: played on to the last turn as the benchmark's human-play loop does" in out

    games = _lobbies(db)
    assert [g["platform"] for g in games] == ["import"] * 3
    third = games[2]["import"]
    assert (third["episode"], third["format"], third["lenient"]) == (2, "decrypto-fair", True)
    assert [(m["turn"], m["kind"]) for m in third["marks"]] == [(0, "hint_too_long"), (1, "invalid_guess"), (3, "past_end")]
    assert third["hint_limits"] == {"words": 5, "chars": 30}
    assert [t["turn"] for t in third["unplayed_turns"]] == [3]
    # Episode 1 is decided on turn 2 and its six later turns are played on as moves of the game (play_on).
    assert games[1]["import"]["unplayed_turns"] == [] and games[1]["import"]["played_on"] == 6
    assert games[1]["config"]["play_on"] and not games[2]["config"]["play_on"]  # episode 2 stops too soon to play on
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


def _played_on_file(tmp_path: Path) -> Path:
    """The paper's human file when HUSHTABLE_DECRYPTO_HUMAN_DATA names it (CC BY-NC, not committed); otherwise the
    fixture with episode 0 decided as the paper's episode 0 is (two interceptions on turn 5, three turns after)."""
    import os

    if os.environ.get("HUSHTABLE_DECRYPTO_HUMAN_DATA"):
        return Path(os.environ["HUSHTABLE_DECRYPTO_HUMAN_DATA"])
    data = json.loads(FIXTURE.read_text())
    for t in data[0]["summarized_history"][3:5]:
        t["guess_eve"] = [int(c) for c in t["code"]]
    f = tmp_path / "played_on.json"
    f.write_text(json.dumps(data))
    return f


def test_the_imported_games_keep_every_turn_the_players_played(tmp_path: Path) -> None:
    """The turns recorded after a game was decided are moves of the imported game (played on, the result the one
    decided), so an export holds every turn of the file and replays as the file does."""
    from bot.research.human_replay import load, replay_game

    path = _played_on_file(tmp_path)
    episodes = json.loads(path.read_text())
    db = f"sqlite:///{tmp_path}/h.db"
    code, out = cli("import", "decrypto-fair", str(path), "--lenient", "--database", db)
    assert code == 0, out
    assert "episode 0: logged as #1, finished" in out and "The interceptor wins with 2 interceptions on turn 5" in out
    games = _lobbies(db)
    assert games[0]["import"]["played_on"] == 3 and games[0]["import"]["unplayed_turns"] == []
    assert games[0]["result"]["details"]["turns"] == 5 and games[0]["result"]["details"]["played_on"] == 3

    exported = tmp_path / "out.jsonl"
    assert cli("export", "--database", db, "--out", str(exported))[0] == 0
    records = load(str(exported))
    played = [len(e["summarized_history"]) - len(g["import"]["unplayed_turns"]) for e, g in zip(episodes, games, strict=True)]
    assert [len(r.actions) for r in records] == [3 * n for n in played]

    async def logged() -> list[Any]:
        from bot.research.logbook import logged_games

        store = await Store.open(db)
        try:
            return [g.record for g in await logged_games(store)]
        finally:
            await store.aclose()

    # The game as logged holds the episode's last turn, turn 8, as played (an export leaves its hints out).
    last = episodes[0]["summarized_history"][-1]
    first = asyncio.run(logged())[0]
    assert first is not None and first.actions[-3][1].value == tuple(last["hints"])

    # An eval decrypto-human replay of the export plays and counts as one of the file itself.
    def counted(rs: list[Any]) -> list[tuple[int, int, bool, int]]:
        return [(g.miscommunications, g.interceptions, g.team_won, g.turns) for g in
                (asyncio.run(replay_game(r, None, "", None, seed=0, game_no=i + 1)) for i, r in enumerate(rs))]

    assert counted(records) == counted(load(str(path)))

    code, out = cli("stats", "--database", db, "--source", "import", "--json")
    m = json.loads(out)["metrics"]["decrypto"]["benchmark"]
    details = [g["result"]["details"] for g in games if g["result"]]
    assert m["mean_turns"] == sum(d["turns"] for d in details) / len(details)  # measured where each was decided
    if len(episodes) == 10:  # the paper's file: its Table 1 human row, 11 miscommunications, 12 interceptions, 40%, 6.90
        assert (m["miscommunications"], m["interceptions"], m["team_win_rate"]) == (11, 12, 0.4)
        assert m["mean_turns"] == pytest.approx(6.9)
