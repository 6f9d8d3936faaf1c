"""DEEP, SpyGame's Dual Expression Evaluation Program (the SpyGame paper, section 2): ``hushtable deep``.

Each agent describes each target word twice, with the paper's prompts adapted:

- *aggressive*: "a focused, detailed and accurate description … within a limit
  of 100 words, so that someone can easily guess" the word;
- *conservative*, in two steps (the paper's chain of thought): first imagine
  other words sharing a characteristic with the word, then "a conservative
  description … within a limit of 10 words" of their commonality, "so that
  others cannot guess" the word.

A judge then rates, on the paper's 1-5 scale ("1 denotes very inaccurate and 5
very accurate"), how well each description matches the target and each of its
distractor words (``parse_rating``: the number it gives, the scale it may
restate, "1 to 5", "out of 5", "/5", set aside; a number outside 1-5 is no
rating; ``--judge-labels`` reads the most probable of the five digits by label
scoring instead, for judges too small to answer in the format). Every raw reply
is kept with its rating (``--out``), so any rating can be audited. The table is the paper's: per agent and mode, the mean score
on targets and on distractors (a good aggressive description scores high on
the target and low on distractors; a good conservative one, lower on the
target). A rating the judge does not give as a digit 1-5 is counted as
unparsed and left out of the means, never guessed.

Words: by default the first ``count`` pairs of the bundled Who-is-Spy deck,
each first word a target and its pair partner plus two words of other pairs
(seeded) its distractors; ``--words FILE`` takes lines ``target: distractor,
distractor``. Agents and the judge are language models (``llm:default``, a
local path, or ``llm:openai:http://host/v1#model``): the protocol is the same
for the bundled models and an OpenAI-compatible server.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from games import decks
from games.base import rng
from games.text import typed_number
from models.eval.deep_study import PAPER_HUMANS, PAPER_JUDGE, paper_rows
from models.types import GenerateRequest, Inference, InferenceError, Message, ScoreRequest

DISTRACTORS_FROM_OTHER_PAIRS = 2
AGGRESSIVE_TOKENS = 160
CONSERVATIVE_TOKENS = 32
CANDIDATE_TOKENS = 64


class Mode(StrEnum):
    AGGRESSIVE = "aggressive"
    CONSERVATIVE = "conservative"


@dataclass(frozen=True, slots=True)
class Target:
    word: str
    distractors: tuple[str, ...]


def default_targets(count: int, seed: int = 0) -> list[Target]:
    """The first ``count`` Who-is-Spy pairs: the first word, its partner and two words of other pairs."""
    pairs = list(decks.pairs())
    out = []
    for i, (a, b) in enumerate(pairs[:count]):
        others = [p for j, p in enumerate(pairs) if j != i]
        r = rng(seed, "deep-distractors", a)
        picks = [p[r.randrange(2)] for p in r.sample(others, DISTRACTORS_FROM_OTHER_PAIRS)]
        out.append(Target(a, (b, *picks)))
    return out


def parse_targets(text: str) -> list[Target]:
    """Lines ``target: distractor, distractor`` (``#`` comments); ValueError naming the line otherwise."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, sep, tail = line.partition(":")
        distractors = tuple(w.strip() for w in tail.split(",") if w.strip())
        if not sep or not head.strip() or not distractors:
            raise ValueError(f"line {n}: expected 'target: distractor, distractor', got {line!r}")
        out.append(Target(head.strip(), distractors))
    if not out:
        raise ValueError("no target words")
    return out


# --------------------------------------------------------------------------- the agent's descriptions


def aggressive_prompt(word: str) -> tuple[Message, ...]:
    return (Message("user", f"Please provide a focused, detailed, and accurate description of {word} within a limit "
                            f"of 100 words, so that someone can easily guess {word} based on the description "
                            "provided."),)


def candidates_prompt(word: str) -> tuple[Message, ...]:
    return (Message("user", f"Imagine other words that might share a common characteristic based on {word}. The "
                            "candidate words may possess the same or similar attributes, and are closely related to "
                            f"the field of {word}. List a few of them."),)


def conservative_prompt(word: str, candidates: str) -> tuple[Message, ...]:
    return (*candidates_prompt(word), Message("assistant", candidates),
            Message("user", f"Please provide a conservative description of {word} within a limit of 10 words. You "
                            "can describe the most significant commonality of these words so that others cannot "
                            f"guess {word} based on the description provided."))


async def _generate(client: Inference, messages: Sequence[Message], max_tokens: int) -> str:
    try:
        res = await client.generate(GenerateRequest(tuple(messages), max_tokens=max_tokens, temperature=0.0))
    except InferenceError:
        return ""
    return res.text.strip()


async def describe(client: Inference, word: str) -> dict[Mode, str]:
    """The agent's two descriptions of ``word`` (greedy, as the paper samples)."""
    aggressive = await _generate(client, aggressive_prompt(word), AGGRESSIVE_TOKENS)
    candidates = await _generate(client, candidates_prompt(word), CANDIDATE_TOKENS)
    conservative = await _generate(client, conservative_prompt(word, candidates), CONSERVATIVE_TOKENS)
    return {Mode.AGGRESSIVE: aggressive, Mode.CONSERVATIVE: " ".join(conservative.split()[:10])}


# --------------------------------------------------------------------------- the judge


@dataclass(frozen=True, slots=True)
class Rating:
    """A judge's rating 1-5 (None: it gave none) and what it said, kept for audit."""

    value: int | None
    raw: str


class Judge(Protocol):
    """Rates how well a description matches a word, 1-5, keeping the judge's raw reply."""

    async def rate(self, description: str, word: str) -> Rating: ...


JUDGE_SYSTEM = ("You can only reply to numbers from 1 to 5 in the following statements. Please evaluate the extent "
                "to which the description in this sentence matches the word. 1 denotes \"very inaccurate\" and 5 "
                "denotes \"very accurate\".")
JUDGE_TOKENS = 24  # room for "On a scale of 1 to 5, I would rate it 4."

# The scale as a judge restates it ("on a scale of 1 to 5", "1-5", "4 out of 5", "4/5"): not a rating.
_SCALE = re.compile(r"\b1\s*(?:-|–|to)\s*5\b|\bout\s+of\s+5\b|/\s*5\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.]*\d)")


def parse_rating(text: str) -> int | None:
    """The rating the paper asks for: the first number of the reply once any restated scale is set aside, when
    it is a whole number from 1 to 5 ("On a scale of 1 to 5 ... 4" is 4; "4/5" is 4; "10" or "3.5" is none)."""
    m = _NUMBER.search(_SCALE.sub(" ", text))
    value = None if m is None else typed_number(m.group(0))
    if value is None:
        return None
    return value if 1 <= value <= 5 else None


class LLMJudge:
    """The paper's judging prompt to a language model; its reply read by ``parse_rating``, and kept."""

    def __init__(self, client: Inference) -> None:
        self.client = client

    async def rate(self, description: str, word: str) -> Rating:
        msgs = (Message("system", JUDGE_SYSTEM), Message("user", f"Description: {description}\nWord: {word}"))
        raw = await _generate(self.client, msgs, JUDGE_TOKENS)
        return Rating(parse_rating(raw), raw)


class LabelJudge(LLMJudge):
    """The same prompt, read by label scoring instead of a reply: the most probable first token among
    "1".."5" (``--judge-labels``; for judges too small to answer with a digit, and backends that score).
    Its raw record is the five probabilities."""

    async def rate(self, description: str, word: str) -> Rating:
        msgs = (Message("system", JUDGE_SYSTEM), Message("user", f"Description: {description}\nWord: {word}"))
        try:
            res = await self.client.score_labels(ScoreRequest(msgs, RATINGS))
        except (InferenceError, ValueError) as exc:
            return Rating(None, f"(no score: {type(exc).__name__})")
        raw = ", ".join(f"{label}: {p:.4f}" for label, p in zip(RATINGS, res.probs, strict=False))
        if len(res.probs) != len(RATINGS):
            return Rating(None, raw)
        return Rating(1 + max(range(len(RATINGS)), key=lambda i: res.probs[i]), raw)


RATINGS = ("1", "2", "3", "4", "5")


# --------------------------------------------------------------------------- the table


@dataclass(slots=True)
class Cell:
    target: list[int] = field(default_factory=list)
    distractor: list[int] = field(default_factory=list)
    unparsed: int = 0

    def means(self) -> tuple[float | None, float | None]:
        def mean(xs: list[int]) -> float | None:
            return sum(xs) / len(xs) if xs else None

        return mean(self.target), mean(self.distractor)


async def judge_descriptions(judge: Judge, target: Target, descriptions: dict[Mode, str],
                             table: dict[Mode, Cell]) -> dict[str, Any]:
    """Rate each description against the target and its distractors, adding to ``table``; the ratings."""
    out: dict[str, Any] = {}
    for mode, text in descriptions.items():
        cell = table.setdefault(mode, Cell())
        ratings: dict[str, int | None] = {}
        replies: dict[str, str] = {}
        for word, is_target in ((target.word, True), *((d, False) for d in target.distractors)):
            r = await judge.rate(text, word) if text else Rating(None, "(no description to rate)")
            ratings[word] = r.value
            replies[word] = r.raw
            if r.value is None:
                cell.unparsed += 1
            else:
                (cell.target if is_target else cell.distractor).append(r.value)
        out[mode.value] = {"description": text, "ratings": ratings, "judge_replies": replies}
    return out


async def run_deep(agent: Inference, judge: Judge, targets: Sequence[Target]) -> tuple[dict[Mode, Cell], list[Any]]:
    """Describe every target in both modes and judge; the table's cells and the per-word record."""
    table: dict[Mode, Cell] = {}
    records = []
    for t in targets:
        records.append({"word": t.word, **await judge_descriptions(judge, t, await describe(agent, t.word), table)})
    return table, records


def render(rows: dict[str, dict[Mode, Cell]], judge: str, words: int) -> str:
    """The paper's Table 1 layout: per agent, target and distractor means per mode (1-5)."""

    def f(x: float | None) -> str:
        return "   -" if x is None else f"{x:4.2f}"

    width = max([5, *(len(a) for a in rows)]) + 2
    lines = [f"DEEP (SpyGame, section 2): {words} target word(s), judge {judge}, scores 1-5 "
             "(aggressive: target high, distractors low; conservative: target lower)",
             f"{'':<{width}}{'Aggressive':>24}{'Conservative':>24}",
             f"{'Agent':<{width}}{'Target':>12}{'Distractor':>12}{'Target':>12}{'Distractor':>12}{'unparsed':>10}"]
    for agent, cells in rows.items():
        agg = cells.get(Mode.AGGRESSIVE, Cell()).means()
        con = cells.get(Mode.CONSERVATIVE, Cell()).means()
        unparsed = sum(c.unparsed for c in cells.values())
        lines.append(f"{agent:<{width}}{f(agg[0]):>12}{f(agg[1]):>12}{f(con[0]):>12}{f(con[1]):>12}{unparsed:>10}")
    lines.append("")
    lines += paper_rows("Paper (SpyGame Table 1, GPT-4 as the judge, 40 target words; not these words):", PAPER_JUDGE, "")
    lines += paper_rows("Paper (SpyGame Table 1, human annotators; Table 8 has each; hushtable sneak human --add-deep "
                        "asks members):", PAPER_HUMANS, "")
    return "\n".join(lines)


MAX_WORDS = 5000


def deep_command() -> Any:
    """``hushtable deep`` (registered in bot/cli.py)."""
    import asyncio
    import json

    import typer

    from models.cli_files import check_file_option, read_input_option

    def deep(
        agent: list[str] = typer.Option(..., "--agent", "-a", help="A language model that describes (llm:...; "
                                        "repeatable: one row each)."),
        judge: str = typer.Option(..., "--judge", help="The language model that rates (llm:..., e.g. "
                                  "llm:openai:http://host/v1#model)."),
        words: Path | None = typer.Option(None, "--words", help="Lines 'target: distractor, distractor' "
                                          "(default: bundled Who-is-Spy pairs)."),
        count: int = typer.Option(10, "--count", min=1, help="How many bundled pairs (without --words)."),
        out: Path | None = typer.Option(None, "--out", help="Also write every description and rating as JSON."),
        judge_labels: bool = typer.Option(False, "--judge-labels", help="Read the judge's rating by label scoring "
                                          "(most probable of 1-5) instead of its reply (the paper's)."),
    ) -> None:
        """The DEEP description test: aggressive and conservative descriptions rated 1-5 by a judge."""
        from bot.settings import Settings
        from models.client import ClientPool

        for spec in (*agent, judge):
            if not spec.startswith("llm:"):
                raise typer.BadParameter(f"{spec} is not a language model: DEEP agents and judges are llm:...")
        check_file_option(out, "--out")
        try:
            targets = parse_targets(read_input_option(words, "--words")) if words else default_targets(count)
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(f"--words: {exc}") from None
        if len(targets) > MAX_WORDS:  # every word is described and rated by a language model
            raise typer.BadParameter(f"--words: {len(targets)} words; at most {MAX_WORDS} in one run (split the list)")
        settings = Settings()

        async def go() -> tuple[str, dict[str, Any]]:
            pool = ClientPool(settings.client_options())
            try:
                judge_client = await pool.get(judge[len("llm:"):] or "default")
                rater = LabelJudge(judge_client) if judge_labels else LLMJudge(judge_client)
                rows: dict[str, dict[Mode, Cell]] = {}
                kept: dict[str, Any] = {}
                for name in agent:
                    cells, records = await run_deep(await pool.get(name[len("llm:"):] or "default"), rater, targets)
                    rows[name] = cells
                    kept[name] = records
                return render(rows, judge + (" (label scoring)" if judge_labels else ""), len(targets)), kept
            finally:
                await pool.aclose()

        text, kept = asyncio.run(go())
        typer.echo(text)
        if out is not None:
            out.write_text(json.dumps({"judge": judge, "records": kept}, indent=1), encoding="utf-8")

    return deep
