"""The layer boundaries of DESIGN.md, checked by walking every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = {"bot", "games", "models", "storage"}
IO_LIBS = {"asyncio", "aiohttp", "sqlite3", "sqlalchemy", "sqlmodel", "aiosqlite", "socket", "subprocess",
           "requests", "httpx", "urllib", "os", "io", "pathlib", "shutil", "time", "datetime", "threading"}
PLATFORMS = {"discord", "slack_bolt", "slack_sdk"}
MODEL_LIBS = {"torch", "transformers"}


def imports(folder: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in (ROOT / folder).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        out[str(path.relative_to(ROOT))] = names
    return out


def test_games_import_nothing_of_ours_and_no_io() -> None:
    for path, names in imports("games").items():
        assert not (names & (OURS - {"games"})), (path, names & OURS)
        assert not (names & (IO_LIBS | PLATFORMS | MODEL_LIBS)), (path, names & (IO_LIBS | PLATFORMS | MODEL_LIBS))


def test_core_is_platform_and_model_free() -> None:
    for path, names in imports("bot/core").items():
        assert not (names & (PLATFORMS | MODEL_LIBS)), (path, names & (PLATFORMS | MODEL_LIBS))


def test_only_worker_backends_import_torch() -> None:
    for folder in ("bot", "games", "storage", "models"):
        for path, names in imports(folder).items():
            if names & MODEL_LIBS:
                assert path.startswith("models/worker/"), path


def test_storage_knows_no_platform_or_game() -> None:
    for path, names in imports("storage").items():
        assert not (names & (PLATFORMS | MODEL_LIBS | {"bot", "models", "games"})), path


def test_no_module_reads_the_environment_but_settings() -> None:
    for folder in ("bot", "games", "models", "storage"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "os.environ" in text or "getenv(" in text:
                assert path.name in ("settings.py",), f"{path} reads the environment"
