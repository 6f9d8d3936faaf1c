"""Signed links: a scope comes back only from an intact, unexpired token signed with this site's key."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest

from bot.web import links


def test_a_token_names_its_scope_until_it_expires(tmp_path: Path) -> None:
    key = links.signing_key(tmp_path / "k")
    token = links.make(key, "discord:1", hours=2, game=7, member="u_ab", admin=True, now=1000.0)
    scope = links.verify(key, token, now=1000.0 + 2 * 3600 - 1)
    assert scope == links.Scope("discord:1", 1000.0 + 7200, 7, "u_ab", True)
    assert scope.allows_game(7) and not scope.allows_game(8)
    with pytest.raises(links.LinkRefused, match="expired"):
        links.verify(key, token, now=1000.0 + 7200)


def test_altered_truncated_and_foreign_tokens_are_refused(tmp_path: Path) -> None:
    key = links.signing_key(tmp_path / "k")
    token = links.make(key, "discord:1")
    body, _, mac = token.partition(".")
    raw = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    raw["t"] = "discord:2"  # another tenant, same signature
    other = base64.urlsafe_b64encode(json.dumps(raw, separators=(",", ":"), sort_keys=True).encode()).decode().rstrip("=")
    for bad in (f"{other}.{mac}", body, f"{body}.", f"{body}.{mac[:-1]}", token + "x", ".", "",
                links.make(b"0" * 64, "discord:1"), "a" * 5000):
        with pytest.raises(links.LinkRefused):
            links.verify(key, bad)


def test_the_key_is_made_once_private_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "data" / "hush.db.web-secret"
    key = links.signing_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(key) == 64
    assert links.signing_key(path) == key
    assert links.key_path_for_sqlite(tmp_path / "hush.db") == tmp_path / "hush.db.web-secret"
    path.write_text("\n")
    with pytest.raises(links.LinkRefused, match="holds no key"):
        links.signing_key(path)
