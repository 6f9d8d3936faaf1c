"""What the AI players know about Just One: prompts, the embedding baseline, the strategy.

Baseline: a clue-giver draws a top-K word near the secret that does not contain it (a draw,
not the nearest word, so two clue-givers seldom write the same clue and cancel out); the
guesser names the vocabulary word nearest the clues it sees, or passes when it sees none.
"""

from __future__ import annotations

import random
from typing import cast

import numpy as np

from games.base import Action, ActionSpec, Observation, Text
from games.justone import PASS, JustOneView
from models.agents.games.kit import Baseline, GameAgent, Prompt, neighbour_words, player_name
from models.agents.judge import Judge
from models.embeddings import VocabIndex, fits, mean_vec, overlaps, sample_top_k


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


def candidates(index: VocabIndex, obs: Observation, spec: Text, k: int) -> list[list[str]]:
    v = view_of(obs)
    if spec.kind == "clue":
        target = _clue_target(index, v)
        return [neighbour_words(index, target, k, [v["word"] or ""], spec)] if target is not None else [[]]
    target = _guess_target(index, v)
    return [neighbour_words(index, target, k, _shown(v), spec)] if target is not None else [[PASS]]


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action) -> float:
    """A clue: close to the word, but the very nearest words are the ones the other clue-givers
    write too (and then all of them cancel out). A guess: close to the clues the guesser sees."""
    v = view_of(obs)
    text = action.value[0]
    if action.kind == "clue":
        target = _clue_target(index, v)
        if target is None:
            return 0.0
        sim = float(index.vec(text) @ target)
        return sim - 1.5 * max(0.0, sim - 0.7)
    if action.kind == "guess":
        target = _guess_target(index, v)
        if target is None:
            return 1.0 if text.strip().lower() == PASS else 0.0
        return float(index.vec(text) @ target)
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
