"""No module reaches into another's private names: ``from bot.x import _name`` (or ``module._name``
through an import) is refused across modules; what another module needs is made public where it lives."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("bot", "games", "models", "storage", "bench")


def private_imports() -> list[str]:
    found = []
    for pkg in OURS:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                        and node.module.split(".")[0] in OURS:
                    found += [f"{path.relative_to(ROOT)}: from {node.module} import {a.name}"
                              for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports() == []

