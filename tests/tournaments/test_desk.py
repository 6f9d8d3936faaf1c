"""The chat commands' shared desk: admins only, per tenant; a run posts its status and then the
leaderboard with the chart to the place the tournament was made in."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.core.intake import Origin
from bot.core.messages import Place, UserRef
from bot.tournaments.desk import NOT_ADMIN, TournamentDesk
from bot.tournaments.service import TournamentService
from storage import tournaments as repo
from tests.tournaments.agents import open_service

HERE = Place("memory", "arena")
ADMIN = Origin(UserRef("memory", "1", "Ada"), HERE, "memory:guild-1", is_admin=True)
MEMBER = Origin(UserRef("memory", "2", "Bo"), HERE, "memory:guild-1", is_admin=False)
OTHER_ADMIN = Origin(UserRef("memory", "3", "Cy"), HERE, "memory:guild-2", is_admin=True)


@dataclass
class Posted:
    boards: list[tuple[Place, str, bytes, str]] = field(default_factory=list)

    async def post_board(self, place: Place, text: str, png: bytes, filename: str) -> None:
        self.boards.append((place, text, png, filename))


async def test_admins_create_run_and_get_the_board_others_are_refused(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        tournaments = TournamentService(b.service)
        desk = TournamentDesk(tournaments)
        posted = Posted()
        tournaments.attach("memory", posted)

        for call in (desk.create(MEMBER, game="spy"), desk.run(MEMBER, 1), desk.status(MEMBER, 1),
                     desk.cancel(MEMBER, 1), desk.leaderboard(MEMBER, 1), desk.schedule(MEMBER, 1, "0 3 * * *")):
            r = await call
            assert not r.ok and r.text == NOT_ADMIN
        assert await repo.tournaments(b.service.store) == []

        r = await desk.create(ADMIN, game="spy", variant="classic", entrants=["random", "random:b"], seats=4, name="cup")
        assert r.ok and "Created tournament #1 cup" in r.text and "2 games" in r.text
        bad = await desk.create(ADMIN, game="spy", entrants=["llm:http://evil.example"])
        assert not bad.ok and "Unknown entrant" in bad.text

        assert not (await desk.leaderboard(ADMIN, 1)).ok  # nothing played yet
        assert (await desk.run(OTHER_ADMIN, 1)).text == "There is no tournament #1 here."  # another tenant
        assert (await desk.run(ADMIN, 1)).ok
        await tournaments.wait_runs()

        (place, text, png, filename) = posted.boards[0]
        assert place == HERE and "Tournament #1 cup" in text and png.startswith(b"\x89PNG") and filename.endswith(".png")
        assert [s.kind for s in b.chat.sent if (s.message.title or "").startswith("Tournament #1")][:2] == ["post", "edit"]
        status = await desk.status(ADMIN, 1)
        assert "2/2 games played" in status.text and "finished" in status.text
        lb = await desk.leaderboard(ADMIN, 1)
        assert lb.ok and lb.board is not None and lb.board.png.startswith(b"\x89PNG")
        assert not (await desk.run(ADMIN, 1)).ok  # finished: not again
        assert "#1 cup" in (await desk.status(ADMIN)).text and (await desk.status(OTHER_ADMIN)).text == \
            "No tournaments here yet."


async def test_a_configured_admin_user_counts_and_cancel_stops_new_games(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        b.service.settings.admin_users = "memory:2"
        desk = TournamentDesk(TournamentService(b.service))
        assert (await desk.create(MEMBER, game="chameleon", entrants=["random"], seats=3, games=3)).ok
        r = await desk.cancel(MEMBER, 1)
        assert r.ok and "cancelled" in r.text
        assert not (await desk.run(MEMBER, 1)).ok and not (await desk.cancel(MEMBER, 1)).ok
        ms = await repo.matches(b.service.store, 1)
        assert {m.status for m in ms} == {"failed"} and {m.error for m in ms} == {"cancelled"}
