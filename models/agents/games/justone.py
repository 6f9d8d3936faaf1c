"""What the AI players know about Just One: prompts, the embedding baseline, the strategy.

Baseline: a clue-giver draws a top-K word near the secret that does not contain it (a draw,
not the nearest word, so two clue-givers seldom write the same clue and cancel out); the
guesser names the vocabulary word nearest the clues it sees, or passes when it sees none.

Strategy (the strategic agent): every clue-giver builds the same plan for the card, a ranking
of clues that fit the word and differ from each other (``clue_plan``: each next clue the one
nearest the word less its likeness to the clues already planned, never the same word as one
of them under the rules' test), and takes the place of its seat among the card's clue-givers
in seat order. So the AI seats predict each other's clues and never write the same one; the
most obvious clue, the one a person at the table would most likely write too, is written by
one seat at most, and the clues point at the word from different sides, which is what lets the
guesser find it. The guesser reads every clue that survives: a word scores by its mean
likeness to the clues plus half its likeness to the least like of them (a word that fits
every clue beats one that fits two very well).
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import cast

import numpy as np

from games.base import Action, ActionSpec, Observation, Text, normalize, words_of
from games.justone import PASS, JustOneView
from games.text import reveals_secret, same_words
from models.agents.games.kit import Baseline, GameAgent, Prompt, neighbour_words, player_name
from models.agents.judge import Judge
from models.embeddings import VocabIndex, fits, mean_vec, overlaps, sample_top_k

PLAN_POOL = 40  # the words nearest the secret a plan is drawn from
PLAN_SPREAD = 0.6  # how much a planned clue's likeness to the clues planned before it counts against it
WEAKEST = 0.5  # weight of the guess's likeness to the least like clue


def view_of(obs: Observation) -> JustOneView:
    return cast(JustOneView, obs.view)


def _shown(v: JustOneView) -> list[str]:
    return [c["clue"] for c in v["clues"]]


def _clue_target(index: VocabIndex, v: JustOneView) -> np.ndarray | None:
    return index.vec(v["word"]) if v["word"] else None


def _guess_target(index: VocabIndex, v: JustOneView) -> np.ndarray | None:
    shown = _shown(v)
    return mean_vec(index.vecs(shown)) if shown else None


def _clue(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Text)
    v = view_of(obs)
    word = v["word"] or ""
    target = _clue_target(b.index, v)
    if target is None:
        return Action.say(spec.kind, b.index.words[r.randrange(len(b.index.words))]), {}
    pick = sample_top_k(b.index, target, b.k, r, lambda i, w: fits(w, spec) and not overlaps(w, word))
    return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}


def _guess(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Text)
    v = view_of(obs)
    shown = _shown(v)
    target = _guess_target(b.index, v)
    if target is None:
        return Action.say(spec.kind, PASS), {}
    pick = sample_top_k(b.index, target, 1, r, lambda i, w: fits(w, spec) and not any(overlaps(w, c) for c in shown))
    return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}


@lru_cache(maxsize=256)
def _planned(index: VocabIndex, word: str, n: int) -> tuple[str, ...]:
    return tuple(clue_plan(index, word, n))


def clue_plan(index: VocabIndex, word: str, n: int) -> list[str]:
    """``n`` clues for ``word`` that every AI clue-giver ranks alike: the nearest single words that do not
    name it, each next one the nearest less ``PLAN_SPREAD`` times its likeness to the clues already
    planned, none the same word as another under the rules' test (a plural, a different case)."""
    if not word:
        return []
    m = index.matrix
    sims = m @ index.vec(word)
    pool: list[int] = []
    for i in index.ranked(index.vec(word)):
        w = index.words[int(i)]
        if len(words_of(w)) == 1 and not overlaps(w, word) and not reveals_secret(w, word):
            pool.append(int(i))
            if len(pool) >= PLAN_POOL:
                break
    chosen: list[int] = []
    while len(chosen) < n and pool:
        like = np.max(m[pool] @ m[chosen].T, axis=1) if chosen else np.zeros(len(pool), dtype=np.float32)
        value = sims[pool] - PLAN_SPREAD * like
        best = pool.pop(int(np.argmax(value)))  # argmax takes the first of equals: the nearer word
        if not any(same_words(index.words[best], index.words[j]) for j in chosen):
            chosen.append(best)
    return [index.words[i] for i in chosen]


def clue_givers(v: JustOneView) -> list[int]:
    """The card's clue-givers in seat order: every seat but the guesser."""
    return [s for s in range(v["seats"]) if s != v["guesser"]]


def my_place(v: JustOneView, seat: int) -> int:
    """This seat's place among the card's clue-givers (0 for the first after seat 0, in seat order)."""
    givers = clue_givers(v)
    return givers.index(seat) if seat in givers else 0


def _plan(index: VocabIndex, v: JustOneView) -> list[str]:
    return list(_planned(index, v["word"] or "", len(clue_givers(v))))


def _guess_scores(index: VocabIndex, shown: list[str], texts: list[str]) -> np.ndarray:
    """Each text's mean likeness to the clues plus ``WEAKEST`` times its likeness to the least like clue."""
    s = index.vecs(texts) @ index.vecs(shown).T
    out: np.ndarray = s.mean(axis=1) + WEAKEST * s.min(axis=1)
    return out


def _guess_candidates(index: VocabIndex, shown: list[str], k: int, spec: Text) -> list[str]:
    """The vocabulary words that fit the clues best together (see ``_guess_scores``), none overlapping a clue."""
    s = index.matrix @ index.vecs(shown).T
    score = s.mean(axis=1) + WEAKEST * s.min(axis=1)
    out: list[str] = []
    for i in np.argsort(-score, kind="stable"):
        w = index.words[int(i)]
        if fits(w, spec) and not any(overlaps(w, c) for c in shown):
            out.append(w)
            if len(out) >= k:
                break
    return out


def candidates(index: VocabIndex, obs: Observation, spec: Text, k: int) -> list[list[str]]:
    v = view_of(obs)
    if spec.kind == "clue":
        target = _clue_target(index, v)
        if target is None:
            return [[]]
        planned = [w for w in _plan(index, v) if fits(w, spec)]
        near = neighbour_words(index, target, k, [v["word"] or ""], spec)
        return [planned + [w for w in near if w not in planned]]
    shown = _shown(v)
    return [_guess_candidates(index, shown, k, spec)] if shown else [[PASS]]


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action) -> float:
    """A clue: this seat's place in the card's plan first (the clue no other AI seat writes), then any
    other clue by its likeness to the word, the clues planned for the other seats last (they would
    cancel out). A guess: how well it fits every clue the guesser sees (``_guess_scores``)."""
    v = view_of(obs)
    text = action.value[0]
    if action.kind == "clue":
        target = _clue_target(index, v)
        if target is None:
            return 0.0
        sim = float(index.vec(text) @ target)
        plan = [normalize(w) for w in _plan(index, v)]
        mine = my_place(v, obs.seat)
        key = normalize(text)
        if plan and key == plan[mine % len(plan)]:
            return 10.0 + sim
        if any(same_words(text, w) for w in plan):
            return sim - 10.0
        return sim - 1.5 * max(0.0, sim - 0.7)
    if action.kind == "guess":
        shown = _shown(v)
        if not shown:
            return 1.0 if text.strip().lower() == PASS else 0.0
        return float(_guess_scores(index, shown, [text])[0])
    return 0.0


def prompt(obs: Observation, spec: ActionSpec) -> Prompt:
    v = view_of(obs)
    past = [f"Card {c['card']}: {c['word']} ({c['outcome']})" for c in v["history"] if c["guesser"] is not None]
    values: dict[str, object] = {
        "seats": v["seats"],
        "cards": v["cards"],
        "target": v["target"],
        "player": player_name(obs.seat),
        "card": v["card"],
        "guesser": player_name(v["guesser"]),
        "word": v["word"] or "",
        "clues": "\n".join(f"{player_name(c['seat'])}: {c['clue']}" for c in v["clues"]) or "(none: every clue was removed)",
        "removed": len(v["removed"]),
        "history": "\n".join(past) if past else "(none yet)",
        "max_words": getattr(spec, "max_words", 1),
        "pass": PASS,
    }
    forbidden = (v["word"],) if v["word"] else ()
    name = {"clue": "justone_clue", "guess": "justone_guess"}.get(spec.kind)
    if name is None:
        raise ValueError(f"no Just One prompt for {spec.kind!r}")
    return Prompt(name, values, forbidden)


AGENT = GameAgent(
    game="justone",
    prompt=prompt,
    baseline={"clue": _clue, "guess": _guess},
    candidates=candidates,
    text_score=text_score,
)
