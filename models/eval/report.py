"""The SNEAK clue report for chat, and a player's own averages (``/sneak``).

``clue_report`` scores a finished game's clues (storing them like ``hushtable
sneak score`` does, so a later report reuses them) and returns a short text:
each clue with its utility and leakage, averaged over the evaluators, and the
best SoftScore of the game. It runs after the result is announced (a finish
listener), so it reveals nothing the result has not. Player names come from
the table's seats; nothing else about a person is shown.

``SneakReporter.on_finish`` is the ``TableService.add_finish_listener``
callback (contract 6): Chameleon games always, Who-is-Spy and Decrypto when
the table was opened with the option ``sneak_report`` (kept in the lobby, not
in the engine's config). Evaluators come from configuration only.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from models.eval.decoys import DecoyStrategy, EmbeddingDecoys
from models.eval.evaluators import ClientFor, EmbedderFor, Evaluator, resolve
from models.eval.live import row_scores, score_games
from models.eval.metrics import Scores, mean_scores
from storage.evaluations import evaluations
from storage.store import Store
from storage.tables import GameRow

log = logging.getLogger(__name__)

ALWAYS = frozenset({"chameleon"})
OPTIONAL = frozenset({"spy", "decrypto"})
REPORT_OPTION = "sneak_report"
DEFAULT_CHAT_EVALUATORS = ("embed:minilm", "llm:default")


def _pct(x: float) -> str:
    return f"{100 * x:.0f}"


async def clue_report(store: Store, game_id: int, evaluators: Sequence[Evaluator], decoys: DecoyStrategy) -> str | None:
    """Score the game's clues (what is not stored yet) and describe them; None when it has none."""
    await score_games(store, evaluators, decoys, game_id=game_id)
    log_ = await store.load_game(game_id)
    names = {s.seat: s.display_name or f"Player {s.seat + 1}" for s in log_.seats}
    specs = {e.spec for e in evaluators}
    rows = [r for r in await evaluations(store, game_ids=[game_id]) if r.evaluator in specs]
    by_move: dict[tuple[int, int], list[Scores]] = defaultdict(list)
    info: dict[tuple[int, int], dict[str, Any]] = {}
    failed = 0
    for r in rows:
        s = row_scores(r)
        info[(r.action_seq, r.part)] = r.instance
        if s is None:
            failed += 1
        else:
            by_move[(r.action_seq, r.part)].append(s)
    if not info:
        return None
    lines = [f"SNEAK clue report (utility / leakage, 0-100, averaged over {len(specs)} evaluator(s)):"]
    best: tuple[float, str] | None = None
    for key in sorted(info):
        inst = info[key]
        seat = inst.get("seat")
        who = names.get(seat, "?") if isinstance(seat, int) else "?"
        tag = " (chameleon's bluff)" if inst.get("bluff") and inst.get("game") == "chameleon" else ""
        if not by_move.get(key):
            lines.append(f"- {who}: \u201c{inst['message']}\u201d{tag}: not scored")
            continue
        m = mean_scores(by_move[key])
        lines.append(f"- {who}: \u201c{inst['message']}\u201d{tag}: utility {_pct(m.utility)}, leakage {_pct(m.leakage)}")
        label = f"{who}, \u201c{inst['message']}\u201d"
        if best is None or m.soft > best[0]:
            best = (m.soft, label)
    if best is not None:
        lines.append(f"Best SoftScore: {_pct(best[0])} ({best[1]}).")
    if failed:
        lines.append(f"({failed} judgement(s) failed and are left out.)")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class PlayerAverages:
    player: Scores | None
    player_n: int
    agents: dict[str, tuple[Scores, int]]


async def player_averages(store: Store, user_key: str, *, tenant: str | None = None,
                          evaluators: Sequence[str] | None = None) -> PlayerAverages:
    """A person's own SNEAK averages, and each AI agent's, over the stored evaluations of the games
    that person played (of this tenant)."""
    games: list[GameRow] = await store.games(status="finished")
    ids = [g.id for g in games if g.id is not None and (tenant is None or getattr(g, "tenant", "") in ("", tenant))]
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
    for r in rows:
        s = row_scores(r)
        if s is None or r.game_id not in played:
            continue
        source, actor = actors.get((r.game_id, r.action_seq), ("", ""))
        if source == "human" and actor == user_key:
            mine.append(s)
        elif source != "human":
            agents[actor].append(s)
    return PlayerAverages(mean_scores(mine) if mine else None, len(mine),
                          {a: (mean_scores(xs), len(xs)) for a, xs in sorted(agents.items())})


def averages_text(p: PlayerAverages) -> str:
    """The ``/sneak`` answer: your averages against the AI agents you played with."""
    if p.player is None:
        return "No scored clues of yours yet: finish a Chameleon game and its clue report will count."

    def line(name: str, s: Scores, n: int) -> str:
        v = s.x100()
        return (f"{name}: utility {v['utility']:.0f}, leakage {v['leakage']:.0f}, SoftScore {v['soft']:.0f}, "
                f"BinaryScore {v['binary']:.0f} ({n} clue(s))")

    out = ["Your SNEAK averages (0-100):", line("You", p.player, p.player_n)]
    out += [line(agent, s, n) for agent, (s, n) in p.agents.items()]
    return "\n".join(out)


class SneakReporter:
    """The finish listener: resolves its evaluators once, from configuration, on first use."""

    def __init__(self, store: Store, *, client_for: ClientFor, embedder_for: EmbedderFor,
                 evaluators: Sequence[str] = DEFAULT_CHAT_EVALUATORS) -> None:
        self.store = store
        self.client_for = client_for
        self.embedder_for = embedder_for
        self.specs = tuple(evaluators)
        self._evaluators: list[Evaluator] | None = None
        self._decoys: DecoyStrategy | None = None

    async def _ready(self) -> tuple[list[Evaluator], DecoyStrategy]:
        if self._evaluators is None or self._decoys is None:
            self._evaluators = [await resolve(s, client_for=self.client_for, embedder_for=self.embedder_for)
                                for s in self.specs]
            self._decoys = EmbeddingDecoys(self.embedder_for("minilm"))
        return self._evaluators, self._decoys

    def wanted(self, row: GameRow) -> bool:
        if row.game in ALWAYS:
            return True
        # The table option `sneak_report=yes` is kept in the lobby (bot/core/commands.py), not in the rules.
        return row.game in OPTIONAL and (row.lobby or {}).get(REPORT_OPTION) is True

    async def report(self, game_id: int) -> str | None:
        row = await self.store.game(game_id)
        if row is None or not self.wanted(row):
            return None
        evaluators, decoys = await self._ready()
        return await clue_report(self.store, game_id, evaluators, decoys)

    def listener(self, outgoing: Callable[[str], Any]) -> Callable[[int, Any, str], Awaitable[Any]]:
        """``cb(game_id, place, tenant)`` for ``TableService.add_finish_listener``; ``outgoing(text)``
        wraps the text in the platform-neutral message type."""

        async def on_finish(game_id: int, place: Any, tenant: str) -> Any:
            try:
                text = await self.report(game_id)
            except Exception:  # a report must never break the table; the log says why
                log.exception("SNEAK clue report failed for game %s", game_id)
                return None
            return outgoing(text) if text else None

        return on_finish
