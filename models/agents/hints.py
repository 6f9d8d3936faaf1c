"""How an AI guesser reads a person's hint against candidate words (Decrypto's keywords, a Spymasters board).

People hint with phrases, names, titles and sayings ("Trevi, throw in a coin" for fountain,
"Mandrake" for root, "Lisbon, 1755" for earthquake), not with the single words an embedding
encoder would pick. One similarity of the whole hint misses most of them: a sentence encoder
reads the phrase as a paraphrase, and the name that carries it is one word among several. So a
hint is read by three signals on one scale (standard scores against the vocabulary):

- ``whole``: the embedder's similarity of the whole hint (accents folded: "Moët" reads as
  "moet") with each candidate, as a standard score against the hint's similarities with the
  vocabulary (``reading.pointing``);
- ``wordnet``: WordNet's links (a candidate is a lemma the hint's senses name or link to, as
  kind, instance, part, member, domain or derivation, or a word of their definitions, or the
  other way round: "mandrake: ... forked root").

- ``expressions``: the hint and the candidate make one fixed expression together, a WordNet lemma
  ("Square" and root, "Of youth" after fountain, "below the..." and belt, "seat" and belt as
  "seatbelt"): the hint's last words before the candidate or its first words after it, spaced or
  closed up. People hint with the other half of a phrase, which no similarity reads.

The fit is ``whole + WORDNET * wordnet + EXPRESSION * expressions``, the weight set on the development half of the writers'
material (per-hint keyword accuracy of their Decrypto hints, targets found for their Spymasters
clues; ``bench/people_teams.py`` plays them) and kept because the test half did not get worse. The
best single word of a phrase by the word vectors (GloVe, a standard score against that word's
similarities with the vocabulary) was measured as a third signal and left out: at any weight it
lost keywords and targets on the development half (a phrase's rarest word is not always the one
that carries it). With an embedder that is not the association model (no WordNet) only ``whole``
is read. Pure arithmetic on fixed models: the same hint and candidates give the same fit at any
load.

``clearing`` is how a Chameleon voter uses the same links: only for the clue's speaker, never against.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np

from models.agents.reading import pointing
from models.association import AssociationEmbedder, Glosses, content_words, tokens
from models.embeddings import VocabIndex

WORDNET = 2.0
"""Standard scores a WordNet link adds (a lemma linked to the hint's senses); GLOSS_SHARE of it for a word of a
definition. 1.5-4 read the development half alike (the plateau's middle)."""
GLOSS_SHARE = 0.5
EXPRESSION = 4.0
"""Standard scores a fixed expression adds (hint and candidate form a WordNet lemma): the surest link there is."""
EXPRESSION_WORDS = 3
"""How many of the hint's words at its end (or start) may join the candidate: "the light at the end of the" is a
sentence, not the half of a name."""


def fold(text: str) -> str:
    """The text without accents ("Moët" -> "Moet", "Matinée" -> "Matinee"): the vocabularies are unaccented."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def _glosses(index: VocabIndex) -> Glosses | None:
    """WordNet as the association model reads it, or None for another embedder."""
    e = index.embedder
    return e.glosses if isinstance(e, AssociationEmbedder) else None


def whole(index: VocabIndex, hints: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """(hints, candidates): the whole hint's standard score for each candidate."""
    return pointing(index, [fold(h) for h in hints], candidates)


def wordnet(index: VocabIndex, hints: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """(hints, candidates): 1 where WordNet links the hint and the candidate (either way), GLOSS_SHARE more where a
    definition of one names the other, 0 where it says nothing."""
    out = np.zeros((len(hints), len(candidates)), dtype=np.float64)
    glosses = _glosses(index)
    if glosses is None:
        return out
    cands = [(c.lower(), *glosses.related(fold(c))) for c in candidates]
    for i, h in enumerate(hints):
        close, gloss = glosses.related(fold(h))
        said = set(content_words(fold(h)))
        for j, (c, c_close, c_gloss) in enumerate(cands):
            if c in close or said & c_close:
                out[i, j] += 1.0
            if c in gloss or said & c_gloss:
                out[i, j] += GLOSS_SHARE
    return out


def joins(glosses: Glosses, hint: str, candidate: str) -> bool:
    """Whether ``hint`` and ``candidate`` make a WordNet lemma together: up to EXPRESSION_WORDS of the hint's last
    words then the candidate, or the candidate then the hint's first words, spaced or closed up."""
    said, word = tokens(fold(hint)), candidate.lower()
    for n in range(1, min(EXPRESSION_WORDS, len(said)) + 1):
        tail, head = said[-n:], said[:n]
        for form in (" ".join([*tail, word]), " ".join([word, *head]), "".join(tail) + word, word + "".join(head)):
            if glosses.is_lemma(form):
                return True
    return False


def expressions(index: VocabIndex, hints: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """(hints, candidates): 1 where the hint and the candidate make one fixed expression (``joins``), else 0 (all 0
    for an embedder that is not the association model)."""
    out = np.zeros((len(hints), len(candidates)), dtype=np.float64)
    glosses = _glosses(index)
    if glosses is not None:
        for i, h in enumerate(hints):
            for j, c in enumerate(candidates):
                out[i, j] = joins(glosses, h, c)
    return out


def links(index: VocabIndex, hints: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """(hints, candidates): the standard scores WordNet's links and the fixed expressions add (all 0 without WordNet)."""
    out: np.ndarray = WORDNET * wordnet(index, hints, candidates) + EXPRESSION * expressions(index, hints, candidates)
    return out


def hint_fit(index: VocabIndex, hints: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """(hints, candidates): how well each hint points at each candidate, in standard scores (see the module)."""
    fit = whole(index, hints, candidates)
    if _glosses(index) is None:
        return fit
    out: np.ndarray = fit + links(index, hints, candidates)
    return out


def clearing(index: VocabIndex, texts: Sequence[str], candidates: Sequence[str], own: int) -> np.ndarray:
    """(texts, candidates): ``reading.pointing``, with candidate ``own``'s score raised by how much more WordNet and the
    fixed expressions link each text to it than to any other candidate ("Solomon" for wisdom, "Vodka" for the
    screwdriver among tools). A voter reads a person's reference this way: a link the knowledge base makes to one's own
    word clears its speaker, a link the candidates share adds nothing, and no link ever adds suspicion."""
    return clearing_each(index, texts, candidates)[own]


def clearing_each(index: VocabIndex, texts: Sequence[str], candidates: Sequence[str]) -> list[np.ndarray]:
    """``clearing`` for each candidate as one's own word in turn (a reader unsure which word is the secret), the
    texts' scores and links computed once."""
    z = pointing(index, texts, candidates)
    if _glosses(index) is None or len(candidates) < 2 or not len(texts):
        return [z] * len(candidates)
    linked = links(index, texts, candidates)
    out = []
    for own in range(len(candidates)):
        cleared = z.copy()
        cleared[:, own] += np.maximum(linked[:, own] - np.delete(linked, own, axis=1).max(axis=1), 0.0)
        out.append(cleared)
    return out


__all__ = ["EXPRESSION", "EXPRESSION_WORDS", "GLOSS_SHARE", "WORDNET", "clearing", "clearing_each", "expressions", "fold", "hint_fit", "joins",
           "links", "whole", "wordnet"]
