"""Opening the files an export writes without following a link planted where they go.

An export writes into a folder others may write to: a ``.games.parquet.partial`` symbolic link planted
there once sent the Parquet writer through it, overwriting whatever the link pointed at. Every export
opens its files here:

- ``create_new(path)``: a file of the export's own naming (a temporary beside the target): made fresh
  (``O_CREAT | O_EXCL``, which never follows a link), after removing a leftover regular file of an
  earlier, interrupted export;
- ``open_named(path)``: the file an operator named with ``--out``: replaced if it is a regular file,
  never followed if it is a link (``O_NOFOLLOW``).

Either raises `UnsafeOutput`, whose message is one line, for a link or anything but a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX; elsewhere the lstat check below stands alone


class UnsafeOutput(OSError):
    """An output path that is a link or not a regular file: nothing was written."""


def _refuse_link(path: Path) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise UnsafeOutput(f"{path} is a symbolic link; refusing to write through it (remove it and try again)")
    if not stat.S_ISREG(mode):
        raise UnsafeOutput(f"{path} exists and is not a regular file; refusing to write there")


def create_new(path: Path, mode: int = 0o600) -> int:
    """A descriptor of ``path`` made fresh for writing; a leftover regular file is removed first, a link refused."""
    _refuse_link(path)
    path.unlink(missing_ok=True)
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
    except FileExistsError:  # made again between the unlink and the open: someone is racing this export
        raise UnsafeOutput(f"{path} appeared while the export was starting; refusing to write there") from None


def open_named(path: Path, mode: int = 0o644) -> int:
    """A descriptor of ``path`` (created or truncated) for writing; a link or a non-regular file is refused."""
    _refuse_link(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeOutput(f"{path} is a symbolic link; refusing to write through it (remove it and try again)") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a fifo or device planted between the check and the open
        os.close(fd)
        raise UnsafeOutput(f"{path} is not a regular file; refusing to write there")
    os.ftruncate(fd, 0)
    return fd
