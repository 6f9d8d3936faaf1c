"""What the chat clue report and ``/sneak`` say, as data read from stored evaluations (no text, no writes).

``clue_report`` reads a game's stored evaluations and returns each clue with
its metrics per evaluator, their mean and how many evaluators agree; the
clue-givers who knew the secret are ranked, and a bluff (a clue given without
the secret: the chameleon's, Mr. White's) is kept apart, with its utility "as if
it knew" (how well it blended in). ``player_averages`` gives a person's own
averages and each AI agent's over the games that person played, in one tenant.
The chat text is written in ``bot/sneak.py``; scoring and storing in
``models/eval/live.py``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from models.eval.clue_kind import POORLY_READ, ClueKind, clue_kind
from models.eval.live import row_scores
from models.eval.metrics import Scores, mean_scores
from storage.evaluations import evaluations
from storage.store import Store
from storage.tables import ActionSource, GameRow, GameStatus

AGREE_POINTS = 20.0  # evaluators within this many points (0-100) of their median count as agreeing


@dataclass(frozen=True, slots=True)
class ClueScore:
    """One clue of a game under every evaluator that scored it."""

    action_seq: int
    part: int
    seat: int | None
    message: str
    bluff: bool
    per_evaluator: dict[str, Scores] = field(default_factory=dict)
    failed: tuple[str, ...] = ()  # evaluators whose judgement failed
    # The clue is the card's category itself: it fits every word of the card alike, so it tells a
    # friend nothing of the secret, whatever an evaluator's numbers say; never ranked the best clue.
    names_category: bool = False
    # The clue's kind (``models/eval/clue_kind.py``): a name or reference is read poorly by the evaluators, so
    # its numbers are shown but not as a verdict on the clue, and it is never ranked the best clue.
    kind: ClueKind = ClueKind.ASSOCIATION

    @property
    def poorly_read(self) -> bool:
        """Whether the evaluators read clues of this kind poorly (their numbers are no verdict on it)."""
        return self.kind in POORLY_READ

    @property
    def mean(self) -> Scores | None:
        return mean_scores(self.per_evaluator.values()) if self.per_evaluator else None

    def agreeing(self, metric: str) -> int:
        """How many evaluators lie within ``AGREE_POINTS`` of their median on ``metric`` (x100)."""
        xs = [s.x100()[metric] for s in self.per_evaluator.values()]
        if not xs:
            return 0
        mid = statistics.median(xs)
        return sum(1 for x in xs if abs(x - mid) <= AGREE_POINTS)


@dataclass(frozen=True, slots=True)
class ClueReport:
    game_id: int
    evaluators: tuple[str, ...]
    clues: tuple[ClueScore, ...]

    @property
    def informed(self) -> list[ClueScore]:
        """Clues by players who knew the secret (the ones that may be ranked)."""
        return [c for c in self.clues if not c.bluff]

    @property
    def bluffs(self) -> list[ClueScore]:
        return [c for c in self.clues if c.bluff]

    def best(self) -> ClueScore | None:
        """The informed clue with the highest mean SoftScore (a bluff, a clue that only names the
        category, or a name the evaluators read poorly, is never ranked)."""
        scored = [(c.mean.soft, -c.action_seq, -c.part, c) for c in self.informed
                  if c.mean is not None and not c.names_category and not c.poorly_read]
        return max(scored, key=lambda t: t[:3])[3] if scored else None


def names_category(message: str, category: str) -> bool:
    """Whether a clue is the category itself (``bread`` for Bread, ``animals`` for Animal)."""
    def key(text: str) -> str:
        word = " ".join(text.casefold().split())
        return word[:-1] if word.endswith("s") and len(word) > 3 else word

    return bool(category.strip()) and key(message) == key(category)


async def clue_report(store: Store, game_id: int, evaluators: Sequence[str]) -> ClueReport | None:
    """The game's stored evaluations by these evaluators; None when it has no scored clue-like move."""
    wanted = tuple(evaluators)
    rows = await evaluations(store, game_ids=[game_id], evaluators=wanted)
    per: dict[tuple[int, int], dict[str, Scores]] = defaultdict(dict)
    failed: dict[tuple[int, int], list[str]] = defaultdict(list)
    info: dict[tuple[int, int], dict[str, object]] = {}
    for r in rows:
        key = (r.action_seq, r.part)
        info[key] = r.instance
        s = row_scores(r)
        if s is None:
            failed[key].append(r.evaluator)
        else:
            per[key][r.evaluator] = s
    if not info:
        return None
    from models.eval.wordnet import wordnet

    wn = wordnet()  # read once per process; the service has it for its decoys already
    clues = []
    for key in sorted(info):
        inst = info[key]
        seat = inst.get("seat")
        message = str(inst.get("message", ""))
        category = str(inst.get("category") or "")
        clues.append(ClueScore(key[0], key[1], seat if isinstance(seat, int) else None, message,
                               bool(inst.get("bluff")), dict(per.get(key, {})), tuple(failed.get(key, ())),
                               names_category(message, category), clue_kind(message, category, wn)))
    return ClueReport(game_id, wanted, tuple(clues))


@dataclass(frozen=True, slots=True)
class PlayerAverages:
    player: Scores | None
    player_n: int
    agents: dict[str, tuple[Scores, int]]
    evaluators: tuple[str, ...] = ()


def _in_tenant(g: GameRow, tenant: str | None) -> bool:
    # A game without a tenant (logged before tenants existed) belongs to nobody's averages.
    own = getattr(g, "tenant", "") or ""
    return bool(own) and (tenant is None or own == tenant)


async def player_averages(store: Store, user_key: str, *, tenant: str | None = None,
                          evaluators: Sequence[str] | None = None) -> PlayerAverages:
    """A person's own SNEAK averages, and each AI agent's, over the stored evaluations of the finished games
    of ``tenant`` (None: every tenant) that person played; informed clues only (bluffs are another quantity)."""
    games: list[GameRow] = await store.games(status=GameStatus.FINISHED)
    ids = [g.id for g in games if g.id is not None and _in_tenant(g, tenant)]
    rows = await evaluations(store, game_ids=ids, evaluators=evaluators)
    mine: list[Scores] = []
    agents: dict[str, list[Scores]] = defaultdict(list)
    played: set[int] = set()
    actors: dict[tuple[int, int], tuple[str, str]] = {}
    for gid in sorted({r.game_id for r in rows}):
        glog = await store.load_game(gid)
        if any(s.user_key == user_key for s in glog.seats):
            played.add(gid)
        for a in glog.actions:
            actors[(gid, a.seq)] = (a.source, a.actor)
    used: set[str] = set()
    for r in rows:
        s = row_scores(r)
        if s is None or r.game_id not in played or r.instance.get("bluff"):
            continue
        used.add(r.evaluator)
        source, actor = actors.get((r.game_id, r.action_seq), ("", ""))
        if source == ActionSource.HUMAN and actor == user_key:
            mine.append(s)
        elif source != ActionSource.HUMAN:
            agents[actor].append(s)
    return PlayerAverages(mean_scores(mine) if mine else None, len(mine),
                          {a: (mean_scores(xs), len(xs)) for a, xs in sorted(agents.items())}, tuple(sorted(used)))
