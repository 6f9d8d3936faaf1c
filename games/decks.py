"""Word banks: the bundled decks in ``games/data/`` (every game's, read through ``bundled``) and custom decks,
checked by one set of rules.

A custom deck comes as file text or as the parsed lists a config holds after a JSON round
trip; both go through the same checks, and every problem is reported with the line (text)
or entry (list) it is on. Parsing is pure, so a deck can be checked before a game starts.

File formats (``#`` starts a comment line, blank lines are ignored):

- Decrypto keywords: one keyword per line.
- Who-is-Spy pairs: ``villager word, spy word`` per line: the word-pair list researchers
  publish (SpyGame's keyword pairs). A ``villager_word, spy_word`` header line is skipped, a
  tab may separate the two words, and a word holding a comma is written in double quotes.
- Chameleon cards: ``Category: word, word, ...`` per line, 16 words on a bundled card.
- Chameleon cards from category-production norms (SNEAK built its instances from Banks &
  Connell 2023): a CSV with a ``category,word,frequency`` header (columns in any order,
  others ignored), one row per produced word; each category becomes a card of its most
  frequently produced words, as many as the card size (12 for sneak, 16 for classic),
  most frequent first (ties keep the file's order). ``parse_cards`` recognises the header.
"""

from __future__ import annotations

import csv
from collections import Counter
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
MAX_CARD_WORDS = 64  # a card plays 16 at most; a 400,000-word card once took minutes to refuse
MAX_LINE_CHARS = 4096  # a card of 64 words of 40 characters fits; anything longer is no deck line

Card = tuple[str, tuple[str, ...]]


class DeckError(ValueError):
    """A deck that cannot be used; the message names the line or entry and the problem."""


def _rows(raw: object, what: str) -> list[tuple[str, object]]:
    """(where, entry) for file text (one entry a line) or for a list of entries."""
    if isinstance(raw, str):
        rows: list[tuple[str, object]] = [(f"line {no}", line.strip()) for no, line in enumerate(raw.splitlines(), start=1)
                if line.strip() and not line.strip().startswith("#")]
        long = next(((where, line) for where, line in rows if isinstance(line, str) and len(line) > MAX_LINE_CHARS), None)
        if long is not None:
            raise DeckError(f"{long[0]}: {len(str(long[1]))} characters; a deck line holds at most {MAX_LINE_CHARS}")
        return rows
    if isinstance(raw, (list, tuple)):
        return [(f"entry {i}", entry) for i, entry in enumerate(raw, start=1)]
    raise DeckError(f"a {what} deck is file text or a list, not {type(raw).__name__}")


def _shown(entry: object) -> str:
    """An entry as an error quotes it: never more than a line."""
    text = repr(entry)
    return text if len(text) <= 80 else text[:77] + "..."


def _word(where: str, raw: object, what: str) -> str:
    if not isinstance(raw, str):
        raise DeckError(f"{where}: a {what} must be a word, not {_shown(raw)}")
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


_PAIR_HEADERS = ({"villager_word", "spy_word"}, {"villager word", "spy word"}, {"villager", "spy"})


def _pair_fields(line: str) -> list[str]:
    """The fields of one pair line: comma- or tab-separated, double quotes around a comma."""
    delimiter = "\t" if "\t" in line and "," not in line else ","
    return [f.strip() for f in next(csv.reader([line], delimiter=delimiter, skipinitialspace=True))]


def parse_pairs(raw: str | Sequence[object], *, minimum: int = 1) -> tuple[tuple[str, str], ...]:
    seen: dict[frozenset[str], str] = {}
    pairs = []
    for n, (where, entry) in enumerate(_rows(raw, "pair")):
        if isinstance(entry, str):
            fields = _pair_fields(entry)
            if n == 0 and {f.lower() for f in fields} in _PAIR_HEADERS:
                continue  # the header of a published pair list
            parts: object = fields
        else:
            parts = entry
        if not isinstance(parts, (list, tuple)) or len(parts) != 2:
            raise DeckError(f"{where}: expected two words, 'villager word, spy word', got {_shown(entry)}")
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


NORMS_COLUMNS = ("category", "word", "frequency")


def _is_norms(raw: object) -> bool:
    """Category-norms CSV text: its first line that is not a comment names the norms columns."""
    if not isinstance(raw, str):
        return False
    first = next((ln for ln in raw.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    return set(NORMS_COLUMNS) <= {c.strip().lower() for c in first.split(",")}


def parse_norms(text: str, *, size: int = 16) -> list[tuple[str, list[str]]]:
    """Cards from category-production norms: per category, the ``size`` most frequent words.

    Every malformed row is named by its line: a missing column, an empty category or word, a
    frequency that is not a number of at least 0, a word listed twice in one category, a
    category with fewer than ``size`` words. The cards then go through ``parse_cards``."""
    lines = [(no, ln) for no, ln in enumerate(text.splitlines(), start=1) if ln.strip() and not ln.strip().startswith("#")]
    if not lines:
        raise DeckError("a category-norms deck needs a header line 'category,word,frequency'")
    (head_no, head), rows = lines[0], lines[1:]
    columns = [c.strip().lower() for c in next(csv.reader([head]))]
    missing = [c for c in NORMS_COLUMNS if c not in columns]
    if missing:
        raise DeckError(f"line {head_no}: the header needs columns {', '.join(NORMS_COLUMNS)}; missing {', '.join(missing)}")
    at = {c: columns.index(c) for c in NORMS_COLUMNS}
    by_category: dict[str, tuple[str, list[tuple[float, int, str]]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for order, (no, line) in enumerate(rows):
        fields = next(csv.reader([line], skipinitialspace=True))
        if len(fields) < len(columns):
            raise DeckError(f"line {no}: expected {len(columns)} columns ({', '.join(columns)}), got {len(fields)}: {_shown(line.strip())}")
        category = _word(f"line {no}", fields[at["category"]], "category")
        word = _word(f"line {no}", fields[at["word"]], "word")
        raw_freq = fields[at["frequency"]].strip()
        try:
            freq = float(raw_freq)
        except ValueError:
            freq = float("nan")
        if not freq >= 0 or freq == float("inf"):
            raise DeckError(f"line {no}: frequency must be a number of at least 0, not {raw_freq!r}")
        key = (normalize(category), normalize(word))
        if key in seen:
            raise DeckError(f"line {no}: {word!r} repeats line {seen[key]} in category {category!r}")
        seen[key] = no
        by_category.setdefault(key[0], (category, []))[1].append((-freq, order, word))
    cards = []
    for category, words in by_category.values():
        if len(words) < size:
            raise DeckError(f"category {category!r} has {len(words)} words; a card needs the {size} most frequent")
        cards.append((category, [w for _, _, w in sorted(words)[:size]]))
    return cards


def parse_cards(raw: str | Sequence[object], *, size: int = 16, minimum: int = 1) -> tuple[Card, ...]:
    """Cards of at least ``size`` distinct words (a game may play only the first ``size``).

    Card-file text, lists, or category-norms CSV text (see ``parse_norms``)."""
    if isinstance(raw, str) and _is_norms(raw):
        raw = parse_norms(raw, size=size)
    seen: dict[str, str] = {}
    cards = []
    for where, entry in _rows(raw, "card"):
        if isinstance(entry, str):
            if ":" not in entry:
                raise DeckError(f"{where}: expected 'Category: word, word, ...', got {_shown(entry)}")
            head, _, tail = entry.partition(":")
            entry = (head, tail.split(","))
        if not isinstance(entry, (list, tuple)) or len(entry) != 2 or not isinstance(entry[1], (list, tuple)):
            raise DeckError(f"{where}: expected [category, [word, ...]], got {_shown(entry)}")
        if len(entry[1]) > MAX_CARD_WORDS:
            raise DeckError(f"{where}: a card has {len(entry[1])} words; a card holds at most {MAX_CARD_WORDS}")
        category = _word(where, entry[0], "category")
        key = normalize(category)
        if key in seen:
            raise DeckError(f"{where}: category {category!r} repeats card of {seen[key]}")
        seen[key] = where
        words = tuple(_word(where, w, "word") for w in entry[1])
        if len(words) < size:
            raise DeckError(f"{where}: card {category!r} has {len(words)} words; a card needs {size}")
        norm = Counter(normalize(w) for w in words)
        dupes = sorted(w for w, n in norm.items() if n > 1)
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


def bundled(name: str) -> str:
    """The text of a bundled word bank: every game's bank is a file of ``games/data/`` named for its game
    (``<game id>_<what>.txt``), read here and nowhere else (``tests/games/test_word_banks.py``)."""
    return resources.files("games").joinpath("data", name).read_text(encoding="utf-8")


@cache
def keywords() -> tuple[str, ...]:
    return parse_keywords(bundled(KEYWORDS_FILE))


@cache
def pairs() -> tuple[tuple[str, str], ...]:
    return parse_pairs(bundled(PAIRS_FILE))


@cache
def cards() -> tuple[Card, ...]:
    return parse_cards(bundled(CARDS_FILE))
