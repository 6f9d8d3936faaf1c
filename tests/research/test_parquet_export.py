"""``export --format parquet``: one file per record kind, read back with pyarrow and compared with
the JSON Lines export of the same log, pseudonyms and all."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import sqlalchemy as sa
from typer.testing import CliRunner

from bot.cli import app
from bot.research.parquet import PARQUET_SCHEMA, TABLES, records_from_parquet
from storage import evaluations
from storage.agentcalls import agent_call_values
from storage.store import AgentCallRecord, Store
from storage.tables import AgentCallRow, AgentOperation, table_of
from tests.storage.test_backends import GAMES, play_ai_tables

runner = CliRunner()
KEY = {"HUSHTABLE_EXPORT_SECRET": "k1-" + "0" * 29}


def _log(tmp_path: Path) -> str:
    """A game with two people and two AIs, every game by AIs, a scored clue and a scored model call."""
    from bot.core.messages import CommandKind
    from tests.bot.core.conftest import ALICE, BOB, HERE, make_harness

    url = f"sqlite+aiosqlite:///{tmp_path}/x.db"

    async def play() -> None:
        h = await make_harness(url)
        await h.send(CommandKind.CREATE, ALICE, HERE, game="spy")
        await h.send(CommandKind.JOIN, BOB, HERE)
        await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=2)
        await h.send(CommandKind.START, ALICE, HERE)
        await h.play_humans()
        await h.service.stop()
        await h.store.aclose()
        async with await Store.open(url) as store:
            await play_ai_tables(store, GAMES)
            gid = (await store.games())[0].id
            assert gid is not None
            await evaluations.save_evaluations(store, [evaluations.EvaluationRecord(
                game_id=gid, action_seq=2, part=1, game="spy", evaluator="embed:minilm", settings="s1",
                settings_json={"decoys": 3}, instance={"category": "fruit", "candidates": ["pear", "fig"]},
                decoys=["fig"], perm_seed=9, ally_probs=[0.75, 0.25], cham_probs=None, utility=0.5, leakage=None,
                soft=None, binary=1.0, error="no chameleon")])
            async with store.write() as conn:
                await conn.execute(sa.insert(table_of(AgentCallRow)), [agent_call_values(
                    AgentCallRecord(1, "llm:tiny", AgentOperation.SCORE, "m", [{"role": "user", "content": "pick"}],
                                    "b", {"a": 0.1, "b": 0.9}, 12.5, 1), game_id=gid, action_seq=None,
                    now=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC))])

    asyncio.run(play())
    return url


def test_parquet_tables_read_back_equal_to_the_jsonl_export(tmp_path: Path) -> None:
    from tests.bot.core.conftest import ALICE

    url = _log(tmp_path)
    jsonl, folder = tmp_path / "e.jsonl", tmp_path / "pq"
    assert runner.invoke(app, ["export", "--database", url, "--out", str(jsonl)], env=KEY).exit_code == 0
    r = runner.invoke(app, ["export", "--database", url, "--format", "parquet", "--out", str(folder)], env=KEY)
    assert r.exit_code == 0, r.output
    assert f"exported {1 + len(GAMES)} game(s)" in r.output
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{t}.parquet" for t in TABLES)

    expected = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert list(records_from_parquet(folder)) == expected

    # What a researcher sees with pyarrow alone: typed columns, keyed by game id, described.
    actions = pq.read_table(folder / "actions.parquet")
    assert actions.schema.field("value").type == pa.list_(pa.string())
    assert actions.schema.field("created_at").type == pa.timestamp("us", tz="UTC")
    assert actions.schema.metadata[b"hushtable.schema"] == PARQUET_SCHEMA.encode()
    assert b"description" in (actions.schema.field("seq").metadata or {})
    n_actions = sum(len(rec["actions"]) for rec in expected)
    assert actions.num_rows == n_actions and set(actions.column("game_id").to_pylist()) == {r["id"] for r in expected}
    ev = pq.read_table(folder / "evaluations.parquet").to_pylist()
    assert len(ev) == 1 and ev[0]["ally_probs"] == [0.75, 0.25] and ev[0]["cham_probs"] is None
    assert json.loads(ev[0]["instance"])["candidates"] == ["pear", "fig"]
    calls = pq.read_table(folder / "agent_calls.parquet").to_pylist()
    probe = [c for c in calls if c["agent_spec"] == "llm:tiny"]
    assert probe[0]["created_at"] == datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert json.loads(probe[0]["label_probs"]) == {"a": 0.1, "b": 0.9} and probe[0]["retries"] == 1
    events = pq.read_table(folder / "events.parquet").to_pylist()
    assert any(e["audience_seats"] is None for e in events) and any(e["audience_seats"] for e in events)

    # Pseudonymised as the JSONL export is: the same u_ names, no user id and no display name anywhere.
    seats = pq.read_table(folder / "seats.parquet").to_pylist()
    people = {s["player"] for s in seats if s["kind"] == "human"}
    assert len(people) == 2 and all(p.startswith("u_") for p in people)
    assert people <= {s["player"] for rec in expected for s in rec["seats"]}
    for t in TABLES:
        text = json.dumps(pq.read_table(folder / f"{t}.parquet").to_pylist(), default=str)
        assert f"memory:{ALICE.user_id}" not in text and "Alice" not in text, t


def test_raw_parquet_export_keeps_names_and_ids(tmp_path: Path) -> None:
    url = _log(tmp_path)
    jsonl, folder = tmp_path / "e.jsonl", tmp_path / "pq"
    assert runner.invoke(app, ["export", "--database", url, "--raw-ids", "--out", str(jsonl)]).exit_code == 0
    r = runner.invoke(app, ["export", "--database", url, "--raw-ids", "--format", "parquet", "--out", str(folder)])
    assert r.exit_code == 0, r.output
    assert list(records_from_parquet(folder)) == [json.loads(line) for line in jsonl.read_text().splitlines()]
    seats = pq.read_table(folder / "seats.parquet").to_pylist()
    assert {"memory:100", "memory:200"} <= {s["player"] for s in seats}
    assert "Alice" in {s["display_name"] for s in seats}


def test_parquet_needs_a_folder_and_says_so_in_one_line(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/x.db"
    r = runner.invoke(app, ["export", "--database", url, "--format", "parquet"])
    assert r.exit_code == 2 and r.output.strip().splitlines() == [
        "error: --format parquet writes one file per table: give a folder with --out"]
    f = tmp_path / "a.parquet"
    f.write_text("x")
    r = runner.invoke(app, ["export", "--database", url, "--format", "parquet", "--out", str(f)])
    assert r.exit_code == 2 and f.read_text() == "x"
    assert not (tmp_path / "x.db").exists()


def test_the_documented_parquet_columns_are_the_written_ones() -> None:
    from bot.research.parquet import COLUMNS

    doc = (Path(__file__).parents[2] / "docs" / "export-schema.md").read_text()
    rows = {line.split("|")[1].strip(" `"): line.split("|")[2] for line in doc.splitlines()
            if line.startswith("| `") and ".parquet`" in line}
    assert sorted(rows) == sorted(f"{t}.parquet" for t in TABLES)
    for t, cols in COLUMNS.items():
        assert [part.split("`")[1] for part in rows[f"{t}.parquet"].split("), ")] == [c[0] for c in cols], t


def test_a_planted_link_in_the_out_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    """A ``.games.parquet.partial`` link (or a --out file that is a link) once sent the export through it."""
    url = _log(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    folder = tmp_path / "pq"
    folder.mkdir()
    (folder / ".games.parquet.partial").symlink_to(victim)
    r = runner.invoke(app, ["export", "--database", url, "--format", "parquet", "--out", str(folder)], env=KEY)
    assert r.exit_code == 2 and "symbolic link" in r.output and "Traceback" not in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    assert victim.read_text() == "precious\n"
    assert not list(folder.glob("*.parquet")) and not (folder / ".actions.parquet.partial").exists()
    link = tmp_path / "out.jsonl"
    link.symlink_to(victim)
    r = runner.invoke(app, ["export", "--database", url, "--out", str(link)], env=KEY)
    assert r.exit_code == 2 and "symbolic link" in r.output, r.output
    assert victim.read_text() == "precious\n"
    # a leftover regular temporary of an interrupted export is no obstacle
    (folder / ".games.parquet.partial").unlink()
    (folder / ".games.parquet.partial").write_text("half")
    r = runner.invoke(app, ["export", "--database", url, "--format", "parquet", "--out", str(folder)], env=KEY)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{t}.parquet" for t in TABLES)
