"""The Chameleon: a pure rule engine for the party game and its SNEAK-style variant.

Rules as this engine plays them
-------------------------------
3 to 10 seats. Each round a category card is drawn (never the same card twice in
a match) and shown to everyone: a category and its words. One word of the card
is the secret; every seat except one learns it privately. The remaining seat is
the chameleon and is told so privately (in this game the chameleon knows its
role, but not the secret).

1. Clues. Starting from a seeded first speaker and going round the table in
   seat order, each seat gives a one-word clue. A seat that knows the secret may
   not say it or a word containing it ("apples", "snowman" for "snow"). Nobody may
   repeat a clue already given this round. The chameleon may say any other word,
   even the secret itself: refusing it would tell the chameleon the secret.
2. Discussion (only with ``discussion=True``): the table talks outside the
   engine; every seat marks itself ready (an absent seat counts as ready).
3. Vote. Every seat votes at the same time for one other seat (an absent seat
   abstains). Votes stay hidden until the last one arrives. The seat with the
   most votes is accused. On a tie at the top, ``tie_rule="runoff"`` (default)
   holds one run-off vote among the tied seats, and if that ties too the
   chameleon escapes; ``tie_rule="chameleon_escapes"`` lets the chameleon
   escape at once. When nobody votes at all, nobody is accused.
4. Reveal. If the accused is not the chameleon, the chameleon escapes. If it is,
   the chameleon names one word of the card: the secret means it escapes after
   all, any other word means it is caught.

Scoring (kept in both modes): chameleon escapes uncaught: chameleon +2; caught
but guesses the secret: chameleon +1; caught and wrong: every other seat +2.

- ``mode="single"``: one round. Winners: the chameleon if it escaped (either
  way), otherwise every other seat.
- ``mode="match"``: rounds until one seat alone has at least ``target_points``
  (leaders tied at or above the target play on); after ``max_rounds`` rounds the
  highest score wins, shared on a tie. Each round has a fresh card, secret,
  chameleon and first speaker.

Variants
--------
- ``classic``: the published party game, 16-word cards.
- ``sneak``: the SNEAK benchmark's setting, 12 candidate words per card. The
  card bank lists each category's most typical words first, so the sneak
  variant plays the first 12 words of each card, the way SNEAK keeps a
  category's 12 most frequently named members. ``card_size`` can be set
  explicitly (6..16) in either variant; the first ``card_size`` words are used.

Every random draw (card, secret, chameleon, first speaker, order of vote
options) comes from ``rng(seed, purpose, round)``, so a game replays exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, ClassVar, TypedDict

from games import deals, decks, vote
from games.base import (
    PUBLIC,
    READY,
    Action,
    ActionSpec,
    Audience,
    Choice,
    ConfigError,
    Event,
    IllegalAction,
    Observation,
    Option,
    Result,
    Seat,
    Secret,
    Text,
    check_choice,
    check_text,
    check_turn,
    config_from_dict,
    flag,
    one_of,
    ready_choice,
    rng,
    text_values,
    visible,
    whole_number,
)
from games.descriptor import GameDescriptor, MenuEntry, Metric, MetricScope, SeatRole, Side, SneakScoring
from games.labels import fill_labels, seat_ref
from games.text import key as text_key
from games.text import reveals_secret
from games.vote import ABSTAIN, Ballot

Card = tuple[str, tuple[str, ...]]
"""A category card: the category and its words, most typical first."""

MIN_SEATS, MAX_SEATS = 3, 10
MIN_CARD_SIZE, MAX_CARD_SIZE = 6, 16
CLUE_MAX_CHARS = 30


class Phase(Enum):
    CLUES = "clues"
    DISCUSSION = "discussion"
    VOTE = "vote"
    RUNOFF = "runoff"
    GUESS = "guess"
    OVER = "over"


class Role(Enum):
    CHAMELEON = "chameleon"
    PLAYER = "player"


class Variant(StrEnum):
    CLASSIC = "classic"  # the published party game, 16-word cards
    SNEAK = "sneak"  # the SNEAK benchmark's setting, 12 candidate words per card


class Mode(StrEnum):
    SINGLE = "single"
    MATCH = "match"


class TieRule(StrEnum):
    RUNOFF = "runoff"
    CHAMELEON_ESCAPES = "chameleon_escapes"


class BallotKind(Enum):
    FIRST = "first"
    RUNOFF = "runoff"


class Outcome(Enum):
    ESCAPED = "escaped"  # not caught: chameleon +2
    GUESSED = "guessed"  # caught, named the secret: chameleon +1
    CAUGHT = "caught"  # caught and wrong: every other seat +2


VARIANT_CARD_SIZE: Mapping[Variant, int] = {Variant.CLASSIC: 16, Variant.SNEAK: 12}


# --------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class ChameleonConfig:
    """A validated Chameleon configuration; build it with ``GAME.make_config``."""

    variant: Variant = Variant.CLASSIC
    card_size: int = 16
    mode: Mode = Mode.SINGLE
    target_points: int = 5
    tie_rule: TieRule = TieRule.RUNOFF
    discussion: bool = False
    max_rounds: int = 20
    deck: tuple[Card, ...] | None = None
    """None plays the bundled cards; otherwise the custom cards themselves, so replay is exact."""
    deal: tuple[RoundDeal, ...] | None = None
    """Card, secret, chameleon and first player fixed per round (the rest drawn); see ``RoundDeal``."""


@dataclass(frozen=True, slots=True)
class RoundDeal:
    """One round of a Chameleon deal: ``{"card": category name or [category, [words]], "secret":
    word, "chameleon": seat, "first": seat}``; any key may be left out to draw it from the seed.

    A deal is one such mapping (the first round) or a list of them (rounds 1, 2, ... of a match).
    A named card comes from the game's deck; a listed card is played as given (its first
    ``card_size`` words). The secret must be a word of the card; a match never reuses a card.
    """

    card: Card | None = None
    secret: str | None = None
    chameleon: Seat | None = None
    first: Seat | None = None


def _with_defaults(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The variant decides the default card size: 16 words (classic) or 12 (sneak)."""
    out = {"variant": Variant.CLASSIC.value, **raw}
    if "card_size" not in out and out["variant"] in VARIANT_CARD_SIZE:
        out["card_size"] = VARIANT_CARD_SIZE[Variant(out["variant"])]
    return out


def _parse_card(where: str, raw: object, cfg: ChameleonConfig) -> Card:
    if isinstance(raw, str):
        found = [c for c in _deck(cfg) if deals.same(c[0], raw)]
        if not found:
            raise deals.error(f"{where}: no card {raw!r} in the deck; name a card of the deck or give [category, [words]]")
        category, words = found[0]
    else:
        try:
            ((category, words),) = decks.parse_cards([raw], size=cfg.card_size)
        except decks.DeckError as exc:
            raise deals.error(f"{where}: {str(exc).removeprefix('entry 1: ')}") from None
    return category, words[: cfg.card_size]


def _parse_round(where: str, raw: object, cfg: ChameleonConfig) -> RoundDeal:
    if isinstance(raw, RoundDeal):
        raw = {f: getattr(raw, f) for f in ("card", "secret", "chameleon", "first")}
    given = deals.mapping(raw, ("card", "secret", "chameleon", "first"))
    card = None if given.get("card") is None else _parse_card(where, given["card"], cfg)
    secret = None
    if given.get("secret") is not None:
        secret = deals.word(f"{where}: the secret", given["secret"])
        if card is not None:
            on_card = [w for w in card[1] if deals.same(w, secret)]
            if not on_card:
                raise deals.error(f"{where}: the secret {secret!r} is not a word of the {card[0]} card")
            secret = on_card[0]
    chameleon = None if given.get("chameleon") is None else deals.seat(f"{where}: chameleon", given["chameleon"])
    first = None if given.get("first") is None else deals.seat(f"{where}: first", given["first"])
    return RoundDeal(card, secret, chameleon, first)


def _parse_deal(raw: object, cfg: ChameleonConfig) -> tuple[RoundDeal, ...]:
    rounds = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    if not rounds:
        raise deals.error("an empty list deals nothing; leave the deal out instead")
    if cfg.mode is Mode.SINGLE and len(rounds) > 1:
        raise deals.error(f"{len(rounds)} rounds dealt for a single-round game; use mode=match")
    if len(rounds) > cfg.max_rounds:
        raise deals.error(f"{len(rounds)} rounds dealt for a match of at most {cfg.max_rounds} rounds")
    out = tuple(_parse_round(f"round {i}", r, cfg) for i, r in enumerate(rounds, start=1))
    cards = [(i, d.card[0]) for i, d in enumerate(out, start=1) if d.card is not None]
    for k, (i, name) in enumerate(cards):
        again = next((j for j, other in cards[:k] if deals.same(other, name)), None)
        if again is not None:
            raise deals.error(f"round {i} deals the {name} card of round {again} again; a match never reuses a card")
    return out


def _round_deal(cfg: ChameleonConfig, round_no: int) -> RoundDeal:
    return cfg.deal[round_no - 1] if cfg.deal is not None and round_no <= len(cfg.deal) else RoundDeal()


def _validate(cfg: ChameleonConfig) -> ChameleonConfig:
    card_size = whole_number("card_size", cfg.card_size, MIN_CARD_SIZE, MAX_CARD_SIZE)
    cfg = dataclasses.replace(
        cfg,
        variant=one_of(Variant, "variant", cfg.variant),
        mode=one_of(Mode, "mode", cfg.mode),
        tie_rule=one_of(TieRule, "tie_rule", cfg.tie_rule),
        target_points=whole_number("target_points", cfg.target_points, 1, 50),
        max_rounds=whole_number("max_rounds", cfg.max_rounds, 1, 100),
        discussion=flag("discussion", cfg.discussion),
        deck=None if cfg.deck is None else decks.custom(decks.parse_cards, cfg.deck, size=card_size),
    )
    if cfg.deal is not None:
        cfg = dataclasses.replace(cfg, deal=_parse_deal(cfg.deal, cfg))
    available = len(_deck(cfg))
    if cfg.mode is Mode.MATCH and available < cfg.max_rounds:
        # A match never reuses a card, so the deck must outlast the round limit.
        raise ConfigError(
            f"a match of up to {cfg.max_rounds} rounds needs at least {cfg.max_rounds} cards; "
            f"the deck has {available}: lower max_rounds or add cards"
        )
    return cfg


# --------------------------------------------------------------------------- the view a seat reads


class OpenBallot(TypedDict):
    ballot: str
    candidates: list[Seat]
    voted: list[Seat]
    my_vote: Seat | str | None


class ChameleonView(TypedDict):
    """``Observation.view`` of the Chameleon: what one seat may know (see ``ChameleonGame.observe``)."""

    seat: Seat
    players: int
    phase: str
    mode: str
    variant: str
    round: int
    target_points: int
    max_rounds: int
    tie_rule: str
    game_over: bool
    category: str
    card: list[str]
    role: str
    is_chameleon: bool
    secret: str | None
    speaking_order: list[Seat]
    current_speaker: Seat | None
    clues: list[dict[str, Any]]
    my_clue: str | None
    ready: list[Seat]
    ballot: OpenBallot | None
    votes: list[dict[str, Any]]
    accused: Seat | None
    chameleon: Seat | None
    guess: str | None
    scores: list[int]
    to_act: list[Seat]
    previous_rounds: list[dict[str, Any]]


# --------------------------------------------------------------------------- state


def _ballot_kind(b: Ballot) -> BallotKind:
    return BallotKind.RUNOFF if b.runoff else BallotKind.FIRST


def _ballot_json(b: Ballot) -> dict[str, Any]:
    """A closed ballot as results and the vote-result event show it."""
    return {
        "ballot": _ballot_kind(b).value,
        "candidates": list(b.candidates),
        "votes": [{"voter": v, "target": t} for v, t in sorted(b.votes)],
        "tally": {str(s): n for s, n in b.tally().items()},
    }


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """A finished round, everything revealed: what results and evaluations read."""

    round: int
    category: str
    card: tuple[str, ...]
    secret: str
    chameleon: Seat
    order: tuple[Seat, ...]
    clues: tuple[tuple[Seat, str], ...]
    ballots: tuple[Ballot, ...]
    accused: Seat | None
    guess: str | None
    outcome: Outcome
    points: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "category": self.category,
            "card": list(self.card),
            "secret": self.secret,
            "chameleon": self.chameleon,
            "speaking_order": list(self.order),
            "clues": [{"seat": s, "clue": c} for s, c in self.clues],
            "votes": [_ballot_json(b) for b in self.ballots],
            "accused": self.accused,
            "caught": self.accused == self.chameleon,
            "guess": self.guess,
            "guessed": self.outcome is Outcome.GUESSED,
            "outcome": self.outcome.value,
            "points": list(self.points),
        }


@dataclass(frozen=True, slots=True)
class ChameleonState:
    config: ChameleonConfig
    seats: int
    seed: int
    phase: Phase
    round: int
    cards_used: tuple[int, ...]
    """Deck indices drawn so far in the match, the current card last."""
    category: str
    card: tuple[str, ...]
    secret: str
    chameleon: Seat
    order: tuple[Seat, ...]
    clues: tuple[tuple[Seat, str], ...]
    ready: frozenset[Seat]
    ballots: tuple[Ballot, ...]
    """Ballots of this round, the open one last while voting."""
    accused: Seat | None
    scores: tuple[int, ...]
    history: tuple[RoundRecord, ...]
    log: tuple[Event, ...]

    @property
    def ballot(self) -> Ballot | None:
        return self.ballots[-1] if self.phase in (Phase.VOTE, Phase.RUNOFF) else None


# --------------------------------------------------------------------------- helpers


def _reveals_secret(clue: str, secret: str) -> bool:
    """True when a clue is the secret or contains it: as a word, an inflected form, or inside a compound."""
    return reveals_secret(clue, secret)


def _deck(cfg: ChameleonConfig) -> tuple[Card, ...]:
    return decks.cards() if cfg.deck is None else cfg.deck


def _points(outcome: Outcome, chameleon: Seat, seats: int) -> tuple[int, ...]:
    if outcome is Outcome.ESCAPED:
        return tuple(2 if s == chameleon else 0 for s in range(seats))
    if outcome is Outcome.GUESSED:
        return tuple(1 if s == chameleon else 0 for s in range(seats))
    return tuple(0 if s == chameleon else 2 for s in range(seats))


def _deck_index(deck: Sequence[Card], category: str) -> int:
    """Where a card is in the deck, or -1 for a dealt card the deck does not hold."""
    return next((i for i, c in enumerate(deck) if deals.same(c[0], category)), -1)


def _card_for(cfg: ChameleonConfig, seed: int, round_no: int, cards_used: tuple[int, ...]) -> tuple[int, Card]:
    """The round's card, as dealt or drawn among the deck's unused cards, with its deck index.

    Cards a deal fixes for any round are never drawn: the match would meet them twice."""
    deck = _deck(cfg)
    dealt = _round_deal(cfg, round_no)
    if dealt.card is not None:
        return _deck_index(deck, dealt.card[0]), dealt.card
    reserved = {_deck_index(deck, d.card[0]) for d in cfg.deal or () if d.card is not None}
    unused = [i for i in range(len(deck)) if i not in cards_used and i not in reserved]
    index = rng(seed, "card", round_no).choice(unused)
    category, words = deck[index]
    return index, (category, words[: cfg.card_size])


def _check_deal(cfg: ChameleonConfig, seats: int, seed: int) -> None:
    """What a deal can only be checked against once the seats and the drawn cards are known."""
    used: tuple[int, ...] = ()
    for round_no, d in enumerate(cfg.deal or (), start=1):
        for name, value in (("chameleon", d.chameleon), ("first", d.first)):
            if value is not None:
                deals.in_range(f"round {round_no}: {name}", (value,), seats)
        index, (category, card) = _card_for(cfg, seed, round_no, used)
        used = (*used, index)
        if d.secret is not None and not any(deals.same(w, d.secret) for w in card):
            raise deals.error(f"round {round_no}: the secret {d.secret!r} is not a word of the {category} card")


def _deal(
    cfg: ChameleonConfig,
    seats: int,
    seed: int,
    round_no: int,
    cards_used: tuple[int, ...],
    scores: tuple[int, ...],
    history: tuple[RoundRecord, ...],
    log: tuple[Event, ...],
) -> tuple[ChameleonState, tuple[Event, ...]]:
    """Start a round: the card, the secret, the chameleon and the first speaker, as dealt or drawn."""
    dealt = _round_deal(cfg, round_no)
    index, (category, card) = _card_for(cfg, seed, round_no, cards_used)
    if dealt.secret is not None:  # in the card's own spelling (checked at the deal)
        secret = next(w for w in card if deals.same(w, dealt.secret))
    else:
        secret = rng(seed, "secret", round_no).choice(card)
    chameleon = dealt.chameleon if dealt.chameleon is not None else rng(seed, "chameleon", round_no).randrange(seats)
    first = dealt.first if dealt.first is not None else rng(seed, "first", round_no).randrange(seats)
    order = tuple((first + i) % seats for i in range(seats))
    events: list[Event] = [
        Event(
            "round_start",
            {
                "round": round_no,
                "category": category,
                "card": list(card),
                "speaking_order": list(order),
                "first": first,
            },
            PUBLIC,
        )
    ]
    # One private event per seat, each to that seat alone: an event addressed to
    # "everyone but the chameleon" would show its audience, and so the chameleon.
    for s in range(seats):
        if s == chameleon:
            events.append(Event("role", {"round": round_no, "role": Role.CHAMELEON.value, "secret": None}, Audience.of(s)))
        else:
            events.append(Event("role", {"round": round_no, "role": Role.PLAYER.value, "secret": secret}, Audience.of(s)))
    state = ChameleonState(
        config=cfg,
        seats=seats,
        seed=seed,
        phase=Phase.CLUES,
        round=round_no,
        cards_used=(*cards_used, index),
        category=category,
        card=card,
        secret=secret,
        chameleon=chameleon,
        order=order,
        clues=(),
        ready=frozenset(),
        ballots=(),
        accused=None,
        scores=scores,
        history=history,
        log=(*log, *events),
    )
    return state, tuple(events)


# --------------------------------------------------------------------------- the game


class ChameleonGame:
    """The Chameleon rules; stateless, every method a pure function of its arguments."""

    id: ClassVar[str] = "chameleon"
    variants: ClassVar[tuple[str, ...]] = tuple(Variant)

    # ------------------------------------------------------------------ config

    def make_config(self, variant: str | None = None, **options: Any) -> ChameleonConfig:
        """A validated config. ``sneak`` defaults to 12 words per card, ``classic`` to 16."""
        return self.config_from_dict({"variant": variant or Variant.CLASSIC.value, **options})

    def config_from_dict(self, raw: Mapping[str, Any]) -> ChameleonConfig:
        return _validate(config_from_dict(ChameleonConfig, _with_defaults(raw)))

    def seat_range(self, cfg: ChameleonConfig) -> tuple[int, int]:
        return (MIN_SEATS, MAX_SEATS)

    # ------------------------------------------------------------------ flow

    def new(self, cfg: ChameleonConfig, seats: int, seed: int) -> tuple[ChameleonState, tuple[Event, ...]]:
        if not MIN_SEATS <= seats <= MAX_SEATS:
            raise ConfigError(f"the Chameleon needs {MIN_SEATS} to {MAX_SEATS} players, not {seats}")
        _check_deal(cfg, seats, seed)
        return _deal(cfg, seats, seed, 1, (), (0,) * seats, (), ())

    def to_act(self, s: ChameleonState) -> frozenset[Seat]:
        if s.phase is Phase.CLUES:
            return frozenset({s.order[len(s.clues)]})
        if s.phase is Phase.DISCUSSION:
            return frozenset(range(s.seats)) - s.ready
        if s.phase in (Phase.VOTE, Phase.RUNOFF):
            return s.ballots[-1].waiting()
        if s.phase is Phase.GUESS:
            return frozenset({s.chameleon})
        return frozenset()

    def legal(self, s: ChameleonState, seat: Seat) -> ActionSpec | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.CLUES:
            # The same prompt for every seat: the spec must not hint at who the chameleon is.
            return Text(
                "clue",
                f"Give a one-word clue for the secret word (category: {s.category}).",
                ("Clue",),
                max_words=1,
                max_chars=CLUE_MAX_CHARS,
            )
        if s.phase is Phase.DISCUSSION:
            return ready_choice("Discuss the clues; say when you are ready to vote.")
        if s.phase in (Phase.VOTE, Phase.RUNOFF):
            ballot = s.ballots[-1]
            options = ballot.options(seat, s.seed, "vote-order", s.round, _ballot_kind(ballot).value, seat)
            what = "Run-off vote among the tied players" if ballot.runoff else "Vote"
            return Choice("vote", f"{what}: who is the chameleon?", options)
        if s.phase is Phase.GUESS:
            return Choice(
                "guess",
                f"You were caught. Which word of the {s.category} card is the secret?",
                tuple(Option(w, w) for w in s.card),
            )
        return None

    def apply(self, s: ChameleonState, seat: Seat, a: Action) -> tuple[ChameleonState, tuple[Event, ...]]:
        not_yours = {
            Phase.VOTE: "You have already voted.",
            Phase.RUNOFF: "You have already voted.",
            Phase.DISCUSSION: "You are already marked ready.",
        }.get(s.phase, "It is not your turn.")
        check_turn(over=s.phase is Phase.OVER, seats=s.seats, seat=seat, acting=self.to_act(s), not_yours=not_yours)
        spec = self.legal(s, seat)
        assert spec is not None
        if s.phase is Phase.CLUES:
            assert isinstance(spec, Text)
            # The secret is checked before the limits: "ice-cream" is refused for naming
            # the secret, the more useful reason, rather than for being two words.
            if seat != s.chameleon and any(_reveals_secret(t, s.secret) for t in text_values(spec, a)):
                raise IllegalAction("Your clue cannot be the secret word or contain it.")
            return self._clue(s, seat, check_text(spec, a)[0])
        if s.phase is Phase.DISCUSSION:
            assert isinstance(spec, Choice)
            check_choice(spec, a)
            return self._ready(s, seat)
        if s.phase in (Phase.VOTE, Phase.RUNOFF):
            assert isinstance(spec, Choice)
            return self._vote(s, seat, vote.target(spec, a))
        assert isinstance(spec, Choice)
        return self._guess(s, check_choice(spec, a))

    def _clue(self, s: ChameleonState, seat: Seat, clue: str) -> tuple[ChameleonState, tuple[Event, ...]]:
        # Only a seat that knows the secret is held to it: refusing the chameleon's
        # word would tell the chameleon which word is the secret.
        if seat != s.chameleon and _reveals_secret(clue, s.secret):
            raise IllegalAction("Your clue cannot be the secret word or contain it.")
        if any(text_key(clue) == text_key(earlier) for _, earlier in s.clues):
            raise IllegalAction(f"{clue!r} was already given as a clue this round; choose another word.")
        clues = (*s.clues, (seat, clue))
        events: list[Event] = [Event("clue", {"round": s.round, "seat": seat, "clue": clue}, PUBLIC)]
        if len(clues) < s.seats:
            return self._step(s, events, clues=clues)
        if s.config.discussion:
            events.append(Event("discussion_start", {"round": s.round}, PUBLIC))
            return self._step(s, events, clues=clues, phase=Phase.DISCUSSION)
        return self._open_ballot(dataclasses.replace(s, clues=clues), events, vote.first(range(s.seats), range(s.seats)))

    def _ready(self, s: ChameleonState, seat: Seat) -> tuple[ChameleonState, tuple[Event, ...]]:
        ready = s.ready | {seat}
        events: list[Event] = [Event("ready", {"round": s.round, "seat": seat}, PUBLIC)]
        if len(ready) < s.seats:
            return self._step(s, events, ready=ready)
        return self._open_ballot(dataclasses.replace(s, ready=ready), events, vote.first(range(s.seats), range(s.seats)))

    def _open_ballot(self, s: ChameleonState, events: list[Event], ballot: Ballot) -> tuple[ChameleonState, tuple[Event, ...]]:
        kind = _ballot_kind(ballot)
        events.append(Event("vote_start", {"round": s.round, "ballot": kind.value, "candidates": list(ballot.candidates)}, PUBLIC))
        phase = Phase.RUNOFF if ballot.runoff else Phase.VOTE
        return self._step(s, events, phase=phase, ballots=(*s.ballots, ballot))

    def _vote(self, s: ChameleonState, seat: Seat, target: Seat | None) -> tuple[ChameleonState, tuple[Event, ...]]:
        ballot = s.ballots[-1].cast(seat, target)
        ballots = (*s.ballots[:-1], ballot)
        kind = _ballot_kind(ballot).value
        events: list[Event] = [
            Event("vote_cast", {"round": s.round, "ballot": kind, "seat": seat, "target": target}, Audience.of(seat)),
            Event("voted", {"round": s.round, "ballot": kind, "seat": seat}, PUBLIC),
        ]
        if not ballot.complete:
            return self._step(s, events, ballots=ballots)
        s = dataclasses.replace(s, ballots=ballots)
        verdict = ballot.verdict()
        runoff = ballot.needs_runoff(verdict, s.config.tie_rule is TieRule.RUNOFF)
        accused = verdict.chosen
        events.append(
            Event(
                "vote_result",
                {"round": s.round, **_ballot_json(ballot), "tied": list(verdict.tied), "accused": accused, "runoff": runoff},
                PUBLIC,
            )
        )
        if runoff:
            return self._open_ballot(s, events, vote.runoff(verdict.tied, range(s.seats)))
        caught = accused is not None and accused == s.chameleon
        events.append(
            Event("reveal", {"round": s.round, "chameleon": s.chameleon, "accused": accused, "caught": caught}, PUBLIC)
        )
        if caught:
            return self._step(s, events, phase=Phase.GUESS, accused=accused)
        return self._end_round(dataclasses.replace(s, accused=accused), events, Outcome.ESCAPED, None)

    def _guess(self, s: ChameleonState, guess: str) -> tuple[ChameleonState, tuple[Event, ...]]:
        right = guess == s.secret
        events: list[Event] = [
            Event(
                "guess",
                {"round": s.round, "seat": s.chameleon, "guess": guess, "secret": s.secret, "correct": right},
                PUBLIC,
            )
        ]
        return self._end_round(s, events, Outcome.GUESSED if right else Outcome.CAUGHT, guess)

    def _end_round(
        self, s: ChameleonState, events: list[Event], outcome: Outcome, guess: str | None
    ) -> tuple[ChameleonState, tuple[Event, ...]]:
        points = _points(outcome, s.chameleon, s.seats)
        scores = tuple(a + b for a, b in zip(s.scores, points, strict=False))
        record = RoundRecord(
            round=s.round,
            category=s.category,
            card=s.card,
            secret=s.secret,
            chameleon=s.chameleon,
            order=s.order,
            clues=s.clues,
            ballots=s.ballots,
            accused=s.accused,
            guess=guess,
            outcome=outcome,
            points=points,
        )
        history = (*s.history, record)
        events.append(
            Event(
                "round_end",
                {
                    "round": s.round,
                    "outcome": outcome.value,
                    "chameleon": s.chameleon,
                    "secret": s.secret,
                    "points": list(points),
                    "scores": list(scores),
                },
                PUBLIC,
            )
        )
        cfg = s.config
        top = max(scores)
        leaders = [i for i, v in enumerate(scores) if v == top]
        over = (
            cfg.mode is Mode.SINGLE
            # A tie at the top plays on, so the match ends with one leader when it can.
            or (top >= cfg.target_points and len(leaders) == 1)
            or s.round >= cfg.max_rounds
        )
        if not over:
            log = (*s.log, *events)
            nxt, deal = _deal(cfg, s.seats, s.seed, s.round + 1, s.cards_used, scores, history, log)
            return nxt, (*events, *deal)
        winners = sorted(self._winners(cfg, record, scores))
        events.append(Event("game_over", {"winners": winners, "scores": list(scores), "rounds": s.round}, PUBLIC))
        return self._step(s, events, phase=Phase.OVER, scores=scores, history=history)

    @staticmethod
    def _winners(cfg: ChameleonConfig, last: RoundRecord, scores: tuple[int, ...]) -> frozenset[Seat]:
        if cfg.mode is Mode.SINGLE:
            if last.outcome is Outcome.CAUGHT:
                return frozenset(range(len(scores))) - {last.chameleon}
            return frozenset({last.chameleon})
        top = max(scores)
        return frozenset(i for i, v in enumerate(scores) if v == top)

    @staticmethod
    def _step(s: ChameleonState, events: list[Event], **changes: Any) -> tuple[ChameleonState, tuple[Event, ...]]:
        return dataclasses.replace(s, log=(*s.log, *events), **changes), tuple(events)

    # ------------------------------------------------------------------ views

    def observe(self, s: ChameleonState, seat: Seat) -> Observation:
        """What one seat may know. View keys:

        - ``seat``, ``players`` (number of seats), ``phase``, ``mode``, ``variant``, ``round``,
          ``target_points`` (match goal), ``max_rounds``, ``tie_rule``, ``game_over``.
        - ``category`` and ``card`` (the public card's words, in card order).
        - ``role`` ("chameleon" or "player"), ``is_chameleon``; ``secret``: the secret word,
          null for the chameleon until the game ends.
        - ``speaking_order`` (seats), ``current_speaker`` (seat or null), ``clues``
          ([{seat, clue}] so far this round), ``my_clue``.
        - ``ready``: seats marked ready (discussion phase).
        - ``ballot``: the open vote or null: {ballot: "first"|"runoff", candidates,
          voted (seats that have voted, never for whom), my_vote (seat, "abstain" or null)}.
        - ``votes``: this round's closed ballots, revealed: [{ballot, candidates, votes:
          [{voter, target}], tally}].
        - ``accused`` (seat or null) and ``chameleon`` (seat once revealed, or your own
          seat if you are it; otherwise null); ``guess``: the chameleon's guess once the
          game is over (null otherwise).
        - ``scores`` (per seat), ``to_act`` (seats that owe a move), ``previous_rounds``
          (finished rounds of a match, everything revealed).
        """
        over = s.phase is Phase.OVER
        is_cham = seat == s.chameleon
        current = s.history[-1] if over else None
        closed = s.ballots if s.ballot is None else s.ballots[:-1]
        open_ballot = s.ballot
        my_vote: Any = None
        if open_ballot is not None:
            voted, target = open_ballot.vote_of(seat)
            if voted:
                my_vote = ABSTAIN if target is None else target
        revealed = s.phase is Phase.GUESS or over
        previous = s.history[:-1] if over else s.history
        view: ChameleonView = {
            "seat": seat,
            "players": s.seats,
            "phase": s.phase.value,
            "mode": s.config.mode.value,
            "variant": s.config.variant.value,
            "round": s.round,
            "target_points": s.config.target_points,
            "max_rounds": s.config.max_rounds,
            "tie_rule": s.config.tie_rule.value,
            "game_over": over,
            "category": s.category,
            "card": list(s.card),
            "role": (Role.CHAMELEON if is_cham else Role.PLAYER).value,
            "is_chameleon": is_cham,
            "secret": s.secret if (not is_cham or over) else None,
            "speaking_order": list(s.order),
            "current_speaker": s.order[len(s.clues)] if s.phase is Phase.CLUES else None,
            "clues": [{"seat": c_seat, "clue": clue} for c_seat, clue in s.clues],
            "my_clue": next((clue for c_seat, clue in s.clues if c_seat == seat), None),
            "ready": sorted(s.ready),
            "ballot": None
            if open_ballot is None
            else {
                "ballot": _ballot_kind(open_ballot).value,
                "candidates": list(open_ballot.candidates),
                "voted": sorted(open_ballot.voted()),
                "my_vote": my_vote,
            },
            "votes": [_ballot_json(b) for b in closed],
            "accused": s.accused if revealed else (current.accused if current else None),
            "chameleon": s.chameleon if (revealed or is_cham) else None,
            "guess": current.guess if current else None,
            "scores": list(s.scores),
            "to_act": sorted(self.to_act(s)),
            "previous_rounds": [r.to_json() for r in previous],
        }
        return Observation(game=self.id, seat=seat, phase=s.phase.value, view=view, events=visible(s.log, seat))

    def result(self, s: ChameleonState) -> Result | None:
        if s.phase is not Phase.OVER:
            return None
        cfg = s.config
        last = s.history[-1]
        winners = self._winners(cfg, last, s.scores)
        if cfg.mode is Mode.SINGLE:
            summary = {
                Outcome.ESCAPED: f"The chameleon was not caught and escapes; the secret was {last.secret}.",
                Outcome.GUESSED: f"The chameleon was caught but named the secret, {last.secret}, and escapes.",
                Outcome.CAUGHT: f"The chameleon was caught and guessed {last.guess} instead of {last.secret}; the other players win.",
            }[last.outcome]
        else:
            top = max(s.scores)
            shared = " (shared)" if len(winners) > 1 else ""
            summary = f"The match ends after {s.round} round(s) with a top score of {top}{shared}."
        rounds = [r.to_json() for r in s.history]
        clue_instances = [
            {
                "round": r.round,
                "category": r.category,
                "card": list(r.card),
                "secret": r.secret,
                "seat": giver,
                "clue": clue,
                "is_chameleon": giver == r.chameleon,
            }
            for r in s.history
            for giver, clue in r.clues
        ]
        outcomes = [r.outcome for r in s.history]
        details: dict[str, Any] = {
            "variant": cfg.variant.value,
            "mode": cfg.mode.value,
            "tie_rule": cfg.tie_rule.value,
            "card_size": cfg.card_size,
            "rounds_played": len(s.history),
            "rounds": rounds,
            "chameleons": [r.chameleon for r in s.history],
            "clue_instances": clue_instances,
            "scores": list(s.scores),
            "metrics": {
                "rounds": len(s.history),
                "escaped": outcomes.count(Outcome.ESCAPED),
                "guessed": outcomes.count(Outcome.GUESSED),
                "caught": outcomes.count(Outcome.CAUGHT),
                "chameleon_win_rate": (len(outcomes) - outcomes.count(Outcome.CAUGHT)) / len(outcomes),
                "runoffs": sum(1 for r in s.history for b in r.ballots if b.runoff),
            },
        }
        details["deal"] = self.deal_of(s)  # exports carry the result: with the deal they replay without a seed
        return Result(
            winners=winners,
            summary=summary,
            scores={i: float(v) for i, v in enumerate(s.scores)},
            details=details,
        )

    def deal_of(self, s: ChameleonState) -> dict[str, Any] | list[dict[str, Any]]:
        """The complete deal so far: each round's card, secret, chameleon and first speaker
        (one mapping for a single game, a list for a match)."""
        rounds = [
            {"card": [r.category, list(r.card)], "secret": r.secret, "chameleon": r.chameleon, "first": r.order[0]}
            for r in s.history
        ]
        if s.phase is not Phase.OVER:
            rounds.append({"card": [s.category, list(s.card)], "secret": s.secret, "chameleon": s.chameleon, "first": s.order[0]})
        return rounds[0] if s.config.mode is Mode.SINGLE else rounds

    def secrets(self, s: ChameleonState) -> tuple[Secret, ...]:
        """The current secret word, known by all but the chameleon. The chameleon's identity is
        not a word; observations hide it separately (see ``observe``)."""
        if s.phase is Phase.OVER:
            return ()
        return (Secret(s.secret, frozenset(range(s.seats)) - {s.chameleon}, among=tuple(s.card)),)

    def timeout_action(self, s: ChameleonState, seat: Seat) -> Action | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.DISCUSSION:
            return Action.choose("ready", READY)
        if s.phase in (Phase.VOTE, Phase.RUNOFF):
            return Action.choose("vote", ABSTAIN)
        # A clue or the chameleon's guess has no neutral value: an AI plays that turn.
        return None

    # ------------------------------------------------------------------ words for people

    def text(self, e: Event, names: Sequence[str]) -> str:
        return fill_labels(self._sentence(e), names)

    def _sentence(self, e: Event) -> str:
        """The event in words, seats as ``seat_ref`` tokens."""
        d = e.data

        def who(seat: object) -> str:
            return seat_ref(seat) if isinstance(seat, int) and seat >= 0 else "nobody"

        kind = e.kind
        if kind == "round_start":
            return (
                f"Round {d['round']}: the category is {d['category']}; the card reads "
                f"{', '.join(d['card'])}. {who(d['first'])} gives the first clue."
            )
        if kind == "role":
            if d["role"] == Role.CHAMELEON.value:
                return "You are the chameleon: blend in without knowing the secret word."
            return f"The secret word is {d['secret']}."
        if kind == "clue":
            return f"{who(d['seat'])} gives the clue: {d['clue']}."
        if kind == "discussion_start":
            return "All clues are in. Discuss, then mark yourself ready to vote."
        if kind == "ready":
            return f"{who(d['seat'])} is ready to vote."
        if kind == "vote_start":
            if d["ballot"] == BallotKind.RUNOFF.value:
                return "Run-off vote between " + ", ".join(who(c) for c in d["candidates"]) + "."
            return "Vote now: who is the chameleon?"
        if kind == "vote_cast":
            return "You abstain." if d["target"] is None else f"You vote for {who(d['target'])}."
        if kind == "voted":
            return f"{who(d['seat'])} has voted."
        if kind == "vote_result":
            votes = "; ".join(
                f"{who(v['voter'])} → {who(v['target']) if v['target'] is not None else 'abstained'}" for v in d["votes"]
            )
            if d["accused"] is not None:
                end = f"{who(d['accused'])} is accused."
            elif d["runoff"]:
                end = "A tie between " + ", ".join(who(t) for t in d["tied"]) + ": run-off."
            elif d["tied"]:
                end = "Still a tie between " + ", ".join(who(t) for t in d["tied"]) + ": nobody is accused."
            else:
                end = "Nobody voted: nobody is accused."
            return f"Votes: {votes}. {end}"
        if kind == "reveal":
            if d["caught"]:
                return f"{who(d['chameleon'])} is the chameleon and has been caught! They may still guess the secret."
            if d["accused"] is None:
                return f"Nobody is accused. {who(d['chameleon'])} was the chameleon and escapes."
            return f"{who(d['accused'])} is not the chameleon: {who(d['chameleon'])} was, and escapes."
        if kind == "guess":
            verdict = "right: the chameleon escapes" if d["correct"] else f"wrong, the secret was {d['secret']}"
            return f"{who(d['seat'])} guesses {d['guess']}: {verdict}."
        if kind == "round_end":
            scored = ", ".join(f"{who(i)} {p}" for i, p in enumerate(d["scores"]))
            return f"Round {d['round']} over (the secret was {d['secret']}). Scores: {scored}."
        if kind == "game_over":
            return "Game over. Winners: " + (", ".join(who(w) for w in d["winners"]) or "nobody") + "."
        return f"{kind}: {dict(d)}"

    def rules(self, cfg: ChameleonConfig) -> str:
        words = f"{cfg.card_size} words"
        mode = (
            "This is a single round: the chameleon wins if it escapes, the others win if it is caught and guesses wrong."
            if cfg.mode is Mode.SINGLE
            else (
                f"This is a match: rounds continue until one player alone has {cfg.target_points} points "
                f"(at most {cfg.max_rounds} rounds; then the highest score wins)."
            )
        )
        tie = (
            "A tie at the top of the vote leads to one run-off vote among the tied players; "
            "if that ties too, the chameleon escapes."
            if cfg.tie_rule is TieRule.RUNOFF
            else "A tie at the top of the vote lets the chameleon escape."
        )
        discussion = " After the clues you may discuss; mark yourself ready when you want to vote." if cfg.discussion else ""
        return (
            f"Everyone sees a category card of {words}. One of them is the secret word, told privately to "
            "everyone except the chameleon, who only learns that they are the chameleon.\n\n"
            "In turn, each player gives a one-word clue that shows they know the secret without "
            "giving it away. You may not say the secret or repeat an earlier clue. The chameleon must "
            f"bluff.{discussion}\n\n"
            f"Then everyone votes at once for who they think the chameleon is. {tie} If the wrong "
            "player is accused, the chameleon escapes. If the chameleon is caught, it may still escape by "
            "naming the secret word from the card.\n\n"
            "Points: the chameleon escapes uncaught, +2 to the chameleon; caught but guesses right, +1 to "
            f"the chameleon; caught and wrong, +2 to everyone else. {mode}"
        )


GAME = ChameleonGame()
"""The registered engine."""


def _descriptor() -> GameDescriptor:
    from games.metrics import chameleon_metrics, chameleon_seats

    roles = (SeatRole.CHAMELEON, SeatRole.PLAYER)
    return GameDescriptor(
        id=ChameleonGame.id,
        title="Chameleon",
        blurb="everyone but the chameleon knows the secret word; give one-word clues, then vote",
        engine=GAME,
        seats=(MIN_SEATS, MAX_SEATS),
        variants=tuple(Variant),
        roles=roles,
        sides=(Side.CHAMELEON, Side.PLAYERS, Side.SELF),
        metrics=(
            Metric("points", "the seat's points", MetricScope.SEAT, roles, "pts"),
            Metric("escapes", "rounds the seat was the chameleon and was not caught (or named the secret)",
                   MetricScope.SEAT, roles, "escapes"),
            Metric("caught", "rounds the seat was the chameleon and was caught", MetricScope.SEAT, roles, "caught"),
            Metric("rounds", "rounds the game lasted", MetricScope.SEAT, roles),
            Metric("rounds_as_chameleon", "rounds the seat was the chameleon", MetricScope.SEAT, roles),
            Metric("votes_received", "first-ballot votes the seat received", MetricScope.SEAT, roles),
            Metric("games", "games", MetricScope.GAMES),
            Metric("rounds", "rounds", MetricScope.GAMES),
            Metric("catch_rate", "catch rate", MetricScope.GAMES, (SeatRole.CHAMELEON,)),
            Metric("escape_rate", "escape rate", MetricScope.GAMES, (SeatRole.CHAMELEON,)),
            Metric("guessed_when_caught", "named the secret when caught", MetricScope.GAMES, (SeatRole.CHAMELEON,)),
            Metric("outcomes", "round outcomes", MetricScope.GAMES),
            Metric("chameleon_points_per_round", "chameleon points per round", MetricScope.GAMES,
                   (SeatRole.CHAMELEON,)),
            Metric("player_points_per_round", "other players' points per round", MetricScope.GAMES,
                   (SeatRole.PLAYER,)),
        ),
        read_seats=chameleon_seats,
        summarize=chameleon_metrics,
        clue_kinds=frozenset({"clue"}),
        sneak=SneakScoring.ALWAYS,
        menu=MenuEntry(order=3),
    )


DESCRIPTOR = _descriptor()
"""What the rest of the system knows of the Chameleon (``games.catalog``)."""
