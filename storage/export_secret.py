"""The key that pseudonymises exports: never a silent default.

``HUSHTABLE_EXPORT_SECRET`` wins when set. Otherwise a SQLite log gets a random
256-bit key on its first export, kept beside the database in ``<database>.export-secret``
(mode 0600, created exclusively so two processes cannot write two keys); every later
export of that log reads the same key, so pseudonyms are stable within one installation
and unrelated between installations. A server database (PostgreSQL) has no folder of its
own: pseudonymised exports are refused until the operator sets the variable. An in-memory
log gets a key that lives as long as the process (the log does not outlive it either).
Back the key file up with the database: without it, new exports cannot be linked to old ones.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from storage.engine import EnginePlan

SUFFIX = ".export-secret"
_EPHEMERAL: dict[str, str] = {}  # in-memory logs only, keyed by URL


class ExportSecretMissing(RuntimeError):
    """A server database and no HUSHTABLE_EXPORT_SECRET: pseudonymised exports are refused."""


def secret_path(plan: EnginePlan) -> Path | None:
    """Where a SQLite file's key lives (None for in-memory and server databases)."""
    db = plan.sqlite_file
    if db is None:
        return None
    return db.with_name(db.name + SUFFIX)


def export_secret(plan: EnginePlan, configured: str | None = None) -> str:
    """The key for this log: the configured one, else the one kept beside the database (made once)."""
    if configured:
        return configured
    path = secret_path(plan)
    if path is None:
        if plan.is_sqlite:
            return _EPHEMERAL.setdefault(str(plan.url), secrets.token_hex(32))
        raise ExportSecretMissing(
            f"set HUSHTABLE_EXPORT_SECRET to export from a {plan.backend} database "
            "(a long random string, e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`); "
            "keep it: pseudonyms only link across exports made with the same key"
        )
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_text(encoding="ascii").strip()
        if not key:
            raise ExportSecretMissing(f"{path} is empty: delete it to make a new key, or set HUSHTABLE_EXPORT_SECRET") from None
        return key
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key + "\n")
    return key
