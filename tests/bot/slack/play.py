"""Drive whole games through Slack the way members would: read the DM prompts the fake
received, click their buttons or pick from their selects, open the form modal and
submit it, or reply in the DM. The service is only read to know whose turn it is and
what shape of answer the prompt asked for (what a member sees on screen)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection
from typing import Any

from bot.core.messages import UserRef
from games.base import Choice, Text
from tests.bot.slack.conftest import Stack
from tests.bot.slack.fake_slack import Message
from tests.vocabulary import NONSENSE


def find_control(msgs: list[Message], prefix: str) -> tuple[Message, list[dict[str, Any]]] | None:
    """The newest message with controls for this seat's current kind of action."""
    for m in reversed(msgs):
        els = [el for el in m.actions() if el["action_id"] == prefix or el["action_id"].startswith(prefix + ":")]
        if els:
            return m, els
    return None


async def human_move(st: Stack, uid: str, game_id: int, rng: random.Random, text_by_dm: bool, among: Collection[str] | None = None) -> str:
    """One move by a member; returns how it was made: button, select, modal or dm.
    ``among``: only use prompts with these message ts (e.g. those posted before a restart)."""
    table = st.service.tables[game_id]
    info = table.seat_of(UserRef("slack", uid))
    assert info is not None
    spec = table.engine.legal(table.state, info.seat)
    assert spec is not None
    prefix = f"g:{game_id}:{info.seat}:{spec.kind}"
    found = find_control([m for m in st.fake.dms(uid) if among is None or m.ts in among], prefix)
    assert found is not None, f"no prompt for {prefix} in the DMs of {uid}"
    msg, els = found
    if isinstance(spec, Choice):
        el = els[0]
        if el["type"] == "static_select":
            option = rng.choice(el["options"])["value"]
            assert await st.sim.click(uid, msg, el, selected=option) == 200
            return "select"
        assert await st.sim.click(uid, msg, rng.choice(els)) == 200
        return "button"
    assert isinstance(spec, Text)
    values = [" ".join(rng.sample(NONSENSE, 1)) for _ in spec.fields]
    if text_by_dm:
        status, _ = await st.sim.dm_text(uid, "; ".join(values))
        assert status == 200
        return "dm"
    opener = next(el for el in els if el["action_id"] == prefix and el["type"] == "button")
    before = len(st.fake.views)
    assert await st.sim.click(uid, msg, opener) == 200
    await st.idle()
    assert len(st.fake.views) == before + 1, "the form button did not open a modal"
    view = st.fake.views[-1]
    assert view["callback_id"] == prefix
    assert await st.sim.submit(uid, view, values) == 200
    return "modal"


async def play_to_end(
    st: Stack, game_id: int, humans: list[str], seed: int, text_by_dm: Collection[str] = frozenset(), max_moves: int = 400
) -> Counter[str]:
    """Play every human turn until the game is over; returns how many moves went which way."""
    rng = random.Random(seed)
    moves: Counter[str] = Counter()
    for _ in range(max_moves):
        await st.idle()
        table = st.service.tables.get(game_id)
        if table is None or table.over:
            return moves
        acting = table.engine.to_act(table.state)
        mover = next((u for u in humans if (i := table.seat_of(UserRef("slack", u))) is not None and i.seat in acting), None)
        assert mover is not None, f"nobody can move in game {game_id}: acting {sorted(acting)}"
        moves[await human_move(st, mover, game_id, rng, mover in text_by_dm)] += 1
    raise AssertionError(f"game {game_id} did not end within {max_moves} human moves")


def words_in(value: Any) -> set[str]:
    """Every string of three letters or more inside a JSON-like value, lower-cased."""
    if isinstance(value, str):
        return {value.lower()} if len(value) >= 3 else set()
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return set().union(*(words_in(v) for v in value)) if value else set()
    return set()


def secrets_of(events: list[Any]) -> set[str]:
    """Secret words dealt privately: Decrypto keywords, spy/villager words, Chameleon's secret."""
    return words_in([e.data[k] for e in events if e.audience != "public" for k in ("word", "secret", "keywords") if k in e.data])
