"""Full games through Slack: slash command, lobby buttons, secrets by DM, modals and DM
replies, votes by buttons and selects, the result posted once in the lobby's thread."""

from __future__ import annotations

import re
from typing import Any

import pytest

import games
from games.base import Event
from games.catalog import descriptors
from games.descriptor import GameDescriptor
from tests.bot.privately import members_told_privately
from tests.bot.slack.conftest import Stack
from tests.bot.slack.fake_slack import Message
from tests.bot.slack.play import play_to_end, secrets_of, words_in

ALICE, BOB = "UALICE", "UBOB"
CHANNEL = "CGAMES"


def lobby_card(st: Stack, channel: str = CHANNEL) -> Message:
    cards = [m for m in st.fake.in_channel(channel) if m.thread_ts is None and any(el["action_id"].startswith("l:") for el in m.actions())]
    assert cards, "no lobby card posted"
    return cards[-1]


def button(m: Message, verb: str) -> dict[str, Any]:
    return next(el for el in m.actions() if el["action_id"].endswith(":" + verb))


async def open_table(st: Stack, command: str, ai_seats: int) -> tuple[int, Message]:
    assert await st.sim.command(ALICE, CHANNEL, command) == 200
    await st.idle()
    card = lobby_card(st)
    game_id = int(button(card, "join")["action_id"].split(":")[1])
    assert await st.sim.click(BOB, card, button(card, "join")) == 200
    await st.idle()
    for _ in range(ai_seats):
        assert await st.sim.click(ALICE, card, button(card, "ai")) == 200
        await st.idle()
    updates = [c for c in st.fake.methods("chat.update") if c["ts"] == card.ts]
    assert len(updates) >= 1 + ai_seats, "the lobby card was not updated in place"
    assert "ualice" in card.text.lower() and "ubob" in card.text.lower()
    assert await st.sim.click(ALICE, card, button(card, "start")) == 200
    await st.idle()
    return game_id, card


# The bot's own words in every lobby card ("justone table #1"): a dealt word "table" is no leak by them.
BOT_PHRASES = re.compile(r"\btable #\d+", re.I)


def leaked_words(secrets: set[str], blob: str) -> list[str]:
    """Secret words that appear in ``blob`` as words: `anger` is not leaked by `danger`."""
    words = set(re.findall(r"[^\W_]+(?:['-][^\W_]+)*", blob.lower()))
    text = " ".join(re.findall(r"[^\W_]+", blob.lower()))
    return sorted(w for w in secrets if w in words or (" " in w and f" {w} " in f" {text} "))


def test_secrets_are_compared_as_words() -> None:
    assert leaked_words({"anger"}, "Danger ahead: strangers") == []
    assert leaked_words({"anger", "ice cream"}, "the ANGER grew; ice  cream melts") == ["anger", "ice cream"]


# Block Kit's enumerations (`"style": "danger"` on a button, `"type": "section"`) are no one's words:
# a dealt keyword "danger" is not leaked by a red button.
BLOCK_KIT_ENUMS = frozenset({"type", "style"})


def block_strings(node: Any) -> list[str]:
    """Every string a channel's clients receive in ``blocks`` (text, values, ids), less Block Kit's enumerations."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [t for k, v in node.items() if k not in BLOCK_KIT_ENUMS for t in block_strings(v)]
    if isinstance(node, list):
        return [t for v in node for t in block_strings(v)]
    return []


def test_block_kit_enumerations_are_not_words() -> None:
    blocks = [{"type": "actions", "elements": [{"type": "button", "style": "danger", "value": "join:1",
                                                "text": {"type": "plain_text", "text": "Leave"}}]}]
    assert leaked_words({"danger", "actions", "leave"}, " ".join(block_strings(blocks))) == ["leave"]


def channel_posts(st: Stack) -> list[tuple[int, dict[str, Any]]]:
    return [
        (i, c.args)
        for i, c in enumerate(st.fake.calls)
        if c.method in ("chat.postMessage", "chat.update") and not str(c.args.get("channel", "")).startswith("D")
    ]


async def assert_no_secret_in_channel(st: Stack, game_id: int) -> None:
    """Two checks over every channel/thread call: no private event's text, and no secret word
    (except words that are public anyway, like the Chameleon card that lists the secret)."""
    glog = await st.store.load_game(game_id)
    engine = games.get(glog.row.game)
    names = [s.display_name for s in sorted(glog.seats, key=lambda s: s.seat)]
    private = [Event.from_json({"kind": e.kind, "data": e.data, "audience": e.audience}) for e in glog.events if e.audience != "public"]
    private_texts = {engine.text(e, names).lower() for e in private}
    said = {ln.strip() for e in glog.events if e.audience == "public"
            for ln in engine.text(Event.from_json({"kind": e.kind, "data": e.data, "audience": e.audience}), names).splitlines()}
    # A line written for some seats only (a dealt word, a code, a board's key), unless a public event says it too.
    private_lines = {ln.strip() for t in private_texts for ln in t.splitlines()} - {ln.lower() for ln in said}
    private_lines = {ln for ln in private_lines if len(ln) >= 12}
    # Words the deal shows everyone (a Chameleon card lists the secret among 16) prove nothing.
    public_words = words_in([e.data for e in glog.events if e.audience == "public" and e.action_seq is None])
    secrets = secrets_of(glog.events) - public_words
    assert private_texts and private_lines, "the game dealt no secrets?"
    posts = channel_posts(st)
    over = [i for i, (_, a) in enumerate(posts) if f"Game #{game_id} is over" in str(a.get("text", ""))]
    assert len(over) == 1, f"the result was posted {len(over)} times"
    # A game may reveal a secret itself (Just One's "The word was ..." after each card, Decrypto's keywords
    # at the end): from the post carrying that public event on, the word is no secret. Before, none may show.
    event_lines = {ln.strip().lower() for ln in said if ln.strip()}
    revealed: set[str] = set()
    for _, args in posts[: over[0] - 1]:
        blob = " ".join([str(args.get("text", "")), *block_strings(args.get("blocks", []))])
        blob = BOT_PHRASES.sub(" ", blob)
        revealed |= {w for ln in event_lines if ln in blob.lower() for w in leaked_words(secrets, ln)}
        leaked = leaked_words(secrets - revealed, blob)
        assert not leaked, f"secret {leaked} posted to channel {args.get('channel')}: {args.get('text')!r}"
    for _, args in posts:
        for line in " \n".join([str(args.get("text", "")), *block_strings(args.get("blocks", []))]).splitlines():
            assert line.strip().lower() not in private_lines, f"a private line reached {args.get('channel')}: {line!r}"


def _ai_seats(d: GameDescriptor) -> int:
    """Two members and the fewest AI seats the default variant allows (at least one)."""
    return max(d.engine.seat_range(d.engine.make_config())[0] - 2, 1)


@pytest.mark.parametrize("d", descriptors(), ids=lambda d: d.id)
async def test_full_game(stack: Stack, d: GameDescriptor) -> None:
    st = stack
    # Alice writes in the form's modal, Bob by replying in the DM. The AI seats can end a game before
    # a member's first move (Spymasters' other team finding the assassin): then the table plays again.
    for _ in range(4):
        game_id, card = await open_table(st, f"play {d.id}", _ai_seats(d))
        moves = await play_to_end(st, game_id, [ALICE, BOB], seed=game_id, text_by_dm={BOB})
        if sum(moves.values()) > 0:
            break
    assert sum(moves.values()) > 0, "four games in a row ended before a member's first move"
    # Secrets and prompts went by DM, through conversations.open, to each member who holds a secret or moved.
    members = {str(s.user_key).split(":", 1)[1] for s in await members_told_privately(st.store, game_id)}
    opened = {c["users"] for c in st.fake.methods("conversations.open")}
    assert members and members <= {ALICE, BOB} and members <= opened
    assert all(st.fake.dms(m) for m in members)
    assert len(st.fake.views) >= moves["modal"]
    if moves["dm"]:
        assert any(c.method == "chat.postMessage" and c.args["channel"] == "D" + BOB and "✅" in c.args["text"] for c in st.fake.calls)
    await st.idle()
    row = await st.store.game(game_id)
    assert row is not None and row.status == "finished"
    # The game lives in the lobby card's thread; the result is there exactly once.
    thread = st.fake.thread(CHANNEL, card.ts)
    assert any(f"Game #{game_id}" in m.text for m in thread)
    assert sum(f"Game #{game_id} is over" in m.text for m in thread) == 1
    await assert_no_secret_in_channel(st, game_id)
