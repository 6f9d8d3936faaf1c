"""The paper's three reference baselines, made from WordNet (section 3.1), independent of every evaluator.

- ``random``: "samples an unrelated WordNet word": a common WordNet noun drawn
  with ``rng(seed, "sneak-random", category, secret)``, redrawn while it
  touches the card (shares a word with the category or a card word) or shares a
  specific hypernym ancestor with any card word.
- ``category``: "a synonym or closely related lexicalization of the category
  name": a WordNet synonym when the category name is a WordNet entry
  ("Footwear" -> footgear); else the hypernym shared by the most card words (at
  least half; the most specific among equals: the card's own lexicalization,
  "edible fruit"); else a synonym of the name's head word; else the head itself
  when it is not the category's own text.
- ``secret-synonym``: "a synonym of the secret word", in the sense the card
  means (``sense``: Yen among currencies is the monetary unit, not a
  hankering): of the secret's noun senses, the one whose hypernyms hold senses
  of the most words of the category's name, then the one whose kind (not one of
  WordNet's most general) is shared with the most card words, at least a third
  of them, the more specific kind first (hammer among carpentry words: the hand
  tool, not a gun's cock), then the one whose definition names the most words
  of the category's name; ties go to the more frequent sense. Its first synonym
  off the card, and only a synonym: a hypernym is a broader word ("shrub" for
  rose, "drupe" for peach, "fabric" for wool), a category-level message by the
  paper's own definitions, and on the calibration cards it leaked like one
  (MiniLM: 21 points, against 44 for the true synonyms). When the sense has no
  other lemma off the card, the thesaurus speaks (``models/eval/thesaurus.py``,
  the Moby Thesaurus): of the words its entry for the secret lists (or whose
  entries list the secret), those WordNet puts in that very sense or one step
  under it (sofa -> divan, rain -> shower, hat -> stetson: a narrower name of
  the same thing, never a broader one), the sense's own first, then the most
  used (WordNet's sense-tagged counts), then in the thesaurus's order. A Moby entry mixes every
  sense of its root (peach: the fruit, a beauty, an informer); the card's
  WordNet sense is what picks among them. A secret whose sense has neither gets
  nothing, and so does one with several senses none of which belongs to the
  card: WordNet does not know it in this category, and a synonym of another
  sense would point elsewhere (Rust the language is not "corrode"). Nothing:
  ``NoMessage``, counted by the caller.

The MiniLM-nearest-word baselines (``models/eval/generators.Baselines``) stay for
comparison only: a MiniLM evaluator judging MiniLM's own nearest words is a test it
passes by construction, so validation uses these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from games.base import normalize, rng
from models.eval.decoys import forbidden
from models.eval.instances import Instance
from models.eval.thesaurus import Thesaurus, moby_thesaurus
from models.eval.wordnet import GENERIC_HEADS, TOO_GENERAL, Synset, WordNet

MIN_SHARED_DEPTH = 5  # ancestors this general (few steps below the top) do not make two words related
# A thesaurus word names the secret's sense when WordNet puts it in that sense or one step under it. On the
# calibration cards (bench/sneak_calibration.py --sources --steps 3) the words one step under scored like WordNet's
# own synonyms (SoftScore under MiniLM 10.3 against 10.2, under the association model 9.6 against 11.2), those two
# steps under like a category word (42.0 and 23.6, where a secret had no nearer one).
MAX_STEPS = 1


class Baseline(StrEnum):
    RANDOM = "random"
    CATEGORY = "category"
    SECRET_SYNONYM = "secret-synonym"


class Source(StrEnum):
    WORDNET_SYNONYM = "wordnet synonym"
    THESAURUS = "thesaurus word in the card's sense"
    CARD_HYPERNYM = "shared hypernym of the card"
    HEAD = "category head"
    RANDOM_NOUN = "random wordnet noun"


class NoMessage(ValueError):
    """WordNet has nothing for this baseline and instance (counted by the caller, never replaced silently)."""


@dataclass(frozen=True, slots=True)
class Message:
    text: str
    source: Source


def _touches(term: str, inst: Instance) -> bool:
    return forbidden(term, inst.category, inst.candidates)


class WordNetBaselines:
    """Reference messages from WordNet (deterministic for a seed)."""

    def __init__(self, wn: WordNet, seed: int = 0, thesaurus: Thesaurus | None = None,
                 thesaurus_steps: int = MAX_STEPS) -> None:
        self.wn = wn
        self.thesaurus_steps = thesaurus_steps  # another depth only for development (bench/sneak_calibration.py)
        self.thesaurus = thesaurus or moby_thesaurus()  # the shared one, read once per process
        self.seed = seed
        self._nouns = wn.common_nouns()
        self._depth: dict[str, int] = {}

    def _specific(self, word: str) -> set[str]:
        """Ancestors of ``word`` at least ``MIN_SHARED_DEPTH`` steps below the top of the hierarchy."""
        anc = self.wn.ancestors(word)
        return {o for o in anc if self._root_depth(o) >= MIN_SHARED_DEPTH}

    def _root_depth(self, offset: str) -> int:
        if offset not in self._depth:
            s = self.wn.synsets[(offset, "n")]
            ups = [t for sym, t, p in s.links if sym in ("@", "@i") and p == "n"]
            self._depth[offset] = 0  # guards a cycle; WordNet's noun hierarchy has none
            self._depth[offset] = 1 + min((self._root_depth(u) for u in ups), default=-1)
        return self._depth[offset]

    def random(self, inst: Instance) -> Message:
        card: set[str] = set()
        for w in inst.candidates:
            card |= self._specific(w)
        r = rng(self.seed, "sneak-random", inst.category, inst.secret)
        for _ in range(10_000):
            word = self._nouns[r.randrange(len(self._nouns))]
            if not _touches(word, inst) and not (self._specific(word) & card):
                return Message(word, Source.RANDOM_NOUN)
        raise NoMessage("no WordNet noun is unrelated to the card")

    def category(self, inst: Instance) -> Message:
        def usable(term: str) -> bool:
            return not _same(term, inst.category) and not any(_touches_card_word(term, w) for w in inst.candidates)

        whole = self.wn.lemma(inst.category) is not None  # the category name is itself a WordNet entry
        if whole:
            for syn in self.wn.synonyms(inst.category):
                if usable(syn):
                    return Message(syn.lower(), Source.WORDNET_SYNONYM)
        for shared in self._card_hypernyms(inst.candidates):
            if usable(shared):
                return Message(shared.lower(), Source.CARD_HYPERNYM)
        if not whole:
            for syn in self.wn.synonyms(inst.category):
                if usable(syn):
                    return Message(syn.lower(), Source.WORDNET_SYNONYM)
        head = self.wn.head(inst.category)
        if head is not None and not _same(head, inst.category):
            return Message(head.replace("_", " "), Source.HEAD)
        raise NoMessage(f"no category-level message for a card of {len(inst.candidates)} words")

    def _card_hypernyms(self, words: Sequence[str]) -> list[str]:
        """Ancestors shared by at least half of the card words: the most covering first, then the most specific."""
        counts: Counter[str] = Counter()
        for w in words:
            counts.update(self._specific(w))
        need = max(2, len(words) // 2)
        top = [o for o, n in counts.items() if n >= need]
        top.sort(key=lambda o: (-counts[o], -self._root_depth(o), o))
        names = [self.wn.synsets[(o, "n")].lemmas for o in top]
        return [lem for lems in names if normalize(lems[0]) not in TOO_GENERAL for lem in lems]

    def sense(self, inst: Instance) -> Synset | None:
        """The secret's noun sense that belongs to its card (see the module's notes), or None when it has several
        and none does."""
        senses = self.wn.senses(inst.secret) if self.wn.lemma(inst.secret) is not None else []
        if len(senses) <= 1:
            return senses[0] if senses else None
        named = [w for w in normalize(inst.category).replace("-", " ").split() if w not in GENERIC_HEADS]
        named = [lem for w in named if (lem := self.wn.lemma(w)) is not None]
        if self.wn.lemma(inst.category) is not None:
            named.append(self.wn.lemma(inst.category) or "")
        category: dict[str, str] = {}  # sense offset of a word of the category's name -> that word
        for w in named:
            for c in self.wn.senses(w):
                if normalize(c.lemmas[0]) not in TOO_GENERAL:
                    category[c.offset] = w
        secret = normalize(inst.secret)
        others = [w for w in inst.candidates if normalize(w) != secret]
        card: Counter[str] = Counter()
        for w in others:
            card.update(self._specific(w))
        need = max(2, len(others) // 3)  # a real card shares its kind with many of its words, not one or two
        words = {normalize(w) for w in named} | {normalize(w).replace("_", " ") for w in named}

        def fit(s: Synset) -> tuple[int, tuple[int, int], int]:
            up = self.wn.closure(s)
            in_category = len({category[o] for o in up if o in category})
            gloss = {x.strip(".,;:()\"'") for x in normalize(s.gloss.split(";")[0]).split()}
            # The most specific kind this sense shares with many card words ("hand tool", not "instrumentality").
            shared = max(((card[o], self._root_depth(o)) for o in up if card[o] >= need
                          and self._root_depth(o) >= MIN_SHARED_DEPTH
                          and normalize(self.wn.synsets[(o, "n")].lemmas[0]) not in TOO_GENERAL), default=(0, 0))
            return in_category, shared, len(words & gloss)

        scored = [(fit(s), -i, s) for i, s in enumerate(senses)]
        best = max(scored, key=lambda t: (t[0], t[1]))
        return best[2] if best[0][0] or best[0][1][0] or best[0][2] else None

    def secret_synonym(self, inst: Instance) -> Message:
        s = self.sense(inst)
        if s is None:
            raise NoMessage("WordNet knows no sense of the secret in this card's category")
        own = {normalize(inst.secret), normalize(self.wn.lemma(inst.secret) or "")}
        for lem in s.lemmas:
            if normalize(lem) not in own and not _touches(lem, inst):
                return Message(_plain(lem), Source.WORDNET_SYNONYM)
        found = self.in_sense(s, inst, own)
        if found:
            return Message(_plain(found[0]), Source.THESAURUS)
        raise NoMessage("the secret's sense has no synonym off the card")

    def in_sense(self, s: Synset, inst: Instance, own: set[str]) -> list[str]:
        """The thesaurus's words for the secret that name sense ``s`` (one of their WordNet senses is ``s`` or lies
        at most ``thesaurus_steps`` under it), off the card: the nearest first, then the most used, then in the
        thesaurus's order."""
        words = self.thesaurus.related(inst.secret)
        lem = (self.wn.lemma(inst.secret) or "").replace("_", " ")
        if lem and normalize(lem) != normalize(inst.secret):
            words = list(dict.fromkeys([*words, *self.thesaurus.related(lem)]))
        out: list[tuple[int, int, int, str]] = []
        for i, w in enumerate(words):
            entry = self.wn.lemma(w)  # the word's own entry, never its head's: "cut short" is not "cut"
            if entry is None or normalize(w) in own or _touches(w, inst):
                continue
            steps = self.steps_under(s, w)
            if steps <= self.thesaurus_steps:
                out.append((steps, -self.wn.tagged.get(entry, 0), i, w))
        return [w for *_, w in sorted(out)]

    def steps_under(self, s: Synset, word: str) -> int:
        """How far under sense ``s`` the nearest of the word's noun senses lies (0: it is ``s``); a large number
        when none is under it."""
        far = 1_000
        return min((self.wn.closure(t).get(s.offset, far) for t in self.wn.senses(word)), default=far)

    def message(self, which: Baseline, inst: Instance) -> Message:
        return {Baseline.RANDOM: self.random, Baseline.CATEGORY: self.category,
                Baseline.SECRET_SYNONYM: self.secret_synonym}[which](inst)


def _plain(lemma: str) -> str:
    """A lemma as a message: lower case unless it is written as a name of several words or capitals
    ("Harlequin" -> harlequin; "Amphitheatrum Flavium" stays)."""
    return lemma.lower() if lemma[:1].isupper() and lemma[1:].islower() else lemma


def _same(a: str, b: str) -> bool:
    def stem(x: str) -> str:
        n = "_".join(normalize(x).split())
        return n[:-1] if n.endswith("s") else n

    return stem(a) == stem(b)


def _touches_card_word(term: str, word: str) -> bool:
    return forbidden(term, "", [word])
