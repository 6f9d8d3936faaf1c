"""The hint vocabulary of the word-embedding baselines.

Baselines never invent words: they pick hints, clues and descriptions from a
fixed list, the way the Decrypto paper's baselines draw from a fixed noun
corpus. Ours is every word of our bundled decks (Decrypto keywords, Who-is-Spy
pairs, Chameleon cards) plus ``models/agents/data/vocab.txt``. Entries are
normalised (lower case, single spaces), deduplicated, kept in a stable order
(so a seed picks the same word everywhere), and limited to what every game
accepts as one hint: at most two words and 30 characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib import resources

from games import decks
from games.base import normalize, words_of

VOCAB_FILE = "vocab.txt"
MAX_WORDS = 2
MAX_CHARS = 30


def parse_vocab(text: str) -> tuple[str, ...]:
    """Words separated by whitespace; ``_`` joins a multi-word entry; ``#`` starts a comment line."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        out.extend(tok.replace("_", " ") for tok in line.split())
    return tuple(out)


def build_vocab(words: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for raw in words:
        w = normalize(raw)
        if w and len(words_of(w)) <= MAX_WORDS and len(w) <= MAX_CHARS:
            seen.setdefault(w, None)
    return tuple(seen)


def deck_words() -> list[str]:
    out = list(decks.keywords())
    for a, b in decks.pairs():
        out += [a, b]
    for _, card in decks.cards():
        out += list(card)
    return out


@cache
def default_vocab() -> tuple[str, ...]:
    extra = resources.files("models.agents").joinpath("data", VOCAB_FILE).read_text(encoding="utf-8")
    return build_vocab([*deck_words(), *parse_vocab(extra)])
