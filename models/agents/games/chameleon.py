"""What the AI players know about the Chameleon: prompts, the embedding baseline, the strategy.

Baseline: a player's clue is a top-K word near the secret that is not on the card;
the chameleon's clue is a top-K word near the card's centroid; vote for the player
whose clue is least similar to the secret (the chameleon: to the card's centroid); the
caught chameleon guesses the card word closest to the mean of the other players' clues.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import cast

import numpy as np

from games.base import Action, ActionSpec, Choice, Observation, Text, normalize, words_of
from games.chameleon import ChameleonView
from games.text import reveals_secret
from models.agents import hints, wordsense
from models.agents.games.kit import Baseline, GameAgent, Prompt, neighbour_words, player_name
from models.agents.games.spy import best_sense, least
from models.agents.judge import TAU, Judge, softmax
from models.agents.reading import card_suspicion, pointing, spread_draw, standing_out, vote_weights
from models.embeddings import VocabIndex, fits, mean_vec, overlaps, sample_top_k


def view_of(obs: Observation) -> ChameleonView:
    return cast(ChameleonView, obs.view)


def _target(index: VocabIndex, v: ChameleonView) -> np.ndarray:
    """The secret for a player who knows it; the card's centroid for the chameleon."""
    secret = v["secret"]
    return index.vec(secret) if secret and not v["is_chameleon"] else mean_vec(index.vecs(v["card"]))


def _clue(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Text)
    v = view_of(obs)
    secret = v["secret"]
    card = {normalize(w) for w in v["card"]}
    given = {normalize(str(c["clue"])) for c in v["clues"]}

    def allowed(i: int, w: str) -> bool:
        return fits(w, spec) and w not in card and w not in given and not (secret and overlaps(w, secret))

    pick = sample_top_k(b.index, _target(b.index, v), b.k, r, allowed)
    return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}


def _vote(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    """A player draws its ballot from its vote posterior (``vote_posterior``); the chameleon votes for the clue
    least like the card's centroid."""
    assert isinstance(spec, Choice)
    post = vote_posterior(b.index, obs, spec)
    if post is not None:
        return Action.choose(spec.kind, spread_draw(post, spec.ids(), r)), post
    v = view_of(obs)
    target = _target(b.index, v)
    clue_of = {str(c["seat"]): str(c["clue"]) for c in v["clues"]}
    scores = {opt: float(b.index.vec(clue_of[opt]) @ target) if opt in clue_of else 1.0 for opt in spec.ids()}
    return Action.choose(spec.kind, least(scores, r)), scores


def _guess(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Choice)
    v = view_of(obs)
    clues = [str(c["clue"]) for c in v["clues"] if c["seat"] != v["seat"]]
    if not clues:
        return Action.choose(spec.kind, spec.options[r.randrange(len(spec.options))].id), {}
    target = mean_vec(b.index.vecs(clues))
    scores = {o.id: float(b.index.vec(o.label) @ target) for o in spec.options}
    best = max(scores.values())
    ties = [o for o in spec.ids() if scores[o] == best]
    return Action.choose(spec.kind, ties[r.randrange(len(ties))]), scores


def card_posterior(index: VocabIndex, card: Sequence[str], clues: Sequence[str]) -> np.ndarray:
    """P(secret = card word | the clues): each clue a softmax over the card at TAU, multiplied (uniform without clues)."""
    n = len(card)
    if not clues:
        return np.full(n, 1.0 / n)
    sims = index.vecs(list(clues)) @ index.vecs(list(card)).T  # (clues, card)
    logp = (sims - sims.max(axis=1, keepdims=True)) / TAU
    logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
    total = logp.sum(axis=0)
    p = np.exp(total - total.max())
    out: np.ndarray = p / p.sum()
    return out


def vote_posterior(index: VocabIndex, obs: Observation, spec: Choice) -> dict[str, float] | None:
    """How a player who knows the secret spreads its vote: a posterior over the options of who the chameleon is.

    Each clue is read by what it points to among the card's words (``models/agents/reading.py``,
    ``card_suspicion``; a link WordNet makes to the secret alone counts for it, ``hints.clearing``):
    the chameleon aims at the card in general, so a clue that fits the card's
    other words as well as the secret (or better) is evidence against its speaker, one that stands
    out for the secret clears it, and one that points at nothing on the card yet still leans to the secret
    clears it a little (the chameleon, not knowing the secret, must fit the card; a word from elsewhere
    leans nowhere and earns little); nothing depends on how much a clue resembles the other clues. None
    for the chameleon (it plays to win)."""
    v = view_of(obs)
    card = list(v["card"])
    secret = v["secret"]
    at = next((i for i, w in enumerate(card) if secret and normalize(w) == normalize(secret)), None)
    if v["is_chameleon"] or at is None:
        return None
    clue_of = {str(c["seat"]): str(c["clue"]) for c in v["clues"]}
    susp = {opt: by_the_rules(hints.clearing(index, [clue_of[opt]], card, at), named_on(clue_of[opt], card), at)
            if opt in clue_of else 0.0 for opt in spec.ids()}
    return vote_weights(susp)


NAMED_SECRET = 10.0
"""The suspicion (log units) of a clue that names the secret: the rules refuse it from every player but the chameleon."""


def named_on(clue: str, card: Sequence[str]) -> frozenset[int]:
    """The card words ``clue`` names (by the rules' own check), as positions on the card."""
    return frozenset(j for j, w in enumerate(card) if reveals_secret(clue, w))


def by_the_rules(z: np.ndarray, named: frozenset[int], own: int) -> float:
    """``card_suspicion`` of one clue (``z``: its row over the card; ``named``: the card words it names, ``named_on``)
    for the secret ``own``, read by the rules as well: a clue that names the secret can only be the chameleon's, and a
    clue that names another card word ("Pigtails" for the plait) is read on the rest of the card, not taken for
    pointing at that word."""
    if own in named:
        return NAMED_SECRET
    keep = [j for j in range(z.shape[1]) if j == own or j not in named]
    return card_suspicion(z[:, keep], keep.index(own))


def players_suspicion(index: VocabIndex, card: Sequence[str], clue: str, belief: np.ndarray) -> float:
    """The suspicion the players, who know the secret, give ``clue`` by their own reading (``vote_posterior``'s),
    averaged over ``belief`` about which card word the secret is. A reference that points at nothing on the card but
    leans to the secret clears its speaker a little in their eyes, so the chameleon does not take it for the table's suspect: it is not
    the least likely clue for the secret that decides, but how the players read it."""
    read, named = hints.clearing_each(index, [clue], card), named_on(clue, card)
    return float(sum(float(b) * by_the_rules(read[i], named, i) for i, b in enumerate(belief)))


def spreads(obs: Observation, spec: Choice) -> bool:
    """A player's vote is drawn from its posterior; the chameleon's own vote plays to win."""
    return spec.kind == "vote" and not view_of(obs)["is_chameleon"]


def evidence(index: VocabIndex, obs: Observation, spec: Choice) -> dict[str, float] | None:
    """A player's vote: scores whose softmax at TAU is its vote posterior (``vote_posterior``). The chameleon,
    not knowing the secret, accuses the seat the players are likeliest to suspect: the suspicion the players'
    own reading gives each clue (``players_suspicion``), averaged over the secrets the other clues point to."""
    v = view_of(obs)
    card = list(v["card"])
    if spec.kind == "vote":
        post = vote_posterior(index, obs, spec)
        if post is not None:
            return {o: TAU * math.log(max(p, 1e-12)) for o, p in post.items()}
        clue_of = {str(c["seat"]): str(c["clue"]) for c in v["clues"]}
        out: dict[str, float] = {}
        for opt in spec.ids():
            if opt not in clue_of:
                out[opt] = -1.0
                continue
            others = [c for s, c in clue_of.items() if s != opt and s != str(v["seat"])]
            out[opt] = players_suspicion(index, card, clue_of[opt], card_posterior(index, card, others))
        return out
    if spec.kind == "guess":
        clues = [str(c["clue"]) for c in v["clues"] if c["seat"] != v["seat"]]
        if not clues:
            return None
        on_card = card_posterior(index, card, clues)
        by_word = {normalize(w): float(np.log(max(p, 1e-12))) for w, p in zip(card, on_card, strict=True)}
        # The card word the clues single out.
        return {o.id: by_word.get(normalize(o.label), float(index.vec(o.label) @ mean_vec(index.vecs(clues))))
                for o in spec.options}
    return None


def candidates(index: VocabIndex, obs: Observation, spec: Text, k: int) -> list[list[str]]:
    if spec.kind != "clue":
        return [[] for _ in spec.fields]
    v = view_of(obs)
    given = [str(c["clue"]) for c in v["clues"]]
    near = neighbour_words(index, _target(index, v), k, [*v["card"], *given], spec)
    secret = v["secret"]
    if not secret or v["is_chameleon"]:
        return [near]
    people = [w for w in said_by_people(index, secret, v["card"])
              if fits(w, spec) and not any(overlaps(w, a) for a in [*v["card"], *given])]
    pool = list(dict.fromkeys([*people, *near]))
    # An innocent clue that names the category or fits every card word alike tells the chameleon what to say.
    category = str(v.get("category") or "")
    specific = [w for w in pool if not names_category(w, category) and specificity(index, w, secret, v["card"]) >= MIN_SPECIFIC]
    return [specific or [w for w in pool if not names_category(w, category)] or pool]


MIN_SPECIFIC = 1.0
"""How many background deviations an innocent clue must point more at the secret than at the card's other words
on average: below it the clue fits the card in general (``herb`` for oregano), not the secret."""
SPECIFIC_WEIGHT = 0.1
"""What each deviation short of ``MIN_SPECIFIC`` costs an innocent clue (a SoftScore is 0-1)."""


def names_category(text: str, category: str) -> bool:
    """True when ``text`` is the category or one of its words (``spice`` for 'Herbs and spices')."""
    if not category:
        return False
    return overlaps(text, category) or any(overlaps(text, w) for w in words_of(category) if len(w) > 3)


def specificity(index: VocabIndex, text: str, secret: str, card: Sequence[str]) -> float:
    """How much more ``text`` points at the secret than at the card's other words on average (background
    deviations, ``models/agents/reading.py``): high for a clue about the secret, near 0 for one about the card."""
    at = next((i for i, w in enumerate(card) if normalize(w) == normalize(secret)), None)
    if at is None or len(card) < 2:
        return 0.0
    return float(standing_out(pointing(index, [text], list(card)), at)[0])


PEOPLE_BONUS = 0.1
"""What a word from WordNet's definition is worth over an embedding neighbour (a SoftScore is 0-1): people wrote
the definitions, while the embedding's neighbours include look-alikes (badger for whisk)."""


def said_by_people(index: VocabIndex, secret: str, card: Sequence[str]) -> list[str]:
    """Single words people link with the secret (WordNet: its kind and its definition's words), for the sense the
    card means (whisk the kitchen tool beside the ladle, not the clothes brush)."""
    sense = best_sense(index, secret, [w for w in card if normalize(w) != normalize(secret)][:6])
    return [w for w in wordsense.words(sense) if " " not in w] if sense is not None else []


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action) -> float:
    if action.kind != "clue":
        return 0.0
    v = view_of(obs)
    text = action.value[0]
    card = list(v["card"])
    if v["secret"] and not v["is_chameleon"]:
        known = normalize(text) in {normalize(w) for w in said_by_people(index, v["secret"], card)}
        category = str(v.get("category") or "")
        vague = max(0.0, MIN_SPECIFIC - specificity(index, text, v["secret"], card)) + (MIN_SPECIFIC if names_category(text, category) else 0.0)
        return judge.soft_score(text, v["secret"], card, category) + (PEOPLE_BONUS if known else 0.0) - SPECIFIC_WEIGHT * vague
    # The chameleon: fit the likely secrets about equally, the ones the clues so far point to most.
    sims = index.vecs(card) @ index.vec(text)
    clues = [str(c["clue"]) for c in v["clues"] if c["seat"] != v["seat"]]
    post = softmax([float(x) for x in index.vecs(card) @ mean_vec(index.vecs(clues))]) if clues else [1 / len(card)] * len(card)
    fit = float(sum(p * s for p, s in zip(post, sims, strict=True)))
    return fit - float(np.std(sims))


def prompt(obs: Observation, spec: ActionSpec) -> Prompt:
    v = view_of(obs)
    clues = [f"{player_name(c['seat'])}: {c['clue']}" for c in v["clues"]]
    secret = v["secret"]
    values: dict[str, object] = {
        "players": v["players"],
        "player": player_name(obs.seat),
        "category": v["category"],
        "card": ", ".join(v["card"]),
        "secret_line": (
            "You are the chameleon: you do not know the secret word. Blend in."
            if v["is_chameleon"]
            else f"Secret word: {secret}"
        ),
        "clues": "\n".join(clues) if clues else "(none yet)",
    }
    name = {"clue": "chameleon_clue", "vote": "chameleon_vote", "guess": "chameleon_guess"}.get(spec.kind)
    if name is None:
        raise ValueError(f"no Chameleon prompt for {spec.kind!r}")
    forbidden = (secret,) if secret and not v["is_chameleon"] else ()
    return Prompt(name, values, forbidden)


def role(obs: Observation, spec: ActionSpec) -> str:
    return f"{'chameleon' if view_of(obs)['is_chameleon'] else 'player'} {spec.kind}"


AGENT = GameAgent(
    game="chameleon",
    prompt=prompt,
    baseline={"clue": _clue, "vote": _vote, "guess": _guess},
    evidence=evidence,
    spreads=spreads,
    candidates=candidates,
    text_score=text_score,
    role=role,
)
