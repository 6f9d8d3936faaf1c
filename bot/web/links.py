"""Signed links to the web view: who may see what, until when.

A link carries its scope in the clear (tenant, optionally one game, a member's pseudonym, the admin
flag) and an expiry, followed by an HMAC-SHA256 over both with a key kept in the data folder: a
random 256-bit key in ``<database>.web-secret`` beside a SQLite log (mode 0600, made once, like the
export key), or ``web-secret`` in the ``.hushtable`` folder for a server database. Anyone holding a
link sees what it names until it expires; an altered, truncated or expired link is refused whole.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from storage.engine import EnginePlan

SUFFIX = ".web-secret"
DEFAULT_HOURS = 24.0


class LinkRefused(ValueError):
    """A link that does not verify: altered, malformed, signed with another key, or expired."""


@dataclass(frozen=True, slots=True)
class Scope:
    """What one link shows: a tenant's finished games (or one game of it), with the member's own
    games marked (``member``: their export pseudonym) and, for admins, the study."""

    tenant: str
    expires: float  # seconds since the epoch
    game: int | None = None
    member: str | None = None
    admin: bool = False

    def allows_game(self, game_id: int) -> bool:
        return self.game is None or self.game == game_id


def key_path(plan: EnginePlan, data_dir: Path) -> Path:
    """Where the signing key lives: beside a SQLite file, else in the data folder."""
    db = plan.sqlite_file
    if db is not None:
        return key_path_for_sqlite(db)
    return data_dir / "web-secret"


def key_path_for_sqlite(db: Path) -> Path:
    """Where the key of the SQLite log ``db`` lives."""
    return db.with_name(db.name + SUFFIX)


def signing_key(path: Path) -> bytes:
    """The key at ``path``, made (exclusively, mode 0600) on first use."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        text = path.read_text(encoding="ascii").strip()
        if len(text) < 32:
            raise LinkRefused(f"{path} holds no key: delete it to make a new one (every link given so far stops working)") from None
        return text.encode()
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key + "\n")
    return key.encode()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, body: str) -> str:
    return _b64(hmac.new(key, body.encode(), hashlib.sha256).digest())


def sign(key: bytes, scope: Scope) -> str:
    """The token for ``scope``: its JSON (base64url), a dot, its MAC."""
    raw = {"t": scope.tenant, "x": int(scope.expires), "g": scope.game, "m": scope.member, "a": scope.admin}
    body = _b64(json.dumps(raw, separators=(",", ":"), sort_keys=True).encode())
    return f"{body}.{_mac(key, body)}"


def make(key: bytes, tenant: str, *, hours: float = DEFAULT_HOURS, game: int | None = None, member: str | None = None,
         admin: bool = False, now: float | None = None) -> str:
    """A token for this scope that expires ``hours`` from now."""
    start = time.time() if now is None else now
    return sign(key, Scope(tenant, start + hours * 3600, game, member, admin))


def verify(key: bytes, token: str, *, now: float | None = None) -> Scope:
    """The scope a token names. Raises LinkRefused for anything but an intact, unexpired link."""
    body, dot, mac = token.partition(".")
    if not dot or len(token) > 2000 or not hmac.compare_digest(_mac(key, body), mac):
        raise LinkRefused("this link is not valid")
    try:
        raw = json.loads(_unb64(body))
        scope = Scope(str(raw["t"]), float(raw["x"]), None if raw["g"] is None else int(raw["g"]),
                      None if raw["m"] is None else str(raw["m"]), bool(raw["a"]))
    except (ValueError, KeyError, TypeError):
        raise LinkRefused("this link is not valid") from None
    if scope.expires <= (time.time() if now is None else now):
        raise LinkRefused("this link has expired: ask for a new one")
    return scope
