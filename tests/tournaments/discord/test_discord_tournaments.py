"""/tournament through the real bot and the fake Discord: admins create, run and get the
leaderboard posted with its chart attached and shown as the embed's image; members are refused;
entrants are offered by autocomplete from the configured choices."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.tournaments.desk import NOT_ADMIN
from tests.bot.discord.fake_discord import FakeDiscord, FakeInteraction
from tests.tournaments.discord.conftest import TournamentHarness as Harness


def _group(fake: FakeDiscord) -> dict[str, Any]:
    return next(c for c in fake.commands if c["name"] == "tournament")


def _options(fake: FakeDiscord, sub: str, values: dict[str, Any], focused: str | None = None) -> dict[str, Any]:
    spec = next(o for o in _group(fake)["options"] if o["name"] == sub)
    opts = []
    for key, v in values.items():
        o = next(o for o in spec.get("options", []) if o["name"] == key)
        opts.append({"name": key, "type": o["type"], "value": v, **({"focused": True} if key == focused else {})})
    cmd = _group(fake)
    return {"id": cmd["id"], "name": "tournament", "type": 1, "options": [{"name": sub, "type": 1, "options": opts}]}


async def tournament(fake: FakeDiscord, uid: int, sub: str, **values: Any) -> FakeInteraction:
    """A member runs ``/tournament <sub> option:value ...``; waits for the bot's answer."""
    ix = await fake._interact(uid, fake.channel_id, 2, _options(fake, sub, values))
    await asyncio.wait_for(ix.done.wait(), 15)
    return ix


def board_posts(fake: FakeDiscord) -> list[Any]:
    return [r for r in fake.requests if r.method == "POST" and r.path == f"/channels/{fake.channel_id}/messages"
            and r.files]


async def test_admins_run_a_tournament_and_get_the_chart_members_are_refused(harness: Harness) -> None:
    fake = harness.fake
    assert "tournament" in {c["name"] for c in fake.commands}
    assert {o["name"] for o in _group(fake)["options"]} == {"create", "schedule", "run", "status", "cancel",
                                                             "leaderboard"}
    admin = fake.add_member(name="ada", admin=True)
    member = fake.add_member(name="bo")

    ix = await tournament(fake, member, "create", game="spy")
    assert ix.ephemeral and NOT_ADMIN in ix.text
    ix = await tournament(fake, admin, "create", game="spy", variant="classic", entrants="random", seats=4,
                          games=2, name="cup")
    assert ix.ephemeral and "Created tournament #1 cup" in ix.text and "2 games" in ix.text

    # Autocomplete offers the configured entrants only.
    auto = await fake._interact(admin, fake.channel_id, 4, _options(fake, "create", {"entrants": "ran"}, "entrants"))
    await asyncio.wait_for(auto.done.wait(), 10)
    assert [c["value"] for c in auto.callbacks[-1]["data"]["choices"]] == ["random"]

    for sub in ("run", "cancel", "leaderboard"):
        ix = await tournament(fake, member, sub, tournament=1)
        assert NOT_ADMIN in ix.text
    ix = await tournament(fake, admin, "run", tournament=1)
    assert "started" in ix.text
    assert harness.service is not None
    assert harness.tournaments is not None
    await harness.tournaments.wait_runs()
    await harness.idle()

    # The status message was posted once and edited in place; the board followed with its chart.
    status = [m for m in fake.in_channel(fake.channel_id) if "tournament" in (m.get("content") or "") + str(m["embeds"])
              and "games played" in (m.get("content") or "") + str(m["embeds"])]
    assert len(status) == 1 and status[0]["edited_timestamp"] is not None
    (auto_post,) = board_posts(fake)
    (name, png), = auto_post.files.items()
    assert name == "tournament-1.png" and png.startswith(b"\x89PNG")
    assert auto_post.body["embeds"][0]["image"]["url"] == "attachment://tournament-1.png"
    assert "Tournament #1 cup" in auto_post.body["embeds"][0]["title"]

    ix = await tournament(fake, admin, "leaderboard", tournament=1)
    assert "posted" in ix.text and len(board_posts(fake)) == 2
    ix = await tournament(fake, admin, "status", tournament=1)
    assert "2/2 games played" in ix.text
