"""Prometheus metrics of a running bot: the ``ServiceObserver`` (bot/core/observe.py).

Built on ``prometheus_client`` (the reference client: text exposition format, histograms
and label handling done right) with a registry of our own, so two bots in one process
(tests) never share counters. Rates ("commands per second") are what Prometheus computes
from the counters: ``rate(hushtable_commands_total[1m])``.

Labels carry kinds, game names, agent names, operations and platforms only: never a user,
a channel, a secret or a player's text. Agent names come from the operator's configured
choices, so their number is bounded.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

# Seconds: a command is a database write and a few sends; an AI move may be a model call on a CPU.
_COMMAND_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_AI_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

CONTENT_TYPE = CONTENT_TYPE_LATEST

# The library's switch (process-wide): no "*_created" timestamp series beside every counter,
# which double the page and which Prometheus does not need for rates.
disable_created_metrics()  # type: ignore[no-untyped-call]  # unannotated in prometheus_client


class PrometheusObserver:
    """Counts what the table service reports; ``render()`` gives the /metrics page."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.commands = Counter("hushtable_commands", "Commands handled, by kind and whether they were accepted",
                                ["kind", "ok"], registry=r)
        self.command_seconds = Histogram("hushtable_command_seconds", "Time to handle one command",
                                         ["kind"], buckets=_COMMAND_BUCKETS, registry=r)
        self.actions = Counter("hushtable_actions", "Actions logged, by game and source (human, ai, timeout...)",
                               ["game", "source"], registry=r)
        self.ai_seconds = Histogram("hushtable_ai_move_seconds", "Latency of one model call for an AI seat",
                                    ["agent", "operation"], buckets=_AI_BUCKETS, registry=r)
        self.fallbacks = Counter("hushtable_ai_fallbacks", "AI moves played by the fallback agent",
                                 ["agent", "operation"], registry=r)
        self.delivery_failures = Counter("hushtable_delivery_failures", "Messages a platform could not deliver",
                                         ["platform"], registry=r)
        self.duplicates = Counter("hushtable_inbound_duplicates", "Redelivered platform events recognised and ignored",
                                  registry=r)
        self.running = Gauge("hushtable_tables_running", "Tables running in this process", registry=r)
        self.open_deadlines = Gauge("hushtable_deadlines_open", "Turn deadlines armed now", registry=r)
        self.scheduler = Gauge("hushtable_scheduler_jobs", "Jobs in the tournament scheduler", registry=r)
        self.lease_moves = Counter("hushtable_lease_moves", "Games whose hold moved: taken by this process, "
                                   "lost to another one, or handed back to the process serving their tenant", ["change"], registry=r)
        self.refused = Counter("hushtable_commands_refused_elsewhere",
                               "Moves refused because another live process holds their game", registry=r)
        self.forwarded = Counter("hushtable_commands_forwarded",
                                 "Commands forwarded to the live process holding their game", registry=r)
        self.rearmed = Counter("hushtable_deadlines_rearmed",
                               "Pending deadlines a supervisor round found without a timer and armed", registry=r)
        self.unknown_commits = Counter("hushtable_commits_unknown",
                                       "Writes whose COMMIT outcome was lost and that were read back", registry=r)
        self.withheld = Counter("hushtable_sends_withheld",
                                "Messages not sent because this process's hold on their game had run out",
                                registry=r)
        self.database_up = Gauge("hushtable_database_up", "1 when the last health check reached the database",
                                 registry=r)

    # ------------------------------------------------------------------ ServiceObserver

    def command(self, kind: str, seconds: float, ok: bool) -> None:
        self.commands.labels(kind=kind, ok="true" if ok else "false").inc()
        self.command_seconds.labels(kind=kind).observe(max(seconds, 0.0))

    def action(self, game: str, source: str) -> None:
        self.actions.labels(game=game, source=source).inc()

    def ai_move(self, agent: str, operation: str, seconds: float, fallback: bool) -> None:
        self.ai_seconds.labels(agent=agent, operation=operation).observe(max(seconds, 0.0))
        if fallback:
            self.fallbacks.labels(agent=agent, operation=operation).inc()

    def delivery_failed(self, platform: str) -> None:
        self.delivery_failures.labels(platform=platform).inc()

    def duplicate(self) -> None:
        self.duplicates.inc()

    def tables(self, running: int) -> None:
        self.running.set(running)

    def deadlines(self, open: int) -> None:
        self.open_deadlines.set(open)

    def lease_moved(self, change: str, games: int) -> None:
        self.lease_moves.labels(change=change).inc(games)

    def command_refused(self) -> None:
        self.refused.inc()

    def command_forwarded(self) -> None:
        self.forwarded.inc()

    def deadlines_rearmed(self, count: int) -> None:
        self.rearmed.inc(count)

    def commit_unknown(self) -> None:
        self.unknown_commits.inc()

    def sends_withheld(self, count: int) -> None:
        self.withheld.inc(count)

    # ------------------------------------------------------------------ beyond the table service

    def watch_scheduler(self, count_jobs: Callable[[], int]) -> None:
        """Read the scheduler's job count at every scrape (bot/tournaments passes ``lambda: len(sched.get_jobs())``)."""
        self.scheduler.set_function(lambda: float(count_jobs()))

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return bytes(generate_latest(self.registry))
