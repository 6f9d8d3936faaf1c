"""Property test: random streams of commands from several members, with redeliveries.

Whatever arrives, no channel-bound message carries a secret its audience may not see,
and a refused command changes neither the game nor the log.
"""

from __future__ import annotations

import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import games
from bot.core.messages import CommandKind, Place, UserRef
from games.base import Choice, contains_word
from tests.bot.core.conftest import make_harness
from tests.bot.core.test_service import event_lines
from tests.vocabulary import NONSENSE

USERS = [UserRef("memory", str(i), f"U{i}") for i in range(3)]
PLACES = [Place("memory", "a"), Place("memory", "b")]

step = st.tuples(
    st.sampled_from(["create", "join", "leave", "ai", "start", "abort", "act", "act", "act", "act", "show", "status"]),
    st.integers(0, 2),  # user
    st.integers(0, 1),  # place
    st.integers(0, 10_000),  # choice among options / garbage
    st.booleans(),  # redeliver an earlier id instead of a fresh one
    st.sampled_from(sorted(games.registry())),  # every game in the catalog
)


async def run_stream(steps) -> None:
    with tempfile.TemporaryDirectory() as d:
        h = await make_harness(f"sqlite+aiosqlite:///{d}/p.db")
        try:
            used: list[str] = []
            secrets_by_game: dict[int, list[str]] = {}
            seen: dict = {}  # every table met, kept here: the service lets finished tables go
            for i, (verb, u, p, pick, redeliver, game) in enumerate(steps):
                user, place = USERS[u], PLACES[p]
                inbound = used[pick % len(used)] if redeliver and used else f"e{i}"
                used.append(inbound)
                kind, args = _command(h, verb, user, place, pick, game)
                if kind is None:
                    continue
                before = _snapshot(h)
                actions_before = {gid: len((await h.store.load_game(gid)).actions) for gid in h.service.tables}
                reply = await h.send(kind, user, place, inbound=inbound, **args)
                await h.service.wait_idle()
                if not reply.ok or reply.duplicate:
                    # Nothing was running before (we waited), and a refusal starts nothing.
                    assert _snapshot(h) == before, (verb, reply)
                    for gid, n in actions_before.items():
                        assert len((await h.store.load_game(gid)).actions) == n
                for gid, t in h.service.tables.items():
                    seen[gid] = t
                    if gid not in secrets_by_game:
                        state, _ = t.engine.new(t.cfg, len(t.seats), t.seed)
                        secrets_by_game[gid] = [s.value for s in t.engine.secrets(state) if not s.among]
            # Channel-bound messages never carry a dealt secret before that game's end.
            for gid, words in secrets_by_game.items():
                t = seen[gid]
                thread = t.place.key
                msgs = [s for s in h.platform.public() if s.to == thread]
                if t.over:
                    msgs = msgs[:-2]  # the final reveal and the announcement
                # The engine's own lines for public events are the rules' words (a run-off's "Tie
                # between ..."), no leak of a dealt "tie".
                _, said = await event_lines(h, gid)
                for s in msgs:
                    text = "\n".join(ln for ln in s.message.text.splitlines() if ln.strip() not in said)
                    for w in words:
                        assert not contains_word(text, w), (w, s.message.text)
        finally:
            await h.service.stop()
            await h.store.aclose()


def _snapshot(h) -> dict:
    return {gid: t.state for gid, t in h.service.tables.items()}


def _command(h, verb, user, place, pick, game):
    if verb == "create":
        return CommandKind.CREATE, {"game": game}
    if verb == "ai":
        return CommandKind.ADD_AI, {"agent": "random", "count": 1 + pick % 3}
    if verb in ("join", "leave", "start", "abort", "status"):
        return CommandKind(verb), {}
    tables = [t for t in h.service.tables.values() if not t.over]
    if not tables:
        return None, {}
    t = tables[pick % len(tables)]
    if verb == "show":
        return CommandKind.SHOW, {"game_id": t.game_id}
    seat = pick % len(t.seats)
    spec = t.engine.legal(t.state, seat)
    if spec is None or pick % 7 == 0:
        return CommandKind.ACT, {"game_id": t.game_id, "seat": seat, "kind": "vote", "value": [str(pick)]}
    if isinstance(spec, Choice):
        value = [spec.options[pick % len(spec.options)].id]
    else:
        value = [NONSENSE[(pick + k) % len(NONSENSE)] for k in range(len(spec.fields))]
    return CommandKind.ACT, {"game_id": t.game_id, "seat": seat, "kind": spec.kind, "value": value}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=5, max_size=40))
def test_random_command_streams(steps) -> None:
    import asyncio

    asyncio.run(run_stream(steps))
