"""DEEP rated by members: items from a DEEP run's kept records, rated 1-5 through the human study by scripted
members, and the report's numbers computed by hand."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from bot.research.deep import Rating, Target, run_deep
from models.eval.deep_study import DeepItem, items_from_run
from models.eval.study import HumanStudy, add_deep_items, study_report
from models.types import GenerateRequest, GenerateResult, ScoreRequest, ScoreResult
from storage import annotations as notes
from storage.annotations import Scope
from storage.store import Store

CONSOLE = Scope("console", None, operator=True)  # the operator's CLI

runner = CliRunner()


class Describer:
    model_id = "scripted"

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        last = req.messages[-1].content
        text = ("a crisp apple fresh from the tree" if "focused, detailed" in last
                else "pear, plum" if "Imagine other words" in last else "it grows somewhere")
        return GenerateResult(text, "scripted")

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        raise AssertionError("not used")

    async def aclose(self) -> None:
        return None


class Judge:
    async def rate(self, description: str, word: str) -> Rating:
        return Rating(4 if word == "apple" else 2, "scripted")


async def _run() -> dict[str, object]:
    _, records = await run_deep(Describer(), Judge(), [Target("apple", ("pear",))])
    return {"judge": "llm:judge", "records": {"llm:agent": records}}


async def test_members_rate_deep_items_and_the_report_is_computed_by_hand(tmp_path: Path) -> None:
    run = await _run()
    items = items_from_run(run)
    # two modes, each rated against the target and its one distractor
    assert sorted((i.mode, i.word, i.judge_rating) for i in items) == [
        ("aggressive", "apple", 4), ("aggressive", "pear", 2), ("conservative", "apple", 4),
        ("conservative", "pear", 2)]
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}")
    try:
        assert await add_deep_items(store, run) == 4
        assert await add_deep_items(store, run) == 0  # the same run twice adds nothing
        study = HumanStudy(store, [])
        for m in range(6):
            member = f"console:m{m}"
            text = await study.turn(member, CONSOLE)
            while text and "No item to judge" not in text:
                assert "DEEP human rating" in text
                assert await study.turn(member, CONSOLE, "9") == "Answer with a rating, from 1 to 5; nothing was recorded."
                word = re.search(r'fit the word "(\w+)"', text).group(1)  # type: ignore[union-attr]
                desc = re.search(r"Description: (.*)", text).group(1)  # type: ignore[union-attr]
                # a member who rates 5 when the description names the word, else 1
                text = await study.turn(member, CONSOLE, "5" if word in desc else "1")
                assert text.startswith("Recorded ") and "the judge gave" in text
            if m == 5:
                assert text.startswith("No item to judge")
        votes = await notes.votes_of(store, "deep")
        assert len(votes) == 20 and len({a for _, a, _ in votes}) == 5
        assert await notes.record(store, "console:m0") == []  # ratings are no right-or-wrong score
        report = await study_report(store)
    finally:
        await store.aclose()
    row = next(ln for ln in report.splitlines() if "llm:agent" in ln and "aggressive" in ln)
    # aggressive: the description names apple (5 from every member), not pear (1); the judge 4 and 2
    assert row.split()[2:8] == ["5.00", "1.00", "4.00", "2.00", "2", "10"]
    row = next(ln for ln in report.splitlines() if "llm:agent" in ln and "conservative" in ln)
    assert row.split()[2:8] == ["1.00", "1.00", "4.00", "2.00", "2", "10"]
    # r over items: members (5, 1, 1, 1) against the judge (4, 2, 4, 2): 4 / sqrt(12 * 4)
    assert f"{4 / math.sqrt(48):.2f} (over 4 items" in report
    assert "member 5" in report and "member 6" not in report and "console:m" not in report
    # The paper's human ratings beside ours, each table named: Table 1's mean, Table 8's annotators.
    lines = report.splitlines()
    at = next(i for i, ln in enumerate(lines) if "SpyGame Table 1, 'Human Evaluation Scores'" in ln)
    assert lines[at + 3].split() == ["GPT-4", "4.87", "2.08", "2.85", "2.83"]
    at = next(i for i, ln in enumerate(lines) if "SpyGame Table 8, annotator 2" in ln)
    assert lines[at + 1].split() == ["Vicuna-7B-v1.5", "4.65", "2.19", "4.41", "2.41"]


def test_add_deep_refuses_a_file_that_is_not_a_deep_run(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"records": [1, 2]}))
    db = f"sqlite+aiosqlite:///{tmp_path / 'log.db'}"
    r = runner.invoke(app, ["sneak", "human", "--add-deep", str(bad), "--database", db])
    assert r.exit_code == 2 and "--add-deep: not the JSON of hushtable deep --out" in r.output
    assert DeepItem.from_json(DeepItem("k", "a", "aggressive", "t", "t", "d", "j", None).to_json()).judge_rating is None
