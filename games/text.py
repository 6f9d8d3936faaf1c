"""Text as the rules read it: one normalisation and one secret check for every engine.

Players (and models) try to slip a secret past the rules: ``Ĺöçk``, a Cyrillic ``о``
inside ``stооl``, full-width ``ｓｔｏｏｌ``, a zero-width space or a soft hyphen inside
the word, a plural. Every rule that compares player text with a secret, and every
length or word-count limit, goes through this module so the three games cannot drift
apart again:

- ``fold(s)``: NFKC, Latin look-alikes folded (Cyrillic and Greek, small capitals, IPA letters,
  ``ł``/``ø``/``đ``), invisible and format characters, Hangul fillers and combining marks (accents)
  stripped, case-folded. What a rule compares.
- ``words(s)``: the words of a text the way limits count them. A hyphen, slash or dot
  separates words (``out-of-distribution`` is three words); an apostrophe does not
  (``don't`` is one).
- ``mentions_secret(text, secret)``: the secret, or an inflected form of it (plural,
  ``-ed``, ``-ing``, ``-er``), appears in the text as whole words after normalisation.
  Whole words only: ``danger`` does not mention ``anger``. ``compounds=True`` also
  refuses a longer word containing the secret (the Chameleon's "snowman" rule) and, for a
  three-letter secret, a compound of it (``eyelash``, ``catwalk``, ``sunflower``).
- ``reveals_secret(text, secret)``: the check every game's clue rule uses (Chameleon clues,
  Decrypto hints, Who-is-Spy descriptions, Spymasters clues): ``mentions_secret``, a word
  of the text that is a variant of the secret (``is_variant``), plus the secret read
  letters-only inside a word (``snowman``, ``st'rawberry``, ``strawberry2``) or spelled
  across consecutive words (``straw berry``, ``s t r a w b e r r y``).
- ``is_variant(a, b)``: two words are forms of one word: inflected (``mice``, ``flew``),
  derived (``painter``, ``pianist``, ``librarian``, ``icy``), the other spelling
  (``colour``, ``doughnut``), digits for a number word (``7`` for seven), or a three-letter
  word with a suffix (``eggy``, ``taxman``; ``tiny`` stays a word of its own).
- ``clean(s)``: the text a player meant, as an engine stores it: whitespace collapsed,
  invisible characters and seat-label delimiters removed, the visible letters kept.
- ``has_number(s)``: a word of the text is a number (a Decrypto hint may not be a code).
- ``typed_number(s)``: the whole number a person typed, ASCII digits only, or None.
- ``name_problem(s)`` / ``display_name(s)``: the one rule for a name (a player, a tournament, a study
  member): NFKC, no control, format (bidi, zero-width) or blank characters, not empty, at most
  ``MAX_NAME_CHARS``; a typed name is refused with one line, a platform's is made to fit.

Letters that read as Latin ones (``ı``, a Cyrillic ``о``) fold to Latin: Unicode's
confusables for letters that look like one ASCII letter (``games/data/confusables.txt``)
and our own table of about forty Cyrillic and Greek letters, which wins where they differ.
What the variant check knows of English (WordNet 3.0's derivational links and exception
lists, British and American spellings, words shaped like a short word plus a suffix that
are not made from it, compounds of three-letter words) is ``games/data/wordforms.txt``. Both files are built by
``models/wordforms.py`` from packages the project installs and read here as this package's
own data, once, on first use: the engines import nothing from outside the standard library.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

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
# Letters NFKD leaves whole that read as a Latin letter all the same: small capitals (``ᴘɪʟᴏᴛ``), IPA
# letters (``ɐ``, ``ɨ``, ``ɹ``), letters with a stroke or hook (``ł``, ``ø``, ``đ``, ``ƙ``).
_SMALL_IPA_STROKED: dict[str, str] = {pair[0]: pair[1] for pair in (
    # small capitals
    "ᴀa ʙb ᴄc ᴅd ᴇe ꜰf ɢg ʜh ᴊj ᴋk ʟl ᴍm ɴn ᴏo ᴘp ꞯq ʀr ꜱs ᴛt ᴜu ᴠv ᴡw ᴢz ᴌl ᴉi ᴎn ᴙr ᴚr ᴐo ᴑo ᴒo ᴓo ᴗu ᴝu ᴞu ᴟm ᴣz "
    # IPA letters
    "ɐa ɒa ɓb ɔo ɕc ɖd ɗd ɘe əe ɚe ɛe ɜe ɝe ɞe ɟj ɠg ɤy ɥh ɦh ɧh ɨi ɫl ɬl ɭl ɰw ɱm ɲn "
    "ɳn ɵo ɹr ɺr ɻr ɼr ɽr ɾr ɿr ʁr ʂs ʇt ʈt ʉu ʊu ʌv ʍw ʎy ʐz ʑz ʒz ʓz ʗc ʘo ʛg ʝj ʞk ʠq "
    # a stroke, a bar or a hook
    "łl ŁL øo ØO đd ĐD ħh ĦH ŧt ŦT ƀb ɃB ɇe ɆE ɍr ɌR ƶz ƵZ ȼc ȻC ǥg ǤG ɉj ɈJ ꝁk ɏy ɎY "
    "ᵽp ⱥa ȺA ȥz ƚl ȴl ȵn ȶt ƒf ƭt ƴy ƥp ƙk ƈc ƌd ᶀb ᵬb ᵭd ᵮf ᵯm ᵰn ᵱp ᵲr ᵳr ᵴs ᵵt ᵶz"
).split()}
# Fillers that draw nothing and NFKC keeps as letters: Hangul's (``pi\u3164lot``) and the braille blank.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
CONFUSABLES_FILE = "confusables.txt"
WORDFORMS_FILE = "wordforms.txt"


def _data(name: str) -> list[str]:
    """The lines of one of this package's data files (``games/data``), comments left out."""
    text = resources.files("games").joinpath("data", name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@cache
def _latin() -> dict[int, str]:
    """Unicode's confusables (letters that read as one Latin letter: ``ı`` as i), from
    ``games/data/confusables.txt``; our own table above wins where the two differ."""
    table = {}
    for line in _data(CONFUSABLES_FILE):
        ch, _, latin = line.partition(" ")
        table[ch] = latin
    table.update(_SMALL_IPA_STROKED)
    table.update(_LOOKALIKES)
    return str.maketrans(table)

# Letters, digits and apostrophes inside a word; everything else separates words.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th)?")
_SPACE = re.compile(r"\s+")


def _invisible(ch: str) -> bool:
    """Format characters (zero-width space and joiners, soft hyphen, bidi marks), private-use
    characters (the seat-label delimiters of ``games.labels``) and variation selectors."""
    cat = unicodedata.category(ch)
    return cat in ("Cf", "Co", "Cs") or "\ufe00" <= ch <= "\ufe0f" or ch == "\u034f" or ch in _BLANK_LETTERS


@lru_cache(maxsize=8192)
def fold(s: str) -> str:
    """The text a rule compares: NFKC, look-alikes folded to Latin, invisible characters and
    combining marks (accents) removed, case-folded. Word boundaries are kept."""
    s = unicodedata.normalize("NFKC", s)
    s = "".join(ch for ch in s if not _invisible(ch))
    s = s.translate(_latin())
    s = unicodedata.normalize("NFKD", s.casefold())
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    # Folding again after NFKD catches look-alikes that carried an accent (``ё``).
    return unicodedata.normalize("NFC", s).translate(_latin()).casefold()


def words(s: str) -> list[str]:
    """The normalised words of a text: what word limits count and what rules compare."""
    return [w.replace("’", "'") for w in _WORD.findall(fold(s))]


def tokens(s: str) -> list[str]:
    """Normalised words with hyphenated compounds kept whole (``3-1-4``, ``ice-cream``): what
    the leak checks look for, where a code must not match three loose digits."""
    return [w.replace("’", "'") for w in _TOKEN.findall(fold(s))]


def key(s: str) -> str:
    """Letters and digits only: ``Ice-cream``, ``ice cream`` and ``IceCream`` share one key."""
    return "".join(w.replace("'", "") for w in words(s))


def clean(s: str) -> str:
    """What a player wrote, as an engine keeps it: invisible characters gone, spaces collapsed."""
    return _SPACE.sub(" ", "".join(ch for ch in s if not _invisible(ch))).strip()


def typed_number(s: str, max_digits: int = 9) -> int | None:
    """The whole number ``s`` is (spaces around it aside): ASCII digits only, at most ``max_digits`` of them; None else.

    Every number a person, an operator or a file types goes through here: ``int()`` reads any Unicode decimal
    (``१``, ``٣``, fullwidth ``１``) and raises on what ``str.isdigit`` still calls a digit (``²``, ``①``) and on
    more than 4,300 digits, so an ``isdigit()`` check before it let each of those through as a traceback."""
    t = s.strip()
    return int(t) if 0 < len(t) <= max_digits and t.isascii() and t.isdigit() else None


MAX_NAME_CHARS = 80
# Controls (a newline forges a line of a listing), format characters (bidi overrides turn text around,
# zero-width ones hide), private-use (the seat-label delimiters), surrogates, unassigned, line separators.
_NOT_IN_NAMES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def _unfit(ch: str) -> bool:
    return unicodedata.category(ch) in _NOT_IN_NAMES or ch in _BLANK_LETTERS or "\ufe00" <= ch <= "\ufe0f"


def name_problem(raw: str, what: str = "A name", max_chars: int = MAX_NAME_CHARS) -> str | None:
    """Why ``raw`` (NFKC-normalised, spaces around it aside) is no name, in one sentence; None when it is one."""
    name = unicodedata.normalize("NFKC", raw).strip()
    if not name:
        return f"{what} cannot be empty."
    if any(_unfit(ch) for ch in name):
        return f"{what} cannot hold control, invisible or direction-changing characters."
    if len(name) > max_chars:
        return f"{what} has at most {max_chars} characters; this one has {len(name)}."
    return None


def person_name(raw: str, max_chars: int = MAX_NAME_CHARS) -> str:
    """``raw`` as the name it is stored and compared as (NFKC, spaces around it gone): ``ａｄａ`` is ``ada``.
    Check it with `name_problem` first."""
    return unicodedata.normalize("NFKC", raw).strip()[:max_chars]


def display_name(raw: str, fallback: str = "", max_chars: int = MAX_NAME_CHARS) -> str:
    """A name from a platform made to fit the rule: unfit characters dropped, spaces collapsed, cut to
    ``max_chars``; ``fallback`` when nothing is left."""
    name = "".join(" " if ch.isspace() else ch for ch in unicodedata.normalize("NFKC", raw) if not _unfit(ch) or ch.isspace())
    name = _SPACE.sub(" ", name).strip()[:max_chars].strip()
    return name or fallback


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
    if n >= 3 and word.endswith("men"):
        out.add(word[:-3] + "man")  # women, firemen
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


@lru_cache(maxsize=32768)
def base_forms(word: str) -> frozenset[str]:
    """The words a normalised single ``word`` could be a form of, itself included: ``berries`` -> berry,
    ``baking`` -> bake, ``stopped`` -> stop, ``mice`` -> mouse. What log masking compares with a held secret."""
    return _stems(word) | frozenset(_lexicon().morphy(word))


def _same_word(said: str, secret: str) -> bool:
    """``said`` is the secret word or one of its forms; or the secret is a plural of ``said``."""
    return said == secret or secret in _stems(said) or said in _plural_stems(secret)


# --------------------------------------------------------------------------- variants

SHORT_SUFFIXES = frozenset({
    "y", "ey", "ie", "ies", "ier", "iest", "ily", "iness", "ish", "less", "ful", "fuls", "ly", "ness", "like",
    "er", "ers", "ed", "ing", "ings", "s", "es", "en", "let", "lets", "ling", "lings", "dom", "hood", "ship",
    "ery", "age", "ism", "ist", "ists", "ian", "man", "men", "woman", "women",
})  # fmt: skip
"""What makes a word from a three-letter one (``eggy``, ``ashen``, ``taxman``)."""

# WordNet's morphy: the regular endings undone, each onto a lemma of its part of speech.
_MORPHY: tuple[tuple[str, str, str], ...] = (
    ("s", "", "n"), ("ses", "s", "n"), ("xes", "x", "n"), ("zes", "z", "n"), ("ches", "ch", "n"),
    ("shes", "sh", "n"), ("men", "man", "n"), ("ies", "y", "n"),
    ("s", "", "v"), ("ies", "y", "v"), ("es", "e", "v"), ("es", "", "v"), ("ed", "e", "v"), ("ed", "", "v"),
    ("ing", "e", "v"), ("ing", "", "v"),
    ("er", "", "a"), ("est", "", "a"), ("er", "e", "a"), ("est", "e", "a"),
)  # fmt: skip
_AGENT = ("ians", "ian", "ists", "ist")  # librarian, pianist: the player of a word's root
_ROOT_ENDINGS = ("y", "e", "o", "a", "ic", "ics", "ism", "ity")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen twenty").split()
_TENS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
         "hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_ORDINAL_UNITS = ("zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
                  "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
_NUMBER_WORDS: dict[str, int] = {
    **{w: i for i, w in enumerate(_UNITS)}, **_TENS, **{w: i for i, w in enumerate(_ORDINAL_UNITS)},
    **{w[:-1] + "ieth": n for w, n in _TENS.items() if w.endswith("y")},
    **{w + "th": n for w, n in _TENS.items() if not w.endswith("y")},
}
_DIGITS = re.compile(r"(\d+)(?:st|nd|rd|th)?")


@dataclass(frozen=True, slots=True)
class _Lexicon:
    """``games/data/wordforms.txt`` (built by ``models/wordforms.py`` from WordNet and breame)."""

    pos: dict[str, str]  # lemma -> its parts of speech ("nv")
    links: dict[str, frozenset[str]]  # lemma -> the lemmas derived from it or it from them
    irregular: dict[str, frozenset[str]]  # mice -> mouse, flew -> fly
    spelling: dict[str, str]  # British -> American spelling
    innocent: frozenset[str]  # words shaped like a short word plus a suffix that are not made from it
    compounds: dict[str, frozenset[str]]  # eyelash -> {eye}: a word made of a three-letter word and another

    def morphy(self, word: str) -> set[str]:
        out = set(self.irregular.get(word, ()))
        for suffix, repl, pos in _MORPHY:
            if not word.endswith(suffix) or len(word) <= len(suffix) + 1:
                continue
            stem = word[: -len(suffix)]
            for base in (stem + repl, stem[:-1] + repl if len(stem) > 2 and stem[-1] == stem[-2] else ""):
                if base and (pos in self.pos.get(base, "") or base in self.spelling):
                    out.add(base)
        return out


@cache
def _lexicon() -> _Lexicon:
    pos: dict[str, str] = {}
    links: dict[str, frozenset[str]] = {}
    irregular: dict[str, frozenset[str]] = {}
    spelling: dict[str, str] = {}
    innocent: set[str] = set()
    compounds: dict[str, set[str]] = {}
    section = ""
    for line in _data(WORDFORMS_FILE):
        if line.startswith("@"):
            section = line[1:]
            continue
        parts = line.split()
        if section == "family":
            pos[parts[0]] = parts[1]
            links[parts[0]] = frozenset(parts[2:])
        elif section == "irregular":
            irregular[parts[0]] = frozenset(parts[1:])
        elif section == "spelling":
            spelling[parts[0]] = parts[1]
        elif section == "innocent":
            innocent.update(parts)
        elif section == "compound":
            compounds.setdefault(parts[0], set()).update(parts[1:])
    return _Lexicon(pos, links, irregular, spelling, frozenset(innocent), {w: frozenset(s) for w, s in compounds.items()})


def _number(word: str) -> int | None:
    """``seven``, ``7``, ``seventh``, ``7th`` -> 7; None for a word that is no number."""
    m = _DIGITS.fullmatch(word)
    if m:
        return int(m.group(1))
    return _NUMBER_WORDS.get(word)


@lru_cache(maxsize=32768)
def _family(word: str) -> frozenset[str]:
    """The word, its base forms (WordNet's morphy and exception lists), both spellings of each,
    and the words WordNet derives from them or them from (``painter`` -> paint, painterly);
    a number word and its digits share ``#7``."""
    lex = _lexicon()
    bases = {word, *lex.morphy(word)}
    bases |= {lex.spelling[b] for b in bases if b in lex.spelling}
    out = set(bases)
    for b in bases:
        out |= lex.links.get(b, frozenset())
    for b in bases | _plural_stems(word):  # sevens, 7s
        n = _number(b)
        if n is not None:
            out.add(f"#{n}")
    out |= {lex.spelling[w] for w in out if w in lex.spelling}
    return frozenset(out)


def short_affix_kind(word: str, short: str) -> str:
    """How ``word`` is the three-letter ``short`` with a suffix: "doubled" (``sunny``, ``catty``:
    the last letter doubled), "plain" (``eggy``, ``taxman``, ``icy`` with the final e dropped),
    or "" (no such shape: ``tin`` and ``tinsel``)."""
    if len(short) != 3 or len(word) <= 3:
        return ""
    if word.startswith(short):
        if short[-1] not in _VOWELS and word[3] == short[-1] and word[4:] in SHORT_SUFFIXES:
            return "doubled"
        return "plain" if word[3:] in SHORT_SUFFIXES else ""
    if short.endswith("e") and word.startswith(short[:2]) and word[2:] in SHORT_SUFFIXES:
        return "plain"
    return ""


def _short_affix(word: str, short: str) -> bool:
    kind = short_affix_kind(word, short)
    return kind == "doubled" or (kind == "plain" and word not in _lexicon().innocent)


@lru_cache(maxsize=32768)
def _agent_root(word: str) -> str | None:
    for suffix in _AGENT:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return None


@lru_cache(maxsize=32768)
def _roots(word: str) -> frozenset[str]:
    return frozenset({word, *(word[: -len(e)] for e in _ROOT_ENDINGS if word.endswith(e) and len(word) - len(e) >= 4)})


@lru_cache(maxsize=65536)
def is_variant(a: str, b: str) -> bool:
    """Two normalised single words are forms of one word: the same word inflected (``mice``,
    ``flew``), derived (``painter``, ``pianist``, ``icy``), spelled the British or the American
    way (``colour``), as digits (``7``), or a three-letter word with a suffix (``eggy``,
    ``taxman``; not ``tiny`` for "tin": a word of its own)."""
    a, b = a.replace("'", ""), b.replace("'", "")
    if not a or not b:
        return False
    if a == b or _same_word(a, b) or _same_word(b, a):
        return True
    if _family(a) & _family(b):
        return True
    ra, rb = _agent_root(a), _agent_root(b)
    if (ra is not None and ra in _roots(b)) or (rb is not None and rb in _roots(a)):
        return True
    if a in _roots(b) or b in _roots(a):  # baker, bakery
        return True
    return _short_affix(a, b) or _short_affix(b, a)


def mentions_secret(text: str, secret: str, *, compounds: bool = False) -> bool:
    """True when ``text`` names ``secret`` (one or more words) after normalisation: the same
    words, in order, each possibly inflected (plural, -ed, -ing, -er); or, for a secret of
    several words, those words run together (``icecream``). With ``compounds`` a longer word
    that contains a secret of four letters or more counts too (``snowman`` for ``snow``), and a
    compound of a three-letter secret (``sunflower`` for ``sun``: ``is_compound_of``)."""
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
        # Short secrets ("go", "tin") would otherwise forbid ordinary words ("good", "tiny"): a three-letter
        # one only in a word WordNet shows made of it (is_compound_of: "sunflower", not "carpet").
        return whole == joined or (len(joined) >= 4 and joined in whole) or any(is_compound_of(w, joined) for w in said)
    return False


def is_compound_of(word: str, short: str) -> bool:
    """A normalised single ``word`` is a compound of the three-letter word ``short`` (``eyelash`` for
    eye, ``catwalk`` for cat, ``sunflower`` for sun), or an inflection of one (``eyelashes``): WordNet
    shows it made of the two (``games/data/wordforms.txt``'s ``@compound``, built by ``models/wordforms.py``).
    A word that merely splits into two words (``carpet``, ``season``, ``button``) is none."""
    table = _lexicon().compounds
    return len(short) == 3 and any(short in table.get(b, ()) for b in base_forms(word))


def _letters(word: str) -> str:
    """A normalised word's letters only: ``st'rawberry`` -> strawberry, ``strawberry2`` -> strawberry."""
    return "".join(ch for ch in word if ch.isalpha())


# Characters typed for a letter inside a word: ``p1lot``, ``p!lot``, ``pi|ot``, ``sh0e``. ``!`` and ``|`` count
# only between letters or digits ("Go!" stays a word), the digits anywhere in a word that has a letter.
_LEET: dict[str, str] = {"1": "il", "!": "il", "|": "li", "0": "o"}
_LEET_RUN = re.compile(r"(?:[^\W_]|[!|](?=[^\W_]))+")
_MAX_LEET = 6  # readings tried: 2 ** 6 at most


def _leet_readings(text: str) -> list[str]:
    """``text`` (folded) read with each look-alike digit or mark inside a word as the letters it stands for."""
    folded = fold(text)
    runs = [m for m in _LEET_RUN.finditer(folded)
            if any(c in _LEET for c in m[0]) and any(c.isalpha() for c in m[0]) and not m[0].isdigit()]
    if not runs:
        return []
    slots = [(m.start() + i, ch) for m in runs for i, ch in enumerate(m[0]) if ch in _LEET][:_MAX_LEET]
    readings = [list(folded)]
    for at, ch in slots:
        readings = [r[:at] + [letter] + r[at + 1:] for r in readings for letter in _LEET[ch]]
    return ["".join(r) for r in readings]


def reveals_secret(text: str, secret: str) -> bool:
    """The one secret check of every clue, hint and description: True when ``text`` names
    ``secret`` in a way a reader reads as the secret. That is ``mentions_secret`` (the word or
    an inflected form, as whole words) and, read letters-only:

    - a word that holds a secret of four letters or more inside it once its other characters
      are dropped: a compound (``snowman`` for snow), ``st'rawberry``, ``strawberry2``,
      ``strawberryes``; a shorter secret only as the whole word (``i'ce``) or in a compound
      WordNet shows made of it (``eyelash`` for eye: ``is_compound_of``), so ``tiny`` stays free
      of ``tin`` and ``carpet`` of ``car``;
    - consecutive words whose letters spell the secret or an inflected form of it between
      them: ``straw berry``, ``st-rawberry``, ``st.rawberry``, ``straw·berry``,
      ``s t r a w b e r r y``, ``straw berries``.

    Letters are not run together across words that do not spell the secret exactly, so a
    sentence such as "I'd be around" does not name "bear": descriptions of several words stay
    sayable. For a one-word clue this is the Chameleon's ``mentions_secret(compounds=True)``.

    A digit or mark typed for a letter inside a word (``p1lot``, ``pi|ot``) is read as each letter
    it may stand for, and the text checked again."""
    return _reveals(text, secret) or any(_reveals(r, secret) for r in _leet_readings(text))


def _reveals(text: str, secret: str) -> bool:
    if mentions_secret(text, secret):
        return True
    said, needle = words(text), words(secret)
    if len(needle) == 1 and any(is_variant(w, needle[0]) for w in said):
        return True
    target = _letters(key(secret))
    if not target:
        return False
    pieces = [_letters(w) for w in said]
    if any(p == target or (len(target) >= 4 and target in p) or is_compound_of(p, target) for p in pieces):
        return True
    for i in range(len(pieces)):
        joined = pieces[i]
        for piece in pieces[i + 1 :]:
            joined += piece
            if _same_word(joined, target) or is_variant(joined, target):
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
