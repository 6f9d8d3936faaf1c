"""Spymasters in words: one sentence per event, and the rules as players read them.

Seats are written as ``seat_ref`` tokens; the table names them (``games.labels.fill_labels``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.base import Event
from games.labels import fill_labels, human_list, seat_ref
from games.spymasters.config import (
    ASSASSINS,
    BOARD_SIZE,
    BYSTANDERS,
    COLUMNS,
    MAX_SEATS,
    MIN_SEATS,
    OTHER_WORDS,
    STARTING_WORDS,
    Card,
    Guessing,
    SpymastersConfig,
)
from games.spymasters.state import PASS, STOP, Ending, TurnEnd

_CARD_WORDS = {Card.RED.value: "a red word.", Card.BLUE.value: "a blue word.",
               Card.BYSTANDER.value: "an innocent bystander.", Card.ASSASSIN.value: "the assassin!"}
_TURN_ENDS = {
    TurnEnd.STOPPED.value: "the guessers stopped",
    TurnEnd.LIMIT.value: "no guesses left",
    TurnEnd.BYSTANDER.value: "they met a bystander",
    TurnEnd.OPPONENT.value: "they found the other team's word",
}


def _team(name: object) -> str:
    return str(name).capitalize()


def _who(seat: object) -> str:
    return seat_ref(seat) if isinstance(seat, int) and not isinstance(seat, bool) and seat >= 0 else "nobody"


def _pick(pick: object) -> str:
    if pick == STOP:
        return "stop"
    if pick == PASS:
        return "abstained"
    return str(pick)


def _teams(teams: Mapping[str, Mapping[str, Any]]) -> str:
    return "; ".join(
        f"{_team(t)}: spymaster {_who(v['spymaster'])}, "
        f"{'guesser' if len(v['guessers']) == 1 else 'guessers'} {human_list([_who(g) for g in v['guessers']])}"
        for t, v in teams.items()
    )


def _grid(words: Sequence[str]) -> str:
    # A row of the 5x5 board per line, so the board reads as a grid wherever it is posted.
    return "\n" + "\n".join(", ".join(words[i : i + COLUMNS]) for i in range(0, len(words), COLUMNS))


def sentence(kind: str, d: Mapping[str, Any]) -> str:
    """An event in words, seats as ``seat_ref`` tokens."""
    if kind == "board":
        return f"{_teams(d['teams'])}. {_team(d['starting'])} starts. The board:{_grid(d['words'])}"
    if kind == "key":
        groups: dict[str, list[str]] = {c.value: [] for c in Card}
        for word, card in zip(d["words"], d["key"], strict=True):
            groups[card].append(word)
        return (f"The key, for the spymasters only. Red: {', '.join(groups['red'])}. "
                f"Blue: {', '.join(groups['blue'])}. Bystanders: {', '.join(groups['bystander'])}. "
                f"The assassin: {', '.join(groups['assassin'])}.")
    if kind == "turn":
        return f"Turn {d['turn']}: {_team(d['team'])}'s spymaster, {_who(d['spymaster'])}, gives a clue."
    if kind == "clue_written":
        return f"Your clue is {d['clue']}; now say how many of your words it points to."
    if kind == "clue":
        return f"{_who(d['seat'])} gives {_team(d['team'])} the clue: {d['clue']}, {d['number']}."
    if kind == "guess_vote":
        if d["pick"] == STOP:
            return "You vote to stop guessing."
        if d["pick"] == PASS:
            return "You abstain."
        return f"You vote for {d['pick']}."
    if kind == "voted":
        return f"{_who(d['seat'])} has voted."
    if kind == "votes":
        votes = "; ".join(f"{_who(v['seat'])} → {_pick(v['pick'])}" for v in d["votes"])
        chosen = "stop guessing" if d["chosen"] in (STOP, PASS) else f"guess {d['chosen']}"
        return f"{_team(d['team'])} votes: {votes}. The team chooses to {chosen}."
    if kind == "guess":
        return f"{_team(d['team'])} guesses {d['word']}: {_CARD_WORDS[d['card']]}"
    if kind == "turn_end":
        why = _TURN_ENDS.get(d["reason"], str(d["reason"]))
        return f"{_team(d['team'])}'s turn ends ({why}): {d['found']} of {d['number']} found on this clue."
    if kind == "game_over":
        if d["ending"] == Ending.ASSASSIN.value:
            loser = "Blue" if d["winner"] == Card.RED.value else "Red"
            return f"{loser} found the assassin. {_team(d['winner'])} wins!"
        return f"Every {d['winner']} word is found. {_team(d['winner'])} wins!"
    return f"{kind}: {dict(d)}"


def event_text(e: Event, names: Sequence[str]) -> str:
    return fill_labels(sentence(e.kind, e.data), names)


def rules(cfg: SpymastersConfig) -> str:
    guessing = (
        "When a team has several guessers, they vote on every guess at the same time (votes stay "
        "hidden until all are in); the word with the most votes is played. A tie goes to the pick "
        "of the team's first guesser if it is among the tied ones, else to the tied word first on "
        "the board. Abstentions count for nothing; if nobody votes for a word, the team stops."
        if cfg.guessing is Guessing.VOTE
        else "When a team has several guessers, its first guesser (the captain) makes every guess; "
        "the others advise in the chat."
    )
    return (
        f"Two teams, red and blue, {MIN_SEATS} to {MAX_SEATS} players, sitting alternately. Each team has "
        f"one spymaster; everyone else guesses. The board holds {BOARD_SIZE} words. Only the spymasters "
        f"see the key: {STARTING_WORDS} words belong to the team that starts, {OTHER_WORDS} to the "
        f"other, {BYSTANDERS} are innocent bystanders and {ASSASSINS} is the assassin.\n\n"
        "On your team's turn your spymaster gives a clue: one word, then a number saying how many of "
        "your words it points to. The clue may not be a word still on the board, a form of one "
        "(a plural, say) or contain one, and may not be a number.\n\n"
        "Your guessers then pick words one at a time, up to the number plus one, and may stop after "
        "the first. Your own word: keep going. A bystander: your turn ends. The other team's word: "
        "it counts for them and your turn ends. The assassin: your team loses at once.\n\n"
        f"{guessing}\n\nThe first team whose words are all revealed wins, even when the other team "
        "revealed the last one."
    )
