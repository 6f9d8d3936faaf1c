"""Text as the rules read it: one normalisation and one secret check for every engine.

Players (and models) try to slip a secret past the rules: ``Ĺöçk``, a Cyrillic ``о``
inside ``stооl``, full-width ``ｓｔｏｏｌ``, a zero-width space or a soft hyphen inside
the word, a plural. Every rule that compares player text with a secret, and every
length or word-count limit, goes through this module so the three games cannot drift
apart again:

- ``normalize(s)``: NFKC, Latin look-alikes folded, invisible and format characters
  and combining marks (accents) stripped, case-folded. What a rule compares.
- ``words(s)``: the words of a text the way limits count them. A hyphen, slash or dot
  separates words (``out-of-distribution`` is three words); an apostrophe does not
  (``don't`` is one).
- ``mentions_secret(text, secret)``: the secret, or an inflected form of it (plural,
  ``-ed``, ``-ing``, ``-er``), appears in the text as whole words after normalisation.
  Whole words only: ``danger`` does not mention ``anger``. ``compounds=True`` also
  refuses a longer word containing the secret (the Chameleon's "snowman" rule).
- ``reveals_secret(text, secret)``: the check every game's clue rule uses (Chameleon clues,
  Decrypto hints, Who-is-Spy descriptions): ``mentions_secret``, plus the secret read
  letters-only inside a word (``snowman``, ``st'rawberry``, ``strawberry2``) or spelled
  across consecutive words (``straw berry``, ``s t r a w b e r r y``).
- ``clean(s)``: the text a player meant, as an engine stores it: whitespace collapsed,
  invisible characters and seat-label delimiters removed, the visible letters kept.
- ``has_number(s)``: a word of the text is a number (a Decrypto hint may not be a code).

The look-alike table is our own (about forty letters) rather than a confusables
library: the engines must stay free of third-party imports and data files, and only
the fold to Latin is needed, not detection across all scripts.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Cyrillic and Greek letters that render like Latin ones, mapped before case folding so
# that upper and lower case keep their own look (Greek ``Η`` is an H, ``η`` an n).
_LOOKALIKES: dict[str, str] = {
    # Cyrillic capitals
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ї": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D",
    "Ԛ": "Q", "Ԝ": "W", "Ү": "Y", "Һ": "H", "Ӏ": "I",
    # Cyrillic small letters
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d",
    "ԛ": "q", "ԝ": "w", "ү": "y", "һ": "h", "ӏ": "l", "ɡ": "g",
    # Greek capitals
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Greek small letters
    "α": "a", "ο": "o", "ρ": "p", "ι": "i", "κ": "k", "ν": "v", "υ": "u", "χ": "x", "γ": "y",
    "ε": "e", "τ": "t", "ς": "c",
}  # fmt: skip
_FOLD = str.maketrans(_LOOKALIKES)

# Letters, digits and apostrophes inside a word; everything else separates words.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th)?")
_SPACE = re.compile(r"\s+")


def _invisible(ch: str) -> bool:
    """Format characters (zero-width space and joiners, soft hyphen, bidi marks), private-use
    characters (the seat-label delimiters of ``games.labels``) and variation selectors."""
    cat = unicodedata.category(ch)
    return cat in ("Cf", "Co", "Cs") or "\ufe00" <= ch <= "\ufe0f" or ch == "\u034f"


@lru_cache(maxsize=8192)
def normalize(s: str) -> str:
    """The text a rule compares: NFKC, look-alikes folded to Latin, invisible characters and
    combining marks (accents) removed, case-folded. Word boundaries are kept."""
    s = unicodedata.normalize("NFKC", s)
    s = "".join(ch for ch in s if not _invisible(ch))
    s = s.translate(_FOLD)
    s = unicodedata.normalize("NFKD", s.casefold())
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    # Folding again after NFKD catches look-alikes that carried an accent (``ё``).
    return unicodedata.normalize("NFC", s).translate(_FOLD).casefold()


def words(s: str) -> list[str]:
    """The normalised words of a text: what word limits count and what rules compare."""
    return [w.replace("’", "'") for w in _WORD.findall(normalize(s))]


def tokens(s: str) -> list[str]:
    """Normalised words with hyphenated compounds kept whole (``3-1-4``, ``ice-cream``): what
    the leak checks look for, where a code must not match three loose digits."""
    return [w.replace("’", "'") for w in _TOKEN.findall(normalize(s))]


def word_count(s: str) -> int:
    return len(words(s))


def key(s: str) -> str:
    """Letters and digits only: ``Ice-cream``, ``ice cream`` and ``IceCream`` share one key."""
    return "".join(w.replace("'", "") for w in words(s))


def clean(s: str) -> str:
    """What a player wrote, as an engine keeps it: invisible characters gone, spaces collapsed."""
    return _SPACE.sub(" ", "".join(ch for ch in s if not _invisible(ch))).strip()


def has_number(s: str) -> bool:
    """A word of the text is a number (``341``, the ``3``s of ``3-4-1``, full-width ``３``) or an
    ordinal (``3rd``). Words that merely contain a digit (``R2D2``) are words."""
    return any(_NUMBER.fullmatch(w) for w in words(s))


# --------------------------------------------------------------------------- inflection

_VOWELS = frozenset("aeiou")


@lru_cache(maxsize=8192)
def _plural_stems(word: str) -> frozenset[str]:
    """Singulars a word could be the plural (or possessive) of: bees, cities, boxes, leaves."""
    out: set[str] = set()
    n = len(word)
    if n >= 4 and word.endswith("ies"):
        out.add(word[:-3] + "y")
    if n >= 4 and word.endswith("ves"):
        out.update((word[:-3] + "f", word[:-3] + "fe"))
    if n >= 4 and word.endswith(("ses", "xes", "zes", "ches", "shes", "oes")):
        out.add(word[:-2])  # buses, boxes, churches, dishes, potatoes; not bees -> "be"
    if n >= 3 and word.endswith("s") and not word.endswith("ss"):
        out.add(word[:-1])
    if n >= 4 and word.endswith("'s"):
        out.add(word[:-2])
    return frozenset(out)


@lru_cache(maxsize=8192)
def _stems(word: str) -> frozenset[str]:
    """Base forms a word could be an inflection of: ``bees`` -> bee, ``cities`` -> city,
    ``baked`` -> bake, ``stopping`` -> stop, ``painter`` -> paint, ``baker`` -> bake.
    Over-generates on purpose: a stem only matters when it equals the secret."""
    out = {word, *_plural_stems(word)}
    # -er needs a stem of four letters (a baker bakes, but a corner is no form of "cor").
    for suffix, shortest in (("ed", 3), ("ing", 3), ("ings", 3), ("er", 4), ("ers", 4)):
        stem = word[: -len(suffix)]
        if not word.endswith(suffix) or len(stem) < 3:
            continue
        if len(stem) >= shortest:
            out.add(stem)
        if stem.endswith("i"):
            out.add(stem[:-1] + "y")  # carried -> carry, copier -> copy
        if stem[-1] not in _VOWELS:
            # bake -> baked, baking, baker: the dropped e comes back, but only after a
            # consonant, so "bee" never turns "beer" into one of its forms.
            out.add(stem + "e")
        # stopped, running -> stop, run; not for -er, where hammer, butter, letter are
        # words of their own rather than forms of ham, but, let.
        if suffix in ("ed", "ing", "ings") and stem[-1] == stem[-2] and stem[-1] not in _VOWELS:
            out.add(stem[:-1])
    return frozenset(out)


def _same_word(said: str, secret: str) -> bool:
    """``said`` is the secret word or one of its forms; or the secret is a plural of ``said``."""
    return said == secret or secret in _stems(said) or said in _plural_stems(secret)


def mentions_secret(text: str, secret: str, *, compounds: bool = False) -> bool:
    """True when ``text`` names ``secret`` (one or more words) after normalisation: the same
    words, in order, each possibly inflected (plural, -ed, -ing, -er); or, for a secret of
    several words, those words run together (``icecream``). With ``compounds`` a longer word
    that contains a secret of four letters or more counts too (``snowman`` for ``snow``)."""
    said, needle = words(text), words(secret)
    if not needle:
        return False
    n = len(needle)
    for i in range(len(said) - n + 1):
        if all(_same_word(said[i + j], needle[j]) for j in range(n)):
            return True
    joined = "".join(w.replace("'", "") for w in needle)
    if n > 1 and any(_same_word(w.replace("'", ""), joined) for w in said):
        return True
    if compounds:
        whole = key(text)
        # Short secrets ("go", "tin") would otherwise forbid ordinary words ("good", "tiny").
        return whole == joined or (len(joined) >= 4 and joined in whole)
    return False


def _letters(word: str) -> str:
    """A normalised word's letters only: ``st'rawberry`` -> strawberry, ``strawberry2`` -> strawberry."""
    return "".join(ch for ch in word if ch.isalpha())


def reveals_secret(text: str, secret: str) -> bool:
    """The one secret check of every clue, hint and description: True when ``text`` names
    ``secret`` in a way a reader reads as the secret. That is ``mentions_secret`` (the word or
    an inflected form, as whole words) and, read letters-only:

    - a word that holds a secret of four letters or more inside it once its other characters
      are dropped: a compound (``snowman`` for snow), ``st'rawberry``, ``strawberry2``,
      ``strawberryes``; a shorter secret only as the whole word (``i'ce``), so ``tiny`` stays
      free of ``tin``;
    - consecutive words whose letters spell the secret or an inflected form of it between
      them: ``straw berry``, ``st-rawberry``, ``st.rawberry``, ``straw·berry``,
      ``s t r a w b e r r y``, ``straw berries``.

    Letters are not run together across words that do not spell the secret exactly, so a
    sentence such as "I'd be around" does not name "bear": descriptions of several words stay
    sayable. For a one-word clue this is the Chameleon's ``mentions_secret(compounds=True)``."""
    if mentions_secret(text, secret):
        return True
    target = _letters(key(secret))
    if not target:
        return False
    pieces = [_letters(w) for w in words(text)]
    if any(p == target or (len(target) >= 4 and target in p) for p in pieces):
        return True
    for i in range(len(pieces)):
        joined = pieces[i]
        for piece in pieces[i + 1 :]:
            joined += piece
            if _same_word(joined, target):
                return True
            if len(joined) > len(target) + 4:  # longer than any inflected form: stop extending
                break
    return False


def same_words(guess: str, target: str) -> bool:
    """A guess names the target: the same words after normalisation, any of them in the
    singular or plural (``Bees`` names ``bee``). Other inflections do not count here: a guess
    must be the word, not merely mention it."""
    said, want = words(guess), words(target)
    return bool(want) and len(said) == len(want) and all(
        a == b or a in _plural_stems(b) or b in _plural_stems(a) for a, b in zip(said, want, strict=True)
    )
