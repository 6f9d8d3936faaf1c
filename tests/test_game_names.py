"""No module outside a game's own modules branches on a game's name.

What a game is lives in its package (``games/<id>/``, its ``DESCRIPTOR``) and in its per-game modules found by
id (``models/agents/games/<id>.py``, ``models/eval/games/<id>.py``); everything else asks the catalog and the
descriptor. The names come from the catalog (ids and aliases), so a sixth game is covered without editing this.

What counts, read from the syntax tree of ``bot models storage bench`` (docstrings and comments are never code):

- a comparison (``==``, ``!=``, ``in``, ``not in``) or a ``match`` case between a game's name and an expression that
  names a game (an identifier with ``game`` or ``descriptor`` in it: ``rec.game.id``, ``game_id``, ``deal.game``);
  a role that shares its game's name (Who-is-Spy's ``spy``, SNEAK's ``chameleon`` task) is compared freely;
- in ``bot``, ``models`` and ``storage`` (the services every game goes through), a game's name as a dict key or as
  a subscript too: a table keyed by game names there is a list of the games.

Naming a game to play it (``games.get("decrypto")`` in the Decrypto paper's protocol) is not keying on it. A bench
of named games may keep its per-game parts in a table keyed by game id (found by id, as ``models.parts`` finds a
game's modules), but its functions do not ask which game they hold. ``STUDIES`` lists the modules still allowed
to, each with why.
"""

from __future__ import annotations

import ast
from pathlib import Path

from games import catalog

ROOT = Path(__file__).resolve().parents[1]
WALKED = ("bot", "models", "storage", "bench")
SERVICES = ("bot", "models", "storage")
OWN = ("models/agents/games/", "models/eval/games/")
"""A game's own modules outside its package: one file per game id (``models/parts.py``)."""

STUDIES: dict[str, str] = {
    "bench/fairness.py": "plays Who-is-Spy and Chameleon deals built from people's descriptions of those games' words and "
                         "reads each game's own state (round one's vote, the ballots); its per-game readers are to become "
                         "per-game parts keyed by id once the vote work on this bench has landed",
    "bench/people.py": "the same study on the writers' own words: the Chameleon's cards are kept for its SNEAK columns",
}


def game_names() -> frozenset[str]:
    return frozenset(n.lower() for d in catalog.descriptors() for n in (d.id, *d.aliases))


def _names(node: ast.AST, names: frozenset[str]) -> list[ast.Constant]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in names:
        return [node]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [c for e in node.elts for c in _names(e, names)]
    return []


def _names_a_game(node: ast.AST) -> bool:
    words = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)] + [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)]
    return any("game" in w.lower() or "descriptor" in w.lower() for w in words)


def keyed_on_names(rel: str, source: str, names: frozenset[str]) -> list[str]:
    """Each place in one module (``rel``, its path from the root) that branches on (or, in a service, keys by) a
    game's name."""
    service = rel.split("/")[0] in SERVICES
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for i, side in enumerate(sides):
                if any(_names_a_game(o) for j, o in enumerate(sides) if j != i):
                    found += [(c.lineno, f"compares with {c.value!r}") for c in _names(side, names)]
        elif isinstance(node, ast.Match) and _names_a_game(node.subject):
            for case in node.cases:
                found += [(c.lineno, f"matches {c.value!r}") for p in ast.walk(case.pattern)
                          if isinstance(p, ast.MatchValue) for c in _names(p.value, names)]
        elif service and isinstance(node, ast.Dict):
            found += [(c.lineno, f"keys a table by {c.value!r}") for k in node.keys if k is not None for c in _names(k, names)]
        elif service and isinstance(node, ast.Subscript):
            found += [(c.lineno, f"looks up {c.value!r}") for c in _names(node.slice, names)]
    return [f"{rel}:{line}: {what}" for line, what in sorted(set(found))]


def modules() -> list[str]:
    out = []
    for top in WALKED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(OWN) and rel not in STUDIES:
                out.append(rel)
    return out


def check(rel: str, names: frozenset[str]) -> list[str]:
    return keyed_on_names(rel, (ROOT / rel).read_text(encoding="utf-8"), names)


def test_no_module_outside_a_games_own_keys_on_game_names() -> None:
    names = game_names()
    assert names and set(catalog.ids()) <= names  # the catalog was read
    found = [hit for rel in modules() for hit in check(rel, names)]
    assert found == [], "ask the catalog or the game's descriptor instead:\n" + "\n".join(found)


def test_the_check_sees_a_branch_a_table_and_a_match() -> None:
    names = game_names()
    a, b, c, d, e = (sorted(catalog.ids()) * 5)[:5]  # the catalog's games, whichever they are
    code = ('def f(rec, game_id, role):\n'
            f'    if rec.game.id == "{a}" or game_id in ("{b}", "{c}"):\n'
            f'        return {{"{d}": 1}}["{d}"]\n'
            '    match game_id:\n'
            f'        case "{e}":\n'
            '            return 2\n'
            f'    return role == "{b}"\n')  # a role named like its game is compared freely
    hits = keyed_on_names("bot/sample.py", code, names)
    assert [h.split(": ", 1)[1] for h in hits] == [
        *sorted({f"compares with {x!r}" for x in (a, b, c)}),
        f"keys a table by {d!r}", f"looks up {d!r}", f"matches {e!r}"]
    in_bench = keyed_on_names("bench/sample.py", code, names)  # a bench may keep a table of its per-game parts
    table = (f"keys a table by {d!r}", f"looks up {d!r}")
    assert [h.split(": ", 1)[1] for h in in_bench] == [h.split(": ", 1)[1] for h in hits if h.split(": ", 1)[1] not in table]


def test_every_study_exempted_is_there_and_still_needs_it() -> None:
    names = game_names()
    for rel in STUDIES:
        assert check(rel, names), f"{rel} no longer branches on a game's name: drop it from STUDIES"
