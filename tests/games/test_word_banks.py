"""Word banks live in one place: ``games/data/``, one file per bank named for its game, read through
``games.decks.bundled`` and copied nowhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from games import catalog, decks

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "games" / "data"
SHARED = {"confusables.txt", "wordforms.txt"}
"""The clue check's own tables (``games/text.py``, built by ``python -m models.wordforms``): not a game's bank."""


def banks() -> list[Path]:
    return sorted(p for p in DATA.iterdir() if p.is_file() and p.name not in SHARED)


def test_no_game_package_keeps_data_of_its_own() -> None:
    for package in catalog.GAME_PACKAGES:
        folder = ROOT.joinpath(*package.split(".")) / "data"
        assert not folder.exists(), f"{folder.relative_to(ROOT)}: a game's word bank goes in games/data/"


def test_every_bank_is_named_for_a_registered_game_and_loads() -> None:
    ids = set(catalog.ids())
    assert banks()
    for path in banks():
        game = re.match(r"([a-z0-9]+)_[a-z0-9_]+\.txt$", path.name)
        assert game is not None and game.group(1) in ids, f"{path.name}: name a bank <game id>_<what>.txt"
        assert decks.bundled(path.name).strip()
        named = [f for f in (ROOT / "games").rglob("*.py") if f'"{path.name}"' in f.read_text(encoding="utf-8")]
        assert named, f"games/data/{path.name}: no module of games/ reads it"


def test_only_decks_reads_the_games_data_folder() -> None:
    """A module reads ``games/data`` only through ``decks.bundled`` (the clue check reads its own two tables)."""
    readers = set()
    for top in ("games", "bot", "models", "storage", "bench"):
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("resources.files") and node.args \
                        and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("games"):
                    readers.add(path.relative_to(ROOT).as_posix())
    assert readers == {"games/decks.py", "games/text.py"}


def test_no_bank_is_copied_elsewhere() -> None:
    """No data file outside ``games/data`` repeats most of a bank's lines (a copy that would drift)."""
    def lines(p: Path) -> set[str]:
        return {s.strip().lower() for s in p.read_text(encoding="utf-8", errors="replace").splitlines()
                if s.strip() and not s.lstrip().startswith("#")}

    own = {p: lines(p) for p in banks()}
    for top in ("games", "bot", "models", "storage", "bench", "tests"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".txt", ".csv", ".tsv") or path.parent == DATA or not path.is_file():
                continue
            theirs = lines(path)
            for bank, words in own.items():
                shared = len(words & theirs) / len(words)
                assert shared < 0.5, f"{path.relative_to(ROOT)} repeats {shared:.0%} of games/data/{bank.name}"
