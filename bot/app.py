"""The one startup point: wires storage, agents, inference clients, the table service and
the platforms, then runs until stopped. No module-level singletons anywhere else."""

from __future__ import annotations

import asyncio
import errno
import logging
import signal
import socket
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from bot.ops.logs import after_start, quiet_stderr, setup_logging
from bot.settings import Settings
from bot.startup import (
    EXIT_CONFIG,
    SLACK_HTTP_HOST,
    NetworkDown,
    StartupError,
    bind_port,
    check_agents,
    check_console_terminal,
    check_database_url,
    check_evaluators,
    database_open_error,
    load_settings,
    retry_network,
    say,
    surface_lines,
)

# Imported when the app is built: a CLI command that builds none stays quick, and a start refused for
# a setting, the platforms or the database URL says its line without loading the service, the store,
# the agents and their models.
if TYPE_CHECKING:
    from bot.core.privacy import PrivacyDesk
    from bot.core.service import TableService
    from bot.ops.wiring import Ops
    from bot.sneak import SneakService
    from bot.tournaments.service import TournamentService
    from bot.web.server import WebServer
    from models.agents import AgentRegistry
    from models.client import ClientPool
    from storage.store import Store

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    store: Store
    service: TableService
    pool: ClientPool
    tournaments: TournamentService
    sneak: SneakService  # the clue reports, and /sneak and /judge for the adapters
    ops: Ops | None = None  # metrics observer and the local /healthz, /metrics server
    agents: AgentRegistry | None = None  # warmed for the configured agents once the start has said what runs
    privacy: PrivacyDesk | None = None  # people's data: privacy, research, mydata, forget-me, audit; retention

    async def aclose(self) -> None:
        if self.privacy is not None:
            await self.privacy.stop_schedule()
        await self.tournaments.aclose()
        await self.service.stop()
        if self.ops is not None:
            await self.ops.aclose()
        await self.pool.aclose()
        await self.store.aclose()


def build_agents(settings: Settings, pool: ClientPool) -> AgentRegistry:
    """The agent registry from the settings: the built-in names, ``llm:openai`` when its URL is set, and the
    operator's ``HUSHTABLE_AGENTS`` entries; llm and embed agents share clients through the pool (one per
    configured endpoint and key). A bad entry stops the bot here, at start, not in a game."""
    from models.agents.wiring import build_registry
    from models.worker.embedding_backend import embedder_for

    return build_registry(settings, pool.get, embedder_for)


async def build_app(settings: Settings | None = None, *, agents: AgentRegistry | None = None,
                    ops_socket: socket.socket | None = None) -> App:
    """Everything wired; ``ops_socket``: the ops port, bound by the start-up before it said what runs."""
    from bot.core.privacy import PrivacyDesk
    from bot.core.service import TableService
    from bot.ops.wiring import start_ops
    from bot.sneak import SneakService
    from bot.tournaments.service import TournamentService
    from models.client import ClientPool
    from storage.ownership import process_name
    from storage.store import RelayKeyMissing, SingleProcessOnly, Store

    settings = settings or Settings()
    # The agents are checked before anything opens: a bad HUSHTABLE_AGENTS entry stops the start cleanly.
    pool = ClientPool(settings.client_options())
    try:
        registry = agents or build_agents(settings, pool)
    except Exception:
        await pool.aclose()
        raise
    store = await Store.open(settings.database_url)
    try:  # several processes share a PostgreSQL by leases; a second bot on a SQLite file stops here
        await store.own_tables(process_name(), timedelta(seconds=settings.table_lease_s),
                                   relay_key=settings.relay_key.get_secret_value() if settings.relay_key else None)
    except (SingleProcessOnly, RelayKeyMissing) as exc:  # a second `make run` on the same file: a refused start, exit status 2
        await store.aclose()
        await pool.aclose()
        raise StartupError(str(exc)) from None
    try:  # an evaluator that has not passed validation stops the start with one line (bot/sneak.py)
        sneak = SneakService(store, client_for=pool.get, evaluators=settings.sneak_evaluator_list,
                             consent=settings.research_consent)
    except ValueError as exc:
        await store.aclose()
        await pool.aclose()
        raise StartupError(str(exc)) from None
    ops = await start_ops(settings, store, ops_socket)
    service = TableService(store, settings=settings, agents=registry, observer=ops.observer)
    sneak.attach(service.ai_tables)  # the clue report after each game; the adapters get it beside the service
    privacy = PrivacyDesk(store, contact=settings.privacy_contact, consent=settings.research_consent,
                          retention_days=settings.retention_days)
    service.ai_tables.add_finish_listener(privacy.after_game)  # an erasure that waited for this game's end
    service.join_notice = privacy.notice  # one line about privacy on a member's first join in a tenant
    service.export_filter = privacy.export_filter  # admins' exports: consenting members' words only, audited
    sneak.consents = privacy.consents  # the human study asks only members who consented to research
    sneak.research_filter = privacy.report_filter  # clue reports quote only what a research export would
    tournaments = TournamentService(service)
    ops.observer.watch_scheduler(tournaments.scheduled_jobs)  # hushtable_scheduler_jobs
    return App(settings, store, service, pool, tournaments, sneak, ops, registry, privacy)


def _platforms(settings: Settings, force_console: bool) -> tuple[bool, bool]:
    """Which platforms run; a half-configured one is a mistake, never a silent console."""
    if force_console:
        return False, False
    lines = []
    slack_any = any((settings.slack_bot_token, settings.slack_app_token, settings.slack_signing_secret))
    if slack_any and not settings.slack_bot_token:
        given = "SLACK_APP_TOKEN" if settings.slack_app_token else "SLACK_SIGNING_SECRET"
        lines.append(f"{given} is set but SLACK_BOT_TOKEN is missing; set the bot token (xoxb-..., "
                     "OAuth & Permissions) or unset the other")
    elif settings.slack_bot_token:
        if not settings.slack_bot_token.startswith("xoxb-"):
            lines.append("SLACK_BOT_TOKEN does not start with xoxb-; use the Bot User OAuth Token (OAuth & Permissions)")
        if settings.slack_mode == "socket" and not settings.slack_app_token:
            lines.append("SLACK_BOT_TOKEN is set but SLACK_APP_TOKEN is missing; Socket Mode needs the app-level token "
                         "(xapp-..., Basic Information > App-Level Tokens), or set HUSHTABLE_SLACK_MODE=http "
                         "with SLACK_SIGNING_SECRET")
        elif settings.slack_mode == "socket" and settings.slack_app_token and not settings.slack_app_token.startswith("xapp-"):
            lines.append("SLACK_APP_TOKEN does not start with xapp-; use an app-level token (Basic Information > App-Level Tokens)")
        if settings.slack_mode == "http" and not settings.slack_signing_secret:
            lines.append("HUSHTABLE_SLACK_MODE=http needs SLACK_SIGNING_SECRET (Basic Information > App Credentials)")
    if lines:
        raise StartupError(*lines)
    return bool(settings.discord_token), bool(settings.slack_bot_token)


async def _check_agents(settings: Settings) -> None:
    """A bad HUSHTABLE_AGENTS entry, or an agent name no entry defines, in one line each, before the
    store opens (and before logging starts: a model warming up says nothing then)."""
    from models.agents.registry import UnknownAgent
    from models.agents.wiring import build_registry
    from models.client import ClientPool

    pool = ClientPool(settings.client_options())
    try:
        # Only the names are wanted: no embedding model is built (its warm-up would log after a later refusal).
        check_agents(settings, build_registry(settings, pool.get, _NotLoaded).names())
    except UnknownAgent as exc:
        raise StartupError(f"HUSHTABLE_AGENTS: {exc}") from None
    except ValueError as exc:
        text = str(exc)
        raise StartupError(text if text.startswith("HUSHTABLE_") else f"HUSHTABLE_AGENTS: {text}") from None
    finally:
        await pool.aclose()  # nothing was started: the registry only names its agents


class _NotLoaded:
    """Stands for an embedding model while the agents are only named (it is no `Embedder`: nothing loads)."""

    def __init__(self, name: str) -> None:
        self.model_id = name


async def _open(settings: Settings, ops_socket: socket.socket | None = None) -> App:
    """`build_app` with each failure said in one line: a database that does not open (unreachable
    server, a file SQLite cannot use), a read-only database."""
    from storage.store import DatabaseReadOnly

    try:
        app = await build_app(settings, ops_socket=ops_socket)
    except StartupError:
        raise
    except OSError as exc:
        if settings.ops_port is not None and exc.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise StartupError(f"HUSHTABLE_OPS_PORT: cannot listen on {settings.ops_host}:{settings.ops_port} "
                               f"({exc.strerror or type(exc).__name__}); pick a free port or unset it") from None
        raise database_open_error(settings.database_url, exc) from None
    except Exception as exc:  # noqa: BLE001 - the store did not open: one line, no traceback
        raise database_open_error(settings.database_url, exc) from None
    try:
        await app.store.check_writable()
    except DatabaseReadOnly as exc:
        await app.aclose()
        raise StartupError(f"HUSHTABLE_DATABASE_URL: {exc}") from None
    except BaseException:
        await app.aclose()
        raise
    return app


async def main(*, force_console: bool = False, hotseat: bool = False, settings: Settings | None = None) -> None:
    """`hushtable run`: check everything an operator configured (each mistake: one line, exit status 2),
    say what runs (one line per surface), then serve until stopped. SIGTERM and Ctrl-C stop it
    cleanly (exit status 0): the store and the clients close inside the event loop."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    stopping: list[str] = []

    def stop(name: str) -> None:
        if task is not None and not stopping:
            stopping.append(name)
            task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop, sig.name)
        except (NotImplementedError, RuntimeError):  # no signal handlers here (Windows, a non-main thread)
            pass
    try:
        await _main(force_console=force_console, hotseat=hotseat, settings=settings)
    except asyncio.CancelledError:
        if not stopping:
            raise
        say(f"stopped ({stopping[0]})")
    except StartupError as exc:
        # The start is over: what threads still log (a model that was warming up) goes to the file only,
        # never after the line that says what to fix.
        quiet_stderr()
        for line in exc.lines:
            say(line)
        raise SystemExit(EXIT_CONFIG) from None
    except NetworkDown as exc:
        say(f"lost the connection while starting ({exc}); start again")
        raise SystemExit(1) from None


async def _main(*, force_console: bool, hotseat: bool, settings: Settings | None) -> None:
    settings = settings or load_settings()
    discord_on, slack_on = _platforms(settings, force_console)
    console = not (discord_on or slack_on)
    if console:
        check_console_terminal()
    check_evaluators(settings)
    check_database_url(settings.database_url)
    await _check_agents(settings)
    # Services log to .hushtable/logs/ and stderr. The console is a game screen: its adapter
    # sends every record to .hushtable/logs/console.log beside the database and none to the screen.
    if not console:
        try:
            setup_logging(settings, console=False, starting=True)
        except OSError as exc:
            raise StartupError(f"HUSHTABLE_LOG_DIR: cannot write the log in {settings.log_dir} "
                               f"({exc.strerror or type(exc).__name__}); name a writable folder") from None
    # Every port is bound (or refused in one line) before anything says the bot runs.
    sockets: list[socket.socket] = []
    ops_socket = slack_socket = web_socket = None
    runners: list[Awaitable[None]] = []
    try:
        if settings.web_port is not None:
            web_socket = bind_port("HUSHTABLE_WEB_PORT", settings.web_host, settings.web_port, host_setting="HUSHTABLE_WEB_HOST")
            sockets.append(web_socket)
        if settings.ops_port is not None:
            ops_socket = bind_port("HUSHTABLE_OPS_PORT", settings.ops_host, settings.ops_port,
                                   host_setting="HUSHTABLE_OPS_HOST")
            sockets.append(ops_socket)
        if slack_on and settings.slack_mode == "http":
            slack_socket = bind_port("HUSHTABLE_SLACK_PORT", SLACK_HTTP_HOST, settings.slack_port)
            sockets.append(slack_socket)
        app = await _open(settings, ops_socket)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    web = None
    try:
        if web_socket is not None:
            web = await _start_web(settings, app, web_socket)
        platforms: list[str] = []
        if discord_on:
            from bot.discord.adapter import check_token, use_endpoints

            use_endpoints(settings)
            name = await retry_network("Discord", lambda: check_token(settings))
            plan = settings.shard_plan
            shards = "" if plan is None else (", shards as Discord recommends" if plan.ids is None
                                              else f", shards {settings.discord_shards.strip()}")
            platforms.append(f"discord (as {name}{shards})")
        if slack_on:
            from bot.slack.adapter import check_tokens

            team = await retry_network("Slack", lambda: check_tokens(settings))
            platforms.append(f"slack ({settings.slack_mode} mode, workspace {team})")
        if console:
            platforms.append("console (hot-seat)" if hotseat else "console")
        agents = app.service.agent_choices()
        for line in surface_lines(settings, platforms=platforms, agents=agents):
            say(line)
        after_start()
        if app.agents is not None:
            # Only now, and only the agents players can meet: a refused start or an AI-less set-up loads no model.
            app.agents.warm([settings.default_agent, settings.fallback_agent, *settings.agent_list])
        if discord_on:
            from bot.discord.adapter import run_discord
            from bot.web.wiring import web_links

            runners.append(run_discord(app.service, settings, admin_role_ids=settings.discord_admin_roles,
                                       tournaments=app.tournaments, sneak=app.sneak, privacy=app.privacy,
                                       web=web_links(settings, app.store)))
        if slack_on:
            from bot.slack.adapter import run_slack
            from bot.web.wiring import web_links

            runners.append(run_slack(app.service, settings, tournament_port=app.tournaments, sneak_port=app.sneak,
                                     http_socket=slack_socket, privacy_port=app.privacy,
                                     web=web_links(settings, app.store)))
        if console:
            from bot.console.app import run_console

            runners.append(run_console(app.service, settings, hotseat=hotseat, sneak=app.sneak, privacy=app.privacy))
        if discord_on or slack_on:
            runners.append(app.tournaments.serve(settings.database_url))  # scheduled tournaments
        if app.privacy is not None:
            app.privacy.start_schedule()  # retention and erasures left waiting, hourly
        started, runners = runners, []
        await serve_all(started)
    finally:
        for runner in runners:  # never started: a check above stopped the start
            if asyncio.iscoroutine(runner):
                runner.close()
        if web is not None:
            await web.aclose()
        elif web_socket is not None:
            web_socket.close()
        await app.aclose()


async def _start_web(settings: Settings, app: App, sock: socket.socket) -> WebServer:
    """The web view on the port bound at start; a server database without an export key stops the start."""
    from bot.web.wiring import start_web
    from storage.export_secret import ExportSecretMissing

    try:
        return await start_web(settings, app.store, sock)
    except ExportSecretMissing as exc:
        raise StartupError(f"HUSHTABLE_WEB_PORT: the web view shows people by pseudonym: {exc}") from None


async def serve_all(runners: Sequence[Awaitable[None]]) -> None:
    """Run the surfaces together until one fails or all are cancelled; return only when every one
    has finished its own clean-up. (A cancelled ``gather`` returns as soon as one of them has ended,
    while another may still be cleaning up, e.g. the scheduler giving up its lease in the database:
    the store must not close under it.)"""
    tasks = [asyncio.ensure_future(r) for r in runners]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            if not task.done() and not task.cancelling():  # cancelled twice, its clean-up would be cut short
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
