"""The Chameleon's state: ballots, the record of a round, the frozen state, and what they say (who
acts, the winners, the result, the deal so far)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games.base import Event, Result, Seat
from games.chameleon.config import BallotKind, ChameleonConfig, Mode, Outcome, Phase
from games.vote import Ballot

# --------------------------------------------------------------------------- state


def ballot_kind(b: Ballot) -> BallotKind:
    return BallotKind.RUNOFF if b.runoff else BallotKind.FIRST


def ballot_json(b: Ballot) -> dict[str, Any]:
    """A closed ballot as results and the vote-result event show it."""
    return {
        "ballot": ballot_kind(b).value,
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
            "votes": [ballot_json(b) for b in self.ballots],
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


def to_act(s: ChameleonState) -> frozenset[Seat]:
    """Seats that owe a move now; empty when the game is over."""
    if s.phase is Phase.CLUES:
        return frozenset({s.order[len(s.clues)]})
    if s.phase is Phase.DISCUSSION:
        return frozenset(range(s.seats)) - s.ready
    if s.phase in (Phase.VOTE, Phase.RUNOFF):
        return s.ballots[-1].waiting()
    if s.phase is Phase.GUESS:
        return frozenset({s.chameleon})
    return frozenset()


def winners_of(cfg: ChameleonConfig, last: RoundRecord, scores: tuple[int, ...]) -> frozenset[Seat]:
    """A single round: the chameleon, or everyone else when caught; a match: the top scores."""
    if cfg.mode is Mode.SINGLE:
        if last.outcome is Outcome.CAUGHT:
            return frozenset(range(len(scores))) - {last.chameleon}
        return frozenset({last.chameleon})
    top = max(scores)
    return frozenset(i for i, v in enumerate(scores) if v == top)


def result(s: ChameleonState) -> Result | None:
    """The end of the game: winners, a summary, points as scores and the rounds in ``details``."""
    if s.phase is not Phase.OVER:
        return None
    cfg = s.config
    last = s.history[-1]
    winners = winners_of(cfg, last, s.scores)
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
    details["deal"] = deal_of(s)  # exports carry the result: with the deal they replay without a seed
    return Result(
        winners=winners,
        summary=summary,
        scores={i: float(v) for i, v in enumerate(s.scores)},
        details=details,
    )


def deal_of(s: ChameleonState) -> dict[str, Any] | list[dict[str, Any]]:
    """The complete deal so far: each round's card, secret, chameleon and first speaker
    (one mapping for a single game, a list for a match)."""
    rounds = [
        {"card": [r.category, list(r.card)], "secret": r.secret, "chameleon": r.chameleon, "first": r.order[0]}
        for r in s.history
    ]
    if s.phase is not Phase.OVER:
        rounds.append({"card": [s.category, list(s.card)], "secret": s.secret, "chameleon": s.chameleon, "first": s.order[0]})
    return rounds[0] if s.config.mode is Mode.SINGLE else rounds
