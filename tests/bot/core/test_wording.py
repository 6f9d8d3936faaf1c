"""Seat labels from structured data, reserved AI names
numbered without gaps, form limits from the engine's ActionSpec, lists in words, the winners said
once, private confirmations before the result, and "reply here" only where replying works."""

from __future__ import annotations

import random

from bot.core import render
from bot.core.messages import CommandKind, Place, UserRef
from bot.core.tables import Lobby, LobbySeat, SeatInfo, Table, seat_roster
from games import get
from games.base import Choice, Option, Text
from games.catalog import descriptors
from games.labels import human_list, seat_ref
from games.play import random_action
from storage.tables import GameStatus, SeatKind
from tests.bot.core.conftest import ALICE, BOB, HERE, Harness
from tests.vocabulary import NONSENSE


def _seats_four(game_id: str) -> bool:
    engine = get(game_id)
    lo, hi = engine.seat_range(engine.make_config())
    return lo <= 4 <= hi


def _table(names: list[str]) -> Table:
    engine = get("spy")
    seats = [SeatInfo(i, SeatKind.HUMAN, n, user=UserRef("memory", str(i), n)) for i, n in enumerate(names)]
    return Table(7, engine, engine.make_config(), 1, seats, None, HERE, "memory", 0.0)


def test_a_member_named_like_a_seat_label_relabels_nothing() -> None:
    """Item 17 (failed before: a member named "Player 1" renamed another player's ballot entry)."""
    table = _table(["Player 2", "Player 1", "Carol"])
    spec = Choice("vote", f"Vote: {seat_ref(0)}, {seat_ref(1)} or {seat_ref(2)}?",
                  tuple(Option(str(i), seat_ref(i)) for i in range(3)))
    m = render.prompt_message(table, 2, spec, text_replies=True)
    assert [b.label for b in m.buttons] == ["Player 2", "Player 1", "Carol"]
    assert m.text == "Vote: Player 2, Player 1 or Carol?"


def test_ai_names_are_reserved_and_numbered_without_gaps() -> None:
    """Item 17 (failed before: AI-1, AI-3 after a shuffle; a human could be called AI-2)."""
    users = [UserRef("memory", str(i), n) for i, n in enumerate(["Alice", "AI-2", "ai 7"])]
    lobby = Lobby(users[0], (LobbySeat(SeatKind.HUMAN, user=users[0]), LobbySeat(SeatKind.AI, agent="random"),
                             LobbySeat(SeatKind.HUMAN, user=users[1]), LobbySeat(SeatKind.AI, agent="random"),
                             LobbySeat(SeatKind.HUMAN, user=users[2]), LobbySeat(SeatKind.AI, agent="random")))
    for seed in range(20):
        seats = seat_roster(lobby, seed, keep_order=False)
        assert [s.name for s in seats if s.is_ai] == ["AI-1", "AI-2", "AI-3"]
        humans = sorted(s.name for s in seats if not s.is_ai)
        assert humans == ["AI-2 (human)", "Alice", "ai 7 (human)"]


def test_lists_read_as_lists_and_winners_are_named_once() -> None:
    """Item 22 (failed before: "Game over. Winners: A, B" printed twice in Chameleon)."""
    assert human_list(["Alice", "AI-2", "AI-3"]) == "Alice, AI-2 and AI-3"
    assert render.result_text({"winners": [0, 1, 2]}, ["Alice", "AI-2", "AI-3"], summary=False) == \
        "Winners: Alice, AI-2 and AI-3."
    told = "Game over. Winners: Alice, AI-2."
    assert "Winners" not in render.end_text(3, {"winners": [0, 1]}, ["Alice", "AI-2", "Bob"], told)
    assert "Winners: Alice and AI-2." in render.end_text(3, {"winners": [0, 1]}, ["Alice", "AI-2", "Bob"],
                                                         "The villagers win.")


def test_reply_here_only_where_replies_are_read() -> None:
    """Item 22 (failed before: the console, which reads no replies, said "Or reply here")."""
    table = _table(["Alice", "Bob", "Carol"])
    spec = Text("describe", "Describe your word.", max_words=12, max_chars=240)
    assert "reply here" in render.prompt_message(table, 0, spec, text_replies=True).text.lower()
    m = render.prompt_message(table, 0, spec, text_replies=False)
    assert "reply" not in m.text.lower()
    assert m.form is not None and m.form.max_chars == 240  # item 18: the form's limit is the spec's


async def _play_until_text_turn(h: Harness) -> tuple[Table, int, Text]:
    r = random.Random(3)
    for _ in range(200):
        await h.service.wait_idle()
        t = next(iter(h.service.tables.values()))
        for s in sorted(t.engine.to_act(t.state)):
            spec = t.engine.legal(t.state, s)
            if t.seats[s].is_ai:
                continue
            if isinstance(spec, Text):
                return t, s, spec
            user = t.seats[s].user
            assert spec is not None and user is not None
            a = random_action(spec, r, NONSENSE)
            await h.send(CommandKind.ACT, user, t.place, game_id=t.game_id, seat=s, kind=a.kind,
                         value=list(a.value))
            break
    raise AssertionError("no text turn came")


async def test_answers_up_to_the_specs_own_limit_are_accepted(harness: Harness) -> None:
    """Item 18 (failed before: Spy's form allowed 240 characters, the service refused over 200)."""
    h = harness
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spy", options={"max_words": 12})).ok
    assert (await h.send(CommandKind.JOIN, BOB, HERE)).ok
    assert (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=2)).ok
    assert (await h.send(CommandKind.START, ALICE, HERE)).ok
    table, seat, spec = await _play_until_text_turn(h)
    assert spec.max_chars > 200
    user = table.seats[seat].user
    assert user is not None
    prompt = [m for m in h.platform.dms_to(user.key) if m.form is not None][-1]
    assert prompt.form is not None and prompt.form.max_chars == spec.max_chars
    words = [f"w{'x' * 18}{i:02d}" for i in range(spec.max_words)]
    text = " ".join(words)[: spec.max_chars]
    assert len(text) > 200
    r = await h.send(CommandKind.ACT, user, table.place, game_id=table.game_id, seat=seat,
                     kind=spec.kind, value=[text])
    assert r.ok, r.text
    r = await h.send(CommandKind.ACT, user, table.place, game_id=table.game_id, seat=seat,
                     kind=spec.kind, value=["y" * (spec.max_chars + 1)])
    assert not r.ok


async def test_private_confirmations_never_arrive_after_the_result(harness: Harness) -> None:
    """Item 22 (failed before: "[only you see] You voted..." came after the result)."""
    h = harness
    # Every registered game whose default variant seats four (two members, two AI seats), twice.
    four = [d.id for d in descriptors() if _seats_four(d.id)]
    assert len(four) >= 2
    for seed, game in enumerate(four * 2):
        place = Place("memory", f"v{seed}")
        assert (await h.send(CommandKind.CREATE, ALICE, place, game=game)).ok
        assert (await h.send(CommandKind.JOIN, BOB, place)).ok
        assert (await h.send(CommandKind.ADD_AI, ALICE, place, agent="random", count=2)).ok
        assert (await h.send(CommandKind.START, ALICE, place)).ok
        # The newest game is this one, running or already over: the AI seats move at once, and in
        # Spymasters a random guesser whose team opens can pick the assassin before any member moves.
        started = (await h.store.games())[-1]
        assert started.game == game and started.status in (GameStatus.RUNNING, GameStatus.FINISHED)
        gid = started.id
        assert gid is not None
        names = [s.display_name for s in (await h.store.load_game(gid)).seats]
        await h.play_humans(seed=seed)
        sent = h.platform.sent
        end = next(i for i, s in enumerate(sent) if s.message.title == f"Game #{gid} is over")
        assert not [s for s in sent[end:] if s.kind == "dm"], "nothing private after the result"
        public = [s.message.text for s in sent if s.to.startswith(place.channel)]
        assert sum("Winners:" in t for t in public) <= 1, "the winners are named once"
        row = await h.store.game(gid)
        assert row is not None and row.result is not None
        # Named by the result line, or by the engine's last events just before it.
        last = [s.message.text for s in sent[: end + 1] if s.to.startswith(place.channel)][-2:]
        for w in row.result.get("winners") or []:
            assert any(names[w] in t for t in last), (game, names[w], last)
