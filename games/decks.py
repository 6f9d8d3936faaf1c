"""Word banks: the bundled decks in ``games/data/`` and custom decks, checked by one set of rules.

A custom deck comes as file text or as the parsed lists a config holds after a JSON round
trip; both go through the same checks, and every problem is reported with the line (text)
or entry (list) it is on. Parsing is pure, so a deck can be checked before a game starts.

File formats (``#`` starts a comment line, blank lines are ignored):

- Decrypto keywords: one keyword per line.
- Who-is-Spy pairs: ``villager word, spy word`` per line.
- Chameleon cards: ``Category: word, word, ...`` per line, 16 words on a bundled card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from games.base import ConfigError, normalize

T = TypeVar("T")

KEYWORDS_FILE = "decrypto_keywords.txt"
PAIRS_FILE = "spy_pairs.txt"
CARDS_FILE = "chameleon_cards.txt"
MAX_CHARS = 40

Card = tuple[str, tuple[str, ...]]


class DeckError(ValueError):
    """A deck that cannot be used; the message names the line or entry and the problem."""


def _rows(raw: object, what: str) -> list[tuple[str, object]]:
    """(where, entry) for file text (one entry a line) or for a list of entries."""
    if isinstance(raw, str):
        return [(f"line {no}", line.strip()) for no, line in enumerate(raw.splitlines(), start=1)
                if line.strip() and not line.strip().startswith("#")]
    if isinstance(raw, (list, tuple)):
        return [(f"entry {i}", entry) for i, entry in enumerate(raw, start=1)]
    raise DeckError(f"a {what} deck is file text or a list, not {type(raw).__name__}")


def _word(where: str, raw: object, what: str) -> str:
    if not isinstance(raw, str):
        raise DeckError(f"{where}: a {what} must be a word, not {raw!r}")
    word = " ".join(raw.split())
    if not normalize(word):
        raise DeckError(f"{where}: empty {what}")
    if len(word) > MAX_CHARS:
        raise DeckError(f"{where}: {what} {word!r} is longer than {MAX_CHARS} characters")
    return word


def _enough(n: int, minimum: int, what: str) -> None:
    if n < minimum:
        raise DeckError(f"a {what} deck needs at least {minimum} {what}s, this one has {n}")


def parse_keywords(raw: str | Sequence[object], *, minimum: int = 8) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    words = []
    for where, entry in _rows(raw, "keyword"):
        word = _word(where, entry, "keyword")
        key = normalize(word)
        if key in seen:
            raise DeckError(f"{where}: {word!r} repeats {seen[key]}")
        seen[key] = where
        words.append(word)
    _enough(len(words), minimum, "keyword")
    return tuple(words)


def parse_pairs(raw: str | Sequence[object], *, minimum: int = 1) -> tuple[tuple[str, str], ...]:
    seen: dict[frozenset[str], str] = {}
    pairs = []
    for where, entry in _rows(raw, "pair"):
        parts = entry.split(",") if isinstance(entry, str) else entry
        if not isinstance(parts, (list, tuple)) or len(parts) != 2:
            raise DeckError(f"{where}: expected two words, 'villager word, spy word', got {entry!r}")
        a, b = (_word(where, p, "word") for p in parts)
        if normalize(a) == normalize(b):
            raise DeckError(f"{where}: the two words of a pair must differ ({a!r})")
        key = frozenset((normalize(a), normalize(b)))
        if key in seen:
            raise DeckError(f"{where}: pair {a!r}/{b!r} repeats {seen[key]}")
        seen[key] = where
        pairs.append((a, b))
    _enough(len(pairs), minimum, "pair")
    return tuple(pairs)


def parse_cards(raw: str | Sequence[object], *, size: int = 16, minimum: int = 1) -> tuple[Card, ...]:
    """Cards of at least ``size`` distinct words (a game may play only the first ``size``)."""
    seen: dict[str, str] = {}
    cards = []
    for where, entry in _rows(raw, "card"):
        if isinstance(entry, str):
            if ":" not in entry:
                raise DeckError(f"{where}: expected 'Category: word, word, ...', got {entry!r}")
            head, _, tail = entry.partition(":")
            entry = (head, tail.split(","))
        if not isinstance(entry, (list, tuple)) or len(entry) != 2 or not isinstance(entry[1], (list, tuple)):
            raise DeckError(f"{where}: expected [category, [word, ...]], got {entry!r}")
        category = _word(where, entry[0], "category")
        key = normalize(category)
        if key in seen:
            raise DeckError(f"{where}: category {category!r} repeats card of {seen[key]}")
        seen[key] = where
        words = tuple(_word(where, w, "word") for w in entry[1])
        if len(words) < size:
            raise DeckError(f"{where}: card {category!r} has {len(words)} words; a card needs {size}")
        norm = [normalize(w) for w in words]
        dupes = sorted({w for w in norm if norm.count(w) > 1})
        if dupes:
            raise DeckError(f"{where}: card {category!r} repeats a word ({', '.join(dupes)})")
        cards.append((category, words))
    _enough(len(cards), minimum, "card")
    return tuple(cards)


def custom(parse: Callable[..., T], raw: object, **options: Any) -> T:
    """A player's deck (file text or lists) through ``parse``; a problem becomes a ConfigError."""
    try:
        return parse(raw, **options)
    except DeckError as exc:
        raise ConfigError(f"custom deck: {exc}") from None


def _bundled(name: str) -> str:
    return resources.files("games").joinpath("data", name).read_text(encoding="utf-8")


@cache
def keywords() -> tuple[str, ...]:
    return parse_keywords(_bundled(KEYWORDS_FILE))


@cache
def pairs() -> tuple[tuple[str, str], ...]:
    return parse_pairs(_bundled(PAIRS_FILE))


@cache
def cards() -> tuple[Card, ...]:
    return parse_cards(_bundled(CARDS_FILE))
