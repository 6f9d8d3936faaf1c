"""Just One in words: one sentence per event, and the rules as players read them.

Seats are written as ``seat_ref`` tokens; the table names them (``games.labels.fill_labels``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.base import Event
from games.justone.config import CARDS, MAX_SEATS, MIN_SEATS, PASS, JustOneConfig, target
from games.labels import fill_labels, human_list, seat_ref

_OUTCOMES = {"found": "found it!", "wrong": "wrong, the card is lost.", "passed": "the card is lost."}
_WHY = {"duplicate": "the same as another clue", "invalid": "names the word"}


def _who(seat: object) -> str:
    return seat_ref(seat) if isinstance(seat, int) and not isinstance(seat, bool) and seat >= 0 else "nobody"


def _clues(clues: Sequence[Mapping[str, Any]]) -> str:
    return "; ".join(f"{_who(c['seat'])}: {c['clue']}" for c in clues) or "none"


def sentence(kind: str, d: Mapping[str, Any]) -> str:
    """An event in words, seats as ``seat_ref`` tokens."""
    if kind == "game_started":
        return (f"Just One: {d['cards']} cards, {d['seats']} players. Find at least {d['target']} words together.")
    if kind == "card":
        return f"Card {d['card']} of {d['cards']}: {_who(d['guesser'])} guesses; everyone else writes one clue."
    if kind == "word":
        return f"The secret word of card {d['card']} is {d['word']}. Write a one-word clue for it."
    if kind == "clue_written":
        return f"Your clue is {d['clue']}."
    if kind == "clue_in":
        return f"{_who(d['seat'])} has written a clue."
    if kind == "clues_checked":
        removed = [f"{_who(c['seat'])}'s {c['clue']} ({_WHY[c['removed']]})" for c in d["clues"] if c["removed"]]
        return ("For the clue-givers: " + (f"removed {human_list(removed)}." if removed else "every clue stays."))
    if kind == "clues_shown":
        gone = f" The clues of {human_list([_who(s) for s in d['removed']])} were removed." if d["removed"] else ""
        return f"Clues for {_who(d['guesser'])}: {_clues(d['clues'])}.{gone}"
    if kind == "guessed":
        said = "passes" if d["guess"] is None else f"guesses {d['guess']}"
        removed = [f"{_who(c['seat'])}'s {c['clue']} ({_WHY[c['removed']]})" for c in d["clues"] if c["removed"]]
        tail = f" Removed clues: {human_list(removed)}." if removed else ""
        return f"{_who(d['guesser'])} {said}: {_OUTCOMES[d['outcome']]} The word was {d['word']}.{tail}"
    if kind == "discarded":
        return f"Card {d['card']} is discarded unseen after the wrong guess."
    if kind == "penalty":
        return "A wrong guess on the last card costs one found card."
    if kind == "game_over":
        verdict = "The table reaches its target!" if d["won"] else "The table falls short of its target."
        return f"The round is over: {d['score']} of {d['cards']} cards found. {verdict}"
    return f"{kind}: {dict(d)}"


def event_text(e: Event, names: Sequence[str]) -> str:
    return fill_labels(sentence(e.kind, e.data), names)


def rules_text(cfg: JustOneConfig) -> str:
    return (
        f"Just One is cooperative: {MIN_SEATS} to {MAX_SEATS} players try to find as many secret words as they "
        f"can in a round of {cfg.cards} cards (the published game plays {CARDS}). The table wins together "
        f"with at least {target(cfg)} found.\n\n"
        "On each card one player guesses, in turn round the table; everyone else sees the secret word and "
        "writes one clue of one word, without seeing the others' clues.\n\n"
        "Before the guesser sees them, clues are compared: a clue that names the word or a form of it is "
        "removed, and clues that are the same word (a plural or a different case counts as the same) are all "
        "removed. So think of a clue the others will not think of.\n\n"
        f"The guesser has one try. Found: the card scores. Write '{PASS}' to skip: only that card is lost. "
        "A wrong guess loses the card and the next one too (on the last card, it costs one found card)."
    )
