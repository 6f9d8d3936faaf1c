"""What each registered game lacks: the parts a game may go without, and what that costs.

``hushtable doctor`` prints it. A game is playable by people from its package and catalog line
alone; each part it lacks is said with what goes missing (AI seats, clue scoring, the console
menu...). The parts are found the ways the rest of the system finds them: the catalog, the
descriptor, and ``models.parts`` by game id.
"""

from __future__ import annotations

from games.catalog import descriptors
from games.descriptor import ClueScoring, GameDescriptor
from models.parts import Part, part


def lacks(d: GameDescriptor) -> list[str]:
    """What this game lacks, one sentence each (empty: nothing)."""
    out: list[str] = []
    agent = part(Part.AGENT, d.id)
    if agent is None or getattr(agent, "game", None) != d.id:
        out.append(f"no agent module ({Part.AGENT.path(d.id)} with AGENT): only people and random seats can play it")
    if d.clue_scoring is not ClueScoring.NONE and part(Part.CLUE, d.id) is None:
        out.append(f"no clue module ({Part.CLUE.path(d.id)} with SNEAK): its clues are not scored")
    if not d.clue_kinds and d.clue_scoring is not ClueScoring.NONE:
        out.append("clue scoring is declared but no action kind is a clue (clue_kinds)")
    if d.view is None:
        out.append("no view type (view=): agents read its observations untyped and no test checks their keys")
    if d.deal is None:
        out.append("no deal format (deal=): its deals as data are undocumented")
    if not d.golden:
        out.append("no golden cases (golden=): a change of its rules or wording goes unnoticed")
    if d.read_seats is None or d.summarize is None:
        out.append("no metrics (read_seats/summarize): leaderboards and stats count its games only")
    if d.menu is None:
        out.append("no console menu entry (menu=): the console does not offer it")
    return out


def report() -> list[str]:
    """One line per registered game and what it lacks."""
    lines = []
    for d in descriptors():
        missing = lacks(d)
        lines.append(f"game {d.id}: " + ("complete" if not missing else "; ".join(missing)))
    return lines
