"""Check a game log by replaying it: every started game is rebuilt through its engine from the
logged seed and actions, its events compared with the logged ones, and a finished game's
winners compared with the stored result. Used after a copy and on a backup."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.replays import record_of
from games.record import RecordError, replay_record
from storage.ports import GameReader
from storage.tables import GameStatus


@dataclass
class ReplayReport:
    """How many started games replayed, and a sentence for each that did not."""

    replayed: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def replay_every_game(store: GameReader) -> ReplayReport:
    """Replay every game that was dealt (lobbies have nothing to replay)."""
    report = ReplayReport()
    for row in await store.games():
        if row.id is None or row.seed is None:
            continue
        log = await store.load_game(row.id)
        try:
            _, events, result = replay_record(record_of(log))
        except (RecordError, ValueError, KeyError, TypeError) as exc:  # ConfigError and IllegalAction are ValueErrors
            report.problems.append(f"game {row.id}: does not replay ({type(exc).__name__}: {exc})")
            continue
        logged = [{"kind": e.kind, "data": e.data, "audience": e.audience} for e in log.events]
        replayed = [e.to_json() for e in events]
        if replayed != logged[: len(replayed)]:
            report.problems.append(f"game {row.id}: replayed events differ from the logged ones")
            continue
        if row.status == GameStatus.FINISHED:
            stored = sorted((row.result or {}).get("winners", []))
            if result is None or sorted(result.winners) != stored:
                report.problems.append(f"game {row.id}: replayed winners differ from the stored result")
                continue
        report.replayed += 1
    return report
