"""docs/discord.md and docs/slack.md hold the platform's own setup, permissions and commands once (the
README points to them), link the README for the rest, and show only options the games accept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from games.base import ConfigError
from games.catalog import descriptors

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDES = {name: (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8") for name in ("discord", "slack")}


def _anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("name", sorted(GUIDES))
def test_a_guide_is_said_once_and_links_the_readme_for_the_rest(name: str) -> None:
    guide = GUIDES[name]
    assert f"(docs/{name}.md)" in README
    headings = {_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", README, flags=re.MULTILINE)}
    links = re.findall(r"\]\(\.\./README\.md#([\w-]+)\)", guide)
    assert links and all(a in headings for a in links), links
    # Setup steps live in the guide only (they drifted when the README copied them).
    for step in ("Permission integer", "Create New App", "App-Level Tokens", "Tests and what the fake covers",
                 "What the tests cover"):
        assert not (step in README and step in guide), step
    # No hand-made list of games that a new game would make wrong.
    assert "decrypto|spy|chameleon" not in guide and "Decrypto, Who-is-Spy and Chameleon" not in guide


def test_every_option_a_guide_shows_is_one_a_game_accepts() -> None:
    shown = {opt for guide in GUIDES.values() for opt in re.findall(r"`((?:\w+=\w+ ?)+)`", guide)
             if "=" in opt and not opt.isupper() and not opt.startswith(("HUSHTABLE", "SLACK", "DISCORD"))}
    shown = {o for o in shown if not re.match(r"(deadline|since|entrants|seats|games|key)=", o)}
    assert shown, "the guides show an option example"
    for opt in shown:
        pairs = dict(kv.split("=", 1) for kv in opt.split())
        accepted = False
        for d in descriptors():
            try:
                d.engine.make_config(None, **{k: int(v) if v.isdigit() else v for k, v in pairs.items()})
                accepted = True
            except (ConfigError, TypeError, ValueError):
                continue
        assert accepted, f"no game accepts {opt!r}"
