"""The view a Who-is-Spy seat reads: its typed keys and what each seat may know."""

from __future__ import annotations

from typing import Any, TypedDict

from games.base import Observation, Seat, visible
from games.spy.config import Phase, Role
from games.spy.state import SpyState, to_act

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


def observe_seat(game_id: str, s: SpyState, seat: Seat) -> Observation:
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
        "waiting_for": sorted(to_act(s)),
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
    return Observation(game=game_id, seat=seat, phase=s.phase.value, view=view, events=visible(s.log, seat))
