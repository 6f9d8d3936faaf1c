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


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _runtime_imports(tree: ast.AST, module: str, is_package: bool, *, type_checking: bool = False) -> set[str]:
    """Modules imported at run time anywhere in the file: at the top, and inside functions and
    classes (a function-local import hides a cycle from a top-level scan, not from this one).
    Imports under ``if TYPE_CHECKING:`` never run, so they cannot form a cycle at run time; with
    ``type_checking`` they count too (the modules the type checker reads together)."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:  # noqa: C901 - one walk, four node kinds
        if not type_checking and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        for sub in ast.iter_child_nodes(node):
            visit(sub)

    visit(tree)
    return found


def import_graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    files = {_module_of(p): p for folder in OURS for p in (ROOT / folder).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        names = _runtime_imports(ast.parse(path.read_text(encoding="utf-8")), module, path.name == "__init__.py",
                                 type_checking=type_checking)
        graph[module] = {n for n in names if n in files and n != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_function_local_imports_are_seen() -> None:
    tree = ast.parse("def f():\n    from bot.discord.adapter import x\n"
                     "if TYPE_CHECKING:\n    from bot.discord.router import Router\n")
    found = _runtime_imports(tree, "bot.discord.commands", False)
    assert "bot.discord.adapter" in found and "bot.discord.router" not in found
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_adapters_have_no_import_cycles() -> None:
    graph = import_graph()
    found = [c for c in cycles(graph) if any(m.startswith(("bot.discord", "bot.slack", "bot.console")) for m in c)]
    assert not found, f"import cycles (function-local imports included): {found}"


def _without_parent_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Drop the edges from a module to its own enclosing packages: ``from games import text`` inside
    ``games.vote`` names the package ``games``, which Python has imported before any of its modules
    (a package's ``__init__`` importing its modules is not a cycle between modules)."""
    return {m: {n for n in names if not m.startswith(n + ".")} for m, names in graph.items()}


def test_no_import_cycles_anywhere() -> None:
    found = cycles(_without_parent_packages(import_graph()))
    assert not found, f"import cycles (function-local imports included): {found}"


def test_no_import_cycles_even_at_type_check_time() -> None:
    """A loop through ``if TYPE_CHECKING:`` imports never runs, but it still ties two modules into one:
    neither can be read, checked or replaced alone."""
    found = cycles(_without_parent_packages(import_graph(type_checking=True)))
    assert not found, f"import cycles (TYPE_CHECKING imports included): {found}"


def test_type_checking_imports_are_seen_when_asked() -> None:
    tree = ast.parse("if TYPE_CHECKING:\n    from bot.core.service import TableService\n")
    assert "bot.core.service" not in _runtime_imports(tree, "bot.core.ports", False)
    assert "bot.core.service" in _runtime_imports(tree, "bot.core.ports", False, type_checking=True)


def test_models_never_import_bot() -> None:
    graph = import_graph()
    upward = sorted((m, n) for m, names in graph.items() for n in names if m.startswith("models") and n.startswith("bot"))
    assert not upward, f"models/ must not depend on bot/: {upward}"


def test_parent_package_edges_are_not_cycles_but_module_cycles_are() -> None:
    graph = {"games": {"games.vote"}, "games.vote": {"games", "games.text"}, "games.text": set(),
             "bot.a": {"bot.b"}, "bot.b": {"bot.a"}}
    assert cycles(_without_parent_packages(graph)) == [["bot.a", "bot.b"]]


# Chat adapters and the wiring build or hold the table service; these rooms only see its ports
# (``bot.core.ports.TableHost``, ``bot.core.finished.AiTablesPort``) and what a finished table hands on.
_TABLE_SERVICE_FREE = ("bot/tournaments", "bot/sneak.py", "bot/research", "models/eval")
_WIRING = {"bot/tournaments/wiring.py"}


def test_tournaments_sneak_and_research_never_import_the_table_service() -> None:
    graph = import_graph(type_checking=True)
    offenders = []
    for folder in _TABLE_SERVICE_FREE:
        paths = [ROOT / folder] if folder.endswith(".py") else sorted((ROOT / folder).rglob("*.py"))
        for path in paths:
            rel = str(path.relative_to(ROOT))
            if rel in _WIRING:
                continue
            if "bot.core.service" in graph[_module_of(path)]:
                offenders.append(rel)
    assert offenders == [], offenders
