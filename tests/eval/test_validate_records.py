"""Verdicts are kept per (evaluator, deck): a researcher's deck never replaces the bundled verdict the start reads."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from games import decks
from models.eval.evaluators import fingerprint
from models.eval.validate import (
    BUNDLED,
    MIN_RECORD_CARDS,
    Check,
    EvaluatorVerdict,
    NotRecordable,
    Validation,
    deck_key,
    held_back,
    other_decks,
    record,
    record_key,
    records,
    standing,
)


def _validation(cards: int, key: str, *, valid: bool, spec: str = "embed:minilm") -> Validation:
    check = Check("utility: secret-synonym > category", 5.0 if valid else -3.0, 1.0 if valid else -9.0, 9.0, valid)
    verdict = EvaluatorVerdict(spec, fingerprint(spec), checks=[check])
    return Validation(cards, 0, cards * 12, {}, {}, "wordnet", "my deck", [verdict], deck_key=key)


def _outside_cards(n: int) -> list[tuple[str, list[str]]]:
    return [(f"Invented category {i}", [f"word{i}x{j}" for j in range(12)]) for i in range(n)]


def test_the_bundled_cards_are_one_deck_whatever_their_order_and_spelling() -> None:
    cards, _ = held_back()
    shuffled = [(c.upper(), list(reversed(w))) for c, w in cards]
    random.Random(3).shuffle(shuffled)
    assert deck_key(shuffled) == BUNDLED
    other = deck_key(_outside_cards(30))
    assert other.startswith("deck:") and other != deck_key(_outside_cards(31))
    # One card fewer is another deck: a verdict on part of the cards is not the bundled verdict.
    assert deck_key(cards[1:]) != BUNDLED
    # A researcher's file holding every bundled card is reduced to the held-back ones first: the bundled deck again.
    assert deck_key(held_back([(c, tuple(w)) for c, w in decks.cards()])[0]) == BUNDLED


def test_a_verdict_on_another_deck_is_kept_beside_the_bundled_one(tmp_path: Path) -> None:
    path = tmp_path / "validated.json"
    path.write_text(json.dumps(records()), encoding="utf-8")  # the shipped verdicts
    bundled_before = records(path.read_text(encoding="utf-8"))[record_key(fingerprint("embed:minilm"), BUNDLED)]
    shipped_others = len(other_decks("embed:minilm", records()))
    outside = deck_key(_outside_cards(MIN_RECORD_CARDS))
    data = record(_validation(MIN_RECORD_CARDS, outside, valid=False), path)
    assert data[record_key(fingerprint("embed:minilm"), BUNDLED)] == bundled_before
    assert standing("embed:minilm", data) is None  # the start reads the bundled verdict only
    (kept,) = [r for r in other_decks("embed:minilm", data) if r["deck_key"] == outside]
    assert kept["valid"] is False and kept["cards"] == MIN_RECORD_CARDS
    assert len(other_decks("embed:minilm", data)) == shipped_others + 1
    # Recording on the bundled cards is what replaces the bundled verdict.
    data = record(_validation(52, BUNDLED, valid=False), path)
    assert "failed validation on 52 held-back cards" in (standing("embed:minilm", data) or "")
    assert len(other_decks("embed:minilm", data)) == shipped_others + 1


def test_a_small_deck_or_a_partial_run_records_nothing(tmp_path: Path) -> None:
    path = tmp_path / "validated.json"
    path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(NotRecordable, match=f"too few to record a verdict \\(at least {MIN_RECORD_CARDS}"):
        record(_validation(MIN_RECORD_CARDS - 1, deck_key(_outside_cards(5)), valid=True), path)
    with pytest.raises(NotRecordable, match="partial run"):
        record(_validation(40, "", valid=True), path)
    assert path.read_text(encoding="utf-8") == "{}\n"


def test_the_validate_command_refuses_to_record_a_small_deck_before_scoring(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bot.cli import app

    deck = tmp_path / "deck.txt"
    deck.write_text("".join(f"{c}: {', '.join(w)}\n" for c, w in _outside_cards(3)), encoding="utf-8")
    shipped = (Path(__file__).parents[2] / "models" / "eval" / "data" / "validated.json").read_text(encoding="utf-8")
    res = CliRunner().invoke(app, ["sneak", "validate", "-e", "embed:minilm", "--deck", str(deck), "--record"])
    assert res.exit_code != 0 and f"at least {MIN_RECORD_CARDS} held-back cards; this deck has 3" in res.output
    assert "validation on" not in res.output  # refused before anything was scored
    assert (Path(__file__).parents[2] / "models" / "eval" / "data" / "validated.json").read_text(encoding="utf-8") == shipped
