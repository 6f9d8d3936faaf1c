"""Logging set-up for the bot: one rotating file under ``.hushtable/logs/``, human-readable lines
by default or JSON lines (``HUSHTABLE_LOG_FORMAT=json``), and stderr too unless the console game
screen is in front of the player.

The console never shows a log line between game lines (a WARNING once told a player the secret
word): with ``console=True`` records go to the file only, Python warnings included. Every handler
masks the configured credentials (platform tokens, API keys, the export secret) should one ever be
formatted into a record; the rooms that log keep secrets of the games out of their messages.

Libraries log what they send and receive: at DEBUG, slack_sdk and discord.http write every request
body (a DM with a player's secret word among them), and Bolt's "unhandled request" warning quotes the
whole payload. Whatever ``HUSHTABLE_LOG_LEVEL`` says, those loggers stay at WARNING, no library record
below INFO reaches a handler, and a library record is cut where a payload (``{...}``) begins.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.ops.masking import MASKER, Masker

_OURS = "_hushtable_handler"  # marks handlers installed here, so a second set-up replaces them
MAX_BYTES = 10 * 1024 * 1024
BACKUPS = 5
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Loggers of this project (and Python's warnings): everything else is a library's.
OWN_LOGGERS = frozenset({"hushtable", "bot", "games", "models", "storage", "py", "__main__"})
# Libraries that log message bodies below WARNING: capped there whatever the configured level.
BODY_LOGGERS = ("slack_sdk", "slack_bolt", "discord.http", "discord.gateway", "discord.webhook", "discord.client",
                "discord.state", "aiohttp", "urllib3", "asyncio", "websockets", "httpx", "httpcore", "openai")
LIBRARY_MESSAGE_CHARS = 300


class JsonLines(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, exception if any."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


class Masked(logging.Formatter):
    """The one masking step of every handler: the whole formatted record (message, exception text and
    stack, whatever a library put there) goes through the process's `Masker` last, so a password in a
    URL, a configured credential or a running game's secret word never reaches a log line."""

    def __init__(self, inner: logging.Formatter, masker: Masker = MASKER) -> None:
        super().__init__()
        self.inner = inner
        self.masker = masker

    def format(self, record: logging.LogRecord) -> str:
        return self.masker.mask(self.inner.format(record))


class Redact(logging.Filter):
    """Registers the configured credentials with the masker (the handlers' `Masked` formatter masks them)."""

    def __init__(self, secrets: list[str], masker: Masker = MASKER) -> None:
        super().__init__()
        masker.add_credentials(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        return True


class LibraryBodies(logging.Filter):
    """Keeps message bodies out of the log: a library's record below INFO is dropped, and one at
    INFO or above is cut where a payload begins (``{``) and at `LIBRARY_MESSAGE_CHARS`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.split(".", 1)[0] in OWN_LOGGERS:
            return True
        if record.levelno < logging.INFO:
            return False
        msg = record.getMessage()
        brace = msg.find("{")
        clean = msg if brace < 0 else msg[:brace] + "[payload not logged]"
        if len(clean) > LIBRARY_MESSAGE_CHARS:
            clean = clean[:LIBRARY_MESSAGE_CHARS] + "… [cut]"
        if clean != msg:
            record.msg, record.args = clean, None
        return True


def cap_library_loggers(level: int | str) -> None:
    """The body-logging libraries at WARNING at least (they then do not even build their DEBUG records)."""
    wanted = logging.getLevelName(level) if isinstance(level, str) else level
    floor = max(int(wanted) if isinstance(wanted, int) else logging.INFO, logging.WARNING)
    for name in BODY_LOGGERS:
        lg = logging.getLogger(name)
        if lg.level < floor:
            lg.setLevel(floor)


def credentials(settings: Any) -> list[str]:
    names = ("discord_token", "slack_bot_token", "slack_app_token", "slack_signing_secret", "openai_api_key",
             "export_secret", "worker_token")
    values = [getattr(settings, n, None) for n in names]
    out = [str(v.get_secret_value() if hasattr(v, "get_secret_value") else v) for v in values if v]
    try:  # the database password, wherever a driver quotes it without its URL
        from sqlalchemy.engine import make_url

        password = make_url(str(getattr(settings, "database_url", ""))).password
    except Exception:  # noqa: BLE001 - no URL, no password to hide
        password = None
    if password:
        out.append(str(password))
    return out


def setup_logging(settings: Any, console: bool, *, starting: bool = False) -> Path:
    """Install the handlers on the root logger; returns the log file. Safe to call again.

    ``starting``: the start-up is still checking; standard error shows WARNING and above only until
    `after_start` (the file gets everything), so the lines that say what runs are not interleaved with a
    model's loading news, and a refusal is not followed by it."""
    log_dir = Path(getattr(settings, "log_dir", Path(".hushtable") / "logs")).expanduser()
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / "hushtable.log"
    inner: logging.Formatter = JsonLines() if getattr(settings, "log_format", "text") == "json" else logging.Formatter(TEXT_FORMAT)
    formatter = Masked(inner)
    redact = Redact(credentials(settings))
    bodies = LibraryBodies()

    root = logging.getLogger()
    for h in list(root.handlers):
        # Ours from an earlier call, and a plain stderr/stdout handler (basicConfig's): on the
        # console it would print between game lines. Other handlers (a test's capture) stay.
        plain = type(h) is logging.StreamHandler and getattr(h, "stream", None) in (sys.stderr, sys.stdout)
        if getattr(h, _OURS, False) or plain:
            root.removeHandler(h)
            if getattr(h, _OURS, False):
                h.close()
    handlers: list[logging.Handler] = [
        logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    ]
    if not console:
        stderr = logging.StreamHandler(sys.stderr)
        if starting:
            stderr.setLevel(logging.WARNING)
        handlers.append(stderr)
    for h in handlers:
        h.setFormatter(formatter)
        h.addFilter(bodies)
        h.addFilter(redact)
        setattr(h, _OURS, True)
        root.addHandler(h)
    root.setLevel(getattr(settings, "log_level", "INFO"))
    cap_library_loggers(getattr(settings, "log_level", "INFO"))
    logging.getLogger("alembic").setLevel(logging.WARNING)
    # warnings.warn goes to the file too, never onto the game screen. Captured afresh each time: if
    # something restored warnings.showwarning since an earlier call (warnings.catch_warnings does),
    # captureWarnings(True) alone would believe it still captures and change nothing.
    logging.captureWarnings(False)
    logging.captureWarnings(True)
    return path


def setup_process_logging(settings: Any, level: int = logging.INFO) -> None:
    """Logging for a process with no log file of its own (``hushtable worker``): standard error only, through
    the same masking and library filters as the bot's handlers."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, _OURS, False):
            root.removeHandler(h)
            h.close()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(Masked(logging.Formatter(TEXT_FORMAT)))
    handler.addFilter(LibraryBodies())
    handler.addFilter(Redact(credentials(settings)))
    setattr(handler, _OURS, True)
    root.addHandler(handler)
    root.setLevel(level)
    cap_library_loggers(level)


def after_start() -> None:
    """The start-up has said what runs: standard error shows the configured level from now on."""
    for h in logging.getLogger().handlers:
        if getattr(h, _OURS, False) and type(h) is logging.StreamHandler:
            h.setLevel(logging.NOTSET)


def quiet_stderr() -> None:
    """Stop copying records to standard error (the file handler stays): a refused start has said its line."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, _OURS, False) and type(h) is logging.StreamHandler:
            root.removeHandler(h)
