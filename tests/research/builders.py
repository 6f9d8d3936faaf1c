"""Hand-built games for the research tests: scripted moves through the real engines.

Each builder plays the moves a test describes (who guesses right, who votes for
whom) and returns the ``games.record.Record``; the test then counts the metrics
by hand from the same script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import games
from games.base import Action
from games.decrypto import ALL_CODE_IDS, code_id
from games.record import Record

HINTS = ("zorp", "blix", "quem")


def decrypto_benchmark(turns: Sequence[tuple[bool, bool]], seed: int = 1) -> Record:
    """One benchmark game: per turn (decoder right?, interceptor right?) until it ends."""
    eng = games.get("decrypto")
    cfg = eng.make_config("benchmark")
    state, _ = eng.new(cfg, 3, seed)
    actions: list[tuple[int, Action]] = []

    def act(seat: int, a: Action) -> None:
        nonlocal state
        state, _ = eng.apply(state, seat, a)
        actions.append((seat, a))

    for decoder_right, interceptor_right in turns:
        code = code_id(state.codes[0])
        wrong = next(c for c in ALL_CODE_IDS if c != code)
        act(0, Action("hints", HINTS))
        act(1, Action("guess", (code if decoder_right else wrong,)))
        act(2, Action("guess", (code if interceptor_right else wrong,)))
    assert eng.result(state) is not None, "the script must play the game to its end"
    return Record(eng, cfg, 3, seed, tuple(actions), None)


def spy_game(rounds: Sequence[Mapping[str, str]], seed: int = 1, variant: str = "spygame", seats: int = 4) -> Record:
    """Who-is-Spy with scripted votes. Seats are named by role: "spy", then "v0", "v1"...
    for the villagers in seat order; ``rounds[r]`` maps each living voter to its target."""
    eng = games.get("spy")
    cfg = eng.make_config(variant)
    state, _ = eng.new(cfg, seats, seed)
    spy = state.roles.index(next(r for r in state.roles if r.value == "spy"))
    villagers = [s for s, r in enumerate(state.roles) if r.value == "villager"]
    names = {"spy": spy, **{f"v{i}": s for i, s in enumerate(villagers)}}
    actions: list[tuple[int, Action]] = []
    for r, votes in enumerate(rounds, start=1):
        for seat in state.order:
            a = Action("describe", (f"blorf number {r} {seat}",))
            state, _ = eng.apply(state, seat, a)
            actions.append((seat, a))
        for voter, target in votes.items():
            a = Action("vote", (str(names[target]),))
            state, _ = eng.apply(state, names[voter], a)
            actions.append((names[voter], a))
    assert eng.result(state) is not None, "the script must play the game to its end"
    return Record(eng, cfg, seats, seed, tuple(actions), None)


def chameleon_round(votes: Mapping[str, str], guess_right: bool | None = None, seed: int = 1,
                    seats: int = 4, **options: Any) -> Record:
    """One Chameleon round: seats named "c" (the chameleon) and "p0", "p1"... (the others in
    seat order); ``votes`` maps every seat to its target; ``guess_right`` if caught."""
    eng = games.get("chameleon")
    cfg = eng.make_config("classic", **options)
    state, _ = eng.new(cfg, seats, seed)
    others = [s for s in range(seats) if s != state.chameleon]
    names = {"c": state.chameleon, **{f"p{i}": s for i, s in enumerate(others)}}
    actions: list[tuple[int, Action]] = []

    def act(seat: int, a: Action) -> None:
        nonlocal state
        state, _ = eng.apply(state, seat, a)
        actions.append((seat, a))

    for seat in state.order:
        act(seat, Action("clue", (f"zorp{seat}",)))
    for voter, target in votes.items():
        act(names[voter], Action("vote", (str(names[target]),)))
    if guess_right is not None:
        word = state.secret if guess_right else next(w for w in state.card if w != state.secret)
        act(state.chameleon, Action("guess", (word,)))
    assert eng.result(state) is not None, "the script must play the game to its end"
    return Record(eng, cfg, seats, seed, tuple(actions), None)


def decrypto_teams_draw(seats: int = 4, seed: int = 1) -> Record:
    """A teams game that ends in a draw: every decoder right, no interception in 8
    rounds, then both tie-break guessers abstain (0 keywords each)."""
    eng = games.get("decrypto")
    cfg = eng.make_config("teams")
    state, _ = eng.new(cfg, seats, seed)
    actions: list[tuple[int, Action]] = []
    while to_act := sorted(eng.to_act(state)):
        seat = to_act[0]
        if state.phase.value == "encode":
            a = Action("hints", HINTS)
        elif state.phase.value == "decode":
            code = code_id(state.codes[state.decoding])
            own = seat % 2 == state.decoding
            a = Action("guess", (code if own else next(c for c in ALL_CODE_IDS if c != code),))
        else:
            a = Action("keywords", ("abstain",))
        state, _ = eng.apply(state, seat, a)
        actions.append((seat, a))
    return Record(eng, cfg, seats, seed, tuple(actions), None)
