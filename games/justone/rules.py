"""Just One: a pure rule engine for the cooperative party game of one-word clues.

Rules as this engine plays them (``narration.rules_text`` says them to players)
-------------------------------------------------------------------------------
3 to 7 seats play together against the deck: a round of 13 cards (``cards``), each card one
secret word drawn from the word bank without repeats (or dealt). On each card one seat is the
guesser, the first drawn from the seed (or dealt), then the next seat in table order for each
card played. Everyone but the guesser learns the word privately.

1. Clues. Every other seat writes one clue of one word, all at the same time; a clue stays
   hidden until the last is in. Then, before the guesser sees them, clues are removed:
   - invalid: a clue that names the secret word or a form of it (``games.text.reveals_secret``:
     the word, a plural or other inflection, the word inside a compound, spelled apart);
   - identical: two or more clues that are the same word after normalisation (case, accents,
     look-alike letters, a plural: ``games.text.same_words``) are all removed.
   The clue-givers see which clues were removed and why; the guesser sees only which seats'
   clues were removed.
2. Guess. The guesser has one try: one word, or ``pass``. The word counts as found when it is
   the secret word (``games.text.same_words``: case, accents and a plural aside). A pass loses
   the card. A wrong guess loses the card and also the next card of the deck, discarded unseen;
   a wrong guess on the last card costs one found card instead. The card's word, its guess and
   every clue (the removed ones too) are then shown to everyone.

The round ends when the deck is empty. The score is the number of cards found; the table wins
together when it reaches ``target`` (7 by default). An absent guesser passes; an absent
clue-giver's clue has no neutral value, so the table seats an AI for it. Every draw comes from
``rng(seed, purpose)``, so a game replays exactly.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from games.base import (
    PUBLIC,
    Action,
    ActionSpec,
    Audience,
    Event,
    Observation,
    Result,
    Seat,
    Secret,
    Text,
    check_text,
    check_turn,
    rng,
    visible,
)
from games.engine import Engine, Setup
from games.justone.config import (
    CLUE_MAX_CHARS,
    GUESS_MAX_CHARS,
    GUESS_MAX_WORDS,
    MAX_SEATS,
    MIN_SEATS,
    PASS,
    JustOneConfig,
    Phase,
    Variant,
    check_seats,
    target,
    validate,
    word_bank,
)
from games.justone.narration import event_text, rules_text
from games.justone.state import CardRecord, Clue, JustOneState, Outcome, Why, deal_of, to_act
from games.justone.view import view_of
from games.text import fold, reveals_secret, same_words


def removals(word: str, clues: tuple[Clue, ...]) -> tuple[Clue, ...]:
    """The clues with their removal marked: invalid first (it names the word), then identical
    (every clue that is the same word as another valid one)."""
    invalid = [reveals_secret(c.text, word) for c in clues]
    out = []
    for i, c in enumerate(clues):
        if invalid[i]:
            out.append(dataclasses.replace(c, removed=Why.INVALID))
        elif any(j != i and not invalid[j] and same_words(c.text, o.text) for j, o in enumerate(clues)):
            out.append(dataclasses.replace(c, removed=Why.DUPLICATE))
        else:
            out.append(c)
    return tuple(out)


class JustOneGame(Engine[JustOneState, JustOneConfig]):
    """The Just One rules; stateless, every method a pure function of its arguments."""

    id: ClassVar[str] = "justone"
    variants: ClassVar[tuple[str, ...]] = tuple(Variant)

    def __init__(self) -> None:
        super().__init__(Setup(JustOneConfig, validate, (MIN_SEATS, MAX_SEATS), "Just One", event_text, rules_text))

    # ------------------------------------------------------------------ the deal

    def new(self, cfg: JustOneConfig, seats: int, seed: int) -> tuple[JustOneState, tuple[Event, ...]]:
        self.check_seats(cfg, seats)
        check_seats(cfg, seats)
        dealt = cfg.deal
        if dealt is not None and dealt.words is not None:
            words = dealt.words
        else:
            words = tuple(rng(seed, "words").sample(word_bank(cfg), cfg.cards))
        first = dealt.first if dealt is not None and dealt.first is not None else rng(seed, "first").randrange(seats)
        s = JustOneState(config=cfg, seats=seats, seed=seed, words=words, first=first, phase=Phase.CLUES, card=0,
                         guesser=first, clues=(), history=(), penalty=0, log=())
        events = [Event("game_started", {"cards": cfg.cards, "target": target(cfg), "seats": seats}, PUBLIC)]
        events += self._card_events(s)
        return dataclasses.replace(s, log=tuple(events)), tuple(events)

    @staticmethod
    def _card_events(s: JustOneState) -> list[Event]:
        return [Event("card", {"card": s.card + 1, "cards": s.config.cards, "guesser": s.guesser}, PUBLIC),
                Event("word", {"card": s.card + 1, "word": s.word}, Audience.of(s.givers))]

    # ------------------------------------------------------------------ who acts, and how

    def to_act(self, s: JustOneState) -> frozenset[Seat]:
        return to_act(s)

    def legal(self, s: JustOneState, seat: Seat) -> ActionSpec | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.CLUES:
            return Text("clue", f"Card {s.card + 1}: write a one-word clue for the secret word. Clues that are the "
                                "same as another player's, or name the word, are removed before the guesser sees them.",
                        ("Clue",), max_words=1, max_chars=CLUE_MAX_CHARS)
        return Text("guess", f"Card {s.card + 1}: guess the secret word from the clues (one try), or write "
                             f"'{PASS}' to skip the card.", ("Your guess",), max_words=GUESS_MAX_WORDS,
                    max_chars=GUESS_MAX_CHARS)

    def timeout_action(self, s: JustOneState, seat: Seat) -> Action | None:
        if seat not in self.to_act(s) or s.phase is not Phase.GUESS:
            return None  # a clue has no neutral value: an AI writes it
        return Action.say("guess", PASS)

    # ------------------------------------------------------------------ moves

    def apply(self, s: JustOneState, seat: Seat, a: Action) -> tuple[JustOneState, tuple[Event, ...]]:
        not_yours = "You have already written your clue." if s.phase is Phase.CLUES else "It is not your turn."
        check_turn(over=s.phase is Phase.OVER, seats=s.seats, seat=seat, acting=self.to_act(s), not_yours=not_yours)
        spec = self.legal(s, seat)
        assert isinstance(spec, Text)
        (text,) = check_text(spec, a)
        if s.phase is Phase.CLUES:
            return self._clue(s, seat, text)
        return self._guess(s, text)

    def _clue(self, s: JustOneState, seat: Seat, text: str) -> tuple[JustOneState, tuple[Event, ...]]:
        card = s.card + 1
        events = [Event("clue_written", {"card": card, "seat": seat, "clue": text}, Audience.of(seat)),
                  Event("clue_in", {"card": card, "seat": seat}, PUBLIC)]
        s = dataclasses.replace(s, clues=(*s.clues, Clue(seat, text)))
        if self.to_act(s):
            return self._step(s, events)
        clues = removals(s.word, s.clues)
        events.append(Event("clues_checked", {"card": card, "clues": [c.to_json() for c in clues]},
                            Audience.of(s.givers)))
        events.append(Event("clues_shown", {
            "card": card, "guesser": s.guesser,
            "clues": [{"seat": c.seat, "clue": c.text} for c in clues if c.removed is None],
            "removed": [c.seat for c in clues if c.removed is not None],
        }, PUBLIC))
        return self._step(dataclasses.replace(s, clues=clues, phase=Phase.GUESS), events)

    def _guess(self, s: JustOneState, text: str) -> tuple[JustOneState, tuple[Event, ...]]:
        passed = fold(text).strip() == PASS
        found = not passed and same_words(text, s.word)
        outcome = Outcome.FOUND if found else Outcome.PASSED if passed else Outcome.WRONG
        record = CardRecord(s.card + 1, s.word, s.guesser, s.clues, None if passed else text, outcome)
        events = [Event("guessed", {**record.to_json(), "guess": None if passed else text}, PUBLIC)]
        history, nxt, penalty = (*s.history, record), s.card + 1, s.penalty
        if outcome is Outcome.WRONG:
            if nxt < len(s.words):
                history = (*history, CardRecord(nxt + 1, s.words[nxt], None, (), None, Outcome.DISCARDED))
                events.append(Event("discarded", {"card": nxt + 1}, PUBLIC))
                nxt += 1
            else:
                penalty += 1
                events.append(Event("penalty", {"card": s.card + 1}, PUBLIC))
        s = dataclasses.replace(s, history=history, penalty=penalty, clues=())
        if nxt >= len(s.words):
            s = dataclasses.replace(s, phase=Phase.OVER)
            events.append(Event("game_over", {"score": s.score, "cards": s.config.cards, "target": target(s.config),
                                              "won": s.score >= target(s.config)}, PUBLIC))
            return self._step(s, events)
        s = dataclasses.replace(s, phase=Phase.CLUES, card=nxt, guesser=(s.first + s.played) % s.seats)
        return self._step(s, events + self._card_events(s))

    @staticmethod
    def _step(s: JustOneState, events: list[Event]) -> tuple[JustOneState, tuple[Event, ...]]:
        return dataclasses.replace(s, log=(*s.log, *events)), tuple(events)

    # ------------------------------------------------------------------ what seats know

    def observe(self, s: JustOneState, seat: Seat) -> Observation:
        return Observation(game=self.id, seat=seat, phase=s.phase.value, view=view_of(s, seat, self.to_act(s)),
                           events=visible(s.log, seat))

    def secrets(self, s: JustOneState) -> tuple[Secret, ...]:
        """The word of the card in play, known by its clue-givers."""
        if s.phase is Phase.OVER:
            return ()
        return (Secret(s.word, frozenset(s.givers)),)

    def result(self, s: JustOneState) -> Result | None:
        if s.phase is not Phase.OVER:
            return None
        won = s.score >= target(s.config)
        winners = frozenset(range(s.seats)) if won else frozenset()
        summary = (f"The table found {s.score} of {s.config.cards} cards" +
                   (f" and reached its target of {target(s.config)}." if won else
                    f", short of its target of {target(s.config)}."))
        details = {
            "variant": s.config.variant.value, "score": s.score, "cards": s.config.cards,
            "target": target(s.config), "won": won, "penalty": s.penalty,
            "played": [r.to_json() for r in s.history], "deal": self.deal_of(s),
        }
        return Result(winners=winners, summary=summary, scores={i: float(s.score) for i in range(s.seats)},
                      details=details)

    def deal_of(self, s: JustOneState) -> dict[str, object]:
        return deal_of(s)


GAME = JustOneGame()
"""The registered engine."""
