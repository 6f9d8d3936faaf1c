"""``hushtable sneak agreement --human`` on its own: the kind of each clue, the plain verdicts, and one clear line
when the study has no answers (the chat tests in tests/eval/discord and tests/eval/slack run it on members' answers)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from models.eval.clue_kind import ClueKind, clue_kind
from models.eval.human import Item, Task
from models.eval.human_agreement import agreement, clues_from_study, render
from models.eval.study import HumanStudy
from models.eval.wordnet import wordnet
from storage import annotations as notes
from storage.store import Store
from tests.eval.test_study import scored_game


@pytest.mark.parametrize(("message", "category", "kind"), [
    ("Herschel", "Telescopes", ClueKind.REFERENCE),  # WordNet: an instance (an astronomer)
    ("paris", "Cities", ClueKind.REFERENCE),  # typed lowercase, still a name
    ("New York", "Cities", ClueKind.REFERENCE),
    ("Hogwarts", "Schools", ClueKind.REFERENCE),  # not in WordNet, capitalised
    ("Harry Potter", "Owls", ClueKind.REFERENCE),
    ("animals", "Animal", ClueKind.CATEGORY),
    ("fruit", "Fruit and Veg", ClueKind.CATEGORY),
    ("salty", "Sea", ClueKind.ASSOCIATION),
    ("Ocean", "Water", ClueKind.ASSOCIATION),  # a common word typed capitalised
    ("yeet", "Dance", ClueKind.ASSOCIATION),  # unknown, lowercase
])
def test_the_kind_rule(message: str, category: str, kind: ClueKind) -> None:
    assert clue_kind(message, category, wordnet()) is kind


def _pair(n: int, message: str, share_right: float, p_right: float) -> tuple[list[Item], dict[str, list[int]]]:
    """A clue's ally and chameleon items whose right answer is option 0, five answers with the given share right."""
    items, votes = [], {}
    for task in Task:
        key = f"bench:{n}:{task.value}"
        items.append(Item(key, task, "Space", ("a", "b", "c", "d"), "a", message, ("a", "b", "c", "d"), 0,
                          {"embed:x": (p_right, 1 - p_right, 0.0, 0.0)}, None, "bench"))
        right = round(5 * share_right)
        votes[key] = [0] * right + [1] * (5 - right)
    return items, votes


def test_an_evaluator_that_ranks_clues_against_people_is_said_to_disagree() -> None:
    items: list[Item] = []
    votes: dict[str, list[int]] = {}
    for n in range(6):  # people find clue n right n/5 of the time; the evaluator the other way round
        i, v = _pair(n, "Herschel" if n % 2 else "comet", n / 5, 1 - n / 5)
        items += i
        votes |= v
    a = agreement(clues_from_study(items, votes, lambda m, c: clue_kind(m, c, wordnet())))
    both = [c for c in a.correlations if c.kind == "all"]
    assert [c.spearman for c in both] == [pytest.approx(-1.0)] * 2
    assert all(c.verdict().startswith("DISAGREES with people") for c in both)
    refs = next(c for c in a.correlations if c.kind == "reference" and c.metric == "utility")
    assert refs.n == 3
    text = render(a)
    assert "a name or reference 3, an association 3, the category word 0" in text
    assert "bench:0 (an association): utility 100 against people's 0 (higher)" in text
    assert "Herschel" not in text and "comet" not in text  # clues are named by key, never quoted


def test_the_command_says_one_line_when_no_member_answered(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'log.db'}"

    async def setup() -> None:
        store = await Store.open(url)
        try:
            await scored_game(store, 5, "console:ada")
            assert await HumanStudy(store, ["embed:minilm"]).refresh() > 0  # items, but no answer
            assert (await notes.study(store))[1] == {}
        finally:
            await store.aclose()

    asyncio.run(setup())
    out = tmp_path / "agree"
    res = CliRunner().invoke(app, ["sneak", "agreement", "--human", "--database", url, "--out", str(out)])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        "error: no answers in the human study yet: members answer with /judge (or hushtable sneak judge) before "
        "people and evaluators can be compared"]
    assert not out.exists()
