"""Seat labels: engine text names seats with opaque tokens that the table fills in once.

Engines never write a player's name, nor "Player 3" as plain text: a member who calls
themselves ``Player 1`` could otherwise relabel somebody else's ballot entry when the
table swapped names in by string replacement. Instead every seat reference in an
engine's text, prompt or option label is ``seat_ref(seat)``, a token made of two
private-use characters around the seat number, and ``fill_labels(text, names)``
replaces every token in one pass: the names it inserts are never scanned again, so a
name that looks like a token, or like another seat's label, stays what it is.

Player text never carries a token: ``games.text.clean`` drops private-use characters
from everything a player writes before an engine keeps it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from games.base import ActionSpec, Choice, Option, Seat

OPEN, CLOSE = "\ue000", "\ue001"
_TOKEN = re.compile(f"{OPEN}(\\d{{1,4}}){CLOSE}")


def seat_ref(seat: Seat) -> str:
    """The token that stands for ``seat`` in engine text, until ``fill_labels`` names it."""
    if isinstance(seat, bool) or not isinstance(seat, int) or seat < 0:
        raise ValueError(f"a seat is a whole number from 0, not {seat!r}")
    return f"{OPEN}{seat}{CLOSE}"


def default_name(seat: Seat) -> str:
    """The neutral name of a seat (SpyGame's remedy for name bias): seat 0 is "Player 1"."""
    return f"Player {seat + 1}"


def default_names(seats: int) -> list[str]:
    return [default_name(s) for s in range(seats)]


def fill_labels(text: str, names: Sequence[str] | Mapping[Seat, str] | None = None) -> str:
    """``text`` with every seat token replaced by that seat's name, in one pass.

    ``names`` maps seats to names (a list by seat number, or a mapping); a seat without a
    name, or no ``names`` at all, gets ``default_name``."""

    def name(m: re.Match[str]) -> str:
        seat = int(m.group(1))
        if isinstance(names, Mapping):
            found = names.get(seat)
        elif names is not None and seat < len(names):
            found = names[seat]
        else:
            found = None
        return default_name(seat) if found is None else found

    return _TOKEN.sub(name, text)


def fill_spec(spec: ActionSpec, names: Sequence[str] | Mapping[Seat, str] | None = None) -> ActionSpec:
    """An action spec with its prompt, field names and option labels named (ids unchanged): what
    an agent or a form shows. AI players read the neutral "Player k" (``names`` None)."""
    if isinstance(spec, Choice):
        options = tuple(Option(o.id, fill_labels(o.label, names)) for o in spec.options)
        return Choice(spec.kind, fill_labels(spec.prompt, names), options)
    return dataclasses.replace(
        spec, prompt=fill_labels(spec.prompt, names), fields=tuple(fill_labels(f, names) for f in spec.fields)
    )


def human_list(items: Sequence[str], empty: str = "nobody") -> str:
    """``["A"]`` -> "A"; ``["A", "B", "C"]`` -> "A, B and C" (the one way every list of names is written)."""
    if not items:
        return empty
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} and {items[-1]}"
