"""Spymasters: a pure rule engine for a team word game of clues and a hidden key.

Rules as this engine plays them (``narration.rules`` says them to players)
--------------------------------------------------------------------------
4 to 8 seats in two teams that sit alternately (even seats red, odd seats blue). Each team
has one spymaster (drawn from the seed among its seats, or dealt); the others are guessers.
25 words from the word bank form a 5x5 board; the key (drawn or dealt) gives 9 words to the
starting team (drawn or dealt), 8 to the other, 7 bystanders and 1 assassin. Only the two
spymasters see the key until the game ends.

A turn: the spymaster writes a clue (one word; not a number; not a word still on the board,
a form of one, a word containing one or a part of one: ``games.text.reveals_secret`` both
ways with compounds), then picks a number from 1 to the team's words still hidden. The
guessers then guess one word at a time, at most number + 1 times, and may stop after their
first guess. Their own word: they go on (their last word wins the game). A bystander ends
the turn. The other team's word counts for that team and ends the turn (it may win them
the game). The assassin ends the game: the guessing team loses.

Several guessers (``guessing="vote"``, the default): every guess is a simultaneous vote of
the team's guessers, hidden until the last is in; the most-voted pick is played; a tie goes
to the pick of the team's first (lowest-seated) guesser when it is among the tied, else to
the tied word first on the board ("stop" last). An absent guesser abstains; when nobody
votes for a word the team stops. ``guessing="captain"``: the first guesser decides alone.

Timeouts: an absent guesser abstains (alone, that ends the turn); an absent spymaster's
number is 1; a clue has no neutral value, so an AI writes it (the table's takeover).
Every draw comes from ``rng(seed, purpose)``, so a game replays exactly.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

from games.base import (
    PUBLIC,
    Action,
    ActionSpec,
    Audience,
    Board,
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
    rng,
    text_values,
    visible,
)
from games.engine import Engine, Setup
from games.spymasters import narration
from games.spymasters.config import (
    BOARD_SIZE,
    CLUE_MAX_CHARS,
    MAX_SEATS,
    MIN_SEATS,
    TEAMS,
    Card,
    SpymastersConfig,
    Team,
    Variant,
    check_seats,
    key_counts,
    seats_of,
    validate,
    word_bank,
)
from games.spymasters.metrics import clue_metrics
from games.spymasters.state import (
    PASS,
    STOP,
    ClueRecord,
    Ending,
    Guess,
    Phase,
    SpymastersState,
    TurnEnd,
    guessers,
    guesses_left,
    hidden,
    remaining,
    spymaster,
    voters,
    words_by_card,
)
from games.spymasters.view import board_of, view_of
from games.text import has_number, reveals_secret

CLUE_PROBLEM = "Your clue cannot be a word on the board, a form of one, or contain one."


def clue_problem(clue: str, board: Sequence[str]) -> str | None:
    """Why a clue word is refused on a board of still hidden words, or None. Never names a word."""
    if has_number(clue):
        return "A clue is a word, not a number."
    if not all(ch.isalnum() or ch.isspace() or ch in "'’" for ch in clue):
        return "A clue is one word, letters only."
    for word in board:
        # Both ways: "snowman" holds the board's "snow"; "rock" is a part of the board's "rocket".
        if reveals_secret(clue, word) or reveals_secret(word, clue):
            return CLUE_PROBLEM
    return None


def _chosen(votes: Sequence[tuple[Seat, str]], order: Sequence[Seat], words: Sequence[str]) -> str:
    """The pick a complete vote plays: the most votes; a tie goes to the first guesser's pick if
    tied, else the tied word first on the board (stop last). No votes for anything: stop."""
    counts = Counter(pick for _, pick in votes if pick != PASS)
    if not counts:
        return STOP
    top = max(counts.values())
    tied = [p for p, n in counts.items() if n == top]
    if len(tied) == 1:
        return tied[0]
    captain = dict(votes).get(order[0])
    if captain in tied:
        return captain
    return min(tied, key=lambda p: words.index(p) if p in words else len(words))


class SpymastersGame(Engine[SpymastersState, SpymastersConfig]):
    """The Spymasters rules; stateless, every method a pure function of its arguments."""

    id: ClassVar[str] = "spymasters"
    variants: ClassVar[tuple[str, ...]] = tuple(Variant)

    def __init__(self) -> None:
        super().__init__(Setup(SpymastersConfig, validate, (MIN_SEATS, MAX_SEATS), "Spymasters",
                               narration.event_text, narration.rules))

    # ------------------------------------------------------------------ the deal

    def new(self, cfg: SpymastersConfig, seats: int, seed: int) -> tuple[SpymastersState, tuple[Event, ...]]:
        self.check_seats(cfg, seats)
        check_seats(cfg, seats)
        dealt = cfg.deal
        words = dealt.words if dealt is not None and dealt.words is not None else tuple(
            rng(seed, "words").sample(word_bank(cfg), BOARD_SIZE))
        if dealt is not None and dealt.key is not None:
            key, starting = dealt.key, dealt.starting or Team.RED
        else:
            starting = dealt.starting if dealt is not None and dealt.starting is not None else rng(seed, "starting").choice(TEAMS)
            cards = [card for card, n in key_counts(starting).items() for _ in range(n)]
            rng(seed, "key").shuffle(cards)
            key = tuple(cards)
        if dealt is not None and dealt.spymasters is not None:
            masters = dealt.spymasters
        else:
            red, blue = (rng(seed, "spymaster", t.value).choice(seats_of(t, seats)) for t in TEAMS)
            masters = (red, blue)
        s = SpymastersState(
            config=cfg, seats=seats, seed=seed, words=words, key=key, starting=starting, spymasters=masters,
            phase=Phase.CLUE, turn=starting, turn_no=1, revealed=(), pending=None, clue=None, votes=(),
            history=(), winner=None, ending=None, log=(),
        )
        teams = {t.value: {"spymaster": spymaster(s, t), "guessers": list(guessers(s, t))} for t in TEAMS}
        events = (
            Event("board", {"starting": starting.value, "teams": teams, "words": list(words)}, PUBLIC),
            Event("key", {"words": list(words), "key": [c.value for c in key]}, Audience.of(masters)),
            self._turn_event(s),
        )
        return dataclasses.replace(s, log=events), events

    @staticmethod
    def _turn_event(s: SpymastersState) -> Event:
        return Event("turn", {"turn": s.turn_no, "team": s.turn.value, "spymaster": spymaster(s, s.turn)}, PUBLIC)

    # ------------------------------------------------------------------ who acts, and how

    def to_act(self, s: SpymastersState) -> frozenset[Seat]:
        if s.phase in (Phase.CLUE, Phase.NUMBER):
            return frozenset({spymaster(s, s.turn)})
        if s.phase is Phase.GUESS:
            done = {v for v, _ in s.votes}
            return frozenset(v for v in voters(s) if v not in done)
        return frozenset()

    def legal(self, s: SpymastersState, seat: Seat) -> ActionSpec | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.CLUE:
            return Text("clue", "Give your team a one-word clue for some of your words (you say how many next).",
                        ("Clue",), max_words=1, max_chars=CLUE_MAX_CHARS)
        if s.phase is Phase.NUMBER:
            options = tuple(Option(str(n), str(n)) for n in range(1, remaining(s, s.turn) + 1))
            return Choice("number", f"How many of your words does {s.pending} point to?", options)
        assert s.clue is not None
        options = tuple(Option(s.words[i], s.words[i]) for i in hidden(s))
        if s.clue.guesses:
            options = (*options, Option(STOP, "Stop guessing"))
        left = guesses_left(s)
        return Choice("guess", f"Clue: {s.clue.clue}, {s.clue.number}. Pick a word "
                               f"({left} guess{'es' if left != 1 else ''} left).", options)

    def timeout_action(self, s: SpymastersState, seat: Seat) -> Action | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.NUMBER:
            return Action.choose("number", "1")
        if s.phase is Phase.GUESS:
            return Action.choose("guess", PASS)
        return None  # a clue has no neutral value: an AI writes it

    # ------------------------------------------------------------------ moves

    def apply(self, s: SpymastersState, seat: Seat, a: Action) -> tuple[SpymastersState, tuple[Event, ...]]:
        not_yours = "You have already voted on this guess." if s.phase is Phase.GUESS else "It is not your turn."
        check_turn(over=s.phase is Phase.OVER, seats=s.seats, seat=seat, acting=self.to_act(s), not_yours=not_yours)
        spec = self.legal(s, seat)
        assert spec is not None
        if s.phase is Phase.CLUE:
            assert isinstance(spec, Text)
            # The board is checked before the limits: "ice-cream" on a board with "ice" is refused
            # for the board, the more useful reason, rather than for being two words.
            board = [s.words[i] for i in hidden(s)]
            for raw in text_values(spec, a):
                problem = clue_problem(raw, board)
                if problem:
                    raise IllegalAction(problem)
            (clue,) = check_text(spec, a)
            # The clue stays the spymaster's until it has its number (then the table hears both).
            written = Event("clue_written", {"team": s.turn.value, "seat": seat, "clue": clue}, Audience.of(seat))
            return self._step(s, [written], phase=Phase.NUMBER, pending=clue)
        assert isinstance(spec, Choice)
        if s.phase is Phase.NUMBER:
            return self._clue(s, seat, int(check_choice(spec, a)))
        pick = PASS if a == Action.choose("guess", PASS) else check_choice(spec, a)
        return self._vote(s, seat, pick)

    def _clue(self, s: SpymastersState, seat: Seat, number: int) -> tuple[SpymastersState, tuple[Event, ...]]:
        assert s.pending is not None
        clue = ClueRecord(turn=s.turn_no, team=s.turn, spymaster=seat, clue=s.pending, number=number, hidden=hidden(s))
        event = Event("clue", {"turn": s.turn_no, "team": s.turn.value, "seat": seat, "clue": clue.clue,
                               "number": number}, PUBLIC)
        return self._step(s, [event], phase=Phase.GUESS, pending=None, clue=clue, votes=())

    def _vote(self, s: SpymastersState, seat: Seat, pick: str) -> tuple[SpymastersState, tuple[Event, ...]]:
        votes = (*s.votes, (seat, pick))
        order = voters(s)
        events: list[Event] = []
        if len(order) > 1:
            events += [Event("guess_vote", {"team": s.turn.value, "seat": seat, "pick": pick}, Audience.of(seat)),
                       Event("voted", {"team": s.turn.value, "seat": seat}, PUBLIC)]
            if len(votes) < len(order):
                return self._step(s, events, votes=votes)
        chosen = _chosen(votes, order, s.words)
        if len(order) > 1:
            events.append(Event("votes", {"team": s.turn.value, "votes": [{"seat": v, "pick": p} for v, p in votes],
                                          "chosen": chosen}, PUBLIC))
        s = dataclasses.replace(s, votes=())
        if chosen in (STOP, PASS):
            return self._end_turn(s, events, TurnEnd.STOPPED)
        return self._reveal(s, events, s.words.index(chosen), votes if len(order) > 1 else ())

    def _reveal(self, s: SpymastersState, events: list[Event], index: int,
                votes: tuple[tuple[Seat, str], ...]) -> tuple[SpymastersState, tuple[Event, ...]]:
        assert s.clue is not None
        card, team = s.key[index], s.turn
        guess = Guess(team, s.words[index], card, votes)
        clue = dataclasses.replace(s.clue, guesses=(*s.clue.guesses, guess))
        s = dataclasses.replace(s, revealed=(*s.revealed, index), clue=clue)
        events.append(Event("guess", {"team": team.value, "seats": list(voters(s)), "word": guess.word,
                                      "card": card.value}, PUBLIC))
        if card is Card.ASSASSIN:
            return self._game_over(s, events, team.other, Ending.ASSASSIN, TurnEnd.ASSASSIN)
        for t in (team, team.other):
            if remaining(s, t) == 0:
                return self._game_over(s, events, t, Ending.ALL_FOUND, TurnEnd.FINISHED)
        if card is Card.of(team):
            if guesses_left(s) > 0:
                return self._step(s, events)
            return self._end_turn(s, events, TurnEnd.LIMIT)
        return self._end_turn(s, events, TurnEnd.BYSTANDER if card is Card.BYSTANDER else TurnEnd.OPPONENT)

    def _end_turn(self, s: SpymastersState, events: list[Event], why: TurnEnd) -> tuple[SpymastersState, tuple[Event, ...]]:
        assert s.clue is not None
        done = dataclasses.replace(s.clue, ended=why)
        events.append(Event("turn_end", {"team": s.turn.value, "reason": why.value, "found": done.found,
                                         "number": done.number}, PUBLIC))
        s = dataclasses.replace(s, phase=Phase.CLUE, turn=s.turn.other, turn_no=s.turn_no + 1, clue=None,
                                history=(*s.history, done))
        events.append(self._turn_event(s))
        return self._step(s, events)

    def _game_over(self, s: SpymastersState, events: list[Event], winner: Team, ending: Ending,
                   why: TurnEnd) -> tuple[SpymastersState, tuple[Event, ...]]:
        assert s.clue is not None
        done = dataclasses.replace(s.clue, ended=why)
        events.append(Event("game_over", {"winner": winner.value, "ending": ending.value, "words": list(s.words),
                                          "key": [c.value for c in s.key]}, PUBLIC))
        return self._step(s, events, phase=Phase.OVER, clue=None, history=(*s.history, done), winner=winner,
                          ending=ending)

    @staticmethod
    def _step(s: SpymastersState, events: list[Event], **changes: Any) -> tuple[SpymastersState, tuple[Event, ...]]:
        return dataclasses.replace(s, log=(*s.log, *events), **changes), tuple(events)

    # ------------------------------------------------------------------ what seats know

    def observe(self, s: SpymastersState, seat: Seat) -> Observation:
        view = view_of(s, seat, self.to_act(s))
        return Observation(game=self.id, seat=seat, phase=s.phase.value, view=view, events=visible(s.log, seat))

    def board(self, s: SpymastersState, seat: Seat) -> Board:
        return board_of(view_of(s, seat, self.to_act(s)))

    def secrets(self, s: SpymastersState) -> tuple[Secret, ...]:
        """The key, known by the two spymasters: every card in board order, as one value ("red
        blue bystander ..."). The words themselves are public: the key hides among the board.
        (A secret per hidden word would make the shared leak suite check 26 values at every step;
        the rule tests check every hidden card of every guesser's view instead.)"""
        if s.phase is Phase.OVER:
            return ()
        return (Secret(" ".join(c.value for c in s.key), frozenset(s.spymasters), among=tuple(s.words)),)

    def result(self, s: SpymastersState) -> Result | None:
        if s.phase is not Phase.OVER or s.winner is None or s.ending is None:
            return None
        winners = frozenset(seats_of(s.winner, s.seats))
        if s.ending is Ending.ASSASSIN:
            summary = f"{s.winner.other.value.capitalize()} found the assassin; {s.winner.value} wins."
        else:
            summary = f"Every {s.winner.value} word is found; {s.winner.value} wins."
        groups = words_by_card(s.words, s.key)
        instances = [
            {
                "turn": c.turn, "team": c.team.value, "seat": c.spymaster, "clue": c.clue, "number": c.number,
                "board": [s.words[i] for i in c.hidden],
                "team_words": [s.words[i] for i in c.hidden if s.key[i] is Card.of(c.team)],
                "opponent_words": [s.words[i] for i in c.hidden if s.key[i] is Card.of(c.team.other)],
                "bystanders": [s.words[i] for i in c.hidden if s.key[i] is Card.BYSTANDER],
                "assassin": [s.words[i] for i in c.hidden if s.key[i] is Card.ASSASSIN],
                "guesses": [g.word for g in c.guesses], "found": c.found,
            }
            for c in s.history
        ]
        details: dict[str, Any] = {
            "variant": s.config.variant.value,
            "guessing": s.config.guessing.value,
            "winner": s.winner.value,
            "ending": s.ending.value,
            "starting": s.starting.value,
            "spymasters": {t.value: spymaster(s, t) for t in TEAMS},
            "teams": {t.value: list(seats_of(t, s.seats)) for t in TEAMS},
            "words": list(s.words),
            "key": [c.value for c in s.key],
            "cards": {c.value: ws for c, ws in groups.items()},
            "clues": [c.to_json() for c in s.history],
            "clue_instances": instances,
            "metrics": clue_metrics(s.history, s.ending, {t: remaining(s, t) for t in TEAMS}),
            "deal": self.deal_of(s),
        }
        return Result(winners=winners, summary=summary,
                      scores={i: 1.0 if i in winners else 0.0 for i in range(s.seats)}, details=details)

    def deal_of(self, s: SpymastersState) -> dict[str, Any]:
        return {"words": list(s.words), "key": [c.value for c in s.key], "starting": s.starting.value,
                "spymasters": list(s.spymasters)}



GAME = SpymastersGame()
