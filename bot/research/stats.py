"""``hushtable stats``: the papers' metrics over logged games, as a table or JSON.

The numbers come from ``games.metrics`` (shared with tournament leaderboards);
this module only gathers the games, notes those it could not measure, and lays
the metrics out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.research.logbook import LoggedGame
from games.catalog import find
from games.metrics import GameNotOver, Measured, measure, metrics_of
from games.record import RecordError


@dataclass(frozen=True)
class Skipped:
    game_id: int
    reason: str


@dataclass(frozen=True)
class StatsReport:
    filters: Mapping[str, Any]
    measured: int
    metrics: Mapping[str, Mapping[str, Mapping[str, Any]]]
    skipped: Sequence[Skipped] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "filters": dict(self.filters),
            "games_measured": self.measured,
            "metrics": {g: dict(v) for g, v in self.metrics.items()},
            "skipped": [{"game_id": s.game_id, "reason": s.reason} for s in self.skipped],
        }


def collect(logged: Sequence[LoggedGame], filters: Mapping[str, Any]) -> StatsReport:
    """Replay each game and measure it; a game that cannot be measured is listed, not hidden."""
    measured: list[Measured] = []
    skipped: list[Skipped] = []
    for g in logged:
        if g.record is None:
            skipped.append(Skipped(g.id, g.problem or "unreadable"))
            continue
        try:
            measured.append(measure(g.record))
        except (GameNotOver, RecordError, ValueError) as exc:
            skipped.append(Skipped(g.id, str(exc)))
    return StatsReport(filters, len(measured), metrics_of(measured), tuple(skipped))


def _value(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {_value(x)}" for k, x in v.items())
    return str(v)


def _rows(metrics: Mapping[str, Any], labels: Mapping[str, str], blocks: frozenset[str],
          indent: str = "  ") -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for key, v in metrics.items():
        label = labels.get(key, key)
        if isinstance(v, Mapping) and key in blocks:
            rows.append((indent + label, ""))
            rows.extend(_rows(v, labels, blocks, indent + "  "))
        else:
            rows.append((indent + label, _value(v)))
    return rows


def render_table(report: StatsReport) -> str:
    """The metrics as aligned text, one block per game and variant."""
    shown = ", ".join(f"{k}={v}" for k, v in report.filters.items() if v not in (None, [], ()))
    lines = [f"{report.measured} game(s) measured" + (f" ({shown})" if shown else "")]
    for game, variants in report.metrics.items():
        # Labels in the papers' words come from the game's descriptor; keys it does not
        # label print as they are.
        d = find(game)
        labels, blocks = (d.labels(), d.role_blocks()) if d is not None else ({}, frozenset[str]())
        for variant, metrics in variants.items():
            lines.append("")
            lines.append(f"{game} ({variant})")
            rows = _rows(metrics, labels, blocks)
            width = max(len(k) for k, _ in rows)
            lines.extend(f"{k.ljust(width)}  {v}".rstrip() for k, v in rows)
    if report.skipped:
        lines.append("")
        lines.append(f"{len(report.skipped)} game(s) left out:")
        lines.extend(f"  #{s.game_id}: {s.reason}" for s in report.skipped)
    return "\n".join(lines) + "\n"
