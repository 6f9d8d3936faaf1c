"""Word banks: the bundled decks in ``games/data/`` and user decks in the same formats.

Parsing is pure (text in, tuples out) so a custom deck can be checked before a
game starts; every malformed line is reported with its number.

Formats (``#`` starts a comment line, blank lines are ignored):

- Decrypto keywords: one keyword per line.
- Who-is-Spy pairs: ``villager word, spy word`` per line.
- Chameleon cards: ``Category: word, word, ...`` per line, 16 words by default.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from games.base import normalize

KEYWORDS_FILE = "decrypto_keywords.txt"
PAIRS_FILE = "spy_pairs.txt"
CARDS_FILE = "chameleon_cards.txt"


class DeckError(ValueError):
    """A deck file that cannot be used; the message names the line and the problem."""


def _lines(text: str) -> list[tuple[int, str]]:
    out = []
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            out.append((no, line))
    return out


def _entry(no: int, raw: str, what: str) -> str:
    word = " ".join(raw.split())
    if not word or not normalize(word):
        raise DeckError(f"line {no}: empty {what}")
    if len(word) > 40:
        raise DeckError(f"line {no}: {what} {word!r} is longer than 40 characters")
    return word


def parse_keywords(text: str, *, minimum: int = 8) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    words = []
    for no, line in _lines(text):
        word = _entry(no, line, "keyword")
        key = normalize(word)
        if key in seen:
            raise DeckError(f"line {no}: {word!r} repeats line {seen[key]}")
        seen[key] = no
        words.append(word)
    if len(words) < minimum:
        raise DeckError(f"a keyword deck needs at least {minimum} keywords, this one has {len(words)}")
    return tuple(words)


def parse_pairs(text: str, *, minimum: int = 1) -> tuple[tuple[str, str], ...]:
    seen: dict[frozenset[str], int] = {}
    pairs = []
    for no, line in _lines(text):
        parts = line.split(",")
        if len(parts) != 2:
            raise DeckError(f"line {no}: expected 'villager word, spy word', got {line!r}")
        a, b = (_entry(no, p, "word") for p in parts)
        if normalize(a) == normalize(b):
            raise DeckError(f"line {no}: the two words of a pair must differ ({a!r})")
        key = frozenset((normalize(a), normalize(b)))
        if key in seen:
            raise DeckError(f"line {no}: pair {a!r}/{b!r} repeats line {seen[key]}")
        seen[key] = no
        pairs.append((a, b))
    if len(pairs) < minimum:
        raise DeckError(f"a pair deck needs at least {minimum} pairs, this one has {len(pairs)}")
    return tuple(pairs)


def parse_cards(text: str, *, size: int = 16, minimum: int = 1) -> tuple[tuple[str, tuple[str, ...]], ...]:
    seen: dict[str, int] = {}
    cards = []
    for no, line in _lines(text):
        if ":" not in line:
            raise DeckError(f"line {no}: expected 'Category: word, word, ...', got {line!r}")
        head, _, tail = line.partition(":")
        category = _entry(no, head, "category")
        key = normalize(category)
        if key in seen:
            raise DeckError(f"line {no}: category {category!r} repeats line {seen[key]}")
        seen[key] = no
        words = tuple(_entry(no, w, "word") for w in tail.split(","))
        if len(words) != size:
            raise DeckError(f"line {no}: category {category!r} has {len(words)} words, a card needs {size}")
        norm = [normalize(w) for w in words]
        dupes = sorted({w for w in norm if norm.count(w) > 1})
        if dupes:
            raise DeckError(f"line {no}: category {category!r} repeats {', '.join(dupes)}")
        cards.append((category, words))
    if len(cards) < minimum:
        raise DeckError(f"a card deck needs at least {minimum} cards, this one has {len(cards)}")
    return tuple(cards)


def _bundled(name: str) -> str:
    return resources.files("games").joinpath("data", name).read_text(encoding="utf-8")


@cache
def keywords() -> tuple[str, ...]:
    return parse_keywords(_bundled(KEYWORDS_FILE))


@cache
def pairs() -> tuple[tuple[str, str], ...]:
    return parse_pairs(_bundled(PAIRS_FILE))


@cache
def cards() -> tuple[tuple[str, tuple[str, ...]], ...]:
    return parse_cards(_bundled(CARDS_FILE))
