"""What the chat study tests check of ``hushtable sneak agreement --human`` run on the database members filled."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from scipy.stats import spearmanr
from typer.testing import CliRunner

from bot.cli import app
from models.eval.human import Item, Task
from storage import annotations as notes
from storage.store import Store


def varied_answer(member: int, turn: int, options: int) -> int:
    """A scripted member's answer (1-based): each member and turn another option, so shares differ by clue."""
    return (member + turn) % options + 1


async def check_agreement_command(store: Store, url: str, out: Path, clues: int) -> str:
    """Run the command on the members' answers and check its Spearman ρ against scipy's on the stored study."""
    res = await asyncio.to_thread(CliRunner().invoke, app, ["sneak", "agreement", "--human", "--database", url,
                                                            "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert f"{clues} clue(s) with answers ({clues * 2 * 5} answer(s))" in res.output
    raw, votes = await notes.study(store)
    items = {i.key: i for i in (Item.from_json(d) for d in raw)}
    for task, metric in ((Task.ALLY, "utility"), (Task.CHAMELEON, "leakage")):
        mine = [i for i in items.values() if i.task is task]
        people = [sum(v == i.gold for v in votes[i.key]) / len(votes[i.key]) for i in mine]
        model = [i.probs["embed:minilm"][i.gold] for i in mine]
        row = re.search(rf"^  embed:minilm\s+{metric}\s+all\s+(\d+)\s+(\S+)", res.output, re.M)
        assert row is not None, res.output
        assert int(row[1]) == clues
        rho = spearmanr(people, model).statistic
        if len(set(people)) > 1:
            assert row[2] == f"{rho:+.2f}", (row[2], rho)
        else:
            assert row[2] == "–"
    assert (out / "human_agreement.txt").read_text(encoding="utf-8").strip() in res.output
    return str(res.output)
