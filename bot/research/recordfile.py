"""Files holding several game records: ``sim --json`` output concatenated, or an export.

A new game starts at each ``{"type": "game"}`` line; an exported game
(``hushtable.game/1``) is a whole game on one line. Each game is parsed with
``games.record.parse`` keeping the file's line numbers, so errors name the
line in the file, not in the game.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games.base import config_to_dict
from games.record import Record, RecordError, parse

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""The most an import or a replay reads from one file (a regular file only)."""


class InputRefused(ValueError):
    """A file that is not read at all: not a regular file, too large, or not UTF-8; the message says which."""


def read_input(path: Path, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of ``path``: a regular file of at most ``limit`` bytes, in UTF-8.

    Devices (``/dev/zero``), pipes and folders are refused before a byte is read, and a
    file that grows past the limit while it is read is refused too."""
    try:
        info = path.stat()
    except OSError as exc:
        raise InputRefused(f"{path}: {exc.strerror or type(exc).__name__}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputRefused(f"{path} is not a regular file; give a file written by `hushtable sim --json` or `hushtable export`")
    too_big = f"{path} is larger than the {limit // (1024 * 1024)} MiB one file may hold; split it into smaller files"
    if info.st_size > limit:
        raise InputRefused(too_big)
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise InputRefused(f"{path}: {exc.strerror or type(exc).__name__}") from None
    if len(data) > limit:
        raise InputRefused(too_big)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputRefused(f"{path} is not UTF-8 text (byte {exc.start} cannot be read)") from None


def content_key(rec: Record) -> str:
    """A digest of what a record plays (game, configuration with its deal, seats, seed, actions).

    The same game has the same key in any file, under any name, at any position."""
    body = {"game": rec.game.id, "config": config_to_dict(rec.config), "seats": rec.seats, "seed": rec.seed,
            "actions": [[seat, action.to_json()] for seat, action in rec.actions]}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class FileGame:
    """One game of a file: where it starts, and its record or why it could not be read."""

    index: int  # 1-based, in file order
    line: int
    record: Record | None
    error: str | None = None
    status: str | None = None  # an exported game's status ("finished", "aborted"); None for sim records


def _game_line(text: str) -> dict[str, Any] | None:
    """The JSON object of a line that starts a game, else None."""
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(raw, dict):
        return None
    if raw.get("type") == "game" or str(raw.get("schema", "")).startswith("hushtable.game/"):
        return raw
    return None


def split_games(lines: Iterable[str]) -> list[FileGame]:
    """Every game in a file, in order (none for an empty file). Lines before the first game
    line make a game of their own, which fails to parse and says why."""
    chunks: list[tuple[int, str | None, list[str]]] = []
    for no, line in enumerate(lines, start=1):
        if not chunks and not line.strip():
            continue
        head = _game_line(line)
        if head is not None or not chunks:
            status = head.get("status") if head is not None else None
            chunks.append((no, status if isinstance(status, str) else None, []))
        chunks[-1][2].append(line)
    out = []
    for index, (start, status, chunk) in enumerate(chunks, start=1):
        try:
            # Blank lines before the chunk keep parse's line numbers those of the file.
            rec = parse([""] * (start - 1) + chunk)
            out.append(FileGame(index, start, rec, status=status))
        except RecordError as exc:
            out.append(FileGame(index, start, None, str(exc), status))
        except RecursionError:
            out.append(FileGame(index, start, None, "a JSON value in this game is nested too deeply to read", status))
    return out
