"""Slack's tournament commands with hostile sizes and numbers, and the documented unquoted
``entrants=a,b``: every answer is one sentence, nothing is planned or stored for a refusal."""

from __future__ import annotations

from storage import tournaments as repo
from tests.bot.slack.conftest import Stack
from tests.tournaments.slack.test_slack_tournaments import _answer

ADMIN, CHANNEL = "UADA", "CGAMES"


async def test_hostile_sizes_and_ids_get_a_sentence_and_plan_nothing(stack: Stack) -> None:
    st = stack
    st.fake.admins.add(ADMIN)
    st.settings.agent_choices = "random,random:b"

    assert await st.sim.command(ADMIN, CHANNEL, "tournament create spy entrants=random seats=3 games=1000000000") == 200
    text = await _answer(st, 1)
    assert "games is a whole number below a billion" in text
    assert await st.sim.command(ADMIN, CHANNEL, "tournament create spy entrants=random seats=3 games=999999") == 200
    assert "at most 2000" in await _answer(st, 2)
    assert await st.sim.command(ADMIN, CHANNEL, "tournament run 999999999999999999999999") == 200
    assert "A tournament is its number" in await _answer(st, 3)
    assert await st.sim.command(ADMIN, CHANNEL, "tournament status 99999999999999999999") == 200
    assert "A tournament is its number" in await _answer(st, 4)
    assert await st.sim.command(ADMIN, CHANNEL, 'tournament create spy seats=4 schedule="* * * * *"') == 200
    assert "more often than once an hour" in await _answer(st, 5)
    assert await repo.tournaments(st.store) == []

    # The form's games field: the same sentence, nothing stored.
    assert await st.sim.command(ADMIN, CHANNEL, "tournament create") == 200
    await st.idle()
    (view,) = st.fake.views
    assert await st.sim.submit(ADMIN, view, ["spy", "classic", "random", "4", "1000000000", "", "cup"]) == 200
    await st.idle()
    (eph,) = st.fake.methods("chat.postEphemeral")
    assert "below a billion" in eph["text"]
    assert await repo.tournaments(st.store) == []


async def test_entrants_listed_unquoted_as_the_usage_shows(stack: Stack) -> None:
    st = stack
    st.fake.admins.add(ADMIN)
    st.settings.agent_choices = "random,random:b"
    assert await st.sim.command(ADMIN, CHANNEL, "tournament create spy classic entrants=random,random:b seats=4") == 200
    text = await _answer(st, 1)
    assert "Created tournament #1" in text and "entrants random, random:b" in text
    assert await st.sim.command(ADMIN, CHANNEL, "tournament create spy entrants=random:b, random seats=4") == 200
    assert "entrants random:b, random" in await _answer(st, 2)
