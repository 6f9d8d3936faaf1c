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

from typing import Any, ClassVar

from games import vote
from games.base import (
    READY,
    Action,
    ActionSpec,
    Choice,
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
    ready_choice,
    text_values,
)
from games.chameleon.config import CLUE_MAX_CHARS, MAX_SEATS, MIN_SEATS, ChameleonConfig, Phase, Variant, validate, with_defaults
from games.chameleon.narration import event_text, rules_text
from games.chameleon.state import ChameleonState, ballot_kind, deal_of, result, to_act
from games.chameleon.transitions import cast_vote, check_deal, deal_round, give_clue, mark_ready, name_secret
from games.chameleon.view import observe_seat
from games.engine import Engine, Setup
from games.text import reveals_secret
from games.vote import ABSTAIN

# --------------------------------------------------------------------------- the game


class ChameleonGame(Engine[ChameleonState, ChameleonConfig]):
    """The Chameleon rules; stateless, every method a pure function of its arguments.

    ``sneak`` defaults to 12 words per card, ``classic`` to 16 (``config.with_defaults``)."""

    id: ClassVar[str] = "chameleon"
    variants: ClassVar[tuple[str, ...]] = tuple(Variant)

    def __init__(self) -> None:
        super().__init__(Setup(ChameleonConfig, validate, (MIN_SEATS, MAX_SEATS), "The Chameleon", event_text,
                               rules_text, defaults=with_defaults))

    # ------------------------------------------------------------------ flow

    def new(self, cfg: ChameleonConfig, seats: int, seed: int) -> tuple[ChameleonState, tuple[Event, ...]]:
        self.check_seats(cfg, seats)
        check_deal(cfg, seats, seed)
        return deal_round(cfg, seats, seed, 1, (), (0,) * seats, (), ())

    def to_act(self, s: ChameleonState) -> frozenset[Seat]:
        return to_act(s)

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
            options = ballot.options(seat, s.seed, "vote-order", s.round, ballot_kind(ballot).value, seat)
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
            if seat != s.chameleon and any(reveals_secret(t, s.secret) for t in text_values(spec, a)):
                raise IllegalAction("Your clue cannot be the secret word or contain it.")
            return give_clue(s, seat, check_text(spec, a)[0])
        if s.phase is Phase.DISCUSSION:
            assert isinstance(spec, Choice)
            check_choice(spec, a)
            return mark_ready(s, seat)
        if s.phase in (Phase.VOTE, Phase.RUNOFF):
            assert isinstance(spec, Choice)
            return cast_vote(s, seat, vote.target(spec, a))
        assert isinstance(spec, Choice)
        return name_secret(s, check_choice(spec, a))

    # ------------------------------------------------------------------ information

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

    def observe(self, s: ChameleonState, seat: Seat) -> Observation:
        """What one seat may know (``games.chameleon.view``)."""
        return observe_seat(self.id, s, seat)

    def result(self, s: ChameleonState) -> Result | None:
        return result(s)

    def deal_of(self, s: ChameleonState) -> dict[str, Any] | list[dict[str, Any]]:
        """The complete deal so far: each round's card, secret, chameleon and first speaker
        (one mapping for a single game, a list for a match)."""
        return deal_of(s)


GAME = ChameleonGame()
"""The registered engine."""
