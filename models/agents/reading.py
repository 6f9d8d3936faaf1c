"""How an AI seat reads what the others said: which candidate word each description points to.

Who-is-Spy and the Chameleon vote on evidence about seats. The evidence must be fair to a
person at the table, who speaks in phrases and in words of their own, not in the AI
describers' single words at a tuned similarity. So a description is judged only by what it
points to among the candidate words (one's own word or the secret against the other
plausible words), never by its distance from the other descriptions:

- ``pointing``: each text's cosine with each candidate, as standard scores against the
  text's cosines with the whole vocabulary (the background). A phrase and a single word
  have different cosine levels; against their own background both sit on one scale. A text
  near no candidate has scores near 0 everywhere: it points nowhere.
- ``clarity``: how clearly a text points at any candidate at all (its best score, through
  a logistic): an unexplained outlier says little, so its evidence is scaled down.
- ``suspicion``: a seat's log likelihood ratio "has another word" against "has my word",
  the other word weighted by its prior, summed over the seat's descriptions. Evidence of
  innocence saturates (``innocence``): a description that fits one's word better than the
  alternatives clears its speaker as much as any other, so one that is merely less sharp than
  an AI's single word at a tuned similarity does not make its speaker the odd one out.
- ``card_suspicion``: the Chameleon's reading. The chameleon aims at the card in general, an
  innocent player at the secret, so a clue's evidence is how much more it points at the secret
  than at the card's other words (``standing_out``), read as the log likelihood ratio of two
  normal laws of that number (chameleon against innocent), scaled by the clue's clarity. One that
  fits the whole card and not the secret is the chameleon's; one that points at nothing on the
  card (a person's reference the embedding cannot read) is weak evidence of innocence, since the
  chameleon, not knowing the secret, must fit the card to blend in, in so far as it still leans to
  the secret: a word from elsewhere (a chameleon who says anything at all) earns little of it.
- ``vote_weights``: one seat of several is the outsider, so the weights are a posterior over
  seats; voters draw their ballot from it (``spread_draw``), so a table that is unsure
  spreads its votes instead of converging on one seat.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import numpy as np

from models.embeddings import VocabIndex

POINT_T = 1.0
"""Temperature over standard scores: one background standard deviation is one unit of log evidence."""
CLEAR_AT = 2.5
"""Standard score at which a text counts as half-clear (it points at a candidate 2.5 deviations above its background)."""
CLEAR_WIDTH = 0.5
INNOCENCE = 1.0
"""The most that evidence of sharing one's word counts (log units), however clearly a text fits the word."""
INNOCENT_AT = 1.0
"""How far (log units) a text must favour one's word over the alternatives to earn most of ``INNOCENCE``."""


def pointing(index: VocabIndex, texts: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """(texts, candidates): each text's cosine with each candidate as a standard score against the vocabulary."""
    if not texts or not candidates:
        return np.zeros((len(texts), len(candidates)), dtype=np.float64)
    tv = index.vecs(list(texts))
    cv = index.vecs(list(candidates))
    back = (tv @ index.matrix.T).astype(np.float64)  # (texts, vocabulary)
    mu = back.mean(axis=1, keepdims=True)
    sd = np.maximum(back.std(axis=1, keepdims=True), 1e-6)
    out: np.ndarray = ((tv @ cv.T).astype(np.float64) - mu) / sd
    return out


def clarity(z: np.ndarray) -> np.ndarray:
    """Per text (row of ``z``): 0 for a text that points at no candidate, up to 1 for one that clearly does."""
    if z.size == 0:
        return np.zeros(z.shape[0])
    best = z.max(axis=1)
    out: np.ndarray = 1.0 / (1.0 + np.exp(-(best - CLEAR_AT) / CLEAR_WIDTH))
    return out


def _logsumexp(xs: np.ndarray) -> float:
    m = float(xs.max())
    return m + math.log(float(np.exp(xs - m).sum()))


def suspicion(z: np.ndarray, own: int, prior: np.ndarray) -> float:
    """Log likelihood ratio that the texts (rows of ``z`` over the candidates) come from a seat with another
    word than candidate ``own``, the other word drawn from ``prior`` (over the candidates; ``own`` is ignored),
    each text's evidence scaled by its clarity, evidence of innocence saturating at ``INNOCENCE`` (``innocence``)."""
    if z.shape[0] == 0:
        return 0.0
    others = [i for i in range(z.shape[1]) if i != own and prior[i] > 0]
    if not others:
        return 0.0
    c = clarity(z)
    # log of P(texts | word a) / P(texts | own word), per alternative a, summed over texts
    rel = ((z[:, others] - z[:, [own]]) / POINT_T * c[:, None]).sum(axis=0)
    p = prior[others] / prior[others].sum()
    llr = _logsumexp(rel + np.log(p))
    return llr if llr > 0 else innocence(llr)


def innocence(llr: float) -> float:
    """Evidence that a seat shares one's word (``llr`` <= 0), weighed the same for every style: it saturates at
    ``-INNOCENCE`` once a text fits one's word clearly better than the alternatives, so a person's phrase that
    fits the word earns what an AI's single word at a tuned similarity earns, not a fraction of it."""
    return -INNOCENCE * math.tanh(-llr / INNOCENT_AT)


CARD_MIDPOINT = 1.0
"""Where a clue's ``standing_out`` is as likely from the chameleon as from an innocent player (deviations): halfway
between the means of the chameleon's clues (0.5) and the innocent clues (1.5) on the writers' development half."""
CARD_SHARPNESS = 2.0
"""Log evidence per deviation of ``standing_out`` (the two laws' mean gap over their variance is about 1.4 on the
development half; 2.0 was the best of 1.5 to 3.0 there for the share of votes on the chameleon against the person)."""


def standing_out(z: np.ndarray, own: int) -> np.ndarray:
    """Per text (row of ``z``): its score for candidate ``own`` minus its mean score for the other candidates."""
    if z.shape[1] < 2:
        return np.zeros(z.shape[0])
    out: np.ndarray = z[:, own] - np.delete(z, own, axis=1).mean(axis=1)
    return out


NOWHERE = 3.0
"""Evidence of innocence (log units) of a clue that points at nothing on the card yet leans to the secret. The chameleon,
who does not know the secret, must say something that fits the card in general to blend in; a clue that fits no card
word is likelier a player's reference to the secret that the embedding cannot place ("Herschel" for the planets), and
such a reference still leans to the secret faintly (``leaning``). Chosen with ``LEAN_AT`` on the writers' development
half: the innocent voters' posteriors on a person and on the AI in that seat within 2 points of each other."""
LEAN_AT = 0.3
"""The ``standing_out`` (deviations) at which an unclear clue earns half of ``NOWHERE``. Of the people's unclear clues on
the development half, three in four lean to the secret (mean 0.6 deviations); of words taken from another card, half
(mean 0.0): a chameleon who says something off the card earns little."""
LEAN_WIDTH = 0.2


def leaning(z: np.ndarray, own: int) -> np.ndarray:
    """Per text (row of ``z``): 0 to 1, how far its ``standing_out`` for candidate ``own`` leans to it, however faintly."""
    return _leans(standing_out(z, own))


def _leans(apart: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-(apart - LEAN_AT) / LEAN_WIDTH))
    return out


def card_suspicion(z: np.ndarray, own: int) -> float:
    """Log likelihood ratio that the texts (rows of ``z`` over a card's words) come from the chameleon, who aims at
    the card in general, rather than from a player aiming at candidate ``own`` (the secret). A text that points at
    the card is read by how far it stands out for the secret, weighed by its clarity; one that points at nothing on
    the card is weak evidence of innocence (``NOWHERE``) in so far as it still leans to the secret (``leaning``), the
    unclear share of every text counting towards it. A word from elsewhere, which leans nowhere, earns little of it."""
    if z.shape[0] == 0:
        return 0.0
    c, apart = clarity(z), standing_out(z, own)
    return float((CARD_SHARPNESS * c * (CARD_MIDPOINT - apart) - NOWHERE * _leans(apart) * (1.0 - c)).sum())


def vote_weights(scores: Mapping[str, float]) -> dict[str, float]:
    """A posterior over the options from their suspicions (one of them is the outsider, uniform prior)."""
    if not scores:
        return {}
    m = max(scores.values())
    w = {k: math.exp(v - m) for k, v in scores.items()}
    z = sum(w.values())
    return {k: v / z for k, v in w.items()}


def spread_draw(weights: Mapping[str, float], order: Sequence[str], r: random.Random) -> str:
    """A seeded draw in proportion to ``weights``, over ``order`` (so the same seed and weights give the same ballot)."""
    u = r.random()
    total = sum(max(0.0, weights.get(o, 0.0)) for o in order)
    if total <= 0:
        return order[int(u * len(order)) % len(order)]
    acc = 0.0
    for o in order:
        acc += max(0.0, weights.get(o, 0.0)) / total
        if u < acc:
            return o
    return order[-1]


__all__ = ["CARD_MIDPOINT", "CARD_SHARPNESS", "CLEAR_AT", "CLEAR_WIDTH", "INNOCENCE", "INNOCENT_AT", "LEAN_AT", "LEAN_WIDTH", "NOWHERE",
           "POINT_T", "card_suspicion", "clarity", "innocence", "leaning", "pointing", "spread_draw", "standing_out", "suspicion",
           "vote_weights"]
