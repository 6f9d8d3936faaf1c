"""Deals as data: the shared checks behind every engine's ``deal`` option.

A deal fixes what the seed would otherwise draw: Decrypto's keywords and codes, Who-is-Spy's
word pair, roles and speaking orders, the Chameleon's card, secret, chameleon and first
player. Each engine accepts its deal as a plain JSON-able mapping in its config, checks its
shape here (a clear ``ConfigError`` naming the key), checks what needs the seat count when
the game is dealt, and refuses a deal its rules could not produce (a repeated code, a secret
that is not on the card) with the reason. ``Game.deal_of(state)`` gives back the complete deal
a game was played with, so a record that carries it replays without its seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from games.base import ConfigError, Seat
from games.text import fold


def error(message: str) -> ConfigError:
    return ConfigError(f"deal: {message}")


def mapping(raw: object, known: Iterable[str]) -> Mapping[str, Any]:
    """The deal as a mapping with only ``known`` keys."""
    if not isinstance(raw, Mapping):
        raise error(f"a deal is a mapping of {', '.join(known)}, not {type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in set(known))
    if unknown:
        raise error(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return raw


def word(where: str, raw: object) -> str:
    """A word or short phrase of a deal, whitespace collapsed."""
    if not isinstance(raw, str) or not fold(raw).strip():
        raise error(f"{where} must be a word, not {raw!r}")
    text = " ".join(raw.split())
    if len(text) > 40:
        raise error(f"{where} {text!r} is longer than 40 characters")
    return text


def seat(where: str, raw: object) -> Seat:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise error(f"{where} must be a seat number from 0, not {raw!r}")
    return raw


def seats(where: str, raw: object) -> tuple[Seat, ...]:
    """A list of distinct seat numbers."""
    if not isinstance(raw, (list, tuple)):
        raise error(f"{where} must be a list of seat numbers, not {raw!r}")
    out = tuple(seat(f"{where} entry {i}", x) for i, x in enumerate(raw, start=1))
    if len(set(out)) != len(out):
        raise error(f"{where} names a seat twice: {list(out)}")
    return out


def in_range(where: str, given: Iterable[Seat], n: int) -> None:
    """Seat numbers checked against the table once its size is known."""
    bad = sorted(x for x in given if x >= n)
    if bad:
        raise error(f"{where} names seat(s) {bad}, but the table has seats 0 to {n - 1}")


def same(a: str, b: str) -> bool:
    """Two words of a deal are the same word (case, accents, spacing aside)."""
    return fold(a).split() == fold(b).split()
