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


class Redact(logging.Filter):
    """Replaces each configured credential by ``[redacted]`` in the formatted message."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        # Short values would mask ordinary words; credentials are long.
        self.secrets = sorted({s for s in secrets if s and len(s) >= 8}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        msg = record.getMessage()
        clean = msg
        for s in self.secrets:
            clean = clean.replace(s, "[redacted]")
        if clean != msg:
            record.msg, record.args = clean, None
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


def _credentials(settings: Any) -> list[str]:
    names = ("discord_token", "slack_bot_token", "slack_app_token", "slack_signing_secret", "openai_api_key",
             "export_secret", "worker_token")
    values = [getattr(settings, n, None) for n in names]
    return [str(v.get_secret_value() if hasattr(v, "get_secret_value") else v) for v in values if v]


def setup_logging(settings: Any, console: bool) -> Path:
    """Install the handlers on the root logger; returns the log file. Safe to call again."""
    log_dir = Path(getattr(settings, "log_dir", Path(".hushtable") / "logs")).expanduser()
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / "hushtable.log"
    formatter: logging.Formatter = JsonLines() if getattr(settings, "log_format", "text") == "json" else logging.Formatter(TEXT_FORMAT)
    redact = Redact(_credentials(settings))
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
        handlers.append(logging.StreamHandler(sys.stderr))
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
