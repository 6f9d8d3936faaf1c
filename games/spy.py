"""Who-is-Spy (Undercover): the rules engine, as pure functions over a frozen state.

Rules as implemented
--------------------
Deal. A pair of similar words is drawn from the deck (seeded); which side of
the pair the villagers get is seeded too, and the spies get the other word.
Spies are chosen at random among the seats. Every player is told only their
word ("Your word is X"), never their role: a spy does not know it is a spy.
With ``blank=True`` one more seat is "Mr. White": it is told so, and gets no
word. How many spies there are, and whether there is a Mr. White, is public.

Round. Each living player describes their word once, in a speaking order
shuffled anew every round (SpyGame's mitigation of speaking-order bias). A
description must not be empty, must stay within ``max_words``, must not
contain the speaker's own word nor a form of it (plural, -ed, -ing, -er) after
normalisation (``games.text``: accents, look-alike letters, invisible characters
do not hide it), and must not repeat any earlier description of the game. Optionally (``discussion=True``) a discussion
phase follows, which ends when every living player says "ready". Then every
living player votes, simultaneously and secretly, for another living player
(an absent player abstains). The vote options are listed in a seeded random
order per voter (SpyGame's mitigation of option-order bias). Ballots are
revealed together when the last one is in. The most-voted player is
eliminated and their role (villager / spy / Mr. White) is revealed to
everyone, but never their word. Ties: with ``tie_rule="runoff"`` (default)
the living players vote again among the tied players only, and if that is
still tied nobody is eliminated this round; with ``tie_rule="none"`` a tie
eliminates nobody at once. If nobody receives a vote, nobody is eliminated.

Mr. White. When eliminated, Mr. White guesses the villagers' word (1-3
words, case and a plural "s" ignored). A right guess wins the game for Mr.
White alone; a wrong one is not announced in words and the game goes on.

End ("classic"), checked after every elimination and guess, before any new
phase starts:
  1. Mr. White guessed right: Mr. White wins alone.
  2. No spy and no Mr. White is alive: the villagers win (all villagers, the
     eliminated ones included).
  3. A spy is alive and living spies >= living villagers: the infiltrators
     win, i.e. every spy (a team, eliminated spies included) and Mr. White
     if still alive.
  4. Only two players are left (possible with a Mr. White and no spy): the
     living infiltrators win.
  5. ``max_rounds`` rounds (default: the number of seats) have been played:
     the surviving infiltrators win. This guarantees that every game ends.

"spygame" is the setting of the SpyGame paper, fixed: 4 seats, 1 spy, no Mr.
White, no discussion. The spy wins when it is not voted out before only two
players remain; the villagers win when the spy is voted out. (With 4 seats
and one spy this is exactly what rules 2 and 3 say.)
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, ClassVar, TypedDict

from games import deals, decks, vote
from games.base import (
    MAX_TEXT_CHARS,
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
    normalize,
    one_of,
    ready_choice,
    rng,
    visible,
    whole_number,
)
from games.descriptor import GameDescriptor, MenuEntry, Metric, MetricScope, SeatRole, Side, SneakScoring
from games.labels import fill_labels, human_list, seat_ref
from games.text import reveals_secret, same_words
from games.vote import ABSTAIN, Ballot

MIN_SEATS = 3
MAX_SEATS = 12


class Variant(StrEnum):
    CLASSIC = "classic"
    SPYGAME = "spygame"  # the SpyGame paper's setting, fixed


class TieRule(StrEnum):
    RUNOFF = "runoff"  # the tied players face a run-off vote; still tied: nobody is out
    NONE = "none"  # a tie eliminates nobody


class Role(Enum):
    VILLAGER = "villager"
    SPY = "spy"
    MR_WHITE = "mr_white"


ROLE_NAMES = {Role.VILLAGER: "a villager", Role.SPY: "a spy", Role.MR_WHITE: "Mr. White"}


class Phase(Enum):
    DESCRIBE = "describe"
    DISCUSS = "discuss"
    VOTE = "vote"
    RUNOFF = "runoff"
    WHITE_GUESS = "white_guess"
    OVER = "over"


class Team(Enum):
    VILLAGERS = "villagers"
    INFILTRATORS = "infiltrators"
    MR_WHITE = "mr_white"


# --------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class SpyConfig:
    """Options of a Who-is-Spy game. ``spies``/``max_rounds`` of None mean "from the seat count"."""

    variant: Variant = Variant.CLASSIC
    spies: int | None = None
    blank: bool = False
    max_words: int = 12
    tie_rule: TieRule = TieRule.RUNOFF
    discussion: bool = False
    max_rounds: int | None = None
    deck: tuple[tuple[str, str], ...] | None = None
    deal: SpyDeal | None = None
    """Word pair, roles and speaking orders fixed in advance (the rest drawn); see ``SpyDeal``."""


@dataclass(frozen=True, slots=True)
class SpyDeal:
    """A Who-is-Spy deal as data: ``{"pair": [villager word, spy word], "spies": [seats],
    "blank": [Mr. White's seat] or [], "order": [[round 1 speaking order], ...]}``.

    Every key may be left out to draw it from the seed. Each speaking order lists every seat
    of the table once; players already voted out are skipped when the round begins. Rounds
    beyond the listed orders are shuffled from the seed.
    """

    pair: tuple[str, str] | None = None
    spies: tuple[Seat, ...] | None = None
    blank: tuple[Seat, ...] | None = None
    order: tuple[tuple[Seat, ...], ...] = ()


def _parse_deal(raw: object, cfg: SpyConfig) -> SpyDeal:
    if isinstance(raw, SpyDeal):
        raw = dataclasses.asdict(raw)
    given = deals.mapping(raw, ("pair", "spies", "blank", "order"))
    pair = None
    if given.get("pair") is not None:
        p = given["pair"]
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise deals.error(f"pair must be [villager word, spy word], not {p!r}")
        pair = (deals.word("the villager word", p[0]), deals.word("the spy word", p[1]))
        if deals.same(*pair):
            raise deals.error("the two words of the pair must differ")
    spies = None if given.get("spies") is None else deals.seats("spies", given["spies"])
    blank = None if given.get("blank") is None else deals.seats("blank", given["blank"])
    if spies is not None:
        if not spies:
            raise deals.error("a game needs at least one spy")
        if cfg.spies is not None and len(spies) != cfg.spies:
            raise deals.error(f"the config asks for {cfg.spies} spies but the deal names {len(spies)}")
        if cfg.variant is Variant.SPYGAME and len(spies) != 1:
            raise deals.error("the spygame variant is played with exactly 1 spy")
    if blank is not None:
        if len(blank) != int(cfg.blank):
            want = "one seat (blank=true)" if cfg.blank else "no seat (blank=false)"
            raise deals.error(f"blank must name {want}, not {list(blank)}")
        if spies is not None and set(blank) & set(spies):
            raise deals.error("Mr. White cannot also be a spy")
    orders = given.get("order") or ()
    if not isinstance(orders, (list, tuple)):
        raise deals.error("order must be a list of speaking orders, one per round")
    order = tuple(deals.seats(f"order of round {r}", o) for r, o in enumerate(orders, start=1))
    if cfg.max_rounds is not None and len(order) > cfg.max_rounds:
        raise deals.error(f"{len(order)} speaking orders for a game of at most {cfg.max_rounds} rounds")
    return SpyDeal(pair, spies, blank, order)


def _check_deal_seats(deal: SpyDeal, cfg: SpyConfig, seats: int) -> None:
    """What a deal can only be checked against once the table's size is known."""
    n_spies = spies_for(cfg, seats)
    if deal.spies is not None:
        deals.in_range("spies", deal.spies, seats)
        if len(deal.spies) != n_spies:
            raise deals.error(f"a table of {seats} plays with {n_spies} spies, but the deal names {len(deal.spies)}")
    if deal.blank is not None:
        deals.in_range("blank", deal.blank, seats)
    if len(deal.order) > (cfg.max_rounds if cfg.max_rounds is not None else seats):
        raise deals.error(f"{len(deal.order)} speaking orders for a game of at most {seats} rounds")
    for r, o in enumerate(deal.order, start=1):
        if sorted(o) != list(range(seats)):
            raise deals.error(f"the order of round {r} must list every seat 0 to {seats - 1} once, not {list(o)}")


def description_chars(max_words: int) -> int:
    """The character limit of a description: 20 a word (240 for the default 12 words), at most
    ``MAX_TEXT_CHARS``. The spec carries it; forms take it from there, never from a constant."""
    return min(MAX_TEXT_CHARS, 20 * max_words)


def default_spies(seats: int) -> int:
    """1 spy up to 6 seats, 2 up to 10, 3 above."""
    return 1 if seats <= 6 else 2 if seats <= 10 else 3


def spies_for(cfg: SpyConfig, seats: int) -> int:
    return cfg.spies if cfg.spies is not None else default_spies(seats)


def _seats_ok(cfg: SpyConfig, seats: int) -> bool:
    if not MIN_SEATS <= seats <= MAX_SEATS:
        return False
    if cfg.variant is Variant.SPYGAME:
        return seats == 4
    # The infiltrators (spies and Mr. White) must start as a minority, or the
    # game would be decided before anyone speaks.
    return 2 * (spies_for(cfg, seats) + int(cfg.blank)) < seats


def _check_deck(raw: object) -> tuple[tuple[str, str], ...]:
    return decks.custom(decks.parse_pairs, raw)


def _validate(cfg: SpyConfig) -> SpyConfig:
    cfg = dataclasses.replace(
        cfg,
        variant=one_of(Variant, "variant", cfg.variant),
        spies=None if cfg.spies is None else whole_number("spies", cfg.spies, 1, MAX_SEATS),
        blank=flag("blank", cfg.blank),
        discussion=flag("discussion", cfg.discussion),
        max_words=whole_number("max_words", cfg.max_words, 1, 50),
        tie_rule=one_of(TieRule, "tie_rule", cfg.tie_rule),
        max_rounds=None if cfg.max_rounds is None else whole_number("max_rounds", cfg.max_rounds, 1, 50),
    )
    if cfg.variant is Variant.SPYGAME:
        # The benchmark variant is the paper's setting exactly; refuse changes to it.
        if cfg.spies not in (None, 1):
            raise ConfigError("the spygame variant is played with exactly 1 spy")
        if cfg.blank:
            raise ConfigError("the spygame variant has no Mr. White; use the classic variant for blank=true")
        if cfg.discussion:
            raise ConfigError("the spygame variant has no discussion phase; use the classic variant")
    cfg = dataclasses.replace(cfg, deck=None if cfg.deck is None else _check_deck(cfg.deck))
    if cfg.deal is not None:
        cfg = dataclasses.replace(cfg, deal=_parse_deal(cfg.deal, cfg))
    if not any(_seats_ok(cfg, n) for n in range(MIN_SEATS, MAX_SEATS + 1)):
        raise ConfigError(
            f"with {cfg.spies} spies{' and a Mr. White' if cfg.blank else ''} no table of "
            f"{MIN_SEATS}-{MAX_SEATS} seats works: spies (and Mr. White) must be fewer than half the seats"
        )
    return cfg


# --------------------------------------------------------------------------- the view a seat reads


class SpyView(TypedDict):
    """``Observation.view`` of Who-is-Spy: what one seat may know (see ``SpyGame.observe``)."""

    variant: str
    phase: str
    round: int
    max_rounds: int
    tie_rule: str
    seats: int
    my_seat: Seat
    my_word: str | None
    is_blank: bool
    spies: int
    has_mr_white: bool
    living: list[Seat]
    eliminated: list[dict[str, Any]]
    speaking_order: list[Seat]
    current_speaker: Seat | None
    descriptions: list[dict[str, Any]]
    votes: list[dict[str, Any]]
    runoff_candidates: list[Seat]
    waiting_for: list[Seat]
    my_vote: Seat | None
    ready: list[Seat]
    outcome: dict[str, Any] | None


def _roles(cfg: SpyConfig, deal: SpyDeal, seats: int, seed: int) -> list[Role]:
    """Spies and Mr. White: as dealt, or drawn from the seed among the seats the deal leaves."""
    n_spies = spies_for(cfg, seats)
    if deal.spies is None and deal.blank is None:
        picked = rng(seed, "roles").sample(range(seats), n_spies + int(cfg.blank))
        spies, whites = picked[:n_spies], picked[n_spies:]
    else:
        taken = set(deal.spies or ()) | set(deal.blank or ())
        rest = [x for x in range(seats) if x not in taken]
        spies = list(deal.spies) if deal.spies is not None else rng(seed, "roles").sample(rest, n_spies)
        rest = [x for x in rest if x not in spies]
        whites = list(deal.blank) if deal.blank is not None else rng(seed, "blank").sample(rest, int(cfg.blank))
    roles = [Role.VILLAGER] * seats
    for x in spies:
        roles[x] = Role.SPY
    for x in whites:
        roles[x] = Role.MR_WHITE
    return roles


# --------------------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class VoteRecord:
    """One resolved vote: who voted for whom (None = abstained) and who went out."""

    round: int
    stage: str  # "vote" or "runoff"
    ballots: tuple[tuple[Seat, Seat | None], ...]
    eliminated: Seat | None

    def counts(self) -> Counter[Seat]:
        return Counter(t for _, t in self.ballots if t is not None)


@dataclass(frozen=True, slots=True)
class SpyState:
    config: SpyConfig
    seats: int
    seed: int
    villager_word: str
    spy_word: str
    roles: tuple[Role, ...]
    phase: Phase
    round: int
    order: tuple[Seat, ...]
    """This round's speaking order (the players living when it began)."""
    turn: int
    """Index into ``order`` of the current speaker."""
    descriptions: tuple[tuple[int, Seat, str], ...]
    """(round, seat, text) of every description so far."""
    ready: frozenset[Seat]
    ballot: Ballot | None
    """The vote in progress; its votes stay hidden until the last one is in."""
    votes: tuple[VoteRecord, ...]
    eliminated: tuple[tuple[int, Seat], ...]
    """(round, seat) in elimination order."""
    white_guess: str | None
    winners: frozenset[Seat] | None
    team: Team | None
    end_reason: str | None
    log: tuple[Event, ...]

    @property
    def candidates(self) -> tuple[Seat, ...]:
        """Who may be voted for in a run-off (empty in a normal vote)."""
        return self.ballot.candidates if self.ballot is not None and self.ballot.runoff else ()

    @property
    def living(self) -> tuple[Seat, ...]:
        out = {s for _, s in self.eliminated}
        return tuple(s for s in range(self.seats) if s not in out)

    def seats_with(self, role: Role) -> tuple[Seat, ...]:
        return tuple(s for s, r in enumerate(self.roles) if r is role)

    @property
    def max_rounds(self) -> int:
        return self.config.max_rounds if self.config.max_rounds is not None else self.seats

    def word_of(self, seat: Seat) -> str | None:
        role = self.roles[seat]
        return None if role is Role.MR_WHITE else self.spy_word if role is Role.SPY else self.villager_word


# --------------------------------------------------------------------------- helpers


def _guess_right(guess: str, word: str) -> bool:
    """Mr. White's guess names the villagers' word: the same words, a plural or other form allowed."""
    return same_words(guess, word)


def _lead(team: str, roles: Sequence[str], winners: Sequence[Seat] | frozenset[Seat]) -> str:
    """Who won, in words: an infiltrator win without a living spy is Mr. White's alone."""
    if team == Team.VILLAGERS.value:
        return "The villagers win"
    spy_won = any(roles[x] == Role.SPY.value for x in winners)
    if team == Team.MR_WHITE.value or not spy_won:
        return "Mr. White wins"
    white_won = any(roles[x] == Role.MR_WHITE.value for x in winners)
    return "The spies and Mr. White win" if white_won else "The spies win"


def _emit(s: SpyState, events: list[Event]) -> SpyState:
    return dataclasses.replace(s, log=s.log + tuple(events))


def _start_round(s: SpyState, rnd: int, events: list[Event]) -> SpyState:
    deal = s.config.deal
    if deal is not None and rnd <= len(deal.order):
        living = set(s.living)
        order = [x for x in deal.order[rnd - 1] if x in living]
    else:
        order = list(s.living)
        rng(s.seed, "order", rnd).shuffle(order)
    events.append(Event("round_started", {"round": rnd, "order": order}))
    return dataclasses.replace(
        s, phase=Phase.DESCRIBE, round=rnd, order=tuple(order), turn=0, ready=frozenset(), ballot=None
    )


def _start_vote(s: SpyState, ballot: Ballot, events: list[Event]) -> SpyState:
    stage = Phase.RUNOFF if ballot.runoff else Phase.VOTE
    events.append(Event("vote_started", {"round": s.round, "stage": stage.value, "candidates": list(ballot.candidates) if ballot.runoff else []}))
    return dataclasses.replace(s, phase=stage, ballot=ballot, ready=frozenset())


def _outcome(s: SpyState) -> tuple[Team, frozenset[Seat], str] | None:
    """The end of the game if the position decides it (rules 2-4 of the module docstring)."""
    living = set(s.living)
    spies = [x for x in s.seats_with(Role.SPY) if x in living]
    whites = [x for x in s.seats_with(Role.MR_WHITE) if x in living]
    villagers = [x for x in s.seats_with(Role.VILLAGER) if x in living]
    all_spies = s.seats_with(Role.SPY)
    if not spies and not whites:
        who = "the spy was" if len(all_spies) == 1 else "every spy was"
        if s.seats_with(Role.MR_WHITE):
            who = "the spy and Mr. White were" if len(all_spies) == 1 else "every spy and Mr. White were"
        return Team.VILLAGERS, frozenset(s.seats_with(Role.VILLAGER)), f"{who} voted out"
    if spies and s.config.variant is Variant.SPYGAME and len(living) <= 2:
        return (*_infiltrators(s), "the spy was not voted out before only two players remained")
    if spies and len(spies) >= len(villagers):
        who = "the spy is" if len(all_spies) == 1 else "the spies are"
        return (*_infiltrators(s), f"{who} no longer outnumbered by villagers")
    if len(living) <= 2:
        return (*_infiltrators(s), "only two players are left")
    return None


def _infiltrators(s: SpyState) -> tuple[Team, frozenset[Seat]]:
    living = set(s.living)
    spies = s.seats_with(Role.SPY)
    winners = set(spies) if any(x in living for x in spies) else set()
    winners.update(x for x in s.seats_with(Role.MR_WHITE) if x in living)
    return Team.INFILTRATORS, frozenset(winners)


def _finish(s: SpyState, team: Team, winners: frozenset[Seat], reason: str, events: list[Event]) -> SpyState:
    events.append(
        Event(
            "game_over",
            {
                "team": team.value,
                "winners": sorted(winners),
                "reason": reason,
                "villager_word": s.villager_word,
                "spy_word": s.spy_word,
                "roles": [r.value for r in s.roles],
            },
        )
    )
    return dataclasses.replace(s, phase=Phase.OVER, winners=winners, team=team, end_reason=reason)


def _after_elimination(s: SpyState, events: list[Event]) -> SpyState:
    """End the game if it is decided, else go on to the next round (or end at the round limit)."""
    decided = _outcome(s)
    if decided is not None:
        return _finish(s, *decided, events)
    if s.round >= s.max_rounds:
        team, winners = _infiltrators(s)
        return _finish(s, team, winners, f"the infiltrators survived {s.max_rounds} rounds", events)
    return _start_round(s, s.round + 1, events)


def _resolve_vote(s: SpyState, events: list[Event]) -> SpyState:
    stage = s.phase
    assert s.ballot is not None
    ballot = s.ballot
    ordered = tuple(sorted(ballot.votes))
    counts = {k: n for k, n in sorted(ballot.tally().items()) if n}
    events.append(
        Event(
            "votes_revealed",
            {
                "round": s.round,
                "stage": stage.value,
                "ballots": {str(v): t for v, t in ordered},
                "counts": {str(k): n for k, n in counts.items()},
            },
        )
    )
    verdict = ballot.verdict()
    out = verdict.chosen
    s = dataclasses.replace(s, votes=(*s.votes, VoteRecord(s.round, stage.value, ordered, out)), ballot=None)
    if out is None:
        if verdict.no_votes:
            events.append(Event("no_elimination", {"round": s.round, "reason": "no votes"}))
            return _after_elimination(s, events)
        runoff = ballot.needs_runoff(verdict, s.config.tie_rule is TieRule.RUNOFF)
        events.append(Event("tie", {"round": s.round, "stage": stage.value, "tied": list(verdict.tied), "runoff": runoff}))
        if runoff:
            return _start_vote(s, vote.runoff(verdict.tied, s.living), events)
        events.append(Event("no_elimination", {"round": s.round, "reason": "tie"}))
        return _after_elimination(s, events)
    role = s.roles[out]
    events.append(Event("eliminated", {"round": s.round, "seat": out, "role": role.value}))
    s = dataclasses.replace(s, eliminated=(*s.eliminated, (s.round, out)))
    if role is Role.MR_WHITE:
        events.append(Event("white_guess_started", {"round": s.round, "seat": out}))
        return dataclasses.replace(s, phase=Phase.WHITE_GUESS)
    return _after_elimination(s, events)


# --------------------------------------------------------------------------- the game


class SpyGame:
    """Who-is-Spy / Undercover. Stateless: every method is a function of its arguments."""

    id: ClassVar[str] = "spy"
    variants: ClassVar[tuple[str, ...]] = tuple(Variant)

    # ---- config

    def make_config(self, variant: str | None = None, **options: Any) -> SpyConfig:
        return self.config_from_dict({"variant": variant or Variant.CLASSIC.value, **options})

    def config_from_dict(self, raw: Mapping[str, Any]) -> SpyConfig:
        return _validate(config_from_dict(SpyConfig, raw))

    def seat_range(self, cfg: SpyConfig) -> tuple[int, int]:
        ok = [n for n in range(MIN_SEATS, MAX_SEATS + 1) if _seats_ok(cfg, n)]
        return (ok[0], ok[-1])

    # ---- deal

    def new(self, cfg: SpyConfig, seats: int, seed: int) -> tuple[SpyState, tuple[Event, ...]]:
        if not _seats_ok(cfg, seats):
            lo, hi = self.seat_range(cfg)
            raise ConfigError(f"this Who-is-Spy setup needs {lo}-{hi} players, not {seats}")
        deal = cfg.deal or SpyDeal()
        _check_deal_seats(deal, cfg, seats)
        if deal.pair is not None:
            villager_word, spy_word = deal.pair
        else:
            deck = cfg.deck if cfg.deck is not None else decks.pairs()
            first, second = rng(seed, "pair").choice(deck)
            villager_word, spy_word = (first, second) if rng(seed, "sides").random() < 0.5 else (second, first)
        roles = _roles(cfg, deal, seats, seed)
        s = SpyState(
            config=cfg, seats=seats, seed=seed, villager_word=villager_word, spy_word=spy_word,
            roles=tuple(roles), phase=Phase.DESCRIBE, round=0, order=(), turn=0, descriptions=(),
            ready=frozenset(), ballot=None, votes=(), eliminated=(), white_guess=None,
            winners=None, team=None, end_reason=None, log=(),
        )  # fmt: skip
        events: list[Event] = []
        for seat, role in enumerate(roles):
            if role is Role.MR_WHITE:
                events.append(Event("word", {"word": None, "blank": True}, Audience.of(seat)))
            else:
                events.append(Event("word", {"word": s.word_of(seat), "blank": False}, Audience.of(seat)))
        events.append(
            Event(
                "game_started",
                {
                    "variant": cfg.variant.value, "seats": seats, "spies": spies_for(cfg, seats), "blank": cfg.blank,
                    "max_rounds": s.max_rounds, "tie_rule": cfg.tie_rule.value,
                },
            )  # fmt: skip
        )
        s = _start_round(s, 1, events)
        s = _emit(s, events)
        return s, tuple(events)

    # ---- turn structure

    def to_act(self, s: SpyState) -> frozenset[Seat]:
        if s.phase is Phase.DESCRIBE:
            return frozenset({s.order[s.turn]})
        if s.phase is Phase.DISCUSS:
            return frozenset(s.living) - s.ready
        if s.phase in (Phase.VOTE, Phase.RUNOFF):
            assert s.ballot is not None
            return s.ballot.waiting()
        if s.phase is Phase.WHITE_GUESS:
            return frozenset({s.eliminated[-1][1]})
        return frozenset()

    def _vote_options(self, s: SpyState, seat: Seat) -> tuple[Option, ...]:
        assert s.ballot is not None
        return s.ballot.options(seat, s.seed, "vote-options", s.round, s.phase.value, seat)

    def legal(self, s: SpyState, seat: Seat) -> ActionSpec | None:
        if seat not in self.to_act(s):
            return None
        cfg = s.config
        if s.phase is Phase.DESCRIBE:
            return Text(
                "describe",
                f"Round {s.round}: describe your word in at most {cfg.max_words} words, without saying it "
                "and without repeating an earlier description.",
                ("Your description",),
                max_words=cfg.max_words,
                max_chars=description_chars(cfg.max_words),
            )
        if s.phase is Phase.DISCUSS:
            return ready_choice("Discuss, then say when you are ready to vote.")
        if s.phase is Phase.VOTE:
            return Choice("vote", f"Round {s.round}: who do you think is the spy?", self._vote_options(s, seat))
        if s.phase is Phase.RUNOFF:
            return Choice(
                "vote", f"Round {s.round} run-off: vote again among the tied players.", self._vote_options(s, seat)
            )
        if s.phase is Phase.WHITE_GUESS:
            return Text(
                "guess",
                "You were voted out, Mr. White. Guess the villagers' word to win the game.",
                ("Your guess",),
                max_words=3,
                max_chars=40,
            )
        return None

    def apply(self, s: SpyState, seat: Seat, a: Action) -> tuple[SpyState, tuple[Event, ...]]:
        gone = isinstance(seat, int) and seat not in s.living
        check_turn(
            over=s.phase is Phase.OVER, seats=s.seats, seat=seat, acting=self.to_act(s),
            not_yours="You have been voted out; you can watch but not play." if gone else "It is not your turn.",
        )  # fmt: skip
        spec = self.legal(s, seat)
        assert spec is not None
        events: list[Event] = []
        if s.phase is Phase.DESCRIBE:
            assert isinstance(spec, Text)
            (text,) = check_text(spec, a)
            word = s.word_of(seat)
            if word is not None and reveals_secret(text, word):
                raise IllegalAction("Your description must not contain your word.")
            key = normalize(text)
            if any(normalize(t) == key for _, _, t in s.descriptions):
                raise IllegalAction("That description was already given this game; say something new.")
            events.append(Event("described", {"round": s.round, "seat": seat, "text": text}))
            s = dataclasses.replace(s, descriptions=s.descriptions + ((s.round, seat, text),), turn=s.turn + 1)
            if s.turn >= len(s.order):
                if s.config.discussion:
                    events.append(Event("discussion_started", {"round": s.round}))
                    s = dataclasses.replace(s, phase=Phase.DISCUSS, ready=frozenset())
                else:
                    s = _start_vote(s, vote.first(s.living, s.living), events)
        elif s.phase is Phase.DISCUSS:
            assert isinstance(spec, Choice)
            check_choice(spec, a)
            events.append(Event("ready", {"round": s.round, "seat": seat}))
            s = dataclasses.replace(s, ready=s.ready | {seat})
            if not self.to_act(s):
                s = _start_vote(s, vote.first(s.living, s.living), events)
        elif s.phase in (Phase.VOTE, Phase.RUNOFF):
            assert isinstance(spec, Choice)
            assert s.ballot is not None
            target = vote.target(spec, a)
            stage = s.phase.value
            events.append(
                Event("vote_cast", {"round": s.round, "stage": stage, "voter": seat, "target": target}, Audience.of(seat))
            )
            events.append(Event("voted", {"round": s.round, "stage": stage, "voter": seat}))
            s = dataclasses.replace(s, ballot=s.ballot.cast(seat, target))
            if not self.to_act(s):
                s = _resolve_vote(s, events)
        elif s.phase is Phase.WHITE_GUESS:
            assert isinstance(spec, Text)
            (guess,) = check_text(spec, a)
            s = dataclasses.replace(s, white_guess=guess)
            events.append(Event("white_guess", {"seat": seat, "guess": guess}, Audience.of(seat)))
            if _guess_right(guess, s.villager_word):
                events.append(Event("white_guessed", {"seat": seat, "correct": True, "guess": guess}))
                s = _finish(s, Team.MR_WHITE, frozenset({seat}), "Mr. White guessed the villagers' word", events)
            else:
                # A wrong guess stays private: announcing it could name the spies' word.
                events.append(Event("white_guessed", {"seat": seat, "correct": False}))
                s = _after_elimination(s, events)
        s = _emit(s, events)
        return s, tuple(events)

    def timeout_action(self, s: SpyState, seat: Seat) -> Action | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.DISCUSS:
            return Action("ready", (READY,))
        if s.phase in (Phase.VOTE, Phase.RUNOFF):
            return Action("vote", (ABSTAIN,))
        return None  # a description or Mr. White's guess: the table seats an AI for the turn

    # ---- information

    def observe(self, s: SpyState, seat: Seat) -> Observation:
        """What ``seat`` may know. View keys:

        - ``variant``, ``phase``, ``round``, ``max_rounds``, ``tie_rule``, ``seats``
        - ``my_seat``; ``my_word`` (None for Mr. White); ``is_blank`` (True only for Mr. White)
        - ``spies`` (how many spies), ``has_mr_white`` (public counts)
        - ``living``: living seats; ``eliminated``: [{seat, round, role}] with the revealed roles
        - ``speaking_order``: this round's order; ``current_speaker``: seat or None
        - ``descriptions``: [{round, seat, text}] of the whole game
        - ``votes``: past votes [{round, stage, ballots: {voter: target or None}, eliminated}]
        - ``runoff_candidates``: seats that may be voted for in a run-off, else []
        - ``waiting_for``: seats that still owe a move; ``my_vote``: this seat's hidden ballot
          in the vote in progress (None if not cast or abstained)
        - ``ready``: seats ready to vote (discussion phase)
        - ``outcome``: None while playing; at the end {team, winners, reason, villager_word,
          spy_word, roles} (everything is revealed then)
        """
        over = s.phase is Phase.OVER
        blank = s.roles[seat] is Role.MR_WHITE
        _, mine = s.ballot.vote_of(seat) if s.ballot is not None else (False, None)
        view: SpyView = {
            "variant": s.config.variant.value,
            "phase": s.phase.value,
            "round": s.round,
            "max_rounds": s.max_rounds,
            "tie_rule": s.config.tie_rule.value,
            "seats": s.seats,
            "my_seat": seat,
            "my_word": s.word_of(seat),
            "is_blank": blank,
            "spies": len(s.seats_with(Role.SPY)),
            "has_mr_white": s.config.blank,
            "living": list(s.living),
            "eliminated": [{"seat": x, "round": r, "role": s.roles[x].value} for r, x in s.eliminated],
            "speaking_order": list(s.order),
            "current_speaker": s.order[s.turn] if s.phase is Phase.DESCRIBE else None,
            "descriptions": [{"round": r, "seat": x, "text": t} for r, x, t in s.descriptions],
            "votes": [
                {
                    "round": b.round,
                    "stage": b.stage,
                    "ballots": {str(v): t for v, t in b.ballots},
                    "eliminated": b.eliminated,
                }
                for b in s.votes
            ],
            "runoff_candidates": list(s.candidates),
            "waiting_for": sorted(self.to_act(s)),
            "my_vote": mine,
            "ready": sorted(s.ready),
            "outcome": None,
        }
        if over:
            view["outcome"] = {
                "team": s.team.value if s.team else None,
                "winners": sorted(s.winners or ()),
                "reason": s.end_reason,
                "villager_word": s.villager_word,
                "spy_word": s.spy_word,
                "roles": [r.value for r in s.roles],
            }
        return Observation(game=self.id, seat=seat, phase=s.phase.value, view=view, events=visible(s.log, seat))

    def secrets(self, s: SpyState) -> tuple[Secret, ...]:
        if s.phase is Phase.OVER:
            return ()
        return (
            Secret(s.villager_word, frozenset(s.seats_with(Role.VILLAGER))),
            Secret(s.spy_word, frozenset(s.seats_with(Role.SPY))),
        )

    def deal_of(self, s: SpyState) -> dict[str, Any]:
        """The complete deal so far: the pair, the roles and every round's speaking order (players
        already out, whom the round skipped, listed last)."""
        orders = []
        for e in s.log:
            if e.kind == "round_started":
                spoke = list(e.data["order"])
                orders.append(spoke + [x for x in range(s.seats) if x not in spoke])
        return {
            "pair": [s.villager_word, s.spy_word],
            "spies": list(s.seats_with(Role.SPY)),
            "blank": list(s.seats_with(Role.MR_WHITE)),
            "order": orders,
        }

    def result(self, s: SpyState) -> Result | None:
        """The end of the game. ``details`` keys: team, reason, villager_word, spy_word,
        spies (seats), blank (Mr. White's seat or None), roles, rounds (played),
        eliminated (seats in order) and eliminated_rounds, votes_received ({seat: [votes in
        each round's main vote, None once out]}), rounds_survived ({seat: rounds taken part
        in}), white_guess, descriptions. Winners score 1, everyone else 0.
        """
        if s.phase is not Phase.OVER or s.winners is None or s.team is None:
            return None
        rounds = s.round
        out_round = {x: r for r, x in s.eliminated}
        # The paper's metrics: rounds survived (rounds a seat took part in) and votes
        # received in each round's main vote (None once the seat was out).
        received: dict[str, list[int | None]] = {}
        for x in range(s.seats):
            row: list[int | None] = []
            for r in range(1, rounds + 1):
                alive = x not in out_round or out_round[x] >= r
                main = [b for b in s.votes if b.round == r and b.stage == Phase.VOTE.value]
                row.append(main[0].counts()[x] if alive and main else None)
            received[str(x)] = row
        survived = {str(x): (out_round[x] if x in out_round else rounds) for x in range(s.seats)}
        whites = s.seats_with(Role.MR_WHITE)
        lead = _lead(s.team.value, [r.value for r in s.roles], s.winners)
        summary = f"{lead}: {s.end_reason}. Villagers had {s.villager_word!r}, spies had {s.spy_word!r}."
        details: dict[str, Any] = {
            "team": s.team.value,
            "reason": s.end_reason,
            "villager_word": s.villager_word,
            "spy_word": s.spy_word,
            "spies": list(s.seats_with(Role.SPY)),
            "blank": whites[0] if whites else None,
            "roles": [r.value for r in s.roles],
            "rounds": rounds,
            "eliminated": [x for _, x in s.eliminated],
            "eliminated_rounds": [r for r, _ in s.eliminated],
            "votes_received": received,
            "rounds_survived": survived,
            "white_guess": s.white_guess,
            "descriptions": [{"round": r, "seat": x, "text": t} for r, x, t in s.descriptions],
        }
        scores = {x: (1.0 if x in s.winners else 0.0) for x in range(s.seats)}
        details["deal"] = self.deal_of(s)  # exports carry the result: with the deal they replay without a seed
        return Result(winners=s.winners, summary=summary, scores=scores, details=details)

    # ---- words for people

    def text(self, e: Event, names: Sequence[str]) -> str:
        return fill_labels(self._sentence(e), names)

    def _sentence(self, e: Event) -> str:
        """The event in words, seats as ``seat_ref`` tokens."""
        d = e.data

        def n(x: object) -> str:
            return seat_ref(x) if isinstance(x, int) and x >= 0 else str(x)

        k = e.kind
        if k == "word":
            if d.get("blank"):
                return "You are Mr. White: you have no word. Blend in, and guess the villagers' word if voted out."
            return f"Your word is {d['word']}."
        if k == "game_started":
            extra = " and a Mr. White" if d.get("blank") else ""
            spies = d["spies"]
            return (
                f"Who-is-Spy begins with {d['seats']} players: {spies} {'spy' if spies == 1 else 'spies'}{extra} "
                f"{'hides' if spies == 1 and not extra else 'hide'} among the villagers "
                f"(at most {d['max_rounds']} rounds)."
            )
        if k == "round_started":
            return f"Round {d['round']} begins. Speaking order: {', '.join(n(x) for x in d['order'])}."
        if k == "described":
            return f"{n(d['seat'])} describes their word: \"{d['text']}\""
        if k == "discussion_started":
            return "Discussion time: talk it over, then say you are ready to vote."
        if k == "ready":
            return f"{n(d['seat'])} is ready to vote."
        if k == "vote_started":
            if d["stage"] == Phase.RUNOFF.value:
                return f"Run-off vote between {' and '.join(n(x) for x in d['candidates'])}."
            return f"Round {d['round']} vote: who is the spy?"
        if k == "vote_cast":
            if d["target"] is None:
                return "You abstained."
            return f"You voted for {n(d['target'])}."
        if k == "voted":
            return f"{n(d['voter'])} has voted."
        if k == "votes_revealed":
            parts = [
                f"{n(int(v))} for {n(t)}" if t is not None else f"{n(int(v))} abstained"
                for v, t in d["ballots"].items()
            ]
            return "The votes: " + "; ".join(parts) + "."
        if k == "tie":
            tied = human_list([n(x) for x in d["tied"]])
            return f"Tie between {tied}" + (": a run-off decides." if d["runoff"] else ".")
        if k == "no_elimination":
            return "Nobody received a vote; nobody is eliminated." if d["reason"] == "no votes" else "Still tied; nobody is eliminated this round."
        if k == "eliminated":
            return f"{n(d['seat'])} is voted out. They were {ROLE_NAMES[Role(d['role'])]}."
        if k == "white_guess_started":
            return f"{n(d['seat'])}, Mr. White, may now guess the villagers' word."
        if k == "white_guess":
            return f"You guessed \"{d['guess']}\"."
        if k == "white_guessed":
            if d["correct"]:
                return f"{n(d['seat'])} guessed the villagers' word: \"{d['guess']}\"!"
            return f"{n(d['seat'])} guessed wrong."
        if k == "game_over":
            lead = _lead(d["team"], d["roles"], d["winners"])
            roles = [Role(r) for r in d["roles"]]
            spies = ", ".join(seat_ref(i) for i, r in enumerate(roles) if r is Role.SPY)
            white = [seat_ref(i) for i, r in enumerate(roles) if r is Role.MR_WHITE]
            tail = f"; Mr. White was {white[0]}" if white else ""
            return (
                f"{lead}: {d['reason']}. The villagers' word was {d['villager_word']}, the spies' word was "
                f"{d['spy_word']}. Spies: {spies}{tail}."
            )
        return f"{k}: {dict(d)}"

    def rules(self, cfg: SpyConfig) -> str:
        spies = "1 spy" if cfg.variant is Variant.SPYGAME else (
            f"{cfg.spies} spies" if cfg.spies is not None else "1 spy (2 from 7 players, 3 from 11)"
        )
        white = (
            " One more player is Mr. White, who gets no word at all; if voted out, Mr. White may guess the "
            "villagers' word and wins alone if right."
            if cfg.blank
            else ""
        )
        rounds = f"{cfg.max_rounds} rounds" if cfg.max_rounds is not None else "as many rounds as players"
        tie = (
            "A tie leads to a run-off vote among the tied players; if that ties too, nobody is out this round."
            if cfg.tie_rule is TieRule.RUNOFF
            else "A tie eliminates nobody."
        )
        discussion = " After the descriptions you discuss freely, then vote." if cfg.discussion else ""
        end = (
            "The spy wins by not being voted out before only two players remain; the villagers win by voting the spy out."
            if cfg.variant is Variant.SPYGAME
            else "The villagers win when every spy"
            + (" and Mr. White" if cfg.blank else "")
            + f" is out. The spies win when they are no longer outnumbered by living villagers, or when {rounds} "
            "have passed with a spy still in."
        )
        return (
            f"Who is the spy? Most players (the villagers) share one secret word; {spies} got a similar but "
            f"different word. Nobody is told which side they are on: compare descriptions to find out.{white}\n\n"
            f"Each round every living player describes their word in at most {cfg.max_words} words, in a random "
            "order: never say your word, and never repeat a description already given."
            f"{discussion} Then everyone votes in secret for who they think is a spy. The votes are shown "
            f"together, and the player with the most votes is out; their role (not their word) is revealed. {tie}\n\n"
            f"{end}"
        )


GAME = SpyGame()
"""The registered engine."""


def _descriptor() -> GameDescriptor:
    from games.metrics import spy_metrics, spy_seats

    roles = (SeatRole.VILLAGER, SeatRole.SPY, SeatRole.MR_WHITE)
    return GameDescriptor(
        id=SpyGame.id,
        title="Who-is-Spy",
        blurb="describe your word; find the spy who holds a slightly different one",
        engine=GAME,
        seats=(MIN_SEATS, MAX_SEATS),
        variants=tuple(Variant),
        roles=roles,
        sides=(Side.VILLAGERS, Side.SPIES, Side.MR_WHITE),
        metrics=(
            Metric("rounds_survived", "rounds the seat survived", MetricScope.SEAT, roles, "survived"),
            Metric("votes_received", "votes the seat received in the rounds' main votes", MetricScope.SEAT, roles,
                   "votes"),
            Metric("voted_rounds", "main votes the seat took part in", MetricScope.SEAT, roles),
            Metric("eliminated", "1 when the seat was voted out", MetricScope.SEAT, roles),
            Metric("games", "games", MetricScope.GAMES),
            Metric("spy_game_win_rate", "games won by the spies", MetricScope.GAMES, (SeatRole.SPY,)),
            Metric("mean_rounds", "mean rounds per game", MetricScope.GAMES),
            Metric("spy", "spy seats", MetricScope.ROLE_BLOCK, (SeatRole.SPY,)),
            Metric("villager", "villager seats", MetricScope.ROLE_BLOCK, (SeatRole.VILLAGER,)),
            Metric("mr_white", "Mr. White seats", MetricScope.ROLE_BLOCK, (SeatRole.MR_WHITE,)),
            Metric("seats", "seats", MetricScope.GAMES, roles),
            Metric("win_rate", "win rate", MetricScope.GAMES, roles),
            Metric("rounds_survived", "rounds survived (mean)", MetricScope.GAMES, roles),
            Metric("votes_per_round", "votes received per round", MetricScope.GAMES, roles),
        ),
        read_seats=spy_seats,
        summarize=spy_metrics,
        clue_kinds=frozenset({"describe"}),
        sneak=SneakScoring.ON_REQUEST,
        menu=MenuEntry(order=2, seats=4),  # a spy game reads best with four or more
        aliases=("whoisspy", "who-is-spy", "undercover"),
    )


DESCRIPTOR = _descriptor()
"""What the rest of the system knows of Who-is-Spy (``games.catalog``)."""
