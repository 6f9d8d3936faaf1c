"""Bounded work: sizes are refused before anything is planned, schedules have a floor and a cap
and must fire, a tournament never takes its channel's table slot, and what a killed run left in
``lobby`` is cleaned up."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app as cli_app
from bot.core.lobby import host_user
from bot.core.messages import Command, CommandKind, Place, UserRef
from bot.core.tables import Lobby, LobbySeat
from bot.tournaments import formats, manage
from bot.tournaments.cron import check_schedule
from bot.tournaments.errors import TournamentError
from bot.tournaments.runner import HEADLESS, TournamentRunner
from bot.tournaments.service import TournamentService
from bot.tournaments.spec import TournamentSpec
from games.base import config_to_dict
from storage import tournaments as repo
from storage.tables import GameStatus, MatchStatus, SeatKind, TournamentStatus
from tests.tournaments.agents import SLOW, SlowAgent, open_service, spec

ARENA = Place("memory", "arena")
TENANT = "memory:guild-1"


async def test_a_huge_size_is_refused_before_any_planning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planned: list[int] = []
    real = formats.plan_matches

    def counting(*args: object, **kwargs: object) -> list[formats.MatchPlan]:
        planned.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(manage, "plan_matches", counting)
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        for games in (1001, 1_000_000_000, 10**30):
            with pytest.raises(TournamentError, match="at most 2000"):
                await manage.create(b.service, "console", spec(game="spy", entrants=["random", "random:b"],
                                                               seats=4, games_per_pairing=games))
        assert planned == [] and await repo.tournaments(b.service.store) == []
        assert await manage.create(b.service, "console", spec(game="spy", entrants=["random"], seats=4,
                                                              games_per_pairing=3)) == 1
        assert planned == [1]


def test_the_cli_refuses_a_billion_games_with_a_sentence(tmp_path: Path) -> None:
    env = {"HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}", "HUSHTABLE_AGENT_CHOICES": "random",
           "HUSHTABLE_FALLBACK_AGENT": "random", "HUSHTABLE_DEFAULT_AGENT": "random"}
    res = CliRunner().invoke(cli_app, ["tournament", "create", "--game", "spy", "--seats", "3", "--games",
                                       "1000000000"], env=env)
    assert res.exit_code == 2 and "at most 2000" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(cli_app, ["tournament", "run", "999999999999999999999999"], env=env)
    assert res.exit_code != 0 and "Traceback" not in res.output and "OverflowError" not in res.output


@pytest.mark.parametrize("cron", ["* * * * *", "*/30 * * * *", "0,30 3 * * *", "0 0 31 2 *", "0 0 30 2 *",
                                  "٠ ٣ * * *", "0 ３ * * *", "nightly", ""])
def test_schedules_that_never_fire_fire_too_often_or_are_not_ascii_are_refused(cron: str) -> None:
    with pytest.raises(TournamentError) as exc:
        check_schedule(cron, now=datetime(2026, 11, 26, tzinfo=UTC))
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 200


@pytest.mark.parametrize("cron", ["0 * * * *", "0 3 * * *", "30 4 * * 1", "0 0 29 2 *", "0 0,12 * * *"])
def test_ordinary_schedules_pass(cron: str) -> None:
    assert check_schedule(cron, now=datetime(2026, 11, 26, tzinfo=UTC)) is not None


async def test_a_tenant_has_at_most_ten_schedules(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        svc = TournamentService(b.service)
        one = TournamentSpec(game="spy", entrants=("random",), seats=4)
        for _ in range(manage.MAX_SCHEDULES):
            await svc.create(TENANT, one.replace(schedule="0 3 * * *"))
        with pytest.raises(TournamentError, match="already has 10 scheduled"):
            await svc.create(TENANT, one.replace(schedule="0 4 * * *"))
        extra = await svc.create(TENANT, one)
        with pytest.raises(TournamentError, match="already has 10 scheduled"):
            await svc.schedule(TENANT, extra.id or 0, "0 5 * * *")
        assert await svc.schedule("memory:guild-2", (await svc.create("memory:guild-2", one)).id or 0,
                                  "0 5 * * *") is None  # another tenant has its own cap
        await svc.schedule(TENANT, 1, None)  # one off: room for another
        await svc.schedule(TENANT, extra.id or 0, "0 5 * * *")
        with pytest.raises(TournamentError, match="more often than once an hour"):
            await svc.schedule(TENANT, 2, "* * * * *")


async def test_matches_never_take_the_channel_and_abort_there_never_reaches_them(tmp_path: Path) -> None:
    SlowAgent.delay_s = 0.05
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        svc = TournamentService(b.service)
        for spectate in (True, False):
            t = await svc.create(TENANT, TournamentSpec(game="chameleon", entrants=(SLOW,), seats=3, spectate=spectate,
                                                        platform="memory", place=ARENA.key))
            await svc.start_run(TENANT, t.id or 0)
            while not await b.service.store.games(status=GameStatus.RUNNING, tenant=TENANT):
                await asyncio.sleep(0.02)
            match_game = (await b.service.store.games(status=GameStatus.RUNNING, tenant=TENANT))[0]
            assert match_game.place != ARENA.key
            if spectate:  # watched in a thread of its own under the channel
                assert match_game.platform == "memory" and match_game.place.startswith(ARENA.key + "/")
            else:
                assert match_game.platform == HEADLESS
            member, admin = UserRef("memory", "7", "Mo"), UserRef("memory", "1", "Ada")
            made = await b.service.handle(Command(CommandKind.CREATE, member, ARENA, {"game": "spy"}, f"c{spectate}",
                                                  tenant=TENANT))
            assert made.ok, made.text  # members can still open a table here
            gone = await b.service.handle(Command(CommandKind.ABORT, admin, ARENA, {}, f"a{spectate}",
                                                  is_admin=True, tenant=TENANT))
            assert gone.ok, gone.text
            assert await b.service.store.lobby_at("memory", ARENA.key) is None  # the member's table went
            await svc.wait_runs()
            ms = await repo.matches(b.service.store, t.id or 0)
            assert all(m.status == MatchStatus.FINISHED and m.attempts == 1 for m in ms), [m.error for m in ms]
            assert (await repo.tournament(b.service.store, t.id or 0)).status == TournamentStatus.FINISHED  # type: ignore[union-attr]


async def _orphan_lobby(b, t_id: int) -> int:
    """What a run killed between opening a match's table and beginning it leaves: the match running
    with no game, and the table's row in ``lobby`` (written as ``open_ai_table`` writes it)."""
    store = b.service.store
    (m, *_) = await repo.matches(store, t_id)
    assert m.id is not None
    assert await repo.start_match(store, m.id)
    t = await repo.tournament(store, t_id)
    assert t is not None
    import games

    engine = games.get(t.game)
    cfg = engine.make_config(t.variant)
    place = Place(HEADLESS, f"tournament-{t_id}")
    host = host_user(place.platform)
    lobby = Lobby(host, tuple(LobbySeat(SeatKind.AI, agent=a) for a in m.seats), quiet=True)
    gid = await store.create_game(game=engine.id, variant=cfg.variant, config=config_to_dict(cfg),
                                  platform=place.platform, place=place.key, place_name="", host=host.key,
                                  lobby=lobby.to_json(), tenant=t.tenant)
    await repo.set_tournament_status(store, t_id, TournamentStatus.RUNNING)
    return gid


async def test_orphan_lobby_rows_of_a_killed_run_are_cleaned(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        svc = TournamentService(b.service, runner_factory=lambda: TournamentRunner(b.service, rounds=20))
        first = await svc.create("console", TournamentSpec(game="chameleon", entrants=("random", "random:b"), seats=3,
                                                           seed=4))
        orphan = await _orphan_lobby(b, first.id or 0)
        # The bot restarts and nobody runs the tournament: the start-up clean-up aborts the orphan.
        assert await svc.recover() == 1
        assert (await b.service.store.game(orphan)).status == GameStatus.ABORTED  # type: ignore[union-attr]
        # A run afterwards plays every match once, the interrupted one again on a fresh table.
        summary = await svc.run("console", first.id or 0)
        assert summary.finished == 2 and summary.failed == 0

        second = await svc.create("console", TournamentSpec(game="chameleon", entrants=("random", "random:b"),
                                                            seats=3, seed=5))
        orphan = await _orphan_lobby(b, second.id or 0)
        summary = await svc.run("console", second.id or 0)  # a run cleans up before it plays
        assert summary.finished == 2
        assert (await b.service.store.game(orphan)).status == GameStatus.ABORTED  # type: ignore[union-attr]
        assert await b.service.store.games(status=GameStatus.LOBBY) == []
