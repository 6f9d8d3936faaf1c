"""The protocol every game engine follows, and the small data types it speaks.

An engine is a set of pure functions over a frozen state: no I/O, no clock,
no global random. Everything random is drawn from generators derived from the
game's seed (`rng`), so `replay(game, config, seats, seed, actions)` rebuilds
any game exactly. Every `Event` carries its audience; the engine is the only
place that decides who may see what.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from typing_extensions import TypeVar

from games import text as _text
from games.options import ConfigError as ConfigError
from games.options import config_from_dict as config_from_dict
from games.options import config_to_dict as config_to_dict
from games.options import flag as flag
from games.options import one_of as one_of
from games.options import whole_number as whole_number

Seat = int
"""Seats are numbered 0..n-1 in table order. Names belong to the table, not the engine."""


class IllegalAction(Exception):
    """An action the rules do not allow now. The message is a sentence a player can read."""


# --------------------------------------------------------------------------- audience / events


@dataclass(frozen=True, slots=True)
class Audience:
    """Who may see an event: everyone (``seats is None``) or exactly these seats."""

    seats: frozenset[Seat] | None = None

    @classmethod
    def public(cls) -> Audience:
        return PUBLIC

    @classmethod
    def of(cls, *seats: Seat | Iterable[Seat]) -> Audience:
        flat: set[int] = set()
        for s in seats:
            if isinstance(s, int):
                flat.add(s)
            else:
                flat.update(s)
        return cls(frozenset(flat))

    @property
    def is_public(self) -> bool:
        return self.seats is None

    def includes(self, seat: Seat) -> bool:
        return self.seats is None or seat in self.seats

    def to_json(self) -> str | list[int]:
        return "public" if self.seats is None else sorted(self.seats)

    @classmethod
    def from_json(cls, raw: object) -> Audience:
        if raw == "public":
            return PUBLIC
        if isinstance(raw, list) and all(isinstance(x, int) for x in raw):
            return cls(frozenset(raw))
        raise ValueError(f"audience must be 'public' or a list of seat numbers, not {raw!r}")


PUBLIC = Audience(None)


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, for an audience. ``data`` holds JSON-able values only."""

    kind: str
    data: Mapping[str, Any]
    audience: Audience = PUBLIC

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "data": dict(self.data), "audience": self.audience.to_json()}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Event:
        return cls(str(raw["kind"]), dict(raw.get("data") or {}), Audience.from_json(raw["audience"]))


def visible(events: Iterable[Event], seat: Seat) -> tuple[Event, ...]:
    """The events a seat may see."""
    return tuple(e for e in events if e.audience.includes(seat))


# --------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Action:
    """What a seat does. ``value`` is the chosen option id (one item) or the text fields."""

    kind: str
    value: tuple[str, ...]

    @classmethod
    def choose(cls, kind: str, option: str) -> Action:
        return cls(kind, (option,))

    @classmethod
    def say(cls, kind: str, *texts: str) -> Action:
        return cls(kind, tuple(texts))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": list(self.value)}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Action:
        kind, value = raw.get("kind"), raw.get("value")
        if not isinstance(kind, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("an action is {'kind': str, 'value': [str, ...]}")
        return cls(kind, tuple(value))


@dataclass(frozen=True, slots=True)
class Option:
    id: str
    label: str


@dataclass(frozen=True, slots=True)
class Choice:
    """Pick one of ``options``; the action is ``Action(kind, (option.id,))``."""

    kind: str
    prompt: str
    options: tuple[Option, ...]

    def ids(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.options)

    def label(self, option_id: str) -> str:
        for o in self.options:
            if o.id == option_id:
                return o.label
        raise KeyError(option_id)


@dataclass(frozen=True, slots=True)
class Text:
    """Write ``len(fields)`` short texts; the action is ``Action(kind, texts)`` in field order."""

    kind: str
    prompt: str
    fields: tuple[str, ...] = ("Your answer",)
    max_words: int = 1
    max_chars: int = 40
    """Both limits are inclusive and are the only ones: forms, prompts and agents take them from here."""

    def limits(self) -> str:
        """The limits in words, as every message about them says them."""
        return f"at most {_count(self.max_words, 'word')} and {self.max_chars} characters"


ActionSpec = Choice | Text

MAX_TEXT_CHARS = 300
"""No engine asks for a longer text field. A platform cap at or above this never disagrees
with an engine's form; below it, forms and rules would disagree."""


def words_of(text: str) -> list[str]:
    """The words of a text the way the rules count and compare them (see ``games.text.words``):
    normalised (case, accents, look-alikes, invisible characters), split at hyphens too."""
    return _text.words(text)


def normalize(text: str) -> str:
    """The normalised words of a text joined by single spaces: what "the same word" means."""
    return " ".join(words_of(text))


def contains_word(text: str, word: str) -> bool:
    """True when ``word`` (one or more words) appears in ``text`` as whole words, after normalisation;
    hyphenated compounds stay whole here (a code ``3-1-4`` is not the digits of ``[3, 1, 4]``).

    The leak checks use this exact test. Rules that forbid a secret use
    ``games.text.mentions_secret``, which also catches plurals and other inflections."""
    hay, needle = _text.tokens(text), _text.tokens(word)
    if not needle:
        return False
    n = len(needle)
    return any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def text_values(spec: Text, action: Action) -> tuple[str, ...]:
    """The cleaned texts of a text action of the right kind and shape, none empty; limits unchecked."""
    if action.kind != spec.kind:
        raise IllegalAction(f"Expected a {spec.kind}, not a {action.kind}.")
    if len(action.value) != len(spec.fields):
        raise IllegalAction(f"Expected {len(spec.fields)} answer(s), got {len(action.value)}.")
    cleaned = []
    for name, raw in zip(spec.fields, action.value, strict=True):
        text = _text.clean(raw)
        if not text or not words_of(text):
            raise IllegalAction(f"{name}: an answer cannot be empty.")
        cleaned.append(text)
    return tuple(cleaned)


def check_text(spec: Text, action: Action) -> tuple[str, ...]:
    """Validate the shape of a text action against its spec; return the cleaned texts.

    Cleaning collapses whitespace and drops invisible characters (a zero-width space or a
    soft hyphen must not split a word for the rules yet join it for the reader). The limits
    are the spec's own, inclusive, and the messages say them exactly. Raises IllegalAction
    with a readable sentence. Rule checks (secret words, repeats) stay in the engines.
    """
    cleaned = []
    for name, text in zip(spec.fields, text_values(spec, action), strict=True):
        if len(text) > spec.max_chars:
            raise IllegalAction(f"{name}: use at most {spec.max_chars} characters (this has {len(text)}).")
        n = len(words_of(text))
        if n > spec.max_words:
            raise IllegalAction(f"{name}: use at most {_count(spec.max_words, 'word')} (this has {n}).")
        cleaned.append(text)
    return tuple(cleaned)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def check_choice(spec: Choice, action: Action) -> str:
    if action.kind != spec.kind:
        raise IllegalAction(f"Expected a {spec.kind}, not a {action.kind}.")
    if len(action.value) != 1 or action.value[0] not in spec.ids():
        raise IllegalAction("That is not one of the options.")
    return action.value[0]


# --------------------------------------------------------------------------- turns


ABSTAIN = "abstain"
"""The option id of an abstention (a vote or guess for nobody): the timeout action of votes and
guesses, accepted by ``apply`` though ``legal`` does not list it."""

def is_abstain(kind: str, action: Action) -> bool:
    """The timeout action ``(kind, ("abstain",))`` of a vote or guess."""
    return action.kind == kind and action.value == (ABSTAIN,)


READY = "ready"
"""The one option of a discussion phase: a seat says it is ready to vote."""


def ready_choice(prompt: str) -> Choice:
    """The "ready" step of a discussion phase: talk happens outside the engine, then each seat
    marks itself ready; an absent seat's timeout action is to be ready."""
    return Choice("ready", prompt, (Option(READY, "Ready to vote"),))


def check_turn(*, over: bool, seats: int, seat: object, acting: frozenset[Seat], not_yours: str = "It is not your turn.") -> None:
    """The preamble of every ``apply``: the game is on, the seat exists and is to act now.

    ``not_yours`` says, in the game's own words, why this seat may not act now."""
    if over:
        raise IllegalAction("The game is over.")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < seats:
        raise IllegalAction("There is no such seat at this table.")
    if seat not in acting:
        raise IllegalAction(not_yours)


# --------------------------------------------------------------------------- observations / results


@dataclass(frozen=True, slots=True)
class Cell:
    """One place of a board as a seat sees it: its word, the short mark of what it turned out to
    be once revealed (``mark``), or what this seat privately knows of it while hidden (``known``)."""

    word: str
    mark: str | None = None
    known: str | None = None


@dataclass(frozen=True, slots=True)
class Board:
    """A board game's table as one seat may see it, for screens that draw it as a grid: the cells in
    rows of ``columns``, the score in one line, and a legend of the marks. Built from the seat's
    observation only, so it never shows more than ``observe`` does."""

    columns: int
    cells: tuple[Cell, ...]
    score: str
    legend: str = ""


@dataclass(frozen=True, slots=True)
class Observation:
    """Exactly what one seat may know: a JSON-able view plus the events it has seen."""

    game: str
    seat: Seat
    phase: str
    view: Mapping[str, Any]
    events: tuple[Event, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "seat": self.seat,
            "phase": self.phase,
            "view": dict(self.view),
            "events": [e.to_json() for e in self.events],
        }


@dataclass(frozen=True, slots=True)
class Result:
    """How a game ended. ``winners`` are seats; ``scores`` per seat; ``details`` JSON-able."""

    winners: frozenset[Seat]
    summary: str
    scores: Mapping[Seat, float] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Result:
        """A stored result (``to_json``) as a result again."""
        return cls(frozenset(int(s) for s in raw.get("winners") or ()), str(raw.get("summary") or ""),
                   {int(k): float(v) for k, v in dict(raw.get("scores") or {}).items()}, dict(raw.get("details") or {}))

    def to_json(self) -> dict[str, Any]:
        return {
            "winners": sorted(self.winners),
            "summary": self.summary,
            "scores": {str(k): v for k, v in self.scores.items()},
            "details": dict(self.details),
        }


@dataclass(frozen=True, slots=True)
class Secret:
    """A value some seats may not know yet: the shared suite checks nobody else ever sees it.

    ``among`` lists public candidates the secret hides in (a Chameleon card): seeing the
    card is fine, learning which of its words is the secret is not.
    """

    value: str
    known_by: frozenset[Seat]
    among: tuple[str, ...] = ()


# --------------------------------------------------------------------------- randomness


def rng(seed: int, *salt: object) -> random.Random:
    """A generator derived from the game's seed and a salt naming the draw (``"deal"``, ``("code", 3)``).

    Each draw gets its own stream, so adding a draw never shifts another.
    """
    digest = hashlib.sha256(repr((seed, salt)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# --------------------------------------------------------------------------- the protocol


S = TypeVar("S", default=Any)
"""A game's state type (``SpyState``); unnamed (``Game`` alone) where code serves every game."""
C = TypeVar("C", default=Any)
"""A game's config type (``SpyConfig``)."""


@runtime_checkable
class Game(Protocol[S, C]):
    """One game's rules, generic over its state ``S`` and config ``C``. Implementations are
    stateless objects (most derive from ``games.engine.Engine``); all state is in ``S``."""

    id: ClassVar[str]
    """Registry name, e.g. ``"decrypto"``."""
    variants: ClassVar[tuple[str, ...]]
    """Variant names; the first is the default."""

    def make_config(self, variant: str | None = None, **options: Any) -> C:
        """A validated config for a variant with options; raises ConfigError."""

    def config_from_dict(self, raw: Mapping[str, Any]) -> C: ...

    def with_deal(self, cfg: C, deal: object) -> C:
        """``cfg`` playing a deal in the form ``deal_of`` returns (a record's or an export's):
        how a logged game replays without its seed. Raises ConfigError."""

    def seat_range(self, cfg: C) -> tuple[int, int]:
        """Fewest and most seats this config can be played with."""

    def new(self, cfg: C, seats: int, seed: int) -> tuple[S, tuple[Event, ...]]:
        """Deal: the first state and the events of the deal (private secrets to their seats)."""

    def to_act(self, s: S) -> frozenset[Seat]:
        """Seats that must act now; several at once for simultaneous moves; empty when over."""

    def legal(self, s: S, seat: Seat) -> ActionSpec | None:
        """What this seat may do now, or None when it has nothing to do."""

    def apply(self, s: S, seat: Seat, a: Action) -> tuple[S, tuple[Event, ...]]:
        """The next state and what happened. Raises IllegalAction and changes nothing."""

    def observe(self, s: S, seat: Seat) -> Observation: ...

    def result(self, s: S) -> Result | None: ...

    def deal_of(self, s: S) -> object:
        """The complete deal of this game so far, in the form ``with_deal`` takes: a record
        carrying it replays without the seed."""

    def secrets(self, s: S) -> tuple[Secret, ...]:
        """Values still hidden from some seats in this state (for leak checks)."""

    def timeout_action(self, s: S, seat: Seat) -> Action | None:
        """The neutral action the rules take for an absent seat (e.g. abstain), or None if
        there is none and someone (an AI) must play the turn instead. ``apply`` accepts it."""

    def text(self, e: Event, names: Sequence[str]) -> str:
        """A sentence for humans describing an event, with seats named by ``names``."""

    def rules(self, cfg: C) -> str:
        """The rules of this config, in a few paragraphs for players."""

    def board(self, s: S, seat: Seat) -> Board | None:
        """The table as ``seat`` sees it, drawn as a grid (games played on a board), else None."""


def replay(game: Game[S, C], cfg: C, seats: int, seed: int, actions: Iterable[tuple[Seat, Action]]) -> tuple[S, list[Event]]:
    """Rebuild a game from its config, seed and actions; returns the state and every event."""
    state, events = game.new(cfg, seats, seed)
    log = list(events)
    for seat, action in actions:
        state, evs = game.apply(state, seat, action)
        log.extend(evs)
    return state, log
