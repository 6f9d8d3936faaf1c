"""Tournaments as an application service: built once by the startup point, with its scheduler's
job count on /metrics; one typed spec for every surface; no import cycle in the rooms and no
module-level state reaching the running bot."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from bot.app import build_app
from bot.settings import Settings
from bot.tournaments.spec import TournamentSpec
from storage.tables import TournamentStatus

ROOT = Path(__file__).resolve().parents[2]
ROOM = ROOT / "bot" / "tournaments"


async def test_the_startup_point_builds_one_service_and_metrics_count_its_jobs(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'h.db'}"
    settings = Settings(_env_file=None, database_url=url, agent_choices="random", default_agent="random",  # type: ignore[call-arg]
                        fallback_agent="random", ops_port=None)
    app = await build_app(settings)
    try:
        assert app.ops is not None
        assert "hushtable_scheduler_jobs 0.0" in app.ops.observer.render().decode()
        t = await app.tournaments.create("console", TournamentSpec(game="spy", entrants=("random",), seats=4))
        assert t.status == TournamentStatus.PLANNED
        await app.tournaments.start_scheduler(url)
        await app.tournaments.schedule("console", t.id or 0, "0 3 * * *")
        assert "hushtable_scheduler_jobs 1.0" in app.ops.observer.render().decode()
        await app.tournaments.schedule("console", t.id or 0, None)
        assert "hushtable_scheduler_jobs 0.0" in app.ops.observer.render().decode()
    finally:
        await app.aclose()


def _imports(path: Path) -> set[str]:
    """The bot.tournaments modules a file imports, at any depth (lazy imports count as edges too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "bot.tournaments":
                out |= {f"bot.tournaments.{a.name}" for a in node.names}
            elif node.module.startswith("bot.tournaments."):
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("bot.tournaments.")}
    return out


def test_the_tournament_modules_import_each_other_without_a_cycle() -> None:
    graph = {f"bot.tournaments.{p.stem}": _imports(p) for p in ROOM.glob("*.py")}
    state: dict[str, int] = {}

    def visit(mod: str, trail: list[str]) -> None:
        if state.get(mod) == 2:
            return
        assert state.get(mod) != 1, "import cycle: " + " -> ".join([*trail, mod])
        state[mod] = 1
        for dep in sorted(graph.get(mod, ())):
            visit(dep, [*trail, mod])
        state[mod] = 2

    for mod in sorted(graph):
        visit(mod, [])


def test_no_module_level_registry_or_runtime_and_no_untyped_service() -> None:
    for path in ROOM.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:  # module level only
            if isinstance(node, ast.AnnAssign | ast.Assign):
                targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
                names = {t.id for t in targets if isinstance(t, ast.Name)}
                assert not names & {"_desks", "_runtime"}, f"{path.name} keeps module-level state: {names}"
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in fn.args.args + fn.args.kwonlyargs:
                    if arg.arg == "service" and isinstance(arg.annotation, ast.Name):
                        assert arg.annotation.id != "Any", f"{path.name}:{fn.name} takes service: Any"
    assert len(dataclasses.fields(TournamentSpec)) == 16  # one definition, used by every surface
