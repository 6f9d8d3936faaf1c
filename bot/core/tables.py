"""Tables in memory and lobbies as typed data.

A `Table` is a running game held in memory; everything in it can be rebuilt from the log
(`rebuild`, through ``games.base.replay``). A `Lobby` is the pre-start roster and options
kept in ``games.lobby`` as JSON (`Lobby.to_json` / `Lobby.from_json`); the deadline of a
running game stays there too.
"""

from __future__ import annotations

import asyncio
import re
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic

from bot.core.messages import MessageRef, Place, UserRef
from bot.core.replays import record_of
from bot.ops.masking import MASKER
from games.base import Action, C, Game, Result, S, Seat, replay, rng
from games.record import Record
from storage.records import GameLog
from storage.tables import GameRow, SeatKind

AI_NAME = "AI-{n}"
_AI_LIKE = re.compile(r"^\s*ai\s*[-_ ]?\s*\d+\s*$", re.IGNORECASE)


class ReplayFailed(Exception):
    """A logged action no longer replays; the message names it (never its content, which may be secret)."""


def user_json(u: UserRef) -> dict[str, str]:
    return {"platform": u.platform, "user_id": u.user_id, "name": u.name}


def user_from(raw: Mapping[str, Any]) -> UserRef:
    return UserRef(str(raw["platform"]), str(raw["user_id"]), str(raw.get("name", "")))


@dataclass(frozen=True, slots=True)
class LobbySeat:
    """A seat taken before the start: a human, or an AI with its agent name and who added it."""

    kind: SeatKind
    user: UserRef | None = None
    agent: str | None = None
    added_by: str | None = None  # user key of whoever added an AI seat

    def to_json(self) -> dict[str, Any]:
        if self.kind is SeatKind.HUMAN:
            assert self.user is not None
            return {"kind": self.kind.value, "user": user_json(self.user)}
        return {"kind": self.kind.value, "agent": self.agent, "added_by": self.added_by}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> LobbySeat:
        kind = SeatKind(raw["kind"])
        if kind is SeatKind.HUMAN:
            return cls(kind, user=user_from(raw["user"]))
        return cls(kind, agent=str(raw["agent"]), added_by=raw.get("added_by"))

    def is_user(self, user: UserRef) -> bool:
        return self.user is not None and self.user.key == user.key


@dataclass(frozen=True, slots=True)
class Lobby:
    host: UserRef
    seats: tuple[LobbySeat, ...] = ()
    deadline_s: float = 0.0
    card: MessageRef | None = None
    thread: str | None = None
    quiet: bool = False  # an AI-only table nobody watches: nothing is posted
    sneak_report: bool = False  # post the SNEAK clue report after a Who-is-Spy or Decrypto game (Chameleon: always)

    @property
    def humans(self) -> list[LobbySeat]:
        return [s for s in self.seats if s.kind is SeatKind.HUMAN]

    def has(self, user: UserRef) -> bool:
        return any(s.is_user(user) for s in self.seats)

    def to_json(self) -> dict[str, Any]:
        card = {"channel": self.card.channel, "message_id": self.card.message_id} if self.card else None
        return {"host": user_json(self.host), "seats": [s.to_json() for s in self.seats],
                "deadline_s": self.deadline_s, "card": card, "thread": self.thread, "quiet": self.quiet,
                "sneak_report": self.sneak_report}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], platform: str) -> Lobby:
        card = raw.get("card")
        return cls(
            host=user_from(raw["host"]),
            seats=tuple(LobbySeat.from_json(s) for s in raw.get("seats", ())),
            deadline_s=float(raw.get("deadline_s") or 0.0),
            card=MessageRef(platform, str(card["channel"]), str(card["message_id"])) if card else None,
            thread=raw.get("thread"),
            quiet=bool(raw.get("quiet")),
            sneak_report=bool(raw.get("sneak_report")),
        )

    @classmethod
    def of(cls, row: GameRow) -> Lobby:
        return cls.from_json(row.lobby or {"host": {"platform": row.platform, "user_id": ""}}, row.platform)

    def with_(self, **changes: Any) -> Lobby:
        return replace(self, **changes)


@dataclass
class SeatInfo:
    seat: Seat
    kind: SeatKind
    name: str
    user: UserRef | None = None
    agent: str | None = None

    @property
    def is_ai(self) -> bool:
        return self.kind is SeatKind.AI


@dataclass
class Table(Generic[S, C]):
    """A running game in memory; everything here can be rebuilt from the log."""

    game_id: int
    engine: Game[S, C]
    cfg: C
    seed: int
    seats: list[SeatInfo]
    state: S
    place: Place
    platform: str
    deadline_s: float
    tenant: str = ""
    quiet: bool = False
    # Every lifecycle change and every turn of this table holds this lock (one per game id).
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    prompted: set[Seat] = field(default_factory=set)
    dm_failed: set[Seat] = field(default_factory=set)
    driver: asyncio.Task[None] | None = None
    over: bool = False
    # The sequence number of the last action in the log: the next turn is written at seq + 1 and
    # nowhere else, so a turn whose commit answer was lost is found there, not logged twice.
    seq: int = 0
    # The logged actions and their seqs, so that a finished table hands on its record without
    # reading its log again (``bot.core.ports.FinishedTable``).
    actions: list[tuple[Seat, Action]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    # Who made each of those actions, as logged: (``ActionSource`` value, actor), in the same order.
    movers: list[tuple[str, str]] = field(default_factory=list)

    def record(self, result: Result | None) -> Record:
        """The game as played so far, as ``bot.core.replays.record_of`` would read it from the log."""
        return Record(self.engine, self.cfg, len(self.seats), self.seed, tuple(self.actions),
                      None if result is None else result.to_json(), tuple(self.lines))

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.seats]

    @property
    def title(self) -> str:
        return f"{self.engine.id} #{self.game_id}"

    def seat_of(self, user: UserRef) -> SeatInfo | None:
        for s in self.seats:
            if s.user is not None and s.user.key == user.key:
                return s
        return None

    def acting(self) -> frozenset[Seat]:
        return frozenset() if self.over else self.engine.to_act(self.state)

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        if name in ("state", "over"):
            self._hold_secrets()

    def _hold_secrets(self) -> None:
        """While the game runs its secret words are masked in every log line, exception texts included
        (bot/ops/masking.py): a library's error may quote a DM that carried one."""
        if not hasattr(self, "over"):
            return  # still being built: the state comes before the flag
        key = id(self)
        if self.over:
            MASKER.release(key)
            return
        try:
            # A secret's candidates too (a Chameleon card, the Spymasters board under its key): masking the
            # secret alone would point at it among the rest, and a key's value ("red blue ...") names no word.
            words = [w for s in self.engine.secrets(self.state) for w in (s.value, *s.among)]
        except Exception:  # noqa: BLE001 - a state the engine cannot read has nothing to hold
            words = []
        if "_released" not in self.__dict__:
            object.__setattr__(self, "_released", weakref.finalize(self, MASKER.release, key))
        MASKER.hold(key, words)


def place_of(row: GameRow) -> Place:
    """Where a game is played: its thread when it has one, else the place it was created in."""
    place = Place.from_key(row.platform, row.place)
    thread = (row.lobby or {}).get("thread")
    return Place(place.platform, place.channel, thread) if thread else place


def seat_seed(table: Table, seat: Seat) -> int:
    return rng(table.seed, "agent", seat).getrandbits(62)


def seating(n: int, seed: int) -> list[int]:
    """The lobby's entries in seat order, drawn from the game's seed: seat ``i`` goes to entry
    ``seating(n, seed)[i]``. A client that lets a person choose a role picks a seed by it."""
    order = list(range(n))
    rng(seed, "seating").shuffle(order)
    return order


def seat_roster(lobby: Lobby, seed: int, keep_order: bool) -> list[SeatInfo]:
    """The frozen roster. Seating is drawn from the game's seed (roles follow seats, so nobody picks
    a role) unless a tournament keeps its own order. AI seats are named AI-1, AI-2... in seat order
    without gaps; two members with the same display name stay apart by a number."""
    entries = list(lobby.seats)
    if not keep_order:
        entries = [entries[i] for i in seating(len(entries), seed)]
    seats: list[SeatInfo] = []
    ai = 0
    for i, e in enumerate(entries):
        if e.kind is SeatKind.HUMAN:
            assert e.user is not None
            name = e.user.name or e.user.user_id
            if _AI_LIKE.match(name):  # AI-k names are reserved for AI seats
                name = f"{name.strip()} (human)"
            seats.append(SeatInfo(i, SeatKind.HUMAN, name, user=e.user))
        else:
            ai += 1
            seats.append(SeatInfo(i, SeatKind.AI, AI_NAME.format(n=ai), agent=e.agent))
    dedupe_names(seats)
    return seats


def dedupe_names(seats: Sequence[SeatInfo]) -> None:
    seen: dict[str, int] = {}
    for s in seats:
        base = s.name
        if base in seen:
            seen[base] += 1
            s.name = f"{base} ({seen[base]})"
        else:
            seen[base] = 1


def rebuild(glog: GameLog) -> Table:
    """The table of a running game, from its log. Raises RecordError when the log is no record
    (an unknown game, a config that no longer loads) and ReplayFailed when a logged action no
    longer replays (the caller marks the game broken)."""
    row = glog.row
    assert row.id is not None
    rec = record_of(glog)
    seats = []
    for s in sorted(glog.seats, key=lambda s: s.seat):
        user = None
        if s.user_key:
            platform, _, uid = s.user_key.partition(":")
            user = UserRef(platform, uid, s.display_name)
        seats.append(SeatInfo(s.seat, SeatKind(s.kind), s.display_name, user=user, agent=s.agent_spec))
    done = 0

    def actions() -> Iterator[tuple[Seat, Action]]:
        nonlocal done
        for seat, action in rec.actions:
            yield seat, action
            done += 1

    try:
        state, _ = replay(rec.game, rec.config, rec.seats, rec.seed, actions())
    except Exception as exc:
        what = f"logged action {done + 1} ({rec.actions[done][1].kind})" if done < len(rec.actions) else "the deal"
        raise ReplayFailed(f"{what} no longer replays with these rules ({type(exc).__name__})") from None
    lobby = row.lobby or {}
    return Table(row.id, rec.game, rec.config, rec.seed, seats, state, place_of(row), row.platform,
                 float(lobby.get("deadline_s") or 0), tenant=row.tenant, quiet=bool(lobby.get("quiet")),
                 seq=max(rec.lines, default=0), actions=list(rec.actions), lines=list(rec.lines),
                 movers=[(str(a.source), a.actor) for a in glog.actions])
