"""The strategic agent's specialist, per game: evidence for choices, candidates and scores for free text.

Each game's knowledge lives in its agent module (``models/agents/games/<game>.py``);
this module only finds it by the observation's game id. Clue quality follows the SNEAK
objective (``models/agents/judge.py``): utility for the allies against leakage.

``ablate`` names steps of the game's strategy to leave out (the strategic agent's ``ablate``
option, for research ablations such as SpyGame's Table 5); the game module says what each
step is (``GameAgent.ablations``) and what the seat does without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from games.base import Action, ActionSpec, Choice, Observation, Text
from models.agents.games import GameAgent, game_agent
from models.agents.judge import TAU, EmbeddingJudge, Judge, SneakJudge, softmax
from models.embeddings import VocabIndex

NO_ABLATION: frozenset[str] = frozenset()


def known_ablations() -> dict[str, str]:
    """Every step a game's strategy can leave out: name -> "game: what the seat does without it"."""
    from games import catalog
    from models.parts import Part, part

    out: dict[str, str] = {}
    for game_id in catalog.ids():
        agent = part(Part.AGENT, game_id)
        if isinstance(agent, GameAgent):
            for name, what in agent.ablations.items():
                out[name] = f"{out[name]}; {game_id}: {what}" if name in out else f"{game_id}: {what}"
    return out


def parse_ablations(text: str) -> frozenset[str]:
    """``none`` or step names joined by ``+`` or ``,`` (``guess+reason``); ValueError names the known ones."""
    text = text.strip().lower()
    if text in ("", "none", "off", "0"):
        return NO_ABLATION
    known = known_ablations()
    out = set()
    for part_ in text.replace(",", "+").split("+"):
        name = part_.strip()
        if name not in known:
            raise ValueError(f"ablate takes none or steps joined by '+' ({', '.join(sorted(known)) or 'no game has any'}), "
                             f"not {name[:30]!r}")
        out.add(name)
    return frozenset(out)


def _agent(obs: Observation, ablate: frozenset[str]) -> GameAgent:
    agent = game_agent(obs.game)
    return agent.ablated(ablate) if ablate else agent


def choice_evidence(index: VocabIndex, obs: Observation, spec: Choice,
                    ablate: frozenset[str] = NO_ABLATION) -> dict[str, float] | None:
    """A score per option id, higher = more likely right, from the seat's own information; None when there is none."""
    return _agent(obs, ablate).evidence(index, obs, spec)


def choice_spreads(obs: Observation, spec: Choice) -> bool:
    """True when the seat draws this choice in proportion to its evidence (the game module says which)."""
    spreads = game_agent(obs.game).spreads
    return spreads is not None and spreads(obs, spec)


def evidence_probs(scores: Mapping[str, float], ids: Sequence[str], tau: float = TAU) -> list[float]:
    """The evidence as a distribution over ``ids`` (missing options get the lowest score)."""
    low = min(scores.values()) if scores else 0.0
    return softmax([scores.get(i, low) for i in ids], tau)


def field_candidates(index: VocabIndex, obs: Observation, spec: Text, k: int = 12) -> list[list[str]]:
    """Embedding neighbours for each field of the answer (the secret's, each keyword's, the table's)."""
    return game_agent(obs.game).candidates(index, obs, spec, k)


def has_field_score(obs: Observation) -> bool:
    return game_agent(obs.game).field_score is not None


def field_score(index: VocabIndex, obs: Observation, kind: str, field: int, text: str) -> float:
    """The part of a multi-field answer's score that one field earns (0 for games without one)."""
    score = game_agent(obs.game).field_score
    return score(index, obs, kind, field, text) if score is not None else 0.0


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action,
               ablate: frozenset[str] = NO_ABLATION) -> float:
    """How good a free-text answer is for this seat's side (higher is better)."""
    return _agent(obs, ablate).text_score(index, judge, obs, action)


def rank_texts(index: VocabIndex, judge: Judge, obs: Observation, spec: ActionSpec,
               actions: Sequence[Action], ablate: frozenset[str] = NO_ABLATION) -> list[tuple[Action, float]]:
    """Candidates with their strategy score, best first (stable for equal scores)."""
    scored = [(a, text_score(index, judge, obs, a, ablate)) for a in actions]
    return sorted(scored, key=lambda x: -x[1])


__all__ = [
    "NO_ABLATION",
    "TAU",
    "EmbeddingJudge",
    "Judge",
    "SneakJudge",
    "choice_evidence",
    "choice_spreads",
    "evidence_probs",
    "field_candidates",
    "field_score",
    "has_field_score",
    "known_ablations",
    "parse_ablations",
    "rank_texts",
    "text_score",
]
