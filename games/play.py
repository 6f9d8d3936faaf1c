"""Random play and transcripts: pure helpers behind ``hushtable sim``, golden tests and benchmarks.

``random_turns`` plays a game turn by turn from a dealt state and hands each turn out as it is
played, so a caller can log it (awaiting its store) or stop early; ``write`` lets a caller choose
some seats' texts (a member writing their own words) while the rest stay random. ``play_random``
is the whole game at once.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from games.base import Action, Choice, Event, Game, IllegalAction, Result, Seat, Text, rng
from games.labels import default_names

# Neutral filler for random text: common words unlikely to be anyone's secret.
FILLER: tuple[str, ...] = (
    "bright", "quiet", "round", "heavy", "soft", "tall", "quick", "warm", "old", "sharp",
    "gentle", "loud", "green", "early", "distant", "hollow", "simple", "broken", "golden", "narrow",
    "shiny", "slow", "sweet", "wild", "smooth", "tiny", "ancient", "busy", "calm", "deep",
)


def random_text(spec: Text, r: random.Random, vocabulary: Sequence[str] = FILLER) -> Action:
    texts = []
    for _ in spec.fields:
        n = r.randint(1, max(1, min(spec.max_words, 3)))
        words: list[str] = []
        for _ in range(n):
            w = r.choice(vocabulary)
            if len(" ".join([*words, w])) <= spec.max_chars:
                words.append(w)
        texts.append(" ".join(words) or vocabulary[0][: spec.max_chars])
    return Action(spec.kind, tuple(texts))


def random_action(spec: Choice | Text, r: random.Random, vocabulary: Sequence[str] = FILLER) -> Action:
    if isinstance(spec, Choice):
        return Action.choose(spec.kind, r.choice(spec.options).id)
    return random_text(spec, r, vocabulary)


@dataclass(frozen=True)
class Playthrough:
    state: Any
    actions: tuple[tuple[Seat, Action], ...]
    events: tuple[Event, ...]
    result: Result | None


# A seat's text chosen by the caller: (seat, the text asked for, the turn's random source, step,
# attempt) -> the action to try, or None for random text. ``attempt`` counts the tries of this
# turn, so a chooser can offer another text after the rules refused one.
TextWriter = Callable[[Seat, Text, random.Random, int, int], Action | None]


@dataclass(frozen=True)
class Turn:
    """One turn played: who acted, what, the events it made and the state after it."""

    step: int
    seat: Seat
    action: Action
    events: tuple[Event, ...]
    state: Any


def random_turns(
    game: Game,
    state: Any,
    seed: int,
    *,
    vocabulary: Sequence[str] = FILLER,
    max_steps: int = 5000,
    tries: int = 60,
    salt: str = "random-player",
    write: TextWriter | None = None,
) -> Iterator[Turn]:
    """Play on from ``state`` with uniformly random legal-looking moves, all drawn from ``seed`` and
    ``salt``, one ``Turn`` at a time until the game ends (RuntimeError after ``max_steps``).

    Random text can break a rule (a repeat, a secret word); the player then tries again, and
    after ``tries`` failures takes the rules' timeout action. ``write`` chooses texts for the
    seats it wants (None: random text)."""
    for step in range(max_steps):
        acting = sorted(game.to_act(state))
        if not acting:
            return
        r = rng(seed, salt, step)
        seat = r.choice(acting)
        spec = game.legal(state, seat)
        if spec is None:
            raise RuntimeError(f"{game.id}: seat {seat} is to act but has no legal action")
        for attempt in range(tries):
            chosen = write(seat, spec, r, step, attempt) if write is not None and isinstance(spec, Text) else None
            action = chosen if chosen is not None else random_action(spec, r, vocabulary)
            try:
                state, evs = game.apply(state, seat, action)
                break
            except IllegalAction:
                continue
        else:
            fallback = game.timeout_action(state, seat)
            if fallback is None:
                raise RuntimeError(f"{game.id}: no legal random action found for seat {seat}")
            action = fallback
            state, evs = game.apply(state, seat, action)
        yield Turn(step, seat, action, tuple(evs), state)
    if game.to_act(state):
        raise RuntimeError(f"{game.id}: game did not end within {max_steps} steps")


def play_random(
    game: Game,
    cfg: Any,
    seats: int,
    seed: int,
    *,
    vocabulary: Sequence[str] = FILLER,
    max_steps: int = 5000,
    tries: int = 60,
) -> Playthrough:
    """Play a whole game with uniformly random legal-looking moves, all drawn from ``seed``
    (``random_turns`` from the deal)."""
    state, evs = game.new(cfg, seats, seed)
    events = list(evs)
    actions: list[tuple[Seat, Action]] = []
    for turn in random_turns(game, state, seed, vocabulary=vocabulary, max_steps=max_steps, tries=tries):
        actions.append((turn.seat, turn.action))
        events.extend(turn.events)
        state = turn.state
    return Playthrough(state, tuple(actions), tuple(events), game.result(state))


def seat_names(n: int) -> list[str]:
    return default_names(n)


def transcript(game: Game, events: Sequence[Event], names: Sequence[str], result: Result | None) -> str:
    """A readable record of a game: every event, marked with who could see it."""
    lines = []
    for e in events:
        who = "all" if e.audience.is_public else ", ".join(names[s] for s in sorted(e.audience.seats or ()))
        lines.append(f"[{who}] {game.text(e, names)}")
    if result is not None:
        won = ", ".join(names[s] for s in sorted(result.winners)) or "nobody"
        lines.append(f"RESULT: {result.summary} (winners: {won})")
    return "\n".join(lines) + "\n"
