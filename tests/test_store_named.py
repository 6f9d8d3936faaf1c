"""Only the start-up wiring, the command-line tools and the benches name the concrete ``Store``.

Everything else takes a protocol of ``storage/ports.py`` (the table service a ``TableStore``, the web view an
``ExportSource``, the health check a ``Reachable``) or the ``UnitsOfWork`` the function modules of ``storage``
take, so it can be read and tested without the whole store and the store can change under it.

A module may name ``Store`` (an import of it from ``storage`` or ``storage.store``, or ``storage.store.Store``) when
it is ``storage`` itself, the start-up point (``bot/app.py``) or a wiring module (``*/wiring.py``), a command-line
module (``cli.py``, ``*_cli.py``), a bench (``bench/``: each is its own start-up point), or a tool that opens a
database by its URL itself (``Store.open``: backup, db copy, import, the theory-of-mind command). ``PENDING`` lists
the modules still naming it, with why.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WALKED = ("bot", "models", "storage", "bench")

PENDING: dict[str, str] = {
    "bot/sneak.py": "hands its store to the SNEAK functions below, which are typed with Store",
    "models/eval/report.py": "the SNEAK clue report reads the log through Store; to take a port with the SNEAK work "
                             "on reading finished games",
    "models/eval/live.py": "the same, for SNEAK's scoring of a chat game",
}


def _names_store(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("storage", "storage.store") \
                and any(a.name == "Store" for a in node.names):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Store" and ast.unparse(node.value) == "storage.store":
            return True
    return False


def _opens_a_database(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "open"
               and isinstance(node.func.value, ast.Name) and node.func.value.id == "Store" for node in ast.walk(tree))


def allowed(rel: str, tree: ast.Module) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return (rel.startswith(("storage/", "bench/")) or rel == "bot/app.py" or name in ("wiring.py", "cli.py")
            or name.endswith("_cli.py") or _opens_a_database(tree))


def naming_store() -> list[str]:
    out = []
    for top in WALKED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if _names_store(tree) and not allowed(rel, tree):
                out.append(rel)
    return out


def test_only_wiring_clis_benches_and_database_tools_name_the_store() -> None:
    found = [rel for rel in naming_store() if rel not in PENDING]
    assert found == [], "take a protocol of storage/ports.py instead of Store in: " + ", ".join(found)


def test_every_pending_module_still_names_it() -> None:
    assert sorted(PENDING) == sorted(rel for rel in naming_store() if rel in PENDING), "drop it from PENDING"


def test_the_check_sees_each_way_of_naming_it() -> None:
    for code in ("from storage.store import Store\n", "from storage import Store as S\n",
                 "import storage.store\nx: storage.store.Store\n"):
        tree = ast.parse(code)
        assert _names_store(tree) and not allowed("bot/web/views.py", tree)
    opener = ast.parse("from storage.store import Store\nasync def f(url):\n    return await Store.open(url)\n")
    assert allowed("bot/ops/backup.py", opener)
    assert not _names_store(ast.parse("from storage.ports import ExportSource\n"))
