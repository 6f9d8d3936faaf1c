"""What the AI players know about Who-is-Spy: prompts, the embedding baseline, the strategy.

Baseline: describe with a top-K word related to one's word but not containing it and
not said before; vote for the player whose descriptions are least similar to one's
own word. Mr. White (no word) aims at the mean of the table's descriptions.
"""

from __future__ import annotations

import random
from typing import cast

import numpy as np

from games.base import Action, ActionSpec, Choice, Observation, Text, normalize
from games.spy import SpyView
from models.agents.games.kit import Baseline, GameAgent, Prompt, neighbour_words, player_name
from models.agents.judge import Judge
from models.embeddings import VocabIndex, fits, mean_vec, overlaps, sample_top_k


def view_of(obs: Observation) -> SpyView:
    return cast(SpyView, obs.view)


def spy_target(index: VocabIndex, v: SpyView) -> np.ndarray | None:
    """What a Who-is-Spy seat aims at: its word, or for Mr. White the mean of what the table said."""
    if v["my_word"]:
        return index.vec(v["my_word"])
    said = [str(d["text"]) for d in v["descriptions"] if d["seat"] != v["my_seat"]]
    return mean_vec(index.vecs(said)) if said else None


def _describe(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Text)
    v = view_of(obs)
    word = v["my_word"]
    said = {normalize(str(d["text"])) for d in v["descriptions"]}
    target = spy_target(b.index, v)

    def allowed(i: int, w: str) -> bool:
        return fits(w, spec) and w not in said and not (word and overlaps(w, word))

    if target is None:  # Mr. White speaking first: any word will do
        pool = [w for i, w in enumerate(b.index.words) if allowed(i, w)]
        return Action.say(spec.kind, pool[r.randrange(len(pool))]), {}
    pick = sample_top_k(b.index, target, b.k, r, allowed)
    return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}


def _vote(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Choice)
    v = view_of(obs)
    target = spy_target(b.index, v)
    scores: dict[str, float] = {}
    for opt in spec.ids():
        texts = [str(d["text"]) for d in v["descriptions"] if str(d["seat"]) == opt]
        if target is None or not texts:
            scores[opt] = 1.0  # nothing to hold against them
        else:
            scores[opt] = float(mean_vec(b.index.vecs(texts)) @ target)
    return Action.choose(spec.kind, least(scores, r)), scores


def _guess(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Text)
    v = view_of(obs)
    said = [str(d["text"]) for d in v["descriptions"] if d["seat"] != v["my_seat"]]
    if not said:
        pool = [w for w in b.index.words if fits(w, spec)]
        return Action.say(spec.kind, pool[r.randrange(len(pool))]), {}
    target = mean_vec(b.index.vecs(said))
    pick = sample_top_k(b.index, target, 1, r, lambda i, w: fits(w, spec) and not any(overlaps(w, s) for s in said))
    return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}


def least(scores: dict[str, float], r: random.Random) -> str:
    low = min(scores.values())
    ties = [o for o, s in scores.items() if s == low]
    return str(ties[r.randrange(len(ties))])


def evidence(index: VocabIndex, obs: Observation, spec: Choice) -> dict[str, float] | None:
    """Each player's descriptions (every round) weighed against one's own word and against what everyone
    else said: the spy's word differs from the majority's, so the odd one out is the likeliest spy. A seat
    cannot know it is the spy itself; the consensus term keeps it from voting on its own word alone.
    Mr. White (no word) has the consensus only. Higher = more suspicious."""
    if spec.kind != "vote":
        return None
    v = view_of(obs)
    by_seat: dict[str, list[str]] = {}
    for d in v["descriptions"]:
        by_seat.setdefault(str(d["seat"]), []).append(str(d["text"]))
    me = str(v["my_seat"])
    word = v["my_word"]
    own = index.vec(word) if word else None
    if own is None and len(by_seat) < 2:
        return None
    out: dict[str, float] = {}
    for opt in spec.ids():
        texts = by_seat.get(opt)
        if not texts:
            out[opt] = 0.0
            continue
        centre = mean_vec(index.vecs(texts))
        others = [t for s, ts in by_seat.items() if s not in (opt, me) for t in ts]
        fit_others = float(centre @ mean_vec(index.vecs(others))) if others else None
        fit_own = float(centre @ own) if own is not None else None
        parts = [x for x in (fit_own, fit_others) if x is not None]
        out[opt] = -sum(parts) / len(parts) if parts else 0.0
    return out


def candidates(index: VocabIndex, obs: Observation, spec: Text, k: int) -> list[list[str]]:
    v = view_of(obs)
    said = [str(d["text"]) for d in v["descriptions"]]
    target = spy_target(index, v)
    if target is None:
        return [[]]
    if spec.kind == "guess":
        return [neighbour_words(index, target, k, said, spec)]
    avoid = [v["my_word"]] if v["my_word"] else []
    return [neighbour_words(index, target, k, [*avoid, *said], spec)]


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action) -> float:
    v = view_of(obs)
    text = action.value[0]
    if action.kind == "describe":
        target = spy_target(index, v)
        if target is None:
            return 0.0
        sim = float(index.vec(text) @ target)
        # Related enough for the allies, not so close that it gives the word away to the other side.
        return sim - 2.0 * max(0.0, sim - 0.55)
    if action.kind == "guess":
        said = [str(d["text"]) for d in v["descriptions"] if d["seat"] != v["my_seat"]]
        return float(index.vec(text) @ mean_vec(index.vecs(said))) if said else 0.0
    return 0.0


def prompt(obs: Observation, spec: ActionSpec) -> Prompt:
    v = view_of(obs)
    names = [player_name(s) for s in v["living"]]
    said = [f"Round {d['round']}, {player_name(d['seat'])}: {d['text']}" for d in v["descriptions"]]
    out = [f"{player_name(e['seat'])} was voted out in round {e['round']} and was a {e['role'].replace('_', ' ')}." for e in v["eliminated"]]
    word = v["my_word"]
    white = v["has_mr_white"]
    values: dict[str, object] = {
        "seats": v["seats"],
        "spies": v["spies"],
        "white": " and one Mr. White, who gets no word at all and knows it" if white else "",
        "white_out": " and Mr. White" if white else "",
        "player": player_name(obs.seat),
        "word": f"Your word is {word!r}." if word else "You are Mr. White: you have no word. Blend in and work out the villagers' word.",
        "round": v["round"],
        "living": ", ".join(names),
        "eliminated": " ".join(out),
        "descriptions": "\n".join(said) if said else "(none yet)",
        "max_words": getattr(spec, "max_words", 0),
    }
    forbidden = (word,) if word else ()
    name = {"describe": "spy_describe", "vote": "spy_vote", "guess": "spy_guess"}.get(spec.kind)
    if name is None:
        raise ValueError(f"no Who-is-Spy prompt for {spec.kind!r}")
    return Prompt(name, values, forbidden)


def role(obs: Observation, spec: ActionSpec) -> str:
    """The seat knows only whether it has a word (Mr. White has none), not which side it is on."""
    return f"{'mr_white' if not view_of(obs)['my_word'] else 'worded'} {spec.kind}"


AGENT = GameAgent(
    game="spy",
    prompt=prompt,
    baseline={"describe": _describe, "vote": _vote, "guess": _guess},
    evidence=evidence,
    candidates=candidates,
    text_score=text_score,
    role=role,
)
