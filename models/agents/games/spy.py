"""What the AI players know about Who-is-Spy: prompts, the embedding baseline, the strategy.

Baseline: describe with a top-K word related to one's word but not containing it and
not said before; vote for the player whose descriptions are least similar to one's
own word. Mr. White (no word) aims at the mean of the table's descriptions.

The strategy has two steps a research run can leave out (``ABLATIONS``; the strategic agent's
``ablate`` option), SpyGame's "word guessing" and "reasoning" actions (its Table 5):

- ``guess``: the seat forms no belief about the other side's word. Its descriptions are scored
  by how clearly they point at its own word alone, not also by their margin over the words the
  other side's could be; its vote loses the branch that reads the table's word from the
  descriptions, concludes "I am the spy" when everyone else points at one other word, and
  then votes with the table.
- ``reason``: the seat does not read the others' descriptions before voting: its evidence is
  flat, so the specialist's ballot is a seeded uniform draw (and a model asked for choices
  decides alone).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import replace
from functools import cache, partial
from typing import cast

import numpy as np

from games import decks
from games.base import Action, ActionSpec, Choice, Observation, Text, normalize
from games.spy import SpyView
from games.text import mentions_secret, reveals_secret, tokens
from models.agents import wordsense
from models.agents.games.kit import Baseline, GameAgent, Prompt, neighbour_words, player_name
from models.agents.judge import TAU, Judge, softmax
from models.agents.reading import POINT_T, clarity, pointing, spread_draw, suspicion, vote_weights
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

    secrets = frozenset(secret_words()) - {normalize(word or "")}

    def allowed(i: int, w: str) -> bool:
        # A worded seat never says a word of the game's list: it could be the other side's word.
        return (fits(w, spec) and w not in said and not (word and (overlaps(w, word) or says_a_secret(w, secrets))))

    if target is None:  # Mr. White speaking first: any word will do
        pool = [w for i, w in enumerate(b.index.words) if allowed(i, w)]
        return Action.say(spec.kind, pool[r.randrange(len(pool))]), {}
    pick = sample_top_k(b.index, target, b.k, r, allowed)
    return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}


def _vote(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    """A worded seat draws its ballot from its vote posterior (``vote_posterior``); Mr. White votes for the seat
    whose descriptions are least like the table's."""
    assert isinstance(spec, Choice)
    post = vote_posterior(b.index, obs, spec)
    if post is not None:
        return Action.choose(spec.kind, spread_draw(post, spec.ids(), r)), post
    scores = _white_evidence(b.index, obs, spec) or {o: 0.0 for o in spec.ids()}
    return Action.choose(spec.kind, least({o: -x for o, x in scores.items()}, r)), scores


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


ALTERNATIVES = 8
"""How many of the game's words nearest one's own word are weighed as the other side's word."""


def secret_words() -> tuple[str, ...]:
    """The words a Who-is-Spy seat can be dealt: every word of the bundled pairs (the game's own list)."""
    return _SECRET_WORDS or _secret_words()


_SECRET_WORDS: tuple[str, ...] = ()


def _secret_words() -> tuple[str, ...]:
    global _SECRET_WORDS
    _SECRET_WORDS = tuple(dict.fromkeys(normalize(w) for pair in decks.pairs() for w in pair))
    return _SECRET_WORDS


def alternatives(index: VocabIndex, word: str) -> tuple[list[str], np.ndarray]:
    """One's own word first, then the words the other side's could be: the game's words nearest it (none a form
    of it), with a prior over them (nearer: likelier; the own word's entry is 0).

    A seat cannot know the other word; it knows the game's list of words and that the two words
    of a deal are alike. Associates of the word (fire, ash for smoke) are no candidates: a
    description may point at them without pointing away from one's word."""
    key = normalize(word)
    hit = _ALTS.get((id(index), key))
    if hit is not None and hit[0] is index:
        return hit[1], hit[2]
    at = {w: i for i, w in enumerate(index.words)}
    pool = [w for w in secret_words() if not overlaps(w, word) and w in at]
    sims = index.matrix[[at[w] for w in pool]] @ index.vec(word)
    near = [int(i) for i in np.argsort(-sims, kind="stable")[:ALTERNATIVES]]
    words = [word, *(pool[i] for i in near)]
    prior = np.array([0.0, *softmax([float(sims[i]) for i in near])])
    if len(_ALTS) > 512:
        _ALTS.clear()
    _ALTS[(id(index), key)] = (index, words, prior)
    return words, prior


_ALTS: dict[tuple[int, str], tuple[VocabIndex, list[str], np.ndarray]] = {}


def _by_seat(v: SpyView) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in v["descriptions"]:
        out.setdefault(str(d["seat"]), []).append(str(d["text"]))
    return out


GUESS = "guess"
REASON = "reason"
ABLATIONS: dict[str, str] = {
    GUESS: "no guess of the other side's word: descriptions scored on one's own word alone, votes weighed against its neighbours' prior",
    REASON: "no reading of the others' descriptions before voting: flat evidence, a uniform ballot",
}
NONE_OFF: frozenset[str] = frozenset()


def vote_posterior(index: VocabIndex, obs: Observation, spec: Choice, off: frozenset[str] = NONE_OFF) -> dict[str, float] | None:
    """How a worded seat spreads its vote: a posterior over the options of who holds another word.

    Each seat's descriptions are read by what they point to among one's own word and the words a
    spy's could be (``alternatives``), never by how much they resemble the other descriptions
    (``models/agents/reading.py``); a text is no evidence for a word it names, which the rules bar its speaker
    from holding (``unnamed``). The seat votes as a villager whatever its role: it cannot know
    it is the spy, and if it is, every other seat holds the other word, so its ballot lands on a
    villager anyway. (Weighing "I am the spy" and then voting with the table's word sent an innocent
    seat's doubt onto a fellow villager, a person most of all, and gained the spy little:
    ``docs/benchmarks.md``.) None for Mr. White. Without the ``guess`` step (``off``) each seat is
    weighed against the neighbours of one's word by their prior, not against the pair the table points to."""
    v = view_of(obs)
    word = v["my_word"]
    if not word:
        return None
    words, prior = alternatives(index, word)
    by_seat = _by_seat(v)
    opts = spec.ids()
    zs = {opt: unnamed(pointing(index, by_seat.get(opt, []), words), by_seat.get(opt, []), words) for opt in opts}
    if GUESS in off:
        return vote_weights({opt: suspicion(z, 0, prior) for opt, z in zs.items()})
    # The pair: which of the alternatives the other side's word is, from every seat's descriptions (some seat holds
    # it); each seat is then asked whether it fits that word better than ours, not whether it fits any neighbour.
    rels = [((z[:, 1:] - z[:, [0]]) / POINT_T * clarity(z)[:, None]).sum(axis=0) for z in zs.values() if z.shape[0]]
    pair = pair_posterior(prior, rels)
    return vote_weights({opt: suspicion(z, 0, pair) for opt, z in zs.items()})


NAMED = 10.0
"""How far (deviations) below every other score a text's score for a word it names is set: no evidence for it."""


def unnamed(z: np.ndarray, texts: Sequence[str], words: Sequence[str]) -> np.ndarray:
    """``z`` (texts, ``words``) with each text's score for an alternative it names set below all its scores: the
    rules refuse a description that names the speaker's own word, so a seat that says "stands before the judge for
    her clients" does not hold judge. People name the game's words (the AI describers never do); read by
    resemblance alone, that lawyer's description would point at judge, the one word its speaker cannot hold."""
    out = z.copy()
    for i, t in enumerate(texts):
        for j in range(1, len(words)):
            if reveals_secret(t, words[j]):
                out[i, j] = float(z[i].min()) - NAMED
    return out


def pair_posterior(prior: np.ndarray, rels: Sequence[np.ndarray]) -> np.ndarray:
    """The prior over the other side's word (entry 0, one's own word, stays 0) updated by the table: the word is
    likelier where some seat's descriptions favour it over one's own (``rels``: per seat, the log evidence for each
    alternative). Without descriptions it is the prior."""
    if not rels:
        return prior
    log_q = np.logaddexp.reduce(np.stack(list(rels)), axis=0) + np.log(np.maximum(prior[1:], 1e-12))
    q = np.exp(log_q - log_q.max())
    out: np.ndarray = np.concatenate([[0.0], q / q.sum()])
    return out


def evidence(index: VocabIndex, obs: Observation, spec: Choice, off: frozenset[str] = NONE_OFF) -> dict[str, float] | None:
    """Scores whose softmax at TAU is the seat's vote posterior (``vote_posterior``); Mr. White, who has no
    word, weighs each seat's descriptions against what everyone else said. Higher = more suspicious.
    Without the ``reason`` step every option scores the same."""
    if spec.kind != "vote":
        return None
    if REASON in off:
        return {o: 0.0 for o in spec.ids()}
    post = vote_posterior(index, obs, spec, off)
    if post is not None:
        return {o: TAU * math.log(max(p, 1e-12)) for o, p in post.items()}
    return _white_evidence(index, obs, spec)


def _white_evidence(index: VocabIndex, obs: Observation, spec: Choice) -> dict[str, float] | None:
    v = view_of(obs)
    by_seat = _by_seat(v)
    me = str(v["my_seat"])
    if len(by_seat) < 2:
        return None
    out: dict[str, float] = {}
    for opt in spec.ids():
        texts = by_seat.get(opt)
        if not texts:
            out[opt] = 0.0
            continue
        centre = mean_vec(index.vecs(texts))
        others = [t for s, ts in by_seat.items() if s not in (opt, me) for t in ts]
        out[opt] = -float(centre @ mean_vec(index.vecs(others))) if others else 0.0
    return out


def spreads(obs: Observation, spec: Choice) -> bool:
    """A worded seat's vote is drawn from its posterior (it cannot know it is the spy); Mr. White plays to win."""
    return spec.kind == "vote" and bool(view_of(obs)["my_word"])


def best_sense(index: VocabIndex, word: str, context: Sequence[str]) -> wordsense.Sense | None:
    """The WordNet sense of ``word`` this game means: of its first senses, the one whose kind and definition
    are nearest the word together with ``context`` (chess the game beside draughts, not the grass)."""
    found = wordsense.senses(word)
    if not found:
        return None
    try:
        glosses = index.vecs([wordsense.gloss(x) for x in found])
        centre = mean_vec(index.vecs([word, *context]))
    except (KeyError, ValueError):  # an embedder with a closed vocabulary cannot read definitions
        return None
    return found[int(np.argmax(glosses @ centre))]


def says_a_secret(text: str, words: frozenset[str]) -> bool:
    """True when ``text`` names one of the game's words (``words``: normalised): such a word could be the other
    side's, and a villager who says it hands the spy its own word."""
    if normalize(text) in words:
        return True
    toks = tokens(text)
    return any(mentions_secret(text, w) for w in words if any(t[:3] == w[:3] for t in toks))


def descriptions(index: VocabIndex, word: str, spec: Text, said: Sequence[str], k: int) -> list[str]:
    """Descriptions of ``word`` a person would recognise: the vocabulary's nearest words and WordNet's words and
    short phrases for the word's sense; none names the word, a word of the game's list, or repeats what was said."""
    words, _ = alternatives(index, word)
    sense = best_sense(index, word, words[1:4])
    secrets = frozenset(secret_words()) - {normalize(word)}
    taken = {normalize(t) for t in said}

    def keep(texts: Sequence[str]) -> list[str]:
        out: list[str] = []
        for text in texts:
            key = normalize(text)
            if (key in taken or key in out or not fits(text, spec) or overlaps(text, word) or reveals_secret(text, word)
                    or says_a_secret(text, secrets) or any(overlaps(text, t) for t in said)):
                continue
            out.append(key)
        return out

    # What people wrote about the word comes first; the embedding's neighbours only where it says too little.
    people = keep(wordsense.words(sense) + wordsense.phrases(sense, spec.max_words)) if sense is not None else []
    if len(people) >= PEOPLE_ENOUGH:
        return people
    # Later rounds: the table's descriptions may hold every near word; look further out rather than say nothing.
    for n in (k, 4 * k, 16 * k):
        if out := keep([*people, *neighbour_words(index, index.vec(word), n, [word, *said], spec)]):
            break
    return out


PEOPLE_ENOUGH = 4


def candidates(index: VocabIndex, obs: Observation, spec: Text, k: int) -> list[list[str]]:
    v = view_of(obs)
    said = [str(d["text"]) for d in v["descriptions"]]
    target = spy_target(index, v)
    if target is None:
        return [[]]
    if spec.kind == "guess":
        return [neighbour_words(index, target, k, said, spec)]
    word = v["my_word"]
    if not word:  # Mr. White blends in with what the table said
        return [neighbour_words(index, target, k, said, spec)]
    return [descriptions(index, word, spec, said, k)]


OWN_CAP = 5.0
"""Pointing at one's word beyond this many background deviations adds nothing (it only helps the spy)."""
MARGIN_CAP = 2.0


def describe_score(index: VocabIndex, word: str, text: str, off: frozenset[str] = NONE_OFF) -> float:
    """How well a description serves a worded seat: it points clearly at the word (on the one scale of
    ``models/agents/reading.py``, so a phrase competes with a single word) and more at it than at the
    words the other side's could be, up to caps past which it would only give the word away. Without
    the ``guess`` step the other side's possible words are not weighed: the margin is left out."""
    words, _ = alternatives(index, word)
    if GUESS in off:
        words = words[:1]
    z = pointing(index, [text], words)[0]
    own = float(z[0])
    margin = own - float(z[1:].max()) if len(words) > 1 else 0.0
    return min(own, OWN_CAP) + 0.5 * min(margin, MARGIN_CAP) + (PEOPLE_BONUS if text in _said_by_people(index, word) else 0.0)


PEOPLE_BONUS = 1.0
"""What a word or phrase from WordNet's definition is worth over a neighbour in the embedding space: people
wrote the definitions, while the embedding's neighbours include look-alikes (whist for whisk)."""


def _said_by_people(index: VocabIndex, word: str) -> frozenset[str]:
    key = (id(index), normalize(word))
    hit = _PEOPLE.get(key)
    if hit is not None and hit[0] is index:
        return hit[1]
    words, _ = alternatives(index, word)
    sense = best_sense(index, word, words[1:4])
    found = frozenset(normalize(t) for t in (wordsense.words(sense) + wordsense.phrases(sense, 12) if sense else []))
    if len(_PEOPLE) > 512:
        _PEOPLE.clear()
    _PEOPLE[key] = (index, found)
    return found


_PEOPLE: dict[tuple[int, str], tuple[VocabIndex, frozenset[str]]] = {}


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action, off: frozenset[str] = NONE_OFF) -> float:
    v = view_of(obs)
    text = action.value[0]
    if action.kind == "describe":
        word = v["my_word"]
        if word:
            return describe_score(index, word, text, off)
        target = spy_target(index, v)
        if target is None:
            return 0.0
        sim = float(index.vec(text) @ target)
        # Mr. White: near what the table said, not so near that it looks copied.
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


@cache
def without(off: frozenset[str]) -> GameAgent:
    """The Who-is-Spy agent with the steps of ``off`` (of ``ABLATIONS``) left out."""
    return replace(AGENT, evidence=partial(evidence, off=off), text_score=partial(text_score, off=off))


AGENT = GameAgent(
    game="spy",
    prompt=prompt,
    baseline={"describe": _describe, "vote": _vote, "guess": _guess},
    evidence=evidence,
    spreads=spreads,
    candidates=candidates,
    text_score=text_score,
    role=role,
    ablations=ABLATIONS,
    without=without,
)
