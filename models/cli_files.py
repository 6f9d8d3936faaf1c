"""Checks of a command's output-file options, made before any work (one sentence each).

Shared by every command line (the bot's and the research layer's); it knows nothing of either.
"""

from __future__ import annotations

import os
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


__all__ = ["check_file_option"]
