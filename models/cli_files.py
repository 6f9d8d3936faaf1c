"""Checks of a command's file options, made before any work (one sentence each): output files, and
input files read with a bound.

Shared by every command line (the bot's and the research layer's); it knows nothing of either.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import typer


def check_file_option(path: Path | None, option: str) -> None:
    """An output file option must name a file in an existing folder, checked before any work."""
    if path is None:
        return
    if path.is_dir():
        raise typer.BadParameter(f"{option} {path} is a folder; name a file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise typer.BadParameter(f"{option} {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise typer.BadParameter(f"{option} {path} cannot be written")


MAX_INPUT_BYTES = 16 * 1024 * 1024  # a deck or word list is kilobytes; a log export stays far below


def read_input_option(path: Path, option: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of an input file option: a regular file (a FIFO, ``/dev/zero`` or a folder is refused
    before a byte is read) of at most ``limit`` bytes, read with that bound (a file growing meanwhile too)."""
    try:
        info = path.stat()
    except OSError as exc:
        raise typer.BadParameter(f"{option} {path}: {exc.strerror or type(exc).__name__}") from None
    if not stat.S_ISREG(info.st_mode):
        raise typer.BadParameter(f"{option} {path} is not a regular file (a folder, a pipe or a device); name a file")
    too_big = f"{option} {path} is larger than {limit // (1024 * 1024)} MiB; that is no file for this option"
    if info.st_size > limit:
        raise typer.BadParameter(too_big)
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise typer.BadParameter(f"{option} {path}: {exc.strerror or type(exc).__name__}") from None
    if len(data) > limit:
        raise typer.BadParameter(too_big)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise typer.BadParameter(f"{option} {path} is not UTF-8 text (byte {exc.start})") from None


__all__ = ["check_file_option", "read_input_option"]
