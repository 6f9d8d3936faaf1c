"""Leaderboards: a text table, a chart (PNG bytes) and CSV/JSON exports of standings.

Pure rendering over ``Standing`` rows; platforms post the text and attach the image.
The chart uses matplotlib's object API with the Agg canvas (no pyplot, no display, no
global state), so it is safe inside the bot's event loop and threads.

Honest by construction: a standing without an interval (fewer than ``MIN_GROUPS`` deal
groups) says "not enough games for an interval" instead of a point dressed as one; a role
shows only the metrics that describe it (the game's descriptor says which roles each
describes) and how many games the entrant played in it; SoftScore is on 0-100; every win-rate
bar of the chart carries its value and game count, so a 0 is a visible mark, not a gap.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bot.tournaments.ratings import MIN_GROUPS, Standing, summary
from games.catalog import find
from games.descriptor import MetricScope
from storage.tables import TournamentRatingRow, TournamentRow

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Every game's leaderboard: the win rate, the game's own per-seat numbers (its descriptor's
# metrics with a column name), then the SNEAK clue score where the game has clues: informed clues'
# SoftScore, and apart from it the score of bluffs (clues given without the secret), never named SoftScore.
GENERIC_SHORT = {"win_rate": "win", "sneak_softscore": "SoftScore", "sneak_bluff": "bluff score"}
CHART_NAME = "leaderboard.png"
NO_INTERVAL_TEXT = "not enough games for an interval"
# The one uncertainty a leaderboard shows (the rating's own sigma is the model's prior bookkeeping,
# not how sure the standings are, so it is neither printed nor exported).
INTERVAL_TEXT = ("interval: where the rating would fall in 95% of replays of the tournament with its deals "
                 "drawn again (a bootstrap over deal groups)")
# The words people use for a seat's role, where the stored value is an identifier.
ROLE_NAMES = {"mr_white": "Mr. White", "team_member": "team member"}


def role_name(role: str) -> str:
    """A role as players say it: ``Mr. White``, ``team member``, ``villager``."""
    return ROLE_NAMES.get(role, role.replace("_", " "))


def verdict(rows: Sequence[Standing]) -> str:
    """Who leads, said only as far as the intervals allow: a leader when its interval is clear of every
    other entrant's, a tie when the top intervals overlap, and no call without intervals."""
    if len(rows) < 2:
        return ""
    top = rows[0]
    if not top.has_interval:
        return f"No leader yet: {NO_INTERVAL_TEXT} ({top.entrant} is ahead on rating alone)."
    tied = [r for r in rows if r is top or (r.has_interval and r.hi >= top.lo)]
    if len(tied) > 1:
        names = ", ".join(r.entrant for r in tied)
        return f"Tied at the top: {names} (their intervals overlap; more games would tell them apart)."
    return f"Leader: {top.entrant} (its interval is clear of every other entrant's)."


def standings_of(rows: Sequence[TournamentRatingRow], groups: int | None = None) -> list[Standing]:
    """Stored standings; ``groups`` (deal groups played) below ``MIN_GROUPS`` means no interval."""
    none = groups is not None and groups < MIN_GROUPS
    nan = float("nan")
    return [Standing(r.rank, r.entrant, r.mu, r.sigma, nan if none else r.lo, nan if none else r.hi, r.games,
                     {role: {k: float("nan") if v is None else float(v) for k, v in m.items()}
                      for role, m in r.metrics.items()})
            for r in sorted(rows, key=lambda r: r.rank)]


def _fmt(key: str, v: float) -> str:
    if v != v:  # nan: no decided game in that role
        return "–"
    if key == "win_rate":
        return f"{v:.0%}"
    return f"{v:.0f}" if key in ("sneak_softscore", "sneak_bluff") else f"{v:.2f}"


def _interval(r: Standing, width: int = 5) -> str:
    return f"[{r.lo:{width}.1f}, {r.hi:{width}.1f}]" if r.has_interval else "–"


def describes(game: str, key: str, role: str) -> bool:
    """Whether a per-seat metric of the game describes seats of this role (its descriptor's ``roles``)."""
    d = find(game)
    if d is None:
        return True
    for m in d.metrics:
        if m.key == key and m.scope is MetricScope.SEAT and m.roles:
            return role in {str(x) for x in m.roles}
    return True


def key_metrics(game: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """The metrics a leaderboard shows for a game, in order, and their column names."""
    d = find(game)
    if d is None:
        return ("win_rate",), dict(GENERIC_SHORT)
    own = d.leaderboard()
    keys = ("win_rate", *(m.key for m in own), *(("sneak_softscore", "sneak_bluff") if d.clue_kinds else ()))
    return keys, {**GENERIC_SHORT, **{m.key: m.short for m in own}}


def role_cells(game: str, roles: Mapping[str, Mapping[str, float]]) -> dict[str, str]:
    """``{role: "win 67% · misc 0.50"}`` with the game's key metrics."""
    keys, short = key_metrics(game)
    return {role_name(role): " · ".join(f"{short.get(k, k)} {_fmt(k, m[k])}" for k in keys
                                        if k in m and describes(game, k, role))
            for role, m in roles.items()}


def text_table(t: TournamentRow, rows: Sequence[Standing]) -> str:
    """The leaderboard as plain text in a monospace block (chat and console)."""
    head = f"Tournament #{t.id} {t.name or ''}".rstrip() + f" — {t.game} ({t.variant}); rating: openskill mean; " \
           + INTERVAL_TEXT
    width = max([len(r.entrant) for r in rows] + [7])
    lines = [f"{'#':>2}  {'entrant':<{width}}  {'rating':>6}  {'interval':<15} {'games':>5}"]
    for r in rows:
        lines.append(f"{r.rank:>2}  {r.entrant:<{width}}  {r.mu:6.1f}  {_interval(r):<15} {r.games:>5}")
        for role, cell in zip(r.roles, role_cells(t.game, r.roles).values(), strict=True):
            lines.append(f"{'':>4}{role_name(role)} ({games_in(r, role)} games): {cell}")
    if rows and not any(r.has_interval for r in rows):
        lines.append(f"Interval: {NO_INTERVAL_TEXT} (at least {MIN_GROUPS} deal groups).")
    elif verdict(rows):
        lines.append(verdict(rows))
    return head + "\n```\n" + "\n".join(lines) + "\n```"


def games_in(r: Standing, role: str) -> int:
    """Games the entrant played in this role (seats held in it)."""
    return int(r.roles.get(role, {}).get("seats", 0))


def chart_png(t: TournamentRow, rows: Sequence[Standing]) -> bytes:
    """Rating with interval bars per entrant (left) and win rate per role (right), as PNG bytes."""
    buf = io.BytesIO()
    chart_figure(t, rows).savefig(buf, format="png")
    return buf.getvalue()


def chart_figure(t: TournamentRow, rows: Sequence[Standing]) -> Figure:
    """The chart as a matplotlib ``Figure`` on the Agg canvas (``chart_png`` renders it)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 0.6 * max(3, len(rows)) + 1.6), dpi=100)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1]})
    names = [r.entrant for r in rows][::-1]
    mus = [r.mu for r in rows][::-1]
    ys = list(range(len(rows)))
    # The interval as a bar and the rating as a dot: with few games a percentile interval need
    # not contain the point estimate, so the two are drawn apart rather than as error bars.
    shown = [(y, r) for y, r in zip(ys, rows[::-1], strict=True) if r.has_interval]
    if shown:
        left.hlines([y for y, _ in shown], [r.lo for _, r in shown], [r.hi for _, r in shown], linewidth=6,
                    color="#90cdf4", label="95% interval")
    left.plot(mus, ys, "o", color="#2b6cb0", label="rating")
    left.legend(loc="lower right", fontsize="small")
    left.set_yticks(ys, names)
    left.set_xlabel("rating (openskill mean, 95% interval)" if shown else f"rating (openskill mean; {NO_INTERVAL_TEXT})")
    left.grid(axis="x", alpha=0.3)
    roles = sorted({role for r in rows for role in r.roles})
    if roles:
        bar = 0.8 / len(roles)
        for i, role in enumerate(roles):
            vals = [r.roles.get(role, {}).get("win_rate", float("nan")) for r in rows][::-1]
            counts = [games_in(r, role) for r in rows][::-1]
            at = [y + (i - (len(roles) - 1) / 2) * bar for y in ys]
            bars = right.barh(at, [0 if math.isnan(v) else v for v in vals], height=bar, label=role_name(role))
            color = bars.patches[0].get_facecolor() if bars.patches else None
            for y, v, n in zip(at, vals, counts, strict=True):
                if n == 0:
                    continue
                # Every bar says its value and games: a 0 gets a visible mark, not an empty gap.
                if not math.isnan(v) and v == 0:
                    right.plot([0], [y], marker="|", markersize=9, markeredgewidth=2, color=color)
                label = "–" if math.isnan(v) else f"{v:.0%}"
                right.text((0 if math.isnan(v) else v) + 0.01, y, f"{label} ({n})", va="center", fontsize="x-small")
        right.set_yticks(ys, names)
        right.set_xlim(0, 1.15)
        right.set_xlabel("win rate per role (games)")
        right.legend(loc="lower right", fontsize="small")
        right.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Tournament #{t.id}: {t.game} ({t.variant})")
    fig.tight_layout()
    return fig


def to_json(t: TournamentRow, rows: Sequence[Standing]) -> str:
    doc: dict[str, Any] = {
        "tournament": {"id": t.id, "name": t.name, "game": t.game, "variant": t.variant, "format": t.format,
                       "duplicate": t.duplicate, "entrants": t.entrants, "seed": t.seed, "status": t.status},
        "interval": INTERVAL_TEXT,
        "standings": [{k: v for k, v in s.items() if k != "sigma"} for s in summary(rows)],
    }
    return json.dumps(doc, indent=2)


def to_csv(t: TournamentRow, rows: Sequence[Standing]) -> str:
    metric_cols = sorted({f"{role}.{k}" for r in rows for role, m in r.roles.items() for k in m})
    buf = io.StringIO()
    w = csv.writer(buf)
    # One uncertainty: lo and hi, the 95% bootstrap interval (INTERVAL_TEXT); no sigma beside it.
    w.writerow(["tournament", "game", "variant", "rank", "entrant", "rating", "lo", "hi", "games",
                *metric_cols])
    for r in rows:
        flat = {f"{role}.{k}": v for role, m in r.roles.items() for k, v in m.items()}
        lo, hi = (f"{r.lo:.3f}", f"{r.hi:.3f}") if r.has_interval else ("", "")
        w.writerow([t.id, t.game, t.variant, r.rank, r.entrant, f"{r.mu:.3f}", lo, hi, r.games,
                    *("" if c not in flat or flat[c] != flat[c] else f"{flat[c]:.4f}" for c in metric_cols)])
    return buf.getvalue()
