"""What the AI players know about Decrypto: prompts, the paper's embedding baseline, the strategy.

The baseline follows the benchmark paper's appendix D:

- encoder: for each code digit, sample the hint uniformly from the top-K vocabulary
  words most similar to that digit's keyword, keeping only words more similar to that
  keyword than to each of the other three (the margin constraint), never a hint used
  before in the game, never a keyword or a word containing one. When the top K hold no
  such word, the nearest word beyond K that satisfies the constraint is used.
- decoder: assigns each hint to its most similar keyword (the paper's greedy argmax).
  When the greedy digits collide (another encoder's hints) or name a code that is not
  offered, the offered code with the highest total similarity is taken.
- interceptor: compares each hint with the mean embedding of each keyword number's hint
  history (empty history: similarity 0, and a uniform random code while every history
  is empty) and solves the 3x4 assignment that maximises total similarity.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from games.base import Action, ActionSpec, Choice, Observation, Text, normalize
from games.decrypto import DecryptoView
from games.decrypto.config import Variant
from models.agents.games.kit import Baseline, GameAgent, Prompt, neighbour_words, player_name
from models.agents.hints import expressions
from models.agents.judge import Judge
from models.embeddings import Pick, VocabIndex, fits, mean_vec, overlaps, sample_top_k

KEYS = 4


def view_of(obs: Observation) -> DecryptoView:
    return cast(DecryptoView, obs.view)


def keywords_of(v: DecryptoView) -> list[str]:
    kw = v["keywords"]
    if kw is None:
        raise ValueError("this seat does not know the keywords")
    return [kw[str(d)] for d in range(1, KEYS + 1)]


def team_history(v: DecryptoView, team: str | None = None) -> dict[str, list[str]]:
    """The hint history of one team (benchmark views hold one history; teams views hold {"A": ..., "B": ...})."""
    h = v["hint_history"]
    if v["variant"] == Variant.BENCHMARK:
        return cast(dict[str, list[str]], h)
    return cast(dict[str, list[str]], h[team or v["team"] or "A"])


def code_of(v: DecryptoView) -> list[int]:
    code = v["code"]
    if code is None:
        raise ValueError("this seat has no code to give")
    return [int(x) for x in code.split("-")]


def is_own_guess(v: DecryptoView) -> bool:
    current = v["current_hints"]
    return v["keywords"] is not None and current is not None and current["team"] == v["team"]


# --------------------------------------------------------------------------- the paper's baseline


def decrypto_hints(
    index: VocabIndex, keywords: Sequence[str], code: Sequence[int], used: Sequence[str], k: int, r: random.Random, spec: Text
) -> list[Pick]:
    """The encoder of appendix D: one top-K hint per digit under the margin constraint."""
    kw = index.vecs(list(keywords))
    margin = index.matrix @ kw.T  # (V, 4): each word's similarity to each keyword
    taken = {normalize(h) for h in used}
    picks = []
    for d in code:
        c = d - 1
        others = [j for j in range(len(keywords)) if j != c]

        def allowed(i: int, w: str, c: int = c, others: list[int] = others) -> bool:
            return (
                all(margin[i, c] > margin[i, j] for j in others)
                and normalize(w) not in taken
                and fits(w, spec)
                and not any(overlaps(w, kword) for kword in keywords)
            )

        pick = sample_top_k(index, kw[c], k, r, allowed)
        taken.add(normalize(pick.word))
        picks.append(pick)
    return picks


def code_scores(sim: np.ndarray, options: Sequence[str]) -> dict[str, float]:
    """Total similarity of each offered code; ``sim[i, d-1]`` is hint i against keyword (or history) d."""
    out: dict[str, float] = {}
    for opt in options:
        try:
            digits = [int(x) for x in opt.split("-")]
        except ValueError:
            continue
        if len(digits) == sim.shape[0] and all(1 <= d <= sim.shape[1] for d in digits):
            out[opt] = float(sum(sim[i, d - 1] for i, d in enumerate(digits)))
    return out


def decrypto_decode(index: VocabIndex, keywords: Sequence[str], hints: Sequence[str], options: Sequence[str]) -> tuple[str, np.ndarray]:
    """The decoder of appendix D: each hint to its most similar keyword."""
    sim = index.vecs(list(hints)) @ index.vecs(list(keywords)).T
    greedy = "-".join(str(int(np.argmax(row)) + 1) for row in sim)
    if greedy in options:
        return greedy, sim
    scores = code_scores(sim, options)
    return max(scores, key=lambda o: scores[o]), sim


def decrypto_intercept(
    index: VocabIndex, history: Mapping[str, Sequence[str]], hints: Sequence[str], options: Sequence[str], r: random.Random
) -> tuple[str, np.ndarray]:
    """The interceptor of appendix D: hints against each number's mean history, by linear assignment."""
    sim = np.zeros((len(hints), KEYS), dtype=np.float32)
    known = [d for d in range(1, KEYS + 1) if history.get(str(d))]
    if not known:
        return options[r.randrange(len(options))], sim
    h = index.vecs(list(hints))
    for d in known:
        sim[:, d - 1] = h @ mean_vec(index.vecs(list(history[str(d)])))
    # Imported by the interceptor's first move: scipy.optimize costs most of a second of CPU, and every
    # start of the bot imports this module (to build and check its agents) whether or not one intercepts.
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(sim, maximize=True)
    order = np.argsort(rows)
    best = "-".join(str(int(cols[i]) + 1) for i in order)
    if best in options:
        return best, sim
    # The optimal code was excluded (exclude_used_codes): the best offered one.
    scores = code_scores(sim, options)
    return max(scores, key=lambda o: scores[o]), sim


def _baseline_hints(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Text)
    v = view_of(obs)
    used = [h for hs in team_history(v).values() for h in hs]
    picks = decrypto_hints(b.index, keywords_of(v), code_of(v), used, b.k, r, spec)
    return Action.say(spec.kind, *(p.word for p in picks)), {p.word: p.similarity for p in picks}


def _baseline_guess(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    assert isinstance(spec, Choice)
    v = view_of(obs)
    current = v["current_hints"]
    assert current is not None
    hints, options = current["hints"], list(spec.ids())
    if is_own_guess(v):
        guess, sim = decrypto_decode(b.index, keywords_of(v), hints, options)
    else:
        guess, sim = decrypto_intercept(b.index, team_history(v, current["team"]), hints, options, r)
    return Action.choose(spec.kind, guess), code_scores(sim, options)


def _baseline_keywords(b: Baseline, obs: Observation, spec: ActionSpec, r: random.Random) -> tuple[Action, dict[str, float]]:
    """Teams tie-break: for each number, the word nearest the other team's hints for it."""
    assert isinstance(spec, Text)
    v = view_of(obs)
    history = team_history(v, "B" if v["team"] == "A" else "A")
    guesses: list[str] = []
    for d in range(1, KEYS + 1):
        hints = history.get(str(d), [])
        if hints:
            target = mean_vec(b.index.vecs(hints))

            def allowed(i: int, w: str, hints: list[str] = hints) -> bool:
                return fits(w, spec) and w not in guesses and not any(overlaps(w, h) for h in hints)

            guesses.append(sample_top_k(b.index, target, 1, r, allowed).word)
        else:
            pool = [w for w in b.index.words if fits(w, spec) and w not in guesses]
            guesses.append(pool[r.randrange(len(pool))])
    return Action.say(spec.kind, *guesses), {}


# --------------------------------------------------------------------------- the strategy's specialist
#
# Decoder and interceptor read the whole hint history: each keyword slot's hints so far (revealed by
# the codes), the keywords when the seat knows them, and which codes are still possible (a code
# occurs at most once per game). A hint's fit to a slot is the mean of its similarity to the slot's
# centroid and to the slot's closest past hint (a keyword is hinted from several sides); an empty
# slot is worth EMPTY_SLOT, what an unrelated hint scores. The three hints name three different
# slots, so codes are scored jointly: the sum of the three fits. The decoder weighs the history
# beside the keywords by HISTORY_WEIGHT (0: on our recorded games the history only misled a decoder
# whose encoder thinks as it does; the keywords and the possible codes decide). One signal of the
# reading of a person's hint is added to the plain similarity: a hint that makes a fixed expression
# with a keyword (``hints.expressions``: "Cube" and root, "Of youth" after fountain) names it (JOINED);
# on the writers' hints it decoded 57 of the development half's 96 turns instead of 52 and 64 of the
# test half's instead of 59. The rest of that reading (the whole hint as a standard score, WordNet's
# links, which the Spymasters guesser also uses) decoded more of the development half (miscommunications
# 22 of 51 turns -> 21 of 56) but not of the test half (22 of 67 -> 23 of 63), so it is not used here.
#
# The encoder refines its hints against both (the Decrypto paper's Figure 10): among the legal
# candidates (each digit's keyword neighbours), the answer whose code the partner's model decodes
# most surely while an interceptor built from the public history places it least:
# P_partner(code) * (1 - P_eve(code)), each a softmax over the still-possible codes.

EMPTY_SLOT = 0.35
"""What a hint scores against a slot with no history (MiniLM cosines of unrelated words sit near 0.1-0.25;
0.15-0.35 made no difference on our recorded games)."""
HISTORY_WEIGHT = 0.0
"""The decoder's weight of the slot history beside the keyword itself (a tie-breaker: the keyword decides)."""
JOINED = 0.5
"""What a fixed expression of hint and keyword (``hints.expressions``) adds to their similarity: 0.2-1.0 decoded
the writers' development half alike; related words' cosines sit 0.2 above unrelated ones, so it all but decides."""


def used_codes(v: DecryptoView, team: str | None) -> set[str]:
    codes = v["code_history"]
    if isinstance(codes, dict):
        return set(codes.get(team or "A", []))
    return set(codes)


def history_fit(index: VocabIndex, hints: Sequence[str], history: Mapping[str, Sequence[str]], *,
                closest: float = 0.5) -> np.ndarray:
    """(len(hints), 4): how well each hint fits each slot's past hints (EMPTY_SLOT for a slot without any):
    ``closest`` times the similarity to the closest past hint plus the rest times that to their centroid."""
    out = np.full((len(hints), KEYS), EMPTY_SLOT, dtype=np.float32)
    if not hints:
        return out
    h = index.vecs(list(hints))
    for d in range(1, KEYS + 1):
        past = list(history.get(str(d), []))
        if past:
            sims = h @ index.vecs(past).T  # (hints, past)
            out[:, d - 1] = closest * sims.max(axis=1) + (1.0 - closest) * (h @ mean_vec(index.vecs(past)))
    return out


def slot_fit(index: VocabIndex, hints: Sequence[str], history: Mapping[str, Sequence[str]],
             keywords: Sequence[str] | None) -> np.ndarray:
    """(len(hints), 4): the fit of each hint to each slot, from the keywords when known and the history."""
    hist = history_fit(index, hints, history)
    if keywords is None:
        return hist
    kw: np.ndarray = index.vecs(list(hints)) @ index.vecs(list(keywords)).T + JOINED * expressions(index, hints, keywords)
    # The keyword decides; a slot's past hints only add where the hint fits them better than chance.
    out: np.ndarray = kw + HISTORY_WEIGHT * np.maximum(0.0, hist - EMPTY_SLOT)
    return out


IMPOSSIBLE = 1.0
"""How far below the worst possible code a code already used is scored (a softmax makes it all but zero)."""


def joint_scores(fit: np.ndarray, options: Sequence[str], excluded: set[str]) -> dict[str, float]:
    """The summed fit of each offered code; a code already used (never drawn twice) scored below every other."""
    scores = code_scores(fit, options)
    possible = [x for c, x in scores.items() if c not in excluded]
    if not possible:
        return scores
    floor = min(possible) - IMPOSSIBLE
    return {c: (x if c not in excluded else floor) for c, x in scores.items()}


def evidence(index: VocabIndex, obs: Observation, spec: Choice) -> dict[str, float] | None:
    if spec.kind != "guess":
        return None
    v = view_of(obs)
    current = v["current_hints"]
    if current is None:
        return None
    ids = list(spec.ids())
    hints = current["hints"]
    history = team_history(v, current["team"])
    keywords = keywords_of(v) if is_own_guess(v) else None
    if keywords is None and not any(history.get(str(d)) for d in range(1, KEYS + 1)):
        # Nothing to read yet: every still-possible code is as likely.
        return joint_scores(np.zeros((len(hints), KEYS), dtype=np.float32), ids, used_codes(v, current["team"])) or None
    fit = slot_fit(index, hints, history, keywords)
    return joint_scores(fit, ids, used_codes(v, current["team"])) or None


def candidates(index: VocabIndex, obs: Observation, spec: Text, k: int) -> list[list[str]]:
    v = view_of(obs)
    if spec.kind == "hints":
        keywords = keywords_of(v)
        used = [h for hs in team_history(v).values() for h in hs]
        # A wide pool: the words far enough from the keyword's past hints are rarely among its nearest few.
        return [neighbour_words(index, index.vec(keywords[d - 1]), HINT_POOL * k, [*keywords, *used], spec)
                for d in code_of(v)]
    if spec.kind == "keywords":
        history = team_history(v, "B" if v["team"] == "A" else "A")
        out = []
        for d in range(1, KEYS + 1):
            hints = history.get(str(d), [])
            out.append(neighbour_words(index, mean_vec(index.vecs(hints)), k, hints, spec) if hints else [])
        return out
    return [[] for _ in spec.fields]


def field_score(index: VocabIndex, obs: Observation, kind: str, field: int, text: str) -> float:
    v = view_of(obs)
    if kind == "hints":
        keywords = keywords_of(v)
        d = code_of(v)[field]
        sims = index.vecs(keywords) @ index.vec(text)
        # Our decoder maps it to the keyword: the margin over the other keywords.
        margin = float(sims[d - 1]) - max(float(s) for j, s in enumerate(sims) if j != d - 1)
        # The interceptor places it from the hint history of this number: keep away from it.
        past = team_history(v).get(str(d), [])
        placed = float(mean_vec(index.vecs(past)) @ index.vec(text)) if past else 0.0
        return margin - 0.5 * max(0.0, placed - 0.3)
    if kind == "keywords":
        hints = team_history(v, "B" if v["team"] == "A" else "A").get(str(field + 1), [])
        return float(index.vec(text) @ mean_vec(index.vecs(hints))) if hints else 0.0
    return 0.0


HINT_POOL = 3
"""The encoder's candidates per digit, in multiples of the strategy's k."""
CODE_TAU = 0.1
"""Temperature of the softmax over codes (sums of three cosines)."""


def code_probability(scores: Mapping[str, float], code: str) -> float:
    """P(code) under a softmax of the joint scores at CODE_TAU."""
    if code not in scores:
        return 0.0
    top = max(scores.values())
    z = sum(math.exp((x - top) / CODE_TAU) for x in scores.values())
    return math.exp((scores[code] - top) / CODE_TAU) / z


def hint_outcome(index: VocabIndex, v: DecryptoView, hints: Sequence[str]) -> tuple[float, float]:
    """(P the partner decodes the code, P an interceptor reading the public history intercepts it)."""
    code = v["code"] or ""
    team = v["team"]
    history = team_history(v)
    used = used_codes(v, team)
    codes = ["-".join(map(str, p)) for p in itertools.permutations(range(1, KEYS + 1), len(hints))]
    partner = joint_scores(slot_fit(index, hints, history, keywords_of(v)), codes, used)
    if any(history.get(str(d)) for d in range(1, KEYS + 1)):
        # Two interceptors: ours (centroid and closest hint) and the paper's (centroid alone); the surer one counts.
        eve = max(code_probability(joint_scores(history_fit(index, hints, history), codes, used), code),
                  code_probability(joint_scores(history_fit(index, hints, history, closest=0.0), codes, used), code))
    else:
        eve = 1.0 / max(1, len([c for c in codes if c not in used]))
    return code_probability(partner, code), eve


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action) -> float:
    if action.kind == "hints":
        bob, eve = hint_outcome(index, view_of(obs), action.value)
        return bob * (1.0 - eve)
    if action.kind == "keywords":
        return sum(field_score(index, obs, action.kind, i, t) for i, t in enumerate(action.value))
    return 0.0


# --------------------------------------------------------------------------- the prompt


def prompt(obs: Observation, spec: ActionSpec) -> Prompt:
    v = view_of(obs)
    bench = v["variant"] == Variant.BENCHMARK
    word = "Turn" if bench else "Round"
    summary: list[str] = []
    for t in v["turns"]:
        team = "" if bench else f" (Team {t['team']})"
        summary += [
            f"{word} {t['round']} summary{team}:",
            f"Code: {t['code']}",
            f"Hints: {', '.join(t['hints'])}",
            f"Decoder guess: {t['decoder_guess']}",
            f"Interceptor guess: {t['interceptor_guess'] or 'none'}",
            "",
        ]

    def history(h: Mapping[str, list[str]], title: str) -> list[str]:
        return [title, *(f"Keyword {d}: {', '.join(h.get(str(d), []))}" for d in range(1, KEYS + 1))]

    tokens_view: dict[str, Any] = v["tokens"]
    if bench:
        summary += history(team_history(v), "Hint history:")
        summary.append(f"Code history: {', '.join(cast(list[str], v['code_history'])) or 'none'}")
        tokens = (
            f"{word} {v['round']}: {tokens_view['miscommunications']} miscommunications, "
            f"{tokens_view['interceptions']} interceptions so far."
        )
    else:
        codes = cast(dict[str, list[str]], v["code_history"])
        for team in ("A", "B"):
            summary += history(team_history(v, team), f"Team {team} hint history:")
            summary.append(f"Team {team} code history: {', '.join(codes[team]) or 'none'}")
        tokens = f"{word} {v['round']}: " + "; ".join(
            f"Team {t}: {tokens_view[t]['miscommunications']} miscommunications, {tokens_view[t]['interceptions']} interceptions"
            for t in ("A", "B")
        ) + "."
    keywords = v["keywords"]
    values: dict[str, object] = {
        "max_rounds": v["max_rounds"],
        "summary": "\n".join(summary) if v["turns"] else f"This is the first {word.lower()}.",
        "tokens": tokens,
        "keywords": ", ".join(f"{d}: {w}" for d, w in sorted(keywords.items())) if keywords else "",
    }
    role = v["role"]
    values["role"] = role.capitalize() if bench else f"{role.capitalize()} of Team {v['team']} ({player_name(obs.seat)})"
    forbidden = tuple(keywords.values()) if keywords else ()
    if spec.kind == "hints":
        assert keywords is not None and v["code"] is not None
        code = v["code"].split("-")
        values.update(code=v["code"], code_keywords=", ".join(f"{d}: {keywords[d]}" for d in code))
        return Prompt("decrypto_encoder", values, forbidden)
    if spec.kind == "guess":
        current = v["current_hints"]
        assert current is not None
        values["hints"] = ", ".join(f"{a}: {h}" for a, h in zip("abc", current["hints"], strict=False))
        own = is_own_guess(v)
        if not own:
            values["role"] = "Interceptor" if bench else f"Decoder of Team {v['team']}, intercepting Team {current['team']}"
        return Prompt("decrypto_decoder" if own else "decrypto_interceptor", values)
    if spec.kind == "keywords":
        values["other"] = "B" if v["team"] == "A" else "A"
        return Prompt("decrypto_tiebreak", values, forbidden)
    raise ValueError(f"no Decrypto prompt for {spec.kind!r}")


def role(obs: Observation, spec: ActionSpec) -> str:
    if spec.kind == "hints":
        return "encoder"
    if spec.kind == "guess":
        return "decoder" if is_own_guess(view_of(obs)) else "interceptor"
    return "tiebreak" if spec.kind == "keywords" else spec.kind


AGENT = GameAgent(
    game="decrypto",
    prompt=prompt,
    baseline={"hints": _baseline_hints, "guess": _baseline_guess, "keywords": _baseline_keywords},
    evidence=evidence,
    candidates=candidates,
    text_score=text_score,
    field_score=field_score,
    role=role,
)
