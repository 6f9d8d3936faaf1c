"""Just One's clue report: which clues let the guesser find the word, and which duplicates cost the table.

A Just One clue is judged by what the table did with it, read from the log alone (each card's
public ``guessed`` event carries the word, the guess, the outcome and every clue with why it
was removed), so the report needs no evaluator:

- a kept clue *led to the word* when its card was found;
- a clue removed as a duplicate *cost the table* a clue: all of that word's copies went, and
  the card's guesser saw fewer clues (the cost counts double when the card was then missed);
- a clue removed as invalid named the word.

Per seat: clues that led to a found word, duplicates written, invalid clues. The headline
numbers for ``hushtable sneak score`` are the shares (0-100) of clues that led to a found
word, of duplicates and of invalid clues.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.labels import human_list, seat_ref
from models.eval.evaluators import Evaluator
from models.eval.games import ClueHook, OwnReport
from models.eval.instances import LogLike

GAME = "justone"


def cards(log: LogLike) -> list[Mapping[str, Any]]:
    """Every card played in a logged game, as its ``guessed`` event tells it, in play order."""
    return [e.data for e in sorted(log.events, key=lambda e: e.seq) if e.kind == "guessed"]


def _who(seat: object) -> str:
    return seat_ref(seat) if isinstance(seat, int) and not isinstance(seat, bool) and seat >= 0 else "?"


def _pct(n: int, d: int) -> float:
    return 100.0 * n / d if d else 0.0


async def outcome_report(log: LogLike, evaluators: Sequence[Evaluator]) -> OwnReport:
    """The clue report of one logged game (``evaluators`` are not needed: the log says it all)."""
    played = cards(log)
    lines: list[str] = []
    led = dup = bad = total = 0
    per_seat: dict[int, list[int]] = {}  # seat -> [led to the word, duplicates, invalid]
    for c in played:
        clues = list(c.get("clues") or [])
        total += len(clues)
        found = c.get("outcome") == "found"
        kept = [x for x in clues if x.get("removed") is None]
        dups = [x for x in clues if x.get("removed") == "duplicate"]
        invalid = [x for x in clues if x.get("removed") == "invalid"]
        for x in clues:
            seat = x.get("seat")
            if isinstance(seat, int):
                tally = per_seat.setdefault(seat, [0, 0, 0])
                tally[0] += int(found and x.get("removed") is None)
                tally[1] += int(x.get("removed") == "duplicate")
                tally[2] += int(x.get("removed") == "invalid")
        led += len(kept) if found else 0
        dup += len(dups)
        bad += len(invalid)
        head = f"- Card {c.get('card')} ({c.get('word')}), guessed by {_who(c.get('guesser'))}: "
        if found:
            named = [f"{x.get('clue')} ({_who(x.get('seat'))})" for x in kept]
            text = f"found with {human_list(named, 'no clue')}"
        else:
            text = "missed" if c.get("guess") is not None else "passed"
        if dups:
            same = human_list([_who(x.get("seat")) for x in dups])
            text += f"; {same} wrote the same clue and cost the table {len(dups)} clue(s)"
            text += " on a card it then missed" if not found else ""
        if invalid:
            text += f"; {human_list([_who(x.get('seat')) for x in invalid])} named the word"
        lines.append(head + text + ".")
    if per_seat:
        lines.append("Per player: " + "; ".join(
            f"{_who(seat)} {t[0]} clue(s) led to a found word, {t[1]} duplicate(s), {t[2]} invalid"
            for seat, t in sorted(per_seat.items())) + ".")
    numbers = {"led": _pct(led, total), "duplicates": _pct(dup, total), "invalid": _pct(bad, total)}
    return OwnReport(total, tuple(lines), numbers)


SNEAK = ClueHook(GAME, outcome_report)
"""The per-game scoring hook: clues judged by what the table did with them."""

__all__ = ["GAME", "SNEAK", "cards", "outcome_report"]
