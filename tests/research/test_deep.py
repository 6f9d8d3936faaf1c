"""The DEEP table: descriptions in both modes, rated by a judge, averaged per mode on targets and distractors.

``FakeJudge`` and ``ScriptedAgent`` are deterministic test doubles (not models), used only to check the
table logic: the ratings are written here, so the means can be worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.research.deep import (
    Cell,
    LLMJudge,
    Mode,
    Rating,
    Target,
    default_targets,
    parse_rating,
    parse_targets,
    render,
    run_deep,
)
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

    async def rate(self, description: str, word: str) -> Rating:
        key = (description.split()[0], word)
        self.seen.append(key)
        value = self.RATINGS[key]
        return Rating(value, f"I rate it {value}" if value is not None else "I cannot say")


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
    # Every raw reply is kept beside its rating, the unparsed one too.
    assert records[0]["aggressive"]["judge_replies"] == {"cat": "I rate it 5", "dog": "I rate it 3", "car": "I rate it 1"}
    assert records[0]["conservative"]["judge_replies"]["car"] == "I cannot say"
    text = render({"llm:scripted": cells}, "fake", 2)
    row = next(line for line in text.splitlines() if line.startswith("llm:scripted"))
    assert row.split() == ["llm:scripted", "4.50", "2.67", "2.50", "1.50", "1"]
    # The paper's numbers follow, their table named: GPT-4 judging (Table 1), then the human block.
    lines = text.splitlines()
    at = lines.index("Paper (SpyGame Table 1, GPT-4 as the judge, 40 target words; not these words):")
    assert lines[at + 8].split() == ["GPT-4", "5.00", "1.22", "4.38", "3.06"]
    assert any(ln.startswith("Paper (SpyGame Table 1, human annotators") for ln in lines[at + 9:])


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

    rating = await LabelJudge(Scores()).rate("a small furry pet", "cat")
    assert rating.value == 3 and rating.raw == "1: 0.1000, 2: 0.1000, 3: 0.5000, 4: 0.2000, 5: 0.1000"


@pytest.mark.parametrize(("reply", "rating"), [
    ("On a scale of 1 to 5, I would rate this description a 4.", 4),
    ("On a scale of 1-5: 2", 2),
    ("4 out of 5", 4),
    ("Rating: 3/5", 3),
    ("5", 5),
    ("1", 1),
    ("10", None),  # not 1: a number outside the scale is no rating
    ("3.5", None),
    ("0", None),
    ("I would say 7 out of 10", None),
    ("The description is fairly accurate.", None),
])
def test_the_rating_the_paper_asks_for_is_read_from_the_reply(reply: str, rating: int | None) -> None:
    assert parse_rating(reply) == rating


async def test_the_llm_judge_keeps_its_raw_reply() -> None:
    class Verbose(ScriptedAgent):
        """A deterministic test double: a judge that restates the scale before its rating."""

        async def generate(self, req: GenerateRequest) -> GenerateResult:
            assert req.max_tokens >= 16, "room for the scale and the rating"
            return GenerateResult("On a scale of 1 to 5 I rate it 4", "scripted")

    rating = await LLMJudge(Verbose()).rate("a small furry pet", "cat")
    assert rating == Rating(4, "On a scale of 1 to 5 I rate it 4")
