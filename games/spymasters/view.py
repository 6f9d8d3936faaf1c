"""What one Spymasters seat may know, as a typed view (``Observation.view``).

Guessers see the board, the cards revealed so far and every clue; only the two spymasters
see the key (which card each word is) before the game ends. Agents read these keys.
"""

from __future__ import annotations

from typing import TypedDict

from games.base import Board, Cell, Seat
from games.spymasters.config import COLUMNS, TEAMS, Card, Role, team_of
from games.spymasters.state import (
    Phase,
    SpymastersState,
    guessers,
    guesses_left,
    is_spymaster,
    remaining,
    spymaster,
    voters,
)


class TeamView(TypedDict):
    spymaster: Seat
    guessers: list[Seat]


class GuessView(TypedDict):
    word: str
    card: str


class ClueView(TypedDict):
    """The clue being guessed: its team, word, number, the words found so far and guesses left."""

    team: str
    clue: str
    number: int
    guesses: list[GuessView]
    guesses_left: int


class PastClue(TypedDict):
    turn: int
    team: str
    clue: str
    number: int
    guesses: list[GuessView]
    ended: str | None


class BallotView(TypedDict):
    """The open vote on the next guess: who votes, who has voted (never for what), your pick."""

    voters: list[Seat]
    voted: list[Seat]
    my_vote: str | None


class SpymastersView(TypedDict):
    """``Observation.view`` of Spymasters (see ``view_of``)."""

    seat: Seat
    players: int
    phase: str
    variant: str
    guessing: str
    game_over: bool
    team: str
    role: str
    teams: dict[str, TeamView]
    starting: str
    turn: str
    turn_number: int
    board: list[str]
    revealed: list[str | None]
    key: list[str] | None
    remaining: dict[str, int]
    pending_clue: str | None
    clue: ClueView | None
    ballot: BallotView | None
    history: list[PastClue]
    winner: str | None
    ending: str | None
    to_act: list[Seat]


def view_of(s: SpymastersState, seat: Seat, to_act: frozenset[Seat]) -> SpymastersView:
    """What ``seat`` may know. ``board`` lists the 25 words in grid order (rows of five);
    ``revealed`` gives, per board position, the card of a revealed word or null; ``key`` gives
    every position's card to the spymasters (and to everyone once the game is over), else null.
    ``pending_clue`` is the clue word a spymaster has written but not yet numbered (theirs only).
    ``clue`` is the clue being guessed; ``history`` the finished clues, each with its guesses."""
    over = s.phase is Phase.OVER
    by_index = {i: s.key[i].value for i in s.revealed}
    ballot: BallotView | None = None
    if s.phase is Phase.GUESS and len(voters(s)) > 1:
        mine = next((pick for voter, pick in s.votes if voter == seat), None)
        ballot = {"voters": list(voters(s)), "voted": sorted(v for v, _ in s.votes), "my_vote": mine}
    return {
        "seat": seat,
        "players": s.seats,
        "phase": s.phase.value,
        "variant": s.config.variant.value,
        "guessing": s.config.guessing.value,
        "game_over": over,
        "team": team_of(seat).value,
        "role": (Role.SPYMASTER if is_spymaster(s, seat) else Role.GUESSER).value,
        "teams": {t.value: {"spymaster": spymaster(s, t), "guessers": list(guessers(s, t))} for t in TEAMS},
        "starting": s.starting.value,
        "turn": s.turn.value,
        "turn_number": s.turn_no,
        "board": list(s.words),
        "revealed": [by_index.get(i) for i in range(len(s.words))],
        "key": [c.value for c in s.key] if over or is_spymaster(s, seat) else None,
        "remaining": {t.value: remaining(s, t) for t in TEAMS},
        "pending_clue": s.pending if seat == spymaster(s, s.turn) else None,
        "clue": None if s.clue is None else {
            "team": s.clue.team.value,
            "clue": s.clue.clue,
            "number": s.clue.number,
            "guesses": [{"word": g.word, "card": g.card.value} for g in s.clue.guesses],
            "guesses_left": guesses_left(s),
        },
        "ballot": ballot,
        "history": [
            {"turn": c.turn, "team": c.team.value, "clue": c.clue, "number": c.number,
             "guesses": [{"word": g.word, "card": g.card.value} for g in c.guesses],
             "ended": None if c.ended is None else c.ended.value}
            for c in s.history
        ],
        "winner": None if s.winner is None else s.winner.value,
        "ending": None if s.ending is None else s.ending.value,
        "to_act": sorted(to_act),
    }


MARKS = {Card.RED.value: "R", Card.BLUE.value: "B", Card.BYSTANDER.value: "-", Card.ASSASSIN.value: "X"}
LEGEND = "[R] red  [B] blue  [-] bystander  [X] assassin"
KEY_LEGEND = "; (r) (b) (-) (x): the key, for your eyes only"


def board_of(v: SpymastersView) -> Board:
    """The 5x5 grid as this seat sees it: revealed cards marked, the key beside hidden words for a
    spymaster (``key`` is in the view only for them, or for all once the game is over), and the score."""
    key = v["key"]
    cells = tuple(
        Cell(word, mark=MARKS[card] if card is not None else None,
             known=MARKS[key[i]].lower() if key is not None and card is None else None)
        for i, (word, card) in enumerate(zip(v["board"], v["revealed"], strict=True))
    )
    found = {t.value: sum(1 for c in v["revealed"] if c == t.value) for t in TEAMS}
    score = " · ".join(f"{t.value.capitalize()} {found[t.value]} of {found[t.value] + v['remaining'][t.value]} found"
                       for t in TEAMS)
    if v["game_over"]:
        score += f" · {str(v['winner']).capitalize()} wins" if v["winner"] else ""
    else:
        score += f" · {v['turn'].capitalize()}'s turn {v['turn_number']}"
    legend = LEGEND + (KEY_LEGEND if key is not None and not v["game_over"] else "")
    return Board(COLUMNS, cells, score, legend)
