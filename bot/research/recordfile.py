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

from games.record import Record, RecordError, parse


@dataclass(frozen=True)
class FileGame:
    """One game of a file: where it starts, and its record or why it could not be read."""

    index: int  # 1-based, in file order
    line: int
    record: Record | None
    error: str | None = None


def _starts_game(text: str) -> bool:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError:
        return False
    if not isinstance(raw, dict):
        return False
    return raw.get("type") == "game" or str(raw.get("schema", "")).startswith("hushtable.game/")


def split_games(lines: Iterable[str]) -> list[FileGame]:
    """Every game in a file, in order (none for an empty file). Lines before the first game
    line make a game of their own, which fails to parse and says why."""
    chunks: list[tuple[int, list[str]]] = []
    for no, line in enumerate(lines, start=1):
        if not chunks and not line.strip():
            continue
        if _starts_game(line) or not chunks:
            chunks.append((no, []))
        chunks[-1][1].append(line)
    out = []
    for index, (start, chunk) in enumerate(chunks, start=1):
        try:
            # Blank lines before the chunk keep parse's line numbers those of the file.
            rec = parse([""] * (start - 1) + chunk)
            out.append(FileGame(index, start, rec))
        except RecordError as exc:
            out.append(FileGame(index, start, None, str(exc)))
    return out
