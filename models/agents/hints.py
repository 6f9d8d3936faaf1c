"""How an AI guesser reads a person's hint against candidate words (Decrypto's keywords, a Spymasters board).

People hint with phrases, names, titles and sayings ("Trevi, throw in a coin" for fountain,
"Mandrake" for root, "Lisbon, 1755" for earthquake), not with the single words an embedding
encoder would pick. One similarity of the whole hint misses most of them: a sentence encoder
reads the phrase as a paraphrase, and the name that carries it is one word among several. So a
hint is read by two signals on one scale (standard scores against the vocabulary):

- ``whole``: the embedder's similarity of the whole hint (accents folded: "Moët" reads as
  "moet") with each candidate, as a standard score against the hint's similarities with the
  vocabulary (``reading.pointing``);
- ``wordnet``: WordNet's links (a candidate is a lemma the hint's senses name or link to, as
  kind, instance, part, member, domain or derivation, or a word of their definitions, or the
  other way round: "mandrake: ... forked root").

The fit is ``whole + WORDNET * wordnet``, the weight set on the development half of the writers'
material (per-hint keyword accuracy of their Decrypto hints, targets found for their Spymasters
clues; ``bench/people_teams.py`` plays them) and kept because the test half did not get worse. The
best single word of a phrase by the word vectors (GloVe, a standard score against that word's
similarities with the vocabulary) was measured as a third signal and left out: at any weight it
lost keywords and targets on the development half (a phrase's rarest word is not always the one
that carries it). With an embedder that is not the association model (no WordNet) only ``whole``
is read. Pure arithmetic on fixed models: the same hint and candidates give the same fit at any
load.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np

from models.agents.reading import pointing
from models.association import AssociationEmbedder, Glosses, content_words
from models.embeddings import VocabIndex

WORDNET = 2.0
"""Standard scores a WordNet link adds (a lemma linked to the hint's senses); GLOSS_SHARE of it for a word of a
definition. 1.5-4 read the development half alike (the plateau's middle)."""
GLOSS_SHARE = 0.5


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


def hint_fit(index: VocabIndex, hints: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """(hints, candidates): how well each hint points at each candidate, in standard scores (see the module)."""
    fit = whole(index, hints, candidates)
    if _glosses(index) is None:
        return fit
    out: np.ndarray = fit + WORDNET * wordnet(index, hints, candidates)
    return out


__all__ = ["GLOSS_SHARE", "WORDNET", "fold", "hint_fit", "whole", "wordnet"]
