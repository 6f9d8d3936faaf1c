"""/hushtable tournament through the real Bolt app and the fake Slack: an admin creates one with
the modal, runs it, and the leaderboard arrives in the channel as an uploaded chart
(files_upload_v2 to the channel id); members are refused; other /hushtable commands still work."""

from __future__ import annotations

import asyncio

from bot.tournaments.desk import NOT_ADMIN
from tests.bot.slack.conftest import Stack

ADMIN, MEMBER, CHANNEL = "UADA", "UBO", "CGAMES"


async def _answer(st: Stack, n: int) -> str:
    """The text of the next answer through response_url, once there are ``n`` of them."""
    for _ in range(300):
        await st.idle()
        if len(st.fake.responses) >= n:
            return str(st.fake.responses[n - 1].get("text"))
        await asyncio.sleep(0.02)
    raise AssertionError(f"no answer {n}: {st.fake.responses}")


async def test_admin_creates_with_the_modal_runs_and_gets_the_chart(stack: Stack) -> None:
    st = stack
    st.fake.admins.add(ADMIN)

    assert await st.sim.command(MEMBER, CHANNEL, "tournament create spy") == 200
    assert NOT_ADMIN in await _answer(st, 1)
    assert await st.sim.command(MEMBER, CHANNEL, "tournament create") == 200
    assert NOT_ADMIN in await _answer(st, 2) and st.fake.views == []

    assert await st.sim.command(ADMIN, CHANNEL, "tournament create") == 200
    await st.idle()
    (view,) = st.fake.views
    assert view["callback_id"] == "tournament:create" and "random" in str(view["blocks"])
    assert await st.sim.submit(ADMIN, view, ["spy", "classic", "random", "4", "2", "", "cup"]) == 200
    await st.idle()
    (eph,) = st.fake.methods("chat.postEphemeral")
    assert "Created tournament #1 cup" in eph["text"] and eph["channel"] == CHANNEL

    assert await st.sim.command(MEMBER, CHANNEL, "tournament run 1") == 200
    assert NOT_ADMIN in await _answer(st, 3)
    assert await st.sim.command(ADMIN, CHANNEL, "tournament run 1") == 200
    assert "started" in await _answer(st, 4)
    await st.tournaments.wait_runs()  # type: ignore[attr-defined]
    await st.idle()

    (board,) = st.fake.files
    assert board["channel"] == CHANNEL and board["data"].startswith(b"\x89PNG")
    assert "Tournament #1 cup" in board["comment"] and "random" in board["comment"]
    assert await st.sim.command(MEMBER, CHANNEL, "tournament leaderboard 1") == 200
    assert NOT_ADMIN in await _answer(st, 5) and len(st.fake.files) == 1
    assert await st.sim.command(ADMIN, CHANNEL, "tournament leaderboard 1") == 200
    assert "posted" in await _answer(st, 6) and len(st.fake.files) == 2
    assert await st.sim.command(ADMIN, CHANNEL, "tournament status 1") == 200
    assert "2/2 games played" in await _answer(st, 7)
    assert await st.sim.command(ADMIN, CHANNEL, 'tournament create spy entrants=llm:http://x.example/v1') == 200
    assert "Unknown entrant" in await _answer(st, 8)
    # The general command is untouched.
    assert await st.sim.command(MEMBER, CHANNEL, "help") == 200
    assert "/hushtable play" in await _answer(st, 9)
