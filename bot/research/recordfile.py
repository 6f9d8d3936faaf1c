"""Files holding several game records: ``sim --json`` output concatenated, or an export.

A new game starts at each ``{"type": "game"}`` line; an exported game
(``hushtable.game/1``) is a whole game on one line. Each game is parsed with
``games.record.parse`` keeping the file's line numbers, so errors name the
line in the file, not in the game.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from games.record import Record, RecordError, parse


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
    except json.JSONDecodeError:
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
    return out
