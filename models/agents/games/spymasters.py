"""What the AI players know about Spymasters: prompts, the embedding baseline, the strategy.

Baseline (``embed:minilm``):
- spymaster, clue: the vocabulary word nearest its team's hidden words and far from the
  other team's words and the assassin (bystanders count a little). For each word and each
  number k (1 to 3), the margin is the similarity of its k-th nearest own word minus its
  nearest bad word (the assassin weighs more); the best word, k by that margin is given.
  Words the rules would refuse (board words, their forms and parts) are never offered.
- spymaster, number: the k that clue was chosen for (recomputed from the view).
- guesser: the hidden board word nearest the clue; once the team has found as many words
  as the clue's number, stop (the bonus guess is never risked).

Strategy (``llm:default``'s specialist; see "the strategy" below): the clue that links the
most of the team's words (up to three) while each stands clear of the other team's words,
the bystanders and, by a wider lead, the assassin; the number says how many; no clue is a
variant of any word on the board. Its guessers stop at the number, and early when the
nearest word left is not related to the clue.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from typing import cast

import numpy as np

from games.base import Action, ActionSpec, Choice, Observation, Text, normalize
from games.spymasters.rules import clue_problem
from games.spymasters.state import PASS, STOP
from games.spymasters.view import SpymastersView
from models.agents.games.kit import Baseline, GameAgent, Prompt, player_name
from models.agents.hints import hint_fit
from models.agents.judge import Judge
from models.embeddings import VocabIndex, fits, overlaps

MAX_NUMBER = 3
"""The baseline never aims one clue at more than three words."""
ASSASSIN_WEIGHT = 0.08
BYSTANDER_DISCOUNT = 0.06
NUMBER_BONUS = 0.05


def view_of(obs: Observation) -> SpymastersView:
    return cast(SpymastersView, obs.view)


def hidden_by_card(v: SpymastersView) -> dict[str, list[str]]:
    """The hidden board words per card ("red", "blue", "bystander", "assassin"); spymasters only."""
    out: dict[str, list[str]] = {"red": [], "blue": [], "bystander": [], "assassin": []}
    key = v["key"] or []
    for word, card, shown in zip(v["board"], key, v["revealed"], strict=False):
        if shown is None:
            out[card].append(word)
    return out


def hidden_words(v: SpymastersView) -> list[str]:
    return [w for w, shown in zip(v["board"], v["revealed"], strict=True) if shown is None]


def _sims(index: VocabIndex, rows: np.ndarray, words: Sequence[str]) -> np.ndarray:
    if not words:
        return np.full((rows.shape[0], 0), -1.0, dtype=np.float32)
    out: np.ndarray = rows @ index.vecs(list(words)).T
    return out


def clue_scores(index: VocabIndex, rows: np.ndarray, v: SpymastersView) -> tuple[np.ndarray, np.ndarray]:
    """For each row (a clue's vector): its best score and the number it is best for."""
    cards = hidden_by_card(v)
    team, other = v["team"], ("blue" if v["team"] == "red" else "red")
    own = _sims(index, rows, cards[team])
    worst = np.full(rows.shape[0], -1.0, dtype=np.float32)
    for words, shift in ((cards[other], 0.0), (cards["assassin"], ASSASSIN_WEIGHT), (cards["bystander"], -BYSTANDER_DISCOUNT)):
        sims = _sims(index, rows, words)
        if sims.shape[1]:
            worst = np.maximum(worst, sims.max(axis=1) + shift)
    top = -np.sort(-own, axis=1)
    best = np.full(rows.shape[0], -np.inf, dtype=np.float32)
    number = np.ones(rows.shape[0], dtype=np.int64)
    for k in range(1, min(MAX_NUMBER, top.shape[1]) + 1):
        margin = top[:, k - 1] - worst
        score = margin + 0.5 * top[:, k - 1] + NUMBER_BONUS * (k - 1)
        usable = (margin > 0) if k > 1 else np.ones_like(margin, dtype=bool)
        better = usable & (score > best)
        best = np.where(better, score, best)
        number = np.where(better, k, number)
    return best, number


def clue_allowed(word: str, board: Sequence[str], spec: Text) -> bool:
    return (fits(word, spec) and clue_problem(word, board) is None
            and not any(overlaps(word, b) for b in board))


def ranked_clues(index: VocabIndex, v: SpymastersView, spec: Text, k: int) -> list[tuple[str, float, int]]:
    """The ``k`` best clue words the rules accept: (word, score, number)."""
    scores, numbers = clue_scores(index, index.matrix, v)
    return _top_allowed(index, scores, numbers, hidden_words(v), spec, k)


def _top_allowed(index: VocabIndex, scores: np.ndarray, numbers: np.ndarray, board: Sequence[str], spec: Text,
                 k: int) -> list[tuple[str, float, int]]:
    """The ``k`` vocabulary words of best score that the rules accept as a clue on ``board``: (word, score, number)."""
    out: list[tuple[str, float, int]] = []
    for i in np.argsort(-scores, kind="stable"):
        word = index.words[int(i)]
        if clue_allowed(word, board, spec):
            out.append((word, float(scores[int(i)]), int(numbers[int(i)])))
            if len(out) >= k:
                break
    return out


def number_for(index: VocabIndex, v: SpymastersView, clue: str) -> int:
    _, numbers = clue_scores(index, index.vec(clue)[None, :], v)
    return int(numbers[0])


def _guesses_made(v: SpymastersView) -> int:
    clue = v["clue"]
    return 0 if clue is None else len(clue["guesses"])


def guess_scores(index: VocabIndex, v: SpymastersView, spec: Choice) -> dict[str, float]:
    """Similarity of each hidden word to the clue; stop scores above every word once the
    team has found the clue's number, below every word before."""
    return _with_stop(index, v, spec, unsure_below=None)


def _with_stop(index: VocabIndex, v: SpymastersView, spec: Choice, unsure_below: float | None,
               read: bool = False) -> dict[str, float]:
    """Each hidden word's similarity to the clue, and STOP above them all once the team has the clue's number
    (or when the nearest word is below ``unsure_below``), below them all before. With ``read`` the words are
    scored by the multi-signal reading of a person's clue (``models.agents.hints``) instead; the nearest word's
    similarity still decides whether it is related at all."""
    clue = v["clue"]
    assert clue is not None
    words = [o.id for o in spec.options if o.id not in (STOP, PASS)]
    sims = index.vecs(words) @ index.vec(clue["clue"])
    scores = {w: float(x) for w, x in zip(words, sims, strict=True)}
    nearest = max(scores.values())
    if read:
        fit = hint_fit(index, [clue["clue"]], words)[0]
        scores = {w: float(x) for w, x in zip(words, fit, strict=True)}
    if any(o.id == STOP for o in spec.options):
        done = _guesses_made(v) >= clue["number"]
        unsure = unsure_below is not None and nearest < unsure_below
        scores[STOP] = (max(scores.values()) + 1.0) if done or unsure else (min(scores.values()) - 1.0)
    return scores


# --------------------------------------------------------------------------- the baseline


def _clue(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Text)
    best = ranked_clues(b.index, view_of(obs), spec, 3)
    top = [c for c in best if c[1] == best[0][1]]
    word, score, number = top[r.randrange(len(top))]
    return Action.say(spec.kind, word), {word: score, "number": float(number)}


def _number(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Choice)
    v = view_of(obs)
    k = number_for(b.index, v, v["pending_clue"] or "")
    pick = str(max(1, min(k, len(spec.options))))
    return Action.choose(spec.kind, pick), {"number": float(pick)}


def _guess(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Choice)
    scores = guess_scores(b.index, view_of(obs), spec)
    best = max(scores.values())
    ties = [o for o in spec.ids() if scores.get(o) == best]
    return Action.choose(spec.kind, ties[r.randrange(len(ties))]), scores


# --------------------------------------------------------------------------- the strategy
#
# The strategic agent (``llm:default``) links words: a clue aims at the k nearest of its team's
# hidden words (k up to 3) when all k stand clear of every word the team must avoid, and says
# k. Similarities are read against the board's own spread (the mean and deviation of the
# vocabulary's similarity to the board's words), so the same thresholds hold for any embedder:
#
# - related: the k-th intended word is well above chance (RELATED deviations over the mean);
# - clear: it leads the nearest other-team word or bystander by LEAD deviations (a bystander
#   a little less: it only ends the turn), and the assassin by ASSASSIN_LEAD deviations.
#
# Of the clues that are related and clear, the one for the most words wins, then the widest
# lead. With none, the clue for one word with the widest lead (the baseline's choice). The
# guessers take the hidden words nearest the clue, stop once they have the number (the bonus
# guess is never risked), and stop early when the nearest word left is not related.

LINK_MAX = 3
RELATED = 1.6
LEAD = 0.35
ASSASSIN_LEAD = 1.0
BYSTANDER_EASE = 0.15
LEAD_CAP = 2.0
LEAD_WEIGHT = 0.2


@lru_cache(maxsize=64)
def board_spread(index: VocabIndex, words: tuple[str, ...]) -> tuple[float, float]:
    """The mean and standard deviation of the vocabulary's similarity to the board's words."""
    sims = index.matrix @ index.vecs(list(words)).T
    return float(sims.mean()), max(float(sims.std()), 1e-6)


def linked_scores(index: VocabIndex, rows: np.ndarray, v: SpymastersView) -> tuple[np.ndarray, np.ndarray]:
    """For each row (a clue's vector): its score and its number (see above)."""
    mean, sd = board_spread(index, tuple(v["board"]))
    cards = hidden_by_card(v)
    team, other = v["team"], ("blue" if v["team"] == "red" else "red")
    own = _sims(index, rows, cards[team])
    n = rows.shape[0]
    bad = np.full(n, -1.0, dtype=np.float32)
    for words, ease in ((cards[other], 0.0), (cards["bystander"], BYSTANDER_EASE * sd)):
        sims = _sims(index, rows, words)
        if sims.shape[1]:
            bad = np.maximum(bad, sims.max(axis=1) - ease)
    sims = _sims(index, rows, cards["assassin"])
    assassin = sims.max(axis=1) if sims.shape[1] else np.full(n, -1.0, dtype=np.float32)
    top = -np.sort(-own, axis=1)
    best = np.full(n, -np.inf, dtype=np.float32)
    number = np.ones(n, dtype=np.int64)
    if not top.shape[1]:
        return best, number
    # No clue stands clear: one word, the widest lead over the nearest word to avoid (the assassin first).
    best = np.minimum(top[:, 0] - bad, top[:, 0] - assassin - ASSASSIN_LEAD * sd) / sd - 10.0
    for k in range(1, min(LINK_MAX, top.shape[1]) + 1):
        kth = top[:, k - 1]
        lead = (kth - bad) / sd
        clear = (kth >= mean + RELATED * sd) & (lead >= LEAD) & ((kth - assassin) / sd >= ASSASSIN_LEAD)
        score = k + LEAD_WEIGHT * np.minimum(lead, LEAD_CAP)
        better = clear & (score > best)
        best = np.where(better, score, best)
        number = np.where(better, k, number)
    return best, number


def linked_clues(index: VocabIndex, v: SpymastersView, spec: Text, k: int) -> list[tuple[str, float, int]]:
    """The ``k`` best clue words by ``linked_scores`` that are no variant of any word on the board
    (revealed words too: "yoghurt" reads as "yogurt" whether or not it is still hidden)."""
    scores, numbers = linked_scores(index, index.matrix, v)
    return _top_allowed(index, scores, numbers, list(v["board"]), spec, k)


def linked_number(index: VocabIndex, v: SpymastersView, clue: str) -> int:
    _, numbers = linked_scores(index, index.vec(normalize(clue))[None, :], v)
    return int(numbers[0])


def linked_guesses(index: VocabIndex, v: SpymastersView, spec: Choice) -> dict[str, float]:
    """Similarity of each hidden word to the clue; stop above every word once the team has the
    clue's number or when the nearest word left is not related to the clue, below them before."""
    mean, sd = board_spread(index, tuple(v["board"]))
    return _with_stop(index, v, spec, unsure_below=mean + RELATED * sd, read=True)


def evidence(index: VocabIndex, obs: Observation, spec: Choice) -> dict[str, float] | None:
    v = view_of(obs)
    if spec.kind == "guess" and v["clue"] is not None:
        return linked_guesses(index, v, spec)
    if spec.kind == "number" and v["pending_clue"]:
        k = linked_number(index, v, v["pending_clue"])
        return {o.id: -abs(int(o.id) - k) for o in spec.options}
    return None


def candidates(index: VocabIndex, obs: Observation, spec: Text, k: int) -> list[list[str]]:
    if spec.kind != "clue":
        return [[] for _ in spec.fields]
    return [[w for w, _, _ in linked_clues(index, view_of(obs), spec, k)]]


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action) -> float:
    """A clue's score: the number of words it links, then its lead over the words to avoid."""
    if action.kind != "clue" or not action.value:
        return 0.0
    scores, _ = linked_scores(index, index.vec(normalize(action.value[0]))[None, :], view_of(obs))
    return float(scores[0])


# --------------------------------------------------------------------------- prompts


def board_lines(v: SpymastersView) -> str:
    cells = [w if shown is None else f"{w} [{shown}]" for w, shown in zip(v["board"], v["revealed"], strict=True)]
    return "\n".join(", ".join(cells[i : i + 5]) for i in range(0, len(cells), 5))


def history_lines(v: SpymastersView) -> str:
    lines = []
    for c in v["history"]:
        got = ", ".join(f"{g['word']} ({g['card']})" for g in c["guesses"]) or "no guess"
        lines.append(f"Turn {c['turn']}, {c['team']}: {c['clue']}, {c['number']} -> {got}")
    return "\n".join(lines) if lines else "(none yet)"


def prompt(obs: Observation, spec: ActionSpec) -> Prompt:
    v = view_of(obs)
    team, other = v["team"], ("blue" if v["team"] == "red" else "red")
    values: dict[str, object] = {
        "players": v["players"],
        "player": player_name(obs.seat),
        "team": team,
        "other": other,
        "board": board_lines(v),
        "history": history_lines(v),
        "left": f"{team} {v['remaining'][team]}, {other} {v['remaining'][other]}",
    }
    forbidden: tuple[str, ...] = ()
    if spec.kind in ("clue", "number"):
        cards = hidden_by_card(v)
        values.update({
            "own": ", ".join(cards[team]), "theirs": ", ".join(cards[other]),
            "bystanders": ", ".join(cards["bystander"]), "assassin": ", ".join(cards["assassin"]),
            "clue": v["pending_clue"] or "",
        })
        forbidden = tuple(hidden_words(v))
    elif spec.kind == "guess":
        clue = v["clue"]
        assert clue is not None
        found = ", ".join(g["word"] for g in clue["guesses"]) or "nothing yet"
        values.update({"clue": clue["clue"], "number": clue["number"], "found": found,
                       "guesses_left": clue["guesses_left"]})
    else:
        raise ValueError(f"no Spymasters prompt for {spec.kind!r}")
    return Prompt(f"spymasters_{spec.kind}", values, forbidden)


def role(obs: Observation, spec: ActionSpec) -> str:
    """"spymaster clue", "spymaster number" or "guesser guess"."""
    return f"{view_of(obs)['role']} {spec.kind}"


AGENT = GameAgent(
    game="spymasters",
    prompt=prompt,
    baseline={"clue": _clue, "number": _number, "guess": _guess},
    evidence=evidence,
    candidates=candidates,
    text_score=text_score,
    role=role,
)
