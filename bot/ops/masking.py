"""The one masking step for text that leaves the process: log records, exception texts, printed URLs.

Two kinds of thing are masked. Passwords in URLs and connection strings (``user:pw@host``, with or
without a scheme, and ``password=`` in a query or a key-value string) become ``***`` wherever they
appear, so a driver's error that quotes its URL shows no password. Configured credentials and the
words a running game holds secret are registered with a `Masker` and replaced by ``[redacted]``;
the log handlers (bot/ops/logs.py) run every record, its exception text included, through it. A held
word is masked in its inflected forms too (``berries``, ``baking``, ``mice``: games.text.base_forms),
never inside another word (``category`` keeps ``cat``). Members are named in log lines by
``member_tag`` only, never by their id or name.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from collections.abc import Iterable

from games.text import base_forms

# user:password@ after a scheme, or at the start of a word (a URL written without its scheme).
_USERINFO = re.compile(r"(?P<head>(?:[A-Za-z][A-Za-z0-9+.-]*://)|(?<![\w@:/.-]))(?P<user>[^\s:/@?#]*):(?P<pw>[^\s@/?#]+)@(?=[\w\[])")
_KEYVALUE = re.compile(r"(?i)(?P<key>\b(?:password|passwd|pwd)\s*=\s*)(?P<pw>'[^']*'|\"[^\"]*\"|[^\s&;,'\"]+)")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")  # a word of letters, an apostrophe inside kept (Apple's)
MASK = "***"
REDACTED = "[redacted]"
# Drawn per process: a member's tag links the log lines of one run, and nothing once the process is gone.
_TAG_KEY = secrets.token_bytes(16)


def member_tag(member: str) -> str:
    """How a log line names a member (a user key, a platform id, a DM channel): a short keyed hash,
    the same within this process only. Log files are not rewritten when a member is erased, so
    they never hold a member's id or name in the first place."""
    return "member-" + hashlib.blake2b(member.encode("utf-8"), key=_TAG_KEY, digest_size=5).hexdigest()


def mask_passwords(text: str) -> str:
    """``text`` with every password of a URL or connection string in it replaced by ``***``."""
    if "@" in text:
        text = _USERINFO.sub(lambda m: f"{m['head']}{m['user']}:{MASK}@", text)
    if "=" in text:
        text = _KEYVALUE.sub(lambda m: f"{m['key']}{MASK}", text)
    return text


class Masker:
    """Words that must never reach a log line or a screen: credentials (for the process's life) and the
    secrets of running games (added when dealt, dropped when the game ends). Thread-safe."""

    MIN_CREDENTIAL_CHARS = 8  # short values would mask ordinary words; credentials are long

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._credentials: set[str] = set()
        self._secrets: dict[object, frozenset[str]] = {}
        self._pattern: re.Pattern[str] | None = None
        self._single: frozenset[str] = frozenset()  # held one-word secrets, case-folded: matched in any form

    def add_credentials(self, values: Iterable[str]) -> None:
        with self._lock:
            self._credentials.update(v for v in values if v and len(v) >= self.MIN_CREDENTIAL_CHARS)
            self._pattern = None

    def hold(self, owner: object, words: Iterable[str]) -> None:
        """Mask ``words`` (a game's secret words) until `release(owner)`; matched as whole words, any case."""
        with self._lock:
            self._secrets[owner] = frozenset(w.strip() for w in words if w and w.strip())
            self._pattern = None

    def owners(self) -> frozenset[object]:
        """Who holds secret words now (each running game's owner object)."""
        with self._lock:
            return frozenset(self._secrets)

    def release(self, owner: object) -> None:
        with self._lock:
            if self._secrets.pop(owner, None) is not None:
                self._pattern = None

    def _compiled(self) -> re.Pattern[str] | None:
        with self._lock:
            if self._pattern is None:
                words = {w for ws in self._secrets.values() for w in ws}
                self._single = frozenset(w.casefold() for w in words if _WORD.fullmatch(w))
                parts = [re.escape(c) for c in sorted(self._credentials, key=len, reverse=True)]
                parts += [rf"(?<!\w){re.escape(w)}(?!\w)" for w in sorted(words, key=len, reverse=True)]
                self._pattern = re.compile("|".join(parts), re.IGNORECASE) if parts else re.compile(r"(?!x)x")
            return self._pattern

    def mask(self, text: str) -> str:
        """``text`` with passwords, credentials and held secret words masked."""
        text = mask_passwords(text)
        pattern = self._compiled()
        if pattern is not None and pattern.pattern != r"(?!x)x":
            text = pattern.sub(REDACTED, text)
        single = self._single
        if single:
            text = _WORD.sub(lambda m: REDACTED if base_forms(m[0].casefold()) & single else m[0], text)
        return text


MASKER = Masker()  # the process's one masker: log handlers and screens read it
