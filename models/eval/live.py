"""Scoring live play: logged games -> instances -> evaluations -> the evaluations table, and summaries.

``score_games`` is what ``hushtable sneak score`` and the chat clue report run:
it maps finished games to instances, leaves out the (move, evaluator,
settings) pairs already stored, scores the rest and stores them. Summaries
read the stored rows back and group them by game, by player (each human by
pseudonym, each agent by its spec) and by role, per evaluator and averaged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from models.eval.decoys import DEFAULT_DECOYS, DecoyStrategy
from models.eval.evaluators import Evaluator
from models.eval.games import hooks, instances_from_log, scored_games
from models.eval.instances import Instance, SpeakerKind
from models.eval.metrics import Scores
from models.eval.score import Evaluation, evaluate, settings_key, settings_of
from models.eval.summary import Row, Scored, summarise
from storage.evaluations import EvaluationRecord, evaluations, games_to_score, save_evaluations, scored_keys
from storage.export import pseudonym
from storage.records import GameLog
from storage.store import Store
from storage.tables import ActionSource, EvaluationRow, GameStatus


def record_of(ev: Evaluation) -> EvaluationRecord:
    inst = ev.instance
    assert inst.game_id is not None and inst.action_seq is not None
    s = ev.scores
    return EvaluationRecord(
        game_id=inst.game_id, action_seq=inst.action_seq, part=inst.part, game=inst.game, evaluator=ev.evaluator,
        settings=ev.settings_key, settings_json=ev.settings, instance=inst.to_json(), decoys=ev.decoys,
        perm_seed=ev.perm_seed, ally_probs=ev.ally_probs, cham_probs=ev.cham_probs,
        utility=s.utility if s else None, leakage=s.leakage if s else None, soft=s.soft if s else None,
        binary=s.binary if s else None, error=ev.error,
    )


@dataclass(frozen=True, slots=True)
class ScoreRun:
    games: int
    instances: int
    scored: int  # pairs evaluated in this run
    inserted: int
    failures: int
    skipped: int  # pairs already stored


async def score_games(
    store: Store,
    evaluators: Sequence[Evaluator],
    decoys: DecoyStrategy,
    *,
    game_id: int | None = None,
    since: datetime | None = None,
    games: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    log: GameLog | None = None,
) -> ScoreRun:
    """Score and store what is not scored yet; ``progress(done_increment, total)``. ``log``: the one
    game to score, already read by the caller (scored when finished and of a game with clues)."""
    if log is not None:
        wanted = games or scored_games()
        logs = [log] if log.row.game in wanted and log.row.status == GameStatus.FINISHED.value else []
    else:
        logs = await games_to_score(store, games=games or scored_games(), game_id=game_id, since=since)
    instances: list[Instance] = [i for log in logs for i in instances_from_log(log)]
    have = await scored_keys(store, [log.row.id for log in logs if log.row.id is not None])
    keys = {ev.spec: settings_key(ev.spec, settings_of(ev, decoys, DEFAULT_DECOYS)) for ev in evaluators}
    todo = sum(1 for i in instances for ev in evaluators
               if (i.game_id, i.action_seq, i.part, ev.spec, keys[ev.spec]) not in have)
    skipped = len(instances) * len(evaluators) - todo

    def skip(inst: Instance, spec: str, key: str) -> bool:
        return (inst.game_id, inst.action_seq, inst.part, spec, key) in have

    results = await evaluate(instances, evaluators, decoys, skip=skip,
                             progress=(lambda n: progress(n, todo)) if progress else None)
    inserted = await save_evaluations(store, [record_of(r) for r in results])
    return ScoreRun(len(logs), len(instances), len(results), inserted, sum(1 for r in results if r.scores is None),
                    skipped)


@dataclass(frozen=True, slots=True)
class OwnRun:
    """The games of one game type scored by its own hook (``models/eval/games``' ``ClueHook``):
    how many games and clues, and the mean of each game's headline numbers (0-100)."""

    game: str
    games: int
    clues: int
    numbers: dict[str, float]


async def score_own(store: Store, evaluators: Sequence[Evaluator], *, game_id: int | None = None,
                    since: datetime | None = None) -> list[OwnRun]:
    """Every finished game whose clues its game scores its own way, one run per game type. These
    judgements are computed from the log on demand and not stored: a report is as cheap as its
    evaluators' calls on the game's clues."""
    out = []
    for game, hook in hooks().items():
        logs = await games_to_score(store, games=[game], game_id=game_id, since=since)
        reports = [await hook.report(log, evaluators) for log in logs]
        keys = sorted({k for r in reports for k in r.numbers})
        means = {k: sum(r.numbers[k] for r in reports if k in r.numbers) / sum(1 for r in reports if k in r.numbers)
                 for k in keys}
        if logs:
            out.append(OwnRun(game, len(logs), sum(r.clues for r in reports), means))
    return out


# --------------------------------------------------------------------------- reading back


def row_scores(r: EvaluationRow) -> Scores | None:
    if r.utility is None or r.leakage is None or r.soft is None or r.binary is None:
        return None
    return Scores(r.utility, r.leakage, r.soft, r.binary)


@dataclass(frozen=True, slots=True)
class Speaker:
    label: str  # "human u_<pseudonym>" or the agent spec
    kind: str


async def speakers(store: Store, game_ids: Sequence[int], secret: str) -> dict[tuple[int, int], Speaker]:
    """Who made each move: people by pseudonym (never their platform id), agents by spec."""
    out: dict[tuple[int, int], Speaker] = {}
    for move, who in (await store.actors(game_ids)).items():  # one query for every game
        if who.source is ActionSource.HUMAN:
            out[move] = Speaker(f"human {pseudonym(secret, who.actor)}", SpeakerKind.HUMAN.value)
        else:
            out[move] = Speaker(who.actor, SpeakerKind.AI.value)
    return out


@dataclass(frozen=True, slots=True)
class LiveSummary:
    by_game: list[Row]
    by_player: list[Row]
    by_role: list[Row]
    rows: int


async def live_summary(store: Store, *, secret: str, game_ids: Sequence[int] | None = None,
                       since: datetime | None = None, evaluators: Sequence[str] | None = None) -> LiveSummary:
    rows = [r for r in await evaluations(store, game_ids=game_ids, since=since, evaluators=evaluators)
            if r.settings_json.get("kind") != "tom"]  # theory-of-mind answers share the table, not the metrics
    who = await speakers(store, [r.game_id for r in rows], secret)
    unknown = Speaker("unknown", "")
    # By game type, bluffs (clues given without the secret) apart from informed clues: their utility and leakage
    # measure another thing, and mixing them moved a game's row with how often its chameleon spoke.
    by_game = summarise(Scored(r.game + (" (bluffs)" if r.instance.get("bluff") else ""), r.evaluator, row_scores(r))
                        for r in rows)
    by_player = summarise(Scored(who.get((r.game_id, r.action_seq), unknown).label
                                 + (" (bluff)" if r.instance.get("bluff") else ""), r.evaluator, row_scores(r))
                          for r in rows)
    by_role = summarise(Scored(f"{r.game}/{r.instance.get('role', '?')}", r.evaluator, row_scores(r)) for r in rows)
    return LiveSummary(by_game, by_player, by_role, len(rows))
