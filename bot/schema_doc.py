"""The per-game rows of docs/export-schema.md, generated from the catalog: ``python -m bot.schema_doc``.

Each registered game gets one row (its id as exported, title, variants, seats, the action kinds that are clues
and what a finished game's ``result.details.deal`` holds), written between two markers of the page; the rest of
the page is written by hand. ``--check`` exits 1 when the page is not what the catalog gives (the docs test,
``tests/storage/test_export_schema_doc.py``, asks the same), so a new game's row is one command away.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from games.catalog import descriptors
from games.descriptor import GameDescriptor

PAGE = Path(__file__).resolve().parents[1] / "docs" / "export-schema.md"
BEGIN = "<!-- games: generated from games/catalog.py by `python -m bot.schema_doc`; edit the descriptors, not this table -->"
END = "<!-- end of the generated games -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def row(d: GameDescriptor) -> str:
    variants = ", ".join(f"`{v}`" for v in d.variants)
    clues = ", ".join(f"`{k}`" for k in sorted(d.clue_kinds)) or "none"
    deal = _cell(d.deal.doc) if d.deal is not None else "not declared"
    return f"| `{d.id}` | {_cell(d.title)} | {variants} | {d.seats[0]}-{d.seats[1]} | {clues} | {deal} |"


def games_table(games: Sequence[GameDescriptor] | None = None) -> str:
    """The generated block, markers included."""
    lines = [BEGIN,
             "| `game` | title | `variant` (the default first) | seats | clue actions (`kind`) | `result.details.deal` |",
             "|---|---|---|---|---|---|",
             *(row(d) for d in (descriptors() if games is None else games)),
             END]
    return "\n".join(lines)


def updated(page: str) -> str:
    """The page with its generated block replaced by the catalog's; ValueError when the markers are missing."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{PAGE.name} lacks the generated block's markers")
    return page[:start] + games_table() + page[end + len(END):]


def main(argv: Sequence[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    new = updated(page)
    if "--check" in argv:
        if new != page:
            print(f"{PAGE}: the games table is not the catalog's; run python -m bot.schema_doc", file=sys.stderr)
            return 1
        return 0
    if new != page:
        PAGE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
