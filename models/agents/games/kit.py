"""The shape of a game's agent module (``models/agents/games/<game>.py``) and what it may use.

A game module defines ``AGENT = GameAgent(game=<id>, prompt=..., baseline={...}, ...)``.
Every function receives the seat's ``Observation`` (its ``view`` is the game's typed
view: cast it to the game's TypedDict) and never anything the seat may not see.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from games.base import Action, ActionSpec, Choice, Observation, Text, normalize
from models.agents.judge import Judge
from models.embeddings import DEFAULT_K, VocabIndex, fits, overlaps


def player_name(seat: int) -> str:
    """How prompts name a seat: "Player k" for seat k-1, the engines' own neutral names."""
    return f"Player {seat + 1}"


@dataclass(frozen=True, slots=True)
class Prompt:
    """What a seat's prompt is filled from: a template (file name without .toml) and its values."""

    template: str
    values: Mapping[str, object]
    forbidden: tuple[str, ...] = ()  # the seat's own secret words, refused in its free text


@dataclass(frozen=True, slots=True)
class Baseline:
    """What a baseline move may use: the vocabulary index and the top-K of its draws."""

    index: VocabIndex
    k: int = DEFAULT_K


BaselineMove = Callable[[Baseline, Observation, ActionSpec, random.Random], tuple[Action, dict[str, float]]]
"""(baseline, observation, spec, seeded rng) -> (action, a score per option or word, for the call log)."""
Evidence = Callable[[VocabIndex, Observation, Choice], dict[str, float] | None]
"""A score per option id (higher = more likely right) from the seat's own information; None when there is none."""
Candidates = Callable[[VocabIndex, Observation, Text, int], list[list[str]]]
"""Up to k candidate words for each field of a free-text answer."""
TextScore = Callable[[VocabIndex, Judge, Observation, Action], float]
"""How good a free-text answer is for the seat's side (higher is better)."""
FieldScore = Callable[[VocabIndex, Observation, str, int, str], float]
"""(index, obs, kind, field number, text) -> the part of a multi-field answer's score one field earns."""
Spreads = Callable[[Observation, Choice], bool]
"""True when the seat draws this choice from its evidence (a vote it is unsure of spreads), False to take the best."""


def no_evidence(index: VocabIndex, obs: Observation, spec: Choice) -> dict[str, float] | None:
    return None


def no_candidates(index: VocabIndex, obs: Observation, spec: Text, k: int) -> list[list[str]]:
    return [[] for _ in spec.fields]


def no_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action) -> float:
    return 0.0


def neighbour_words(index: VocabIndex, target: np.ndarray, k: int, avoid: Sequence[str], spec: Text) -> list[str]:
    """The ``k`` vocabulary words nearest ``target`` that fit the spec and overlap none of ``avoid``."""
    out: list[str] = []
    taken = {normalize(a) for a in avoid}
    for i in index.ranked(target):
        w = index.words[int(i)]
        if fits(w, spec) and w not in taken and not any(overlaps(w, a) for a in avoid if a):
            out.append(w)
            if len(out) >= k:
                break
    return out


@dataclass(frozen=True, slots=True)
class GameAgent:
    """Everything the AI players know about one game.

    - ``prompt``: the seat's prompt for an action spec (``models/agents/prompts.py`` adds the
      rules, the options or the answer format, and the worked example);
    - ``baseline``: the embedding baseline's move per action kind (``embed:minilm``);
    - ``evidence``, ``candidates``, ``text_score``, ``field_score``: the strategic agent's
      specialist (``llm:default``): evidence for choices, candidate words for free text, and
      the ranking of whole answers and of single fields;
    - ``spreads``: which choices are drawn in proportion to the evidence (an innocent voter's
      ballot: the evidence is then the seat's posterior, and a table that is unsure spreads its
      votes rather than converging on one seat);
    - ``ablations`` and ``without``: the steps of the strategy a research run may switch off (a
      name and what the seat does without it), and the game's agent with the named steps
      removed (the strategic agent's ``ablate`` option; ``ablated`` applies it).
    """

    game: str
    prompt: Callable[[Observation, ActionSpec], Prompt]
    baseline: Mapping[str, BaselineMove]
    evidence: Evidence = no_evidence
    candidates: Candidates = no_candidates
    text_score: TextScore = no_score
    field_score: FieldScore | None = None
    spreads: Spreads | None = None  # choices drawn in proportion to the evidence, not taken at its top
    role: Callable[[Observation, ActionSpec], str] | None = None  # the seat's role for a move (default: the action kind)
    ablations: Mapping[str, str] = field(default_factory=dict)
    without: Callable[[frozenset[str]], GameAgent] | None = None

    def ablated(self, off: frozenset[str]) -> GameAgent:
        """This game's agent without the steps of ``off`` it has (names of other games' steps are ignored)."""
        mine = frozenset(off & self.ablations.keys())
        return self.without(mine) if mine and self.without is not None else self


__all__ = ["Baseline", "BaselineMove", "Candidates", "Evidence", "FieldScore", "GameAgent", "Prompt", "Spreads", "TextScore",
           "neighbour_words", "no_candidates", "no_evidence", "no_score", "player_name"]
