"""Random play and transcripts: pure helpers behind ``hushtable sim``, golden tests and benchmarks."""

from __future__ import annotations

import random
from collections.abc import Sequence
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
    """Play a whole game with uniformly random legal-looking moves, all drawn from ``seed``.

    Random text can break a rule (a repeat, a secret word); the player then tries
    again, and after ``tries`` failures takes the rules' timeout action.
    """
    state, evs = game.new(cfg, seats, seed)
    events = list(evs)
    actions: list[tuple[Seat, Action]] = []
    for step in range(max_steps):
        acting = sorted(game.to_act(state))
        if not acting:
            break
        r = rng(seed, "random-player", step)
        seat = r.choice(acting)
        spec = game.legal(state, seat)
        if spec is None:
            raise RuntimeError(f"{game.id}: seat {seat} is to act but has no legal action")
        for _ in range(tries):
            action = random_action(spec, r, vocabulary)
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
        actions.append((seat, action))
        events.extend(evs)
    else:
        raise RuntimeError(f"{game.id}: game did not end within {max_steps} steps")
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
