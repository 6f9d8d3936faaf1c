"""The view a Chameleon seat reads: its typed keys and what each seat may know."""

from __future__ import annotations

from typing import Any, TypedDict

from games.base import Observation, Seat, visible
from games.chameleon.config import Phase, Role
from games.chameleon.state import ChameleonState, ballot_json, ballot_kind, to_act
from games.vote import ABSTAIN

# --------------------------------------------------------------------------- the view a seat reads


class OpenBallot(TypedDict):
    ballot: str
    candidates: list[Seat]
    voted: list[Seat]
    my_vote: Seat | str | None


class ChameleonView(TypedDict):
    """``Observation.view`` of the Chameleon: what one seat may know (see ``ChameleonGame.observe``)."""

    seat: Seat
    players: int
    phase: str
    mode: str
    variant: str
    round: int
    target_points: int
    max_rounds: int
    tie_rule: str
    game_over: bool
    category: str
    card: list[str]
    role: str
    is_chameleon: bool
    secret: str | None
    speaking_order: list[Seat]
    current_speaker: Seat | None
    clues: list[dict[str, Any]]
    my_clue: str | None
    ready: list[Seat]
    ballot: OpenBallot | None
    votes: list[dict[str, Any]]
    accused: Seat | None
    chameleon: Seat | None
    guess: str | None
    scores: list[int]
    to_act: list[Seat]
    previous_rounds: list[dict[str, Any]]


def observe_seat(game_id: str, s: ChameleonState, seat: Seat) -> Observation:
    """What one seat may know. View keys:

    - ``seat``, ``players`` (number of seats), ``phase``, ``mode``, ``variant``, ``round``,
      ``target_points`` (match goal), ``max_rounds``, ``tie_rule``, ``game_over``.
    - ``category`` and ``card`` (the public card's words, in card order).
    - ``role`` ("chameleon" or "player"), ``is_chameleon``; ``secret``: the secret word,
      null for the chameleon until the game ends.
    - ``speaking_order`` (seats), ``current_speaker`` (seat or null), ``clues``
      ([{seat, clue}] so far this round), ``my_clue``.
    - ``ready``: seats marked ready (discussion phase).
    - ``ballot``: the open vote or null: {ballot: "first"|"runoff", candidates,
      voted (seats that have voted, never for whom), my_vote (seat, "abstain" or null)}.
    - ``votes``: this round's closed ballots, revealed: [{ballot, candidates, votes:
      [{voter, target}], tally}].
    - ``accused`` (seat or null) and ``chameleon`` (seat once revealed, or your own
      seat if you are it; otherwise null); ``guess``: the chameleon's guess once the
      game is over (null otherwise).
    - ``scores`` (per seat), ``to_act`` (seats that owe a move), ``previous_rounds``
      (finished rounds of a match, everything revealed).
    """
    over = s.phase is Phase.OVER
    is_cham = seat == s.chameleon
    current = s.history[-1] if over else None
    closed = s.ballots if s.ballot is None else s.ballots[:-1]
    open_ballot = s.ballot
    my_vote: Any = None
    if open_ballot is not None:
        voted, target = open_ballot.vote_of(seat)
        if voted:
            my_vote = ABSTAIN if target is None else target
    revealed = s.phase is Phase.GUESS or over
    previous = s.history[:-1] if over else s.history
    view: ChameleonView = {
        "seat": seat,
        "players": s.seats,
        "phase": s.phase.value,
        "mode": s.config.mode.value,
        "variant": s.config.variant.value,
        "round": s.round,
        "target_points": s.config.target_points,
        "max_rounds": s.config.max_rounds,
        "tie_rule": s.config.tie_rule.value,
        "game_over": over,
        "category": s.category,
        "card": list(s.card),
        "role": (Role.CHAMELEON if is_cham else Role.PLAYER).value,
        "is_chameleon": is_cham,
        "secret": s.secret if (not is_cham or over) else None,
        "speaking_order": list(s.order),
        "current_speaker": s.order[len(s.clues)] if s.phase is Phase.CLUES else None,
        "clues": [{"seat": c_seat, "clue": clue} for c_seat, clue in s.clues],
        "my_clue": next((clue for c_seat, clue in s.clues if c_seat == seat), None),
        "ready": sorted(s.ready),
        "ballot": None
        if open_ballot is None
        else {
            "ballot": ballot_kind(open_ballot).value,
            "candidates": list(open_ballot.candidates),
            "voted": sorted(open_ballot.voted()),
            "my_vote": my_vote,
        },
        "votes": [ballot_json(b) for b in closed],
        "accused": s.accused if revealed else (current.accused if current else None),
        "chameleon": s.chameleon if (revealed or is_cham) else None,
        "guess": current.guess if current else None,
        "scores": list(s.scores),
        "to_act": sorted(to_act(s)),
        "previous_rounds": [r.to_json() for r in previous],
    }
    return Observation(game=game_id, seat=seat, phase=s.phase.value, view=view, events=visible(s.log, seat))
