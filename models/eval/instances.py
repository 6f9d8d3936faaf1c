"""SNEAK instances from the game log: one pure function per game, reproducible from the log alone.

A SNEAK instance is ``(category, candidates W, secret w_s, message m)`` plus who
said it. Each game's clue-like moves map to instances as follows.

- **Chameleon** (native): category = the card's category, W = the card's words
  (16, or 12 in the ``sneak`` variant), w_s = the round's secret, m = each
  clue. The chameleon's own clue, given without knowing the secret, is scored
  too and marked ``bluff``: its utility says how well it passed as informed.
- **Who-is-Spy**: m = each description, w_s = the speaker's word (Mr. White,
  who has none, is scored as a bluff against the villagers' word). W = both
  words of the pair plus ``SPY_DISTRACTORS`` words, one from each of as many
  other pairs of the game's deck, drawn with ``rng(seed, "sneak-spy-candidates",
  villager word, spy word)``. Leakage then means "an outsider who sees the
  description among plausible game words could name the speaker's word" —
  for a villager, the villagers' word; telling apart the two words of the
  pair is exactly what both sides try to do. Category: ``SPY_CATEGORY``.
- **Decrypto**: each hint of a hints action is one instance (``part`` = its
  position in the code), w_s = the keyword the hint was written for (read from
  the encoder's private code event), W = the team's four keywords plus
  ``DECRYPTO_DISTRACTORS`` keywords drawn from the game's keyword deck with
  ``rng(seed, "sneak-decrypto-candidates", team)`` (never one of the game's
  keywords). This measures what an interceptor who knew the candidates could
  learn from the one hint, without the hint history. Category:
  ``DECRYPTO_CATEGORY``.

Every draw is seeded from the game's own seed, so the same log gives the same
instances on every run. The functions read only the logged events (their
kinds and data) and actions; they never replay the engines, so an instance
is what the players actually saw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from games import decks
from games.base import normalize, rng

SPY_DISTRACTORS = 10
DECRYPTO_DISTRACTORS = 8
SPY_CATEGORY = "Who-is-Spy secret words"
DECRYPTO_CATEGORY = "Decrypto keywords"


class GameKind(StrEnum):
    CHAMELEON = "chameleon"
    SPY = "spy"
    DECRYPTO = "decrypto"


class SpeakerRole(StrEnum):
    PLAYER = "player"  # Chameleon: knows the secret
    CHAMELEON = "chameleon"
    VILLAGER = "villager"
    SPY = "spy"
    MR_WHITE = "mr_white"
    ENCODER = "encoder"
    BENCH = "bench"  # a standalone benchmark message, not from a game


class SpeakerKind(StrEnum):
    HUMAN = "human"
    AI = "ai"
    BENCH = "bench"


@dataclass(frozen=True, slots=True)
class Instance:
    """One message to score. ``game_id``/``action_seq``/``part`` name the move it came from."""

    game: str
    category: str
    candidates: tuple[str, ...]
    secret: str
    message: str
    role: str = SpeakerRole.BENCH.value
    bluff: bool = False
    seat: int | None = None
    speaker: str = ""  # the actor: a user key or an agent spec (never shown unpseudonymised)
    speaker_kind: str = SpeakerKind.BENCH.value
    game_id: int | None = None
    action_seq: int | None = None
    part: int = 0
    seed: int = 0  # the draw seed of this instance (the game's seed, or the bench's)

    def __post_init__(self) -> None:
        if normalize(self.secret) not in {normalize(c) for c in self.candidates}:
            raise ValueError("the secret must be one of the candidates")
        if len(self.candidates) < 2:
            raise ValueError("an instance needs at least two candidates")

    @property
    def key(self) -> str:
        """Stable name of the move: ``game_id:action_seq:part`` (bench instances: category/secret)."""
        if self.game_id is None:
            return f"bench:{self.category}:{self.secret}"
        return f"{self.game_id}:{self.action_seq}:{self.part}"

    def to_json(self) -> dict[str, Any]:
        """What the evaluations table keeps of the instance (no speaker identity: the log has it)."""
        return {
            "game": self.game,
            "category": self.category,
            "candidates": list(self.candidates),
            "secret": self.secret,
            "message": self.message,
            "role": self.role,
            "bluff": self.bluff,
            "seat": self.seat,
            "part": self.part,
        }


# --------------------------------------------------------------------------- the log, as read here


class SeatLike(Protocol):
    @property
    def seat(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def user_key(self) -> str | None: ...
    @property
    def agent_spec(self) -> str | None: ...


class ActionLike(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def seat(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def value(self) -> list[str]: ...
    @property
    def source(self) -> str: ...
    @property
    def actor(self) -> str: ...


class EventLike(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def action_seq(self) -> int | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> dict[str, Any]: ...
    @property
    def audience(self) -> Any: ...


class GameRowLike(Protocol):
    @property
    def id(self) -> int | None: ...
    @property
    def game(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def config(self) -> dict[str, Any]: ...
    @property
    def seed(self) -> int | None: ...


class LogLike(Protocol):
    """``storage.store.GameLog`` (or anything shaped like it)."""

    @property
    def row(self) -> GameRowLike: ...
    @property
    def seats(self) -> Sequence[SeatLike]: ...
    @property
    def actions(self) -> Sequence[ActionLike]: ...
    @property
    def events(self) -> Sequence[EventLike]: ...


def _speaker(a: ActionLike) -> tuple[str, str]:
    # The actor is who really spoke: an AI that took over a human's turn is an AI message.
    return a.actor, SpeakerKind.HUMAN.value if a.source == "human" else SpeakerKind.AI.value


def _only_seat(audience: Any) -> int | None:
    return audience[0] if isinstance(audience, list) and len(audience) == 1 and isinstance(audience[0], int) else None


def _walk(log: LogLike, on_event: Callable[[EventLike], None], on_action: Callable[[ActionLike], None]) -> None:
    """Feed events in order and call ``on_action`` for each action just before its first event.

    The state at an action is what the events logged before it say; an action
    is placed at its first caused event (``action_seq``), every action causing
    at least one event in all three engines.
    """
    by_seq = {a.seq: a for a in log.actions}
    seen: set[int] = set()
    for e in sorted(log.events, key=lambda e: e.seq):
        if e.action_seq is not None and e.action_seq not in seen:
            seen.add(e.action_seq)
            a = by_seq.get(e.action_seq)
            if a is not None:
                on_action(a)
        on_event(e)


# --------------------------------------------------------------------------- Chameleon


def chameleon_instances(log: LogLike) -> list[Instance]:
    st: dict[str, Any] = {"category": None, "card": (), "secret": None, "chameleon": None}
    out: list[Instance] = []
    seed = log.row.seed or 0

    def on_event(e: EventLike) -> None:
        if e.kind == "round_start":
            st.update(category=e.data["category"], card=tuple(e.data["card"]), secret=None, chameleon=None)
        elif e.kind == "role":
            if e.data.get("secret"):
                st["secret"] = e.data["secret"]
            if e.data.get("role") == SpeakerRole.CHAMELEON.value:
                st["chameleon"] = _only_seat(e.audience)

    def on_action(a: ActionLike) -> None:
        if a.kind != "clue" or not a.value or st["secret"] is None or not st["card"]:
            return
        bluff = a.seat == st["chameleon"]
        who, kind = _speaker(a)
        out.append(Instance(
            game=GameKind.CHAMELEON.value, category=str(st["category"]), candidates=st["card"], secret=st["secret"],
            message=a.value[0], role=(SpeakerRole.CHAMELEON if bluff else SpeakerRole.PLAYER).value, bluff=bluff,
            seat=a.seat, speaker=who, speaker_kind=kind, game_id=log.row.id, action_seq=a.seq, seed=seed,
        ))

    _walk(log, on_event, on_action)
    return out


# --------------------------------------------------------------------------- Who-is-Spy


def _pair_deck(config: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    raw = config.get("deck")
    return decks.parse_pairs(raw) if raw else decks.pairs()


def spy_candidates(villager: str, spy: str, seed: int, deck: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """Both words of the pair, then one word of each of ``SPY_DISTRACTORS`` other pairs (seeded)."""
    taken = {normalize(villager), normalize(spy)}
    others = [p for p in deck if not ({normalize(p[0]), normalize(p[1])} & taken)]
    r = rng(seed, "sneak-spy-candidates", villager, spy)
    words: list[str] = []
    for a, b in r.sample(others, min(SPY_DISTRACTORS, len(others))):
        w = a if r.random() < 0.5 else b
        if normalize(w) not in taken:
            taken.add(normalize(w))
            words.append(w)
    return (villager, spy, *words)


def spy_instances(log: LogLike) -> list[Instance]:
    words: dict[int, str | None] = {}
    out: list[Instance] = []
    seed = log.row.seed or 0
    pending: list[ActionLike] = []

    def on_event(e: EventLike) -> None:
        if e.kind == "word":
            seat = _only_seat(e.audience)
            if seat is not None:
                words[seat] = None if e.data.get("blank") else e.data.get("word")

    def on_action(a: ActionLike) -> None:
        if a.kind == "describe" and a.value:
            pending.append(a)

    _walk(log, on_event, on_action)
    given = [w for w in words.values() if w]
    distinct = sorted(set(given), key=lambda w: (-given.count(w), given.index(w)))
    if len(distinct) != 2:
        return []  # a log without both words of the pair has nothing to score against
    villager, spy = distinct
    cands = spy_candidates(villager, spy, seed, _pair_deck(log.row.config))
    for a in pending:
        word = words.get(a.seat)
        role = SpeakerRole.MR_WHITE if word is None else SpeakerRole.VILLAGER if word == villager else SpeakerRole.SPY
        who, kind = _speaker(a)
        out.append(Instance(
            game=GameKind.SPY.value, category=SPY_CATEGORY, candidates=cands, secret=word or villager,
            message=a.value[0], role=role.value, bluff=role is SpeakerRole.MR_WHITE, seat=a.seat, speaker=who,
            speaker_kind=kind, game_id=log.row.id, action_seq=a.seq, seed=seed,
        ))
    return out


# --------------------------------------------------------------------------- Decrypto


def _keyword_deck(config: Mapping[str, Any]) -> tuple[str, ...]:
    raw = config.get("deck")
    return decks.parse_keywords(raw) if raw else decks.keywords()


def decrypto_candidates(team_keywords: Sequence[str], all_keywords: Sequence[str], team: str, seed: int,
                        deck: Sequence[str]) -> tuple[str, ...]:
    """The team's four keywords, then ``DECRYPTO_DISTRACTORS`` deck keywords not in the game (seeded per team)."""
    taken = {normalize(k) for k in all_keywords}
    pool = [w for w in deck if normalize(w) not in taken]
    picks = rng(seed, "sneak-decrypto-candidates", team).sample(pool, min(DECRYPTO_DISTRACTORS, len(pool)))
    return (*team_keywords, *picks)


def decrypto_instances(log: LogLike) -> list[Instance]:
    keywords: dict[str, tuple[str, ...]] = {}
    code_of: dict[int, tuple[str, list[int]]] = {}  # encoder seat -> (team, code) of its latest code
    out: list[Instance] = []
    seed = log.row.seed or 0
    deck = _keyword_deck(log.row.config)

    def on_event(e: EventLike) -> None:
        if e.kind == "keywords":
            kw = e.data["keywords"]
            keywords[str(e.data["team"])] = tuple(kw[str(d)] for d in range(1, len(kw) + 1))
        elif e.kind == "code":
            seat = _only_seat(e.audience)
            if seat is not None:
                code_of[seat] = (str(e.data["team"]), [int(x) for x in str(e.data["code"]).split("-")])

    def on_action(a: ActionLike) -> None:
        if a.kind != "hints" or a.seat not in code_of:
            return
        team, code = code_of[a.seat]
        team_kw = keywords.get(team)
        if team_kw is None:
            return
        every = [k for ks in keywords.values() for k in ks]
        cands = decrypto_candidates(team_kw, every, team, seed, deck)
        who, kind = _speaker(a)
        for part, (digit, hint) in enumerate(zip(code, a.value, strict=False)):
            out.append(Instance(
                game=GameKind.DECRYPTO.value, category=DECRYPTO_CATEGORY, candidates=cands, secret=team_kw[digit - 1],
                message=hint, role=SpeakerRole.ENCODER.value, seat=a.seat, speaker=who, speaker_kind=kind,
                game_id=log.row.id, action_seq=a.seq, part=part, seed=seed,
            ))

    _walk(log, on_event, on_action)
    return out


MAPPERS: Mapping[str, Callable[[LogLike], list[Instance]]] = {
    GameKind.CHAMELEON.value: chameleon_instances,
    GameKind.SPY.value: spy_instances,
    GameKind.DECRYPTO.value: decrypto_instances,
}


def instances_from_log(log: LogLike) -> list[Instance]:
    """Every SNEAK instance of one logged game, in the order the moves were made."""
    mapper = MAPPERS.get(log.row.game)
    return mapper(log) if mapper is not None else []


# --------------------------------------------------------------------------- the standalone benchmark


def bench_instances(cards: Sequence[tuple[str, Sequence[str]]], card_size: int) -> list[Instance]:
    """Every word of every card as the secret (the paper's 1,394 instances; here our own cards)."""
    return [
        Instance(game=GameKind.CHAMELEON.value, category=cat, candidates=tuple(words[:card_size]), secret=w, message="")
        for cat, words in cards
        for w in words[:card_size]
    ]
