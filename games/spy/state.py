"""Who-is-Spy's state: the frozen records of a game and what they say (who acts, the deal so far,
the result)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games.base import Event, Result, Seat
from games.spy.config import Phase, Role, SpyConfig, Team
from games.vote import Ballot

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


def winners_line(team: str, roles: Sequence[str], winners: Sequence[Seat] | frozenset[Seat]) -> str:
    """Who won, in words: an infiltrator win without a living spy is Mr. White's alone."""
    if team == Team.VILLAGERS.value:
        return "The villagers win"
    spy_won = any(roles[x] == Role.SPY.value for x in winners)
    if team == Team.MR_WHITE.value or not spy_won:
        return "Mr. White wins"
    white_won = any(roles[x] == Role.MR_WHITE.value for x in winners)
    return "The spies and Mr. White win" if white_won else "The spies win"


def to_act(s: SpyState) -> frozenset[Seat]:
    """Seats that owe a move now; empty when the game is over."""
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


def deal_of(s: SpyState) -> dict[str, Any]:
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


def result(s: SpyState) -> Result | None:
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
    lead = winners_line(s.team.value, [r.value for r in s.roles], s.winners)
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
    details["deal"] = deal_of(s)  # exports carry the result: with the deal they replay without a seed
    return Result(winners=s.winners, summary=summary, scores=scores, details=details)
