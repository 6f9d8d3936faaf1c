"""Spymasters clues scored on their board: utility (the team's guessers find their words) and
leakage (the other team's words or the assassin get picked).

A Spymasters clue points at several words at once and is read by people who do not know the
key, so SNEAK's one-secret pair of judgements (an ally who knows the secret, an outsider who
names it) does not fit it; this module's ``SNEAK`` is therefore the per-game scoring hook
(``ClueHook``: the chat report after a game and ``hushtable sneak score`` reach it through the
registry) and scores a clue with the one judgement that does fit:
any SNEAK evaluator's *outsider* judgement (``Evaluator.chameleon``), a distribution over
the board words still hidden when the clue was given, from the clue alone (LLM label
scoring with shuffled labels, or embeddings). From that distribution p over the hidden
words W, with T the team's words and B the other team's words plus the assassin:

- Utility = max(0, (p(T) - |T|/|W|) / (1 - |T|/|W|)): the team's guessers find their words,
  0 at chance, 1 when all the mass is on the team's words.
- Leakage = max(0, (p(B) - |B|/|W|) / (1 - |B|/|W|)): the clue leads to words that help the
  other team or lose the game. ``assassin`` is the assassin's own share, normalised the same way.
- SoftScore = Utility * (1 - Leakage), per evaluator; several evaluators are averaged per
  evaluator first, as SNEAK's tables do.

``board_clues(log)`` reads the clues from a logged game (pure, the log alone): the board
from the public deal, the key from the spymasters' private event, revealed words from the
guesses, each clue at the moment its number made it public.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games.base import normalize
from games.labels import seat_ref
from models.eval.evaluators import Evaluator
from models.eval.games import ClueHook, OwnReport, clue_kinds
from models.eval.instances import ActionLike, EventLike, Instance, LogLike, speaker_of, walk

GAME = "spymasters"
CATEGORY = "words on the board"
ROLE = "spymaster"


@dataclass(frozen=True, slots=True)
class BoardClue:
    """One clue as its team's guessers met it: the hidden words and what each was on the key."""

    clue: str
    number: int
    team: str
    board: tuple[str, ...]
    team_words: tuple[str, ...]
    opponent_words: tuple[str, ...]
    assassin: tuple[str, ...]
    seat: int | None = None
    speaker: str = ""
    speaker_kind: str = ""
    game_id: int | None = None
    action_seq: int | None = None
    seed: int = 0

    def instance(self) -> Instance:
        """The clue as a SNEAK instance over the hidden board, for an evaluator's outsider judgement
        (its ``secret`` is one of the team's words; only the distribution over the board is read)."""
        return Instance(game=GAME, category=CATEGORY, candidates=self.board, secret=self.team_words[0],
                        message=self.clue, role=ROLE, seat=self.seat, speaker=self.speaker,
                        speaker_kind=self.speaker_kind or "bench", game_id=self.game_id,
                        action_seq=self.action_seq, seed=self.seed)


@dataclass(frozen=True, slots=True)
class BoardScores:
    utility: float
    leakage: float
    assassin: float
    soft: float

    def x100(self) -> dict[str, float]:
        return {"utility": 100 * self.utility, "leakage": 100 * self.leakage, "assassin": 100 * self.assassin,
                "soft": 100 * self.soft}


def above_chance(p: float, chance: float) -> float:
    """(p - chance) / (1 - chance), clipped at 0: 0 at chance, 1 at certainty."""
    if not 0.0 < chance < 1.0:
        return 0.0
    return max(0.0, (p - chance) / (1.0 - chance))


def board_scores(probs: Sequence[float], clue: BoardClue) -> BoardScores:
    """The scores of one clue from a distribution over ``clue.board`` (in board order)."""
    if len(probs) != len(clue.board):
        raise ValueError(f"{len(probs)} probabilities for {len(clue.board)} words")
    p = {normalize(w): float(x) for w, x in zip(clue.board, probs, strict=True)}
    n = len(clue.board)

    def mass(words: Sequence[str]) -> float:
        return sum(p[normalize(w)] for w in words)

    bad = (*clue.opponent_words, *clue.assassin)
    utility = above_chance(mass(clue.team_words), len(clue.team_words) / n)
    leakage = above_chance(mass(bad), len(bad) / n)
    assassin = above_chance(mass(clue.assassin), len(clue.assassin) / n)
    return BoardScores(utility, leakage, assassin, utility * (1.0 - leakage))


def mean(scores: Sequence[BoardScores]) -> BoardScores:
    if not scores:
        raise ValueError("nothing to average")
    n = len(scores)
    return BoardScores(sum(s.utility for s in scores) / n, sum(s.leakage for s in scores) / n,
                       sum(s.assassin for s in scores) / n, sum(s.soft for s in scores) / n)


async def score_clue(evaluator: Evaluator, clue: BoardClue) -> BoardScores | str:
    """The clue's scores under one evaluator, or the reason its judgement failed."""
    judgement = await evaluator.chameleon(clue.instance())
    if judgement.error is not None:
        return judgement.error
    return board_scores(judgement.probs, clue)


@dataclass(frozen=True, slots=True)
class Report:
    """Per evaluator: each clue's scores (None where the judgement failed), the mean, failures;
    ``average`` is the mean of the evaluators' means (None when no evaluator scored anything)."""

    clues: tuple[BoardClue, ...]
    per_clue: Mapping[str, tuple[BoardScores | None, ...]]
    means: Mapping[str, BoardScores]
    failures: Mapping[str, int]
    average: BoardScores | None


async def score_clues(evaluators: Sequence[Evaluator], clues: Sequence[BoardClue]) -> Report:
    """Every clue under every evaluator (judgements run together, so a worker batches them)."""
    results = await asyncio.gather(*(score_clue(ev, c) for ev in evaluators for c in clues))
    per_clue: dict[str, tuple[BoardScores | None, ...]] = {}
    means: dict[str, BoardScores] = {}
    failures: dict[str, int] = {}
    for i, ev in enumerate(evaluators):
        row = results[i * len(clues) : (i + 1) * len(clues)]
        scored = tuple(r if isinstance(r, BoardScores) else None for r in row)
        per_clue[ev.spec] = scored
        failures[ev.spec] = sum(1 for r in scored if r is None)
        ok = [r for r in scored if r is not None]
        if ok:
            means[ev.spec] = mean(ok)
    return Report(tuple(clues), per_clue, means, failures, mean(list(means.values())) if means else None)


# --------------------------------------------------------------------------- the log


def board_clues(log: LogLike) -> list[BoardClue]:
    """Every clue of a logged Spymasters game, each with the board as it stood when it was given."""
    st: dict[str, Any] = {"words": (), "key": (), "revealed": set()}
    written: dict[int, ActionLike] = {}  # spymaster seat -> its clue action
    out: list[BoardClue] = []
    seed = log.row.seed or 0
    clues = clue_kinds(GAME)  # which actions are clues: the game's descriptor says

    def on_action(a: ActionLike) -> None:
        if a.kind in clues and a.value:
            written[a.seat] = a

    def on_event(e: EventLike) -> None:
        if e.kind == "board":
            st.update(words=tuple(e.data["words"]), key=(), revealed=set())
        elif e.kind == "key":
            st["key"] = tuple(e.data["key"])
        elif e.kind == "guess":
            st["revealed"].add(normalize(str(e.data["word"])))
        elif e.kind == "clue" and st["key"]:
            seat, team = int(e.data["seat"]), str(e.data["team"])
            other = "blue" if team == "red" else "red"
            hidden = [(w, c) for w, c in zip(st["words"], st["key"], strict=True) if normalize(w) not in st["revealed"]]
            action = written.pop(seat, None)
            team_words = tuple(w for w, c in hidden if c == team)
            if action is None or not team_words:  # not caused by a move the descriptor calls a clue
                return
            who, kind = speaker_of(action)
            out.append(BoardClue(
                clue=str(e.data["clue"]), number=int(e.data["number"]), team=team,
                board=tuple(w for w, _ in hidden), team_words=team_words,
                opponent_words=tuple(w for w, c in hidden if c == other),
                assassin=tuple(w for w, c in hidden if c == "assassin"),
                seat=seat, speaker=who, speaker_kind=kind, game_id=log.row.id,
                action_seq=action.seq, seed=seed,
            ))

    walk(log, on_event, on_action)
    return out


def _n(x: float) -> str:
    return f"{100 * x:.0f}"


async def board_report(log: LogLike, evaluators: Sequence[Evaluator]) -> OwnReport:
    """One logged game's clues scored on their board, as the chat report and ``sneak score`` show them."""
    clues = board_clues(log)
    if not clues or not evaluators:
        return OwnReport(len(clues), ())
    rep = await score_clues(evaluators, clues)
    lines = []
    for i, c in enumerate(clues):
        scored = [s for per in rep.per_clue.values() if (s := per[i]) is not None]
        who = seat_ref(c.seat) if c.seat is not None else "?"
        if not scored:
            lines.append(f"- {who}: \u201c{c.clue}\u201d, {c.number}: not scored")
            continue
        m = mean(scored)
        lines.append(f"- {who}: \u201c{c.clue}\u201d, {c.number}: utility {_n(m.utility)}, leakage {_n(m.leakage)} "
                     f"(assassin {_n(m.assassin)}), SoftScore {_n(m.soft)}")
    numbers: dict[str, float] = {}
    if rep.average is not None:
        numbers = rep.average.x100()
        lines.append(f"Game mean: utility {_n(rep.average.utility)}, leakage {_n(rep.average.leakage)}, "
                     f"SoftScore {_n(rep.average.soft)}.")
    failed = sum(rep.failures.values())
    if failed:
        lines.append(f"({failed} judgement(s) failed and are left out.)")
    return OwnReport(len(clues), tuple(lines), numbers)


SNEAK = ClueHook(GAME, board_report)
"""The per-game scoring hook: each clue on the board as it stood (utility, leakage, assassin)."""

__all__ = ["SNEAK", "BoardClue", "BoardScores", "Report", "above_chance", "board_clues", "board_scores", "mean",
           "board_report", "score_clue", "score_clues"]
