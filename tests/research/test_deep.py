"""The DEEP table: descriptions in both modes, rated by a judge, averaged per mode on targets and distractors.

``FakeJudge`` and ``ScriptedAgent`` are deterministic test doubles (not models), used only to check the
table logic: the ratings are written here, so the means can be worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.research.deep import Cell, Mode, Target, default_targets, parse_rating, parse_targets, render, run_deep
from models.types import GenerateRequest, GenerateResult, ScoreRequest, ScoreResult


class ScriptedAgent:
    """A deterministic test double: a fixed aggressive and conservative description per word."""

    model_id = "scripted"

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        last = req.messages[-1].content
        word = "cat" if " cat " in f" {last} " or "cat." in last or "cat " in last else "oak"
        if "focused, detailed" in last:
            return GenerateResult(f"AGG-{word}", "scripted")
        if "conservative description" in last:
            return GenerateResult(f"CON-{word} one two three four five six seven eight nine ten eleven", "scripted")
        return GenerateResult("some candidates", "scripted")

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


class FakeJudge:
    """A deterministic test double for the judge: a rating table written by the test (None: no rating)."""

    RATINGS = {("AGG-cat", "cat"): 5, ("AGG-cat", "dog"): 3, ("AGG-cat", "car"): 1,
               ("CON-cat", "cat"): 2, ("CON-cat", "dog"): 2, ("CON-cat", "car"): None,
               ("AGG-oak", "oak"): 4, ("AGG-oak", "pine"): 4,
               ("CON-oak", "oak"): 3, ("CON-oak", "pine"): 1}

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def rate(self, description: str, word: str) -> int | None:
        key = (description.split()[0], word)
        self.seen.append(key)
        return self.RATINGS[key]


async def test_the_table_is_the_mean_per_mode_on_targets_and_distractors() -> None:
    targets = [Target("cat", ("dog", "car")), Target("oak", ("pine",))]
    judge = FakeJudge()
    cells, records = await run_deep(ScriptedAgent(), judge, targets)
    # Aggressive: targets 5, 4 -> 4.5; distractors 3, 1, 4 -> 8/3.
    assert cells[Mode.AGGRESSIVE].means() == (4.5, pytest.approx(8 / 3))  # type: ignore[comparison-overlap]  # approx's stub type
    # Conservative: targets 2, 3 -> 2.5; distractors 2, (no rating), 1 -> 1.5, one unparsed.
    assert cells[Mode.CONSERVATIVE].means() == (2.5, 1.5) and cells[Mode.CONSERVATIVE].unparsed == 1
    assert len(judge.seen) == 2 * (3 + 2)  # every description against the target and each distractor
    assert len(records[0]["conservative"]["description"].split()) == 10  # the paper's 10-word limit
    text = render({"llm:scripted": cells}, "fake", 2)
    row = next(line for line in text.splitlines() if line.startswith("llm:scripted"))
    assert row.split() == ["llm:scripted", "4.50", "2.67", "2.50", "1.50", "1"]


def test_word_lists_and_ratings_are_read_strictly() -> None:
    assert parse_targets("# words\ncat: dog, car\noak: pine\n") == [Target("cat", ("dog", "car")), Target("oak", ("pine",))]
    with pytest.raises(ValueError, match="line 1"):
        parse_targets("cat dog")
    assert parse_rating("4") == 4 and parse_rating("Rating: 5/5") == 5 and parse_rating("very accurate") is None
    bundled = default_targets(3)
    assert len(bundled) == 3 and all(len(t.distractors) == 3 for t in bundled)
    assert default_targets(3) == bundled  # seeded
    assert Cell().means() == (None, None)


def test_deep_refuses_agents_that_are_not_language_models(tmp_path: Path) -> None:
    from bot.cli import app

    res = CliRunner().invoke(app, ["deep", "--agent", "embed:minilm", "--judge", "llm:default"])
    assert res.exit_code != 0 and "not a language model" in res.output
    bad = tmp_path / "w.txt"
    bad.write_text("no colon here\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["deep", "--agent", "llm:default", "--judge", "llm:default", "--words", str(bad)])
    assert res.exit_code != 0 and "line 1" in res.output


async def test_the_label_judge_takes_the_most_probable_digit() -> None:
    from bot.research.deep import LabelJudge

    class Scores(ScriptedAgent):
        """A deterministic test double: fixed probabilities over the five rating labels."""

        async def score_labels(self, req: ScoreRequest) -> ScoreResult:
            assert req.labels == ("1", "2", "3", "4", "5") and "1 denotes" in req.messages[0].content
            return ScoreResult((0.1, 0.1, 0.5, 0.2, 0.1), "scripted")

    assert await LabelJudge(Scores()).rate("a small furry pet", "cat") == 3
