"""Plays the human seats of a game through the fake Discord, the way members would.

Members open the lobby with /play, click the lobby card's buttons, then answer every prompt
the bot sends them: choices through buttons or select menus, text through the modal the
form button opens (or a DM reply), and, for a member whose DMs are closed, through the
"Show my secret" button in the game's thread and the ephemeral controls it reveals.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import games
from games.base import Audience, Event, contains_word
from tests.bot.discord.conftest import Harness
from tests.bot.discord.fake_discord import FakeDiscord, FakeInteraction
from tests.vocabulary import nonsense_words


def card_of(fake: FakeDiscord, game_id: int) -> dict[str, Any]:
    for m in fake.in_channel(fake.channel_id):
        if f"l:{game_id}:join" in fake.custom_ids(m) or f"table #{game_id}" in (m.get("content") or ""):
            return m
    raise AssertionError(f"no lobby card for game {game_id}")


async def open_table(h: Harness, host: int, others: list[int], game: str, variant: str, ai: int) -> tuple[int, int]:
    """/play, Join, Add AI, Start through the lobby card; returns (game id, thread id)."""
    fake = h.fake
    ix = await fake.slash(host, "play", game=game, variant=variant)
    m = re.search(r"Table #(\d+)", ix.text)
    assert m, ix.text
    gid = int(m.group(1))
    for uid in others:
        ix = await fake.click(uid, card_of(fake, gid), f"l:{gid}:join")
        assert "joined" in ix.text, ix.text
    for _ in range(ai):
        ix = await fake.click(host, card_of(fake, gid), f"l:{gid}:ai")
    card = card_of(fake, gid)
    assert card["content"].count("AI (random)") == ai, card["content"]
    ix = await fake.click(host, card, f"l:{gid}:start")
    assert "started" in ix.text, ix.text
    await h.idle()
    thread_id = int(card["id"])  # Discord threads started from a message take its id
    assert fake.channels[thread_id]["type"] == 11 and int(fake.channels[thread_id]["parent_id"]) == fake.channel_id
    return gid, thread_id


def over_messages(fake: FakeDiscord, thread_id: int, gid: int) -> list[dict[str, Any]]:
    return [m for m in fake.in_channel(thread_id) if f"Game #{gid} is over" in (m.get("content") or "")]


class Players:
    """The human members of one game, answering whatever they are asked."""

    def __init__(self, h: Harness, gid: int, thread_id: int, humans: list[int], seed: int = 7,
                 dm_text_once: int | None = None) -> None:
        self.h, self.fake, self.gid, self.thread_id, self.humans = h, h.fake, gid, thread_id, humans
        self.rng = random.Random(seed)
        self.words = nonsense_words()
        self.done: set[str] = set()  # prompt message ids answered
        self.tries: dict[str, int] = {}
        self.notices_seen: set[str] = set()
        self.dm_text_once = dm_text_once
        self.accepted = 0
        self.modals = 0
        self.selects = 0
        self.reveals = 0
        self.dm_replies = 0
        self.reply_offered = False  # a text prompt to ``dm_text_once`` said it takes a DM reply
        self.forms_seen = 0
        self.selects_seen = 0
        self.pressed_again = 0  # "Show my secret" pressed again while the member owed a move
        self.last_reveal = ""

    def _is_prompt(self, msg: dict[str, Any]) -> bool:
        return any(cid.startswith(f"g:{self.gid}:") for cid in self.fake.custom_ids(msg))

    def latest_prompt(self, uid: int) -> dict[str, Any] | None:
        prompts = [m for m in self.fake.dms(uid) if self._is_prompt(m)]
        if prompts and prompts[-1]["id"] not in self.done:
            return prompts[-1]
        return None

    async def answer(self, uid: int, msg: dict[str, Any]) -> bool:
        """Answer one prompt; True when the service accepted it."""
        fake = self.fake
        comps = [c for c in fake.components(msg) if str(c.get("custom_id", "")).startswith(f"g:{self.gid}:")]
        attempt = self.tries.get(msg["id"], 0)
        self.tries[msg["id"]] = attempt + 1
        selects = [c for c in comps if c["type"] == 3]
        choices = [c for c in comps if c["type"] == 2 and c["custom_id"].count(":") == 4]
        forms = [c for c in comps if c["type"] == 2 and c["custom_id"].count(":") == 3]
        ix: FakeInteraction
        self.forms_seen += bool(forms) and attempt == 0
        self.selects_seen += bool(selects) and attempt == 0
        if selects:
            opts = selects[0]["options"]
            ix = await fake.select(uid, msg, selects[0]["custom_id"], [self.rng.choice(opts)["value"]])
            self.selects += 1
        elif choices:
            ix = await fake.click(uid, msg, self.rng.choice(choices)["custom_id"])
        elif forms:
            if self.dm_text_once == uid and "Or reply here" in (msg.get("content") or ""):
                self.dm_text_once = None
                self.reply_offered = True
                return await self.answer_by_dm(uid, msg)
            opened = await fake.click(uid, msg, forms[0]["custom_id"])
            modal = opened.modal
            assert modal is not None, f"the form button opened no modal: {opened.text}"
            n = sum(len(row.get("components") or [row.get("component")]) for row in modal["components"])
            ix = await fake.submit_modal(uid, opened, [next(self.words) for _ in range(n)])
            self.modals += 1
        else:
            return False
        assert ix.ephemeral, "answers to a member's input must be ephemeral"
        ok = "Got it" in ix.text
        if ok or attempt >= 5:
            self.done.add(msg["id"])
        self.accepted += ok
        return ok

    async def answer_by_dm(self, uid: int, msg: dict[str, Any]) -> bool:
        fake = self.fake
        many = re.search(r"reply here with (\d+) answers", msg["content"])
        fields = int(many.group(1)) if many else 1
        mine = await fake.dm_text(uid, "; ".join(next(self.words) for _ in range(fields)))
        reply = await fake.wait_for(lambda: [m for m in fake.dms(uid)
                                             if str((m.get("message_reference") or {}).get("message_id")) == mine["id"]])
        ok = "Got it" in reply[0]["content"]
        self.dm_replies += ok
        if ok:
            self.done.add(msg["id"])
            self.accepted += 1
        return ok

    def owes(self, uid: int) -> bool:
        """Whether the member's seat is to act now, by the table the service holds."""
        service = self.h.service
        table = None if service is None else service.tables.get(self.gid)
        if table is None or table.over:
            return False
        acting = table.engine.to_act(table.state)
        return any(s.user is not None and s.user.user_id == str(uid) and s.seat in acting for s in table.seats)

    async def reveal_and_answer(self, uid: int, again: bool = False) -> bool:
        """For a member with closed DMs: press "Show my secret" under each new notice, answer what it shows.
        ``again``: the table has been quiet while the member owes a move (a reveal pressed before their
        prompt was ready, or an answer refused); they press the latest notice once more, as a member would."""
        fake = self.fake
        cid = f"s:{self.gid}"
        notices = [n for n in fake.in_channel(self.thread_id) if cid in fake.custom_ids(n)]
        pressed = [n for n in notices if n["id"] not in self.notices_seen]
        if not pressed and again and notices and self.owes(uid):
            pressed = notices[-1:]
            self.pressed_again += 1
        acted = False
        for notice in pressed:
            self.notices_seen.add(notice["id"])
            ix = await fake.click(uid, notice, cid)
            assert ix.ephemeral, "the secret must be revealed ephemerally"
            self.reveals += 1
            if self.owes(uid):
                # The answer may come in several messages (a long story so far); the prompt is the last.
                def prompted(ix: FakeInteraction = ix) -> bool:
                    return any(self._is_prompt(m) for m in ix.followups)

                try:
                    await fake.wait_for(prompted, timeout=10)
                except TimeoutError:
                    pass
            self.last_reveal = ix.text
            shown = ix.followups[-1]
            if self._is_prompt(shown) and shown["id"] not in self.done:
                acted |= await self.answer(uid, shown)
        return acted

    def stall_report(self, closed: set[int]) -> str:
        """Who the table waits for and what each member last saw: the message of a game that stalls."""
        service = self.h.service
        table = None if service is None else service.tables.get(self.gid)
        acting = sorted(table.engine.to_act(table.state)) if table is not None else "no table"
        lines = [f"game {self.gid} did not finish: seats to act {acting}"]
        for uid in self.humans:
            prompt = self.latest_prompt(uid)
            lines.append(f"member {uid}: owes {self.owes(uid)}, closed DMs {uid in closed}, "
                         f"unanswered prompt {prompt is not None}, reveals {self.reveals}")
        lines.append(f"last reveal: {self.last_reveal[-300:]!r}")
        return "\n".join(lines)

    async def play(self, closed: set[int] = frozenset(), max_steps: int = 600) -> None:  # type: ignore[assignment]
        fake = self.fake
        quiet = 0  # steps in a row in which nothing moved for 3 seconds
        for _ in range(max_steps):
            await self.h.idle()
            if over_messages(fake, self.thread_id, self.gid):
                return
            progressed = False
            for uid in self.humans:
                if uid in closed:
                    progressed |= await self.reveal_and_answer(uid, again=quiet > 0)
                    continue
                msg = self.latest_prompt(uid)
                if msg is not None:
                    await self.answer(uid, msg)
                    progressed = True
            if progressed:
                quiet = 0
                continue

            def moved(seen: int = len(fake.requests)) -> bool:
                return len(fake.requests) > seen

            try:
                await fake.wait_for(moved, timeout=3)
                quiet = 0
            except TimeoutError:
                quiet += 1
                # Nothing in the game has a deadline here: a minute of quiet is a stall, said plainly
                # (not a wait until the test's own time limit).
                if quiet * 3 >= 60:
                    raise AssertionError(self.stall_report(closed)) from None
        raise AssertionError(self.stall_report(closed))


@dataclass(frozen=True)
class Secrets:
    """A game's secret words, and when (if ever) a public event revealed each of them."""

    words: frozenset[str]
    public: tuple[tuple[datetime, str], ...]  # (logged at, text) of every public event string
    dealt_at: datetime | None = None  # when the first secret was logged (the deal)
    # Every line the engine wrote for a public event, as the bot renders it ("Tie between bob, alice,
    # AI-1 and AI-2: a run-off decides."): the engine's own public words, no leak of a dealt "tie".
    said: tuple[tuple[datetime, str], ...] = ()

    def said_by(self, when: datetime) -> set[str]:
        return {line for at, line in self.said if at <= when}

    def revealed_by(self, when: datetime) -> set[str]:
        return {w for w in self.words if any(at <= when and contains_word(text, w) for at, text in self.public)}


async def secrets_of(h: Harness, gid: int) -> Secrets:
    """The game's dealt secrets (spy words, chameleon secret, Decrypto keywords), from the event log."""
    assert h.store is not None
    glog = await h.store.load_game(gid)
    private: set[str] = set()
    public: list[tuple[datetime, str]] = []

    def strings(x: Any) -> list[str]:
        if isinstance(x, str):
            return [x]
        if isinstance(x, dict):
            return [s for v in x.values() for s in strings(v)]
        if isinstance(x, (list, tuple)):
            return [s for v in x for s in strings(v)]
        return []

    engine = games.get(glog.row.game)
    names = [s.display_name for s in sorted(glog.seats, key=lambda s: s.seat)]
    said: list[tuple[datetime, str]] = []
    dealt_at: datetime | None = None
    for e in glog.events:
        at = e.created_at if e.created_at.tzinfo else e.created_at.replace(tzinfo=UTC)
        if e.audience == "public":
            public.extend((at, s) for s in strings(e.data))
            text = engine.text(Event(e.kind, dict(e.data), Audience.from_json(e.audience)), names)
            said.extend((at, _plain(ln)) for ln in text.splitlines() if ln.strip())
        elif e.kind in ("word", "role", "keywords"):
            dealt_at = at if dealt_at is None else min(dealt_at, at)
            data = dict(e.data)
            private.update(strings(data.get("word")) + strings(data.get("secret")) + strings(data.get("keywords")))
    return Secrets(frozenset(w for w in private if w), tuple(public), dealt_at, tuple(said))


def _plain(line: str) -> str:
    """A line as the check compares it: Discord's markdown escapes taken out, spaces trimmed."""
    return line.replace("\\", "").strip()


async def private_lines(h: Harness, gid: int) -> set[str]:
    """Every line the engine wrote for some seats only (a dealt word, a Decrypto code, Spymasters' key),
    as the bot renders it, except lines a public event also says."""
    assert h.store is not None
    glog = await h.store.load_game(gid)
    engine = games.get(glog.row.game)
    names = [s.display_name for s in sorted(glog.seats, key=lambda s: s.seat)]
    said: dict[bool, set[str]] = {True: set(), False: set()}
    for e in glog.events:
        event = Event(e.kind, dict(e.data), Audience.from_json(e.audience))
        said[event.audience.is_public].update(ln.strip() for ln in engine.text(event, names).splitlines())
    return {ln for ln in said[False] - said[True] if len(ln) >= 12}


def assert_no_private_line_in_channels(fake: FakeDiscord, lines: set[str]) -> None:
    """No channel or thread request carries a line the engine wrote for some seats only."""
    assert lines, "the game told no seat anything privately: the check would be empty"
    for r in fake.public_requests():
        for text in r.texts():
            for line in text.splitlines():
                assert line.strip() not in lines, f"a private line reached channel {r.channel_id}: {line!r}"


def assert_no_secret_in_channels(fake: FakeDiscord, secrets: Secrets) -> None:
    """No channel or thread request names a secret before the game itself made it public
    (Decrypto reveals the keywords when it ends; that reveal is the engine's, not a leak).

    The bot's own words are no leak: a line it posted before anything was dealt (the lobby card's
    "decrypto table #1") knows nothing of the deal, so the same line posted again later (the card
    edited once the game began) is not read for secrets, even when a keyword is "table"; nor is a
    line the engine wrote for a public event (its wording, "Tie between ...", is the rules', and a
    word its data carries is public from then on anyway, see `Secrets.revealed_by`)."""
    assert secrets.words, "the game dealt no secrets: the check would be empty"
    requests = fake.public_requests()
    dealt = secrets.dealt_at
    own = {_plain(line) for r in requests if dealt is not None and r.at < dealt
           for text in r.texts() for line in text.splitlines() if line.strip()}
    checked = 0
    for r in requests:
        hidden = secrets.words - secrets.revealed_by(r.at)
        checked += bool(hidden)
        ours = own | secrets.said_by(r.at)
        for text in r.texts():
            told = "\n".join(line for line in text.splitlines() if _plain(line) not in ours)
            for w in hidden:
                assert not contains_word(told, w), f"secret {w!r} sent to channel {r.channel_id}: {r.method} {r.path} {text!r}"
    assert checked > 0, "no channel request was made while the secrets were still secret"
