"""``hushtable sneak score / report / bench`` on a small database, with the bundled embedding evaluator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from storage.evaluations import evaluations
from storage.store import Store
from tests.eval.logging_helpers import log_random_game

runner = CliRunner()


def _db(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'small.db'}"

    async def fill() -> None:
        st = await Store.open(url)
        try:
            await log_random_game(st, "chameleon", "sneak", 4, seed=1, humans=(0,), agent="embed:minilm")
            await log_random_game(st, "spy", "classic", 4, seed=2, humans=(1,), agent="random")
        finally:
            await st.aclose()

    asyncio.run(fill())
    return url


async def _count(url: str) -> int:
    st = await Store.open(url)
    try:
        return len(await evaluations(st))
    finally:
        await st.aclose()


def test_score_then_rescore_then_report(tmp_path: Path) -> None:
    url = _db(tmp_path)
    res = runner.invoke(app, ["sneak", "score", "--database", url, "--evaluator", "embed:minilm"])
    assert res.exit_code == 0, res.output
    assert "2 game(s), 8 message(s); scored 8 pair(s), stored 8, already stored 0, evaluation failures 0" in res.output
    for heading in ("By game", "By player", "By role", "chameleon/chameleon", "spy/"):
        assert heading in res.output
    assert "console:user" not in res.output  # people appear by pseudonym only
    again = runner.invoke(app, ["sneak", "score", "--database", url, "--evaluator", "embed:minilm"])
    assert "scored 0 pair(s), stored 0, already stored 8" in again.output
    assert asyncio.run(_count(url)) == 8

    out = tmp_path / "report"
    rep = runner.invoke(app, ["sneak", "report", "--database", url, "--out", str(out)])
    assert rep.exit_code == 0, rep.output
    assert (out / "utility_leakage.png").stat().st_size > 0 and (out / "utility_leakage.svg").is_file()
    assert "embed:minilm" in (out / "by_player.csv").read_text()


def test_score_refuses_an_unknown_evaluator(tmp_path: Path) -> None:
    url = _db(tmp_path)
    res = runner.invoke(app, ["sneak", "score", "--database", url, "--evaluator", "oracle:everything"])
    assert res.exit_code != 0 and "unknown evaluator kind" in res.output
    assert asyncio.run(_count(url)) == 0


def test_bench_writes_table_csv_json_and_plot(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    res = runner.invoke(app, ["sneak", "bench", "--generator", "embed:minilm", "--evaluator", "embed:minilm",
                              "--cards", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "Baseline orderings per evaluator" in res.output and "embed:minilm:" in res.output
    data = json.loads((out / "results.json").read_text())
    groups = {r["group"] for r in data["rows"]}
    assert groups == {"random", "category", "secret-synonym", "embed:minilm"}
    n = {r["group"]: r["n"] for r in data["rows"]}
    missing = data["meta"]["missing_baselines"]
    assert n["random"] == n["embed:minilm"] == 12  # one card, 12 words, every word a secret
    assert all(n[b] + missing.get(b, 0) == 12 for b in ("category", "secret-synonym"))  # WordNet gaps counted
    assert data["meta"]["instances"] == 12 and [v["evaluator"] for v in data["validity"]] == ["embed:minilm"]
    assert data["meta"]["decoys"].startswith("wordnet") and data["meta"]["baselines"] == "wordnet"
    card, secret = data["meta"]["examples"][0]["category"], data["meta"]["examples"][0]["secret"]
    from games import decks

    first = decks.cards()[0]
    assert card == first[0] and secret == first[1][0]  # the card's own name, not the category baseline's message
    assert (out / "results.csv").read_text().startswith("group,evaluator,n,failures,utility")
    for name in ("utility_leakage.png", "utility_leakage.svg", "table.txt"):
        assert (out / name).stat().st_size > 0
    # Every generation is kept with the generator's raw output (CoT traces and SETS candidates for those methods).
    kept = [json.loads(line) for line in (out / "generations.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(kept) == 12 and {k["generator"] for k in kept} == {"embed:minilm"}
    assert [k["secret"] for k in kept] == list(first[1][:12]) and all(k["message"] == k["raw"] for k in kept)
    assert data["meta"]["generations"] == "generations.jsonl" and data["meta"]["prompting"].startswith("no prompt")
    assert "prompt no prompt (embedding generator)" in res.output


def test_a_sets_trace_is_kept_as_an_object() -> None:
    from models.eval.bench import trace
    from models.eval.generators import Generated
    from models.eval.instances import Instance

    inst = Instance(game="bench", category="Fruit", candidates=("apple", "pear"), secret="pear", message="")
    audit = {"method": "sets", "sampled": ["green"], "candidates": [], "votes": {"green": 1}, "chosen": "green"}
    kept = trace("llm:x?method=sets", inst, Generated("green", json.dumps(audit)))
    assert kept == {"generator": "llm:x?method=sets", "category": "Fruit", "secret": "pear", "message": "green", "raw": audit}
    cot = trace("llm:x?method=cot", inst, Generated("bell", "It rings. <message>bell</message>"))
    assert cot["raw"] == "It rings. <message>bell</message>"


def test_validate_prints_a_verdict_per_ordering_on_a_researchers_deck(tmp_path: Path) -> None:
    deck = tmp_path / "deck.txt"
    deck.write_text("Pasta shapes: penne, fusilli, farfalle, rigatoni, spaghetti, linguine, macaroni, lasagne, ravioli, "
                    "tortellini, orzo, gnocchi\n"
                    "Car brands: ford, toyota, honda, volkswagen, bmw, audi, ferrari, porsche, fiat, renault, volvo, "
                    "jaguar\n"
                    "Cloud types: cumulus, stratus, cirrus, nimbus, cumulonimbus, altostratus, cirrostratus, "
                    "stratocumulus, altocumulus, cirrocumulus, nimbostratus, contrail\n"
                    "Fruits: apple, banana, orange, grape, strawberry, pear, peach, cherry, mango, pineapple, lemon, "
                    "plum\n", encoding="utf-8")
    res = runner.invoke(app, ["sneak", "validate", "-e", "embed:minilm", "--deck", str(deck),
                              "--out", str(tmp_path / "verdicts.json")])
    written = json.loads((tmp_path / "verdicts.json").read_text(encoding="utf-8"))
    (verdict,) = written["verdicts"]
    assert verdict["spec"] == "embed:minilm" and len(verdict["checks"]) == 6
    assert {"name", "point", "low", "high", "passed"} <= set(verdict["checks"][0])
    # Fruits is a bundled card the temperatures were fitted on: left out, and said so.
    assert "3 held-back card(s)" in res.output and "1 left out as calibration cards" in res.output
    assert "embed:minilm: " in res.output and ("VALID" in res.output)
    for check in ("utility: secret-synonym > category", "leakage: category ~ random", "softscore: category >"):
        assert check in res.output
    assert res.output.count("[") >= 6  # every ordering with its interval over cards
    assert res.exit_code in (0, 1)  # 1: not valid on so few cards, said, never hidden
    bad = runner.invoke(app, ["sneak", "validate", "-e", "embed:minilm", "--deck", str(tmp_path / "none.txt")])
    assert bad.exit_code != 0 and "--deck" in bad.output
