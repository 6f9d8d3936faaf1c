"""Pieces of the benchmark: message parsing, generators, the validity verdict, the Pareto frontier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models.eval.generators import LLMGenerator, parse_message
from models.eval.instances import Instance
from models.eval.metrics import Scores
from models.eval.plot import Point, pareto_front, scatter
from models.eval.summary import Row, Scored, summarise, validity

INST = Instance(game="chameleon", category="Fruits", candidates=("Apple", "Banana", "Lemon"), secret="Lemon", message="")


def test_parse_message_takes_the_last_span_and_refuses_placeholders() -> None:
    assert parse_message("<message>first</message> then <message> sour  citrus </message>") == "sour citrus"
    assert parse_message("<message>one two three four five six seven") == "one two three four five"
    assert parse_message("<message>...</message>") is None
    assert parse_message("<message>YOUR message HERE</message>") is None
    assert parse_message("no span at all") is None


async def test_llm_generator_counts_a_failure_instead_of_inventing_a_message(client: Any) -> None:
    for refine in (False, True):
        gen = LLMGenerator(client, "llm:tiny", refine=refine, max_tokens=6)
        out = await gen(INST)
        # The random model writes whatever it writes; either a parsed message or a counted failure.
        assert out.message is None or (0 < len(out.message.split()) <= 5 and "<" not in out.message)
        assert gen.spec == ("llm:tiny+rmr" if refine else "llm:tiny")


def _rows(r: tuple[float, float, float], c: tuple[float, float, float], s: tuple[float, float, float]) -> list[Row]:
    items = [Scored(g, "ev", Scores(u, lk, u * (1 - lk), b)) for g, (u, lk, b) in
             (("random", r), ("category", c), ("secret-synonym", s))]
    return summarise(items)


def test_validity_checks_the_papers_orderings() -> None:
    paper = _rows((0.079, 0.079, 0.07), (0.315, 0.076, 0.3), (0.757, 0.71, 0.12))
    v = validity(paper, "ev")
    assert v is not None and v.valid and v.text() == "reproduces the paper's orderings"
    flat = _rows((0.2, 0.2, 0.1), (0.2, 0.2, 0.1), (0.2, 0.2, 0.1))  # an evaluator that tells nothing apart
    bad = validity(flat, "ev")
    assert bad is not None and not bad.valid
    assert [k for k, ok in bad.checks.items() if ok] == ["leakage: category ~ random (within 10)"]
    assert validity(flat, "other") is None


def test_pareto_front_and_the_plot_files(tmp_path: Path) -> None:
    pts = [Point("a", 10, 30, 27), Point("b", 50, 90, 45), Point("c", 60, 80, 32), Point("d", 5, 5, 5),
           Point("e", 10, 20, 18)]
    assert [p.label for p in pareto_front(pts)] == ["d", "a", "b"]  # c and e are beaten on both axes
    png, svg = scatter(pts, tmp_path / "plot")
    assert png.read_bytes().startswith(b"\x89PNG") and b"<svg" in svg.read_bytes()[:400]
