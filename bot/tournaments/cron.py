"""Tournament schedules: a five-field crontab in UTC, checked before it is stored (pure).

A schedule from chat or the command line is refused with one sentence when it is not
plain ASCII (``٠ ٣ * * *`` would otherwise parse as ``0 3 * * *``), never fires within
``HORIZON`` (``0 0 31 2 *``), or fires more often than ``MIN_INTERVAL``. The interval is
read from the trigger's own next ``SAMPLE_FIRES`` firings, the same computation the
scheduler will do, so no cron dialect question is answered twice.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from apscheduler.triggers.cron import CronTrigger

from bot.tournaments.errors import TournamentError

MIN_INTERVAL = timedelta(hours=1)
"""The shortest time allowed between two runs of one scheduled tournament."""
HORIZON = timedelta(days=5 * 366)
"""A schedule that does not fire within this time is refused (never fires)."""
SAMPLE_FIRES = 400
"""Firings read to find the shortest interval (≥ 400 hours at the minimum interval: every
daily and weekly pattern repeats inside it)."""
_ALLOWED = frozenset("0123456789*/,- \tabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def parse_cron(expr: str) -> CronTrigger:
    """The trigger of a standard five-field crontab (minute hour day month weekday), in UTC;
    raises TournamentError with a readable reason. Only syntax is checked here."""
    text = expr.strip()
    if not text or any(ch not in _ALLOWED for ch in text) or len(text) > 100:
        raise TournamentError(f"{expr[:40]!r} is not a schedule: use five crontab fields in plain ASCII digits, "
                              "e.g. '0 3 * * *' for 03:00 UTC daily.")
    try:
        return CronTrigger.from_crontab(text, timezone=UTC)
    except (ValueError, TypeError) as exc:
        raise TournamentError(
            f"{expr[:40]!r} is not a schedule: use five crontab fields, e.g. '0 3 * * *' for 03:00 UTC daily ({exc})."
        ) from None


def check_schedule(expr: str, *, now: datetime | None = None) -> CronTrigger:
    """``parse_cron`` plus the bounds: fires within ``HORIZON`` and never twice within ``MIN_INTERVAL``."""
    trigger = parse_cron(expr)
    now = now or datetime.now(UTC)
    trigger.end_date = now + HORIZON  # bounds the search: an impossible date answers at once
    first = trigger.get_next_fire_time(None, now)
    if first is None:
        raise TournamentError(f"{expr.strip()!r} never runs (no such date within five years); check day and month.")
    prev = first
    for _ in range(SAMPLE_FIRES):
        nxt = trigger.get_next_fire_time(prev, prev + timedelta(seconds=1))
        if nxt is None:
            break
        if nxt - prev < MIN_INTERVAL:
            raise TournamentError(f"{expr.strip()!r} runs more often than once an hour; a tournament runs at most "
                                  "hourly, e.g. '0 * * * *'.")
        prev = nxt
    trigger.end_date = None
    return trigger
