"""The runner on real tables: every match played once through open_ai_table, roles recorded,
standings saved, the status message edited in place; broken matches retried then recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.tournaments import board, manage, results
from bot.tournaments.runner import Progress, TournamentRunner
from storage import tournaments as repo
from storage.tables import GameStatus, MatchStatus, TournamentMatchRow, TournamentStatus, table_of
from tests.tournaments.agents import open_service, spec


async def test_a_small_tournament_runs_concurrently_to_the_end(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        tid = await manage.create(b.service, "console", spec(game="spy", variant="classic",
                                  entrants=["random", "random:b"], seats=4, games_per_pairing=2, seed=5,
                                  platform="memory", place="arena"))
        seen: list[Progress] = []

        async def progress(p: Progress) -> None:
            seen.append(p)

        summary = await TournamentRunner(b.service, concurrency=3, rounds=50, on_progress=progress).run(tid)
        matches = await repo.matches(b.service.store, tid)
        assert summary.finished == len(matches) == 4 and summary.failed == 0
        assert all(m.status == MatchStatus.FINISHED and m.attempts == 1 for m in matches)
        assert len({m.game_id for m in matches}) == 4
        for m in matches:
            glog = await b.service.store.load_game(m.game_id or 0)
            assert [s.agent_spec for s in glog.seats] == m.seats and glog.row.seed == m.seed
            assert sorted(m.roles or []) == sorted(["villager"] * 3 + ["spy"])
        assert [p.done for p in seen] == [0, 1, 2, 3, 4, 4]
        t = await repo.tournament(b.service.store, tid)
        assert t is not None and t.status == TournamentStatus.FINISHED
        ratings = await repo.ratings(b.service.store, tid)
        assert sorted(r.entrant for r in ratings) == ["random", "random:b"] and all(r.games == 4 for r in ratings)
        assert all(r.lo <= r.mu <= r.hi for r in ratings)
        # One status message, posted once and then edited in place.
        posts = [s for s in b.chat.sent if s.kind == "post" and (s.message.title or "").startswith("Tournament")]
        edits = [s for s in b.chat.sent if s.kind == "edit"]
        assert len(posts) == 1 and len(edits) == 5 and {e.ref.message_id for e in edits} == {posts[0].ref.message_id}
        assert "4/4 games played" in edits[-1].message.text and "finished" in edits[-1].message.text
        # The last word is the leaderboard's: its verdict, never a rating lead called the leader.
        verdict = board.verdict(list(summary.standings))
        assert verdict and edits[-1].message.text.endswith(verdict) and seen[-1].verdict == verdict
        assert all("ahead so far" in e.message.text for e in edits[:-1])
        assert not [s for s in b.chat.sent if (s.message.title or "").startswith("Game #")], "games not spectated unless asked"


async def test_a_broken_match_is_retried_then_recorded_and_the_rest_go_on(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        tid = await manage.create(b.service, "console", spec(game="chameleon", variant="classic",
                                  entrants=["random", "random:b"], seats=3, seed=9))
        # The operator drops "random:b" from the configured choices after the tournament was made:
        # its matches cannot open a table; they are recorded as failed, the others are played.
        b.service.settings.agent_choices = "random"
        summary = await TournamentRunner(b.service, concurrency=2, rounds=20).run(tid)
        assert summary.finished == 0 and summary.failed == 2
        ms = await repo.matches(b.service.store, tid)
        assert all(m.status == MatchStatus.FAILED and "could not open" in (m.error or "") for m in ms)


async def test_a_stalled_game_is_aborted_and_retried(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        tid = await manage.create(b.service, "console", spec(game="decrypto", variant="benchmark",
                                  entrants=["random:slow"], seed=3))
        # Every game stalls (the slow player takes far longer than the stall limit): two attempts, then failed.
        summary = await TournamentRunner(b.service, concurrency=1, stall_s=0.05, attempts=2, rounds=10).run(tid)
        assert summary.failed == 1
        (m,) = await repo.matches(b.service.store, tid)
        assert m.status == MatchStatus.FAILED and m.attempts == 2 and "stalled" in (m.error or "")
        aborted = await b.service.store.games(status=GameStatus.ABORTED)
        assert len(aborted) == 2


async def test_entrants_are_configured_names_only(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        for bad in (["llm:http://evil.example/v1"], ["random", "/etc/passwd"]):
            with pytest.raises(manage.TournamentError, match="Unknown entrant"):
                await manage.create(b.service, "console", spec(game="spy", entrants=bad))
        with pytest.raises(manage.TournamentError, match="seats"):
            await manage.create(b.service, "console", spec(game="decrypto", variant="benchmark",
                                entrants=["random"], seats=4))
        with pytest.raises(manage.TournamentError, match="schedule"):
            await manage.create(b.service, "console", spec(game="spy", entrants=["random"], schedule="nightly"))
        assert await repo.tournaments(b.service.store) == []
        tid = await manage.create(b.service, "discord:1", spec(game="spy", entrants=["random"]))
        with pytest.raises(manage.TournamentError, match="no tournament"):
            await manage.get(b.service, "discord:2", tid)  # ids never cross tenants


class _NoReplays:
    """The real store, but reading a game's log is an error: standings must come from stored outcomes."""

    def __init__(self, store: object) -> None:
        self._store = store

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    async def load_game(self, game_id: int) -> object:
        raise AssertionError(f"game {game_id} was replayed")


async def test_each_match_stores_its_outcomes_and_standings_read_them_without_replaying(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        store = b.service.store
        tid = await manage.create(b.service, "console", spec(game="chameleon", variant="classic",
                                  entrants=["random", "random:b"], seats=4, seed=11))
        summary = await TournamentRunner(b.service, concurrency=2, rounds=20).run(tid)
        assert summary.finished > 0 and summary.failed == 0
        replayed = await results.match_results(store, tid, replay=True)
        for m, r in zip(await repo.matches(store, tid), replayed, strict=True):
            # Stored with the finish: exactly what replaying the game gives, numbers included.
            assert m.outcomes == results.outcome_rows(r.seats) and m.roles == [str(o.role) for o in r.seats]
        assert any(o.stats for r in replayed for o in r.seats), "chameleon seats carry numbers"
        stored = await results.match_results(_NoReplays(store), tid)  # type: ignore[arg-type]
        assert [results.outcome_rows(r.seats) for r in stored] == [results.outcome_rows(r.seats) for r in replayed]
        assert [(r.entrants, r.group, r.game_id) for r in stored] == [(r.entrants, r.group, r.game_id)
                                                                          for r in replayed]
        # A match finished before outcomes were stored is replayed once more, to the same result.
        async with store.write() as conn:
            await conn.execute(sa.update(table_of(TournamentMatchRow)).values(outcomes=None))
        again = await results.match_results(store, tid)
        assert [results.outcome_rows(r.seats) for r in again] == [results.outcome_rows(r.seats) for r in replayed]


def test_the_chat_status_names_a_leader_only_as_the_leaderboard_does() -> None:
    from types import SimpleNamespace

    from bot.tournaments import board
    from bot.tournaments.ratings import Standing
    from bot.tournaments.runner import status_text

    t = SimpleNamespace(id=1, name="", game="spy", variant="classic")
    running = status_text(t, Progress(1, 3, 1, 8, "strategist"))  # type: ignore[arg-type]
    assert running == "spy (classic) tournament running: 3/8 games played, 1 failed, ahead so far: strategist."
    assert "leader" not in running.lower()
    # At the end the status says what the finished leaderboard says: a leader only when its interval is
    # clear of every other entrant's, else a tie; never a rating lead alone.
    clear = [Standing(1, "strategist", 30, 1, 28, 32, 8), Standing(2, "random", 20, 1, 18, 22, 8)]
    overlap = [Standing(1, "strategist", 30, 1, 24, 32, 8), Standing(2, "random", 27, 1, 22, 29, 8)]
    for rows, said in ((clear, "Leader: strategist (its interval is clear of every other entrant's)."),
                       (overlap, "Tied at the top: strategist, random (their intervals overlap")):
        verdict = board.verdict(rows)
        assert verdict.startswith(said) and said in board.text_table(t, rows)  # type: ignore[arg-type]
        finished = status_text(t, Progress(1, 8, 0, 8, "strategist", verdict), final=True)  # type: ignore[arg-type]
        assert finished == f"spy (classic) tournament finished: 8/8 games played. {verdict}"
    assert status_text(t, Progress(1, 8, 0, 8, "strategist"), final=True) == (  # type: ignore[arg-type]
        "spy (classic) tournament finished: 8/8 games played.")
