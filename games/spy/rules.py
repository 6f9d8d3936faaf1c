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
from typing import Any, ClassVar

from games import decks, vote
from games.base import (
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
    normalize,
    ready_choice,
    rng,
)
from games.engine import Engine, Setup
from games.spy.config import (
    MAX_SEATS,
    MIN_SEATS,
    Phase,
    Role,
    SpyConfig,
    SpyDeal,
    Team,
    Variant,
    check_deal_seats,
    deal_roles,
    description_chars,
    seats_ok,
    spies_for,
    validate,
)
from games.spy.narration import event_text, rules_text
from games.spy.state import SpyState, deal_of, result, to_act
from games.spy.transitions import after_elimination, emit, finish, guess_right, resolve_vote, start_round, start_vote
from games.spy.view import observe_seat
from games.text import reveals_secret
from games.vote import ABSTAIN

# --------------------------------------------------------------------------- the game


def _seat_range(cfg: SpyConfig) -> tuple[int, int]:
    ok = [n for n in range(MIN_SEATS, MAX_SEATS + 1) if seats_ok(cfg, n)]
    return (ok[0], ok[-1])


class SpyGame(Engine[SpyState, SpyConfig]):
    """Who-is-Spy / Undercover. Stateless: every method is a function of its arguments."""

    id: ClassVar[str] = "spy"
    variants: ClassVar[tuple[str, ...]] = tuple(Variant)

    def __init__(self) -> None:
        super().__init__(Setup(SpyConfig, validate, _seat_range, "Who-is-Spy", event_text, rules_text))

    # ---- deal

    def new(self, cfg: SpyConfig, seats: int, seed: int) -> tuple[SpyState, tuple[Event, ...]]:
        self.check_seats(cfg, seats)
        if not seats_ok(cfg, seats):  # a span with a gap: some counts inside it cannot seat these spies
            raise ConfigError(f"this Who-is-Spy setup cannot be played with {seats} players")
        deal = cfg.deal or SpyDeal()
        check_deal_seats(deal, cfg, seats)
        if deal.pair is not None:
            villager_word, spy_word = deal.pair
        else:
            deck = cfg.deck if cfg.deck is not None else decks.pairs()
            first, second = rng(seed, "pair").choice(deck)
            villager_word, spy_word = (first, second) if rng(seed, "sides").random() < 0.5 else (second, first)
        roles = deal_roles(cfg, deal, seats, seed)
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
        s = start_round(s, 1, events)
        s = emit(s, events)
        return s, tuple(events)

    # ---- turn structure

    def to_act(self, s: SpyState) -> frozenset[Seat]:
        return to_act(s)


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
                    s = start_vote(s, vote.first(s.living, s.living), events)
        elif s.phase is Phase.DISCUSS:
            assert isinstance(spec, Choice)
            check_choice(spec, a)
            events.append(Event("ready", {"round": s.round, "seat": seat}))
            s = dataclasses.replace(s, ready=s.ready | {seat})
            if not self.to_act(s):
                s = start_vote(s, vote.first(s.living, s.living), events)
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
                s = resolve_vote(s, events)
        elif s.phase is Phase.WHITE_GUESS:
            assert isinstance(spec, Text)
            (guess,) = check_text(spec, a)
            s = dataclasses.replace(s, white_guess=guess)
            events.append(Event("white_guess", {"seat": seat, "guess": guess}, Audience.of(seat)))
            if guess_right(guess, s.villager_word):
                events.append(Event("white_guessed", {"seat": seat, "correct": True, "guess": guess}))
                s = finish(s, Team.MR_WHITE, frozenset({seat}), "Mr. White guessed the villagers' word", events)
            else:
                # A wrong guess stays private: announcing it could name the spies' word.
                events.append(Event("white_guessed", {"seat": seat, "correct": False}))
                s = after_elimination(s, events)
        s = emit(s, events)
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

    def secrets(self, s: SpyState) -> tuple[Secret, ...]:
        if s.phase is Phase.OVER:
            return ()
        return (
            Secret(s.villager_word, frozenset(s.seats_with(Role.VILLAGER))),
            Secret(s.spy_word, frozenset(s.seats_with(Role.SPY))),
        )


    def observe(self, s: SpyState, seat: Seat) -> Observation:
        """What ``seat`` may know (``games.spy.view``)."""
        return observe_seat(self.id, s, seat)

    def deal_of(self, s: SpyState) -> dict[str, Any]:
        """The complete deal so far: the pair, the roles and every round's speaking order (players
        already out, whom the round skipped, listed last)."""
        return deal_of(s)

    def result(self, s: SpyState) -> Result | None:
        """The end of the game (``games.spy.state.result`` lists its details). Winners score 1."""
        return result(s)



GAME = SpyGame()
"""The registered engine."""
