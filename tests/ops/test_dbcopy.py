"""``db copy`` moves a whole log, every table, from SQLite to PostgreSQL (and back), verified by
counts and a replay of every game; the copy keeps working as a live log afterwards."""

from __future__ import annotations

import io
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from bot.cli import app
from bot.ops.dbcopy import CopyRefused, copy_log
from storage import annotations as study
from storage import choices, evaluations, tournaments
from storage.agentcalls import agent_call_values
from storage.export import export_games
from storage.store import AgentCallRecord, Store
from storage.tables import AgentCallRow, PendingErasureRow, ProcessRow, TableLeaseRow, TextExpiryRow, metadata, table_of
from tests.storage.test_backends import GAMES, play_ai_tables


async def filled_log(url: str) -> None:
    """Games of each kind played to the end, a lobby, and a row in every other table."""
    async with await Store.open(url) as store:
        await play_ai_tables(store, GAMES)
        gid = (await store.games())[0].id
        assert gid is not None
        lobby = await store.create_game(game="spy", variant="classic", config={}, platform="memory", place="x",
                                        place_name="#x", host="memory:1", lobby={"seats": []}, inbound_key="lobby-1")
        assert lobby is not None
        await store.set_deadline(lobby, 0, datetime.now(UTC) + timedelta(minutes=3))
        await evaluations.save_evaluations(store, [evaluations.EvaluationRecord(
            game_id=gid, action_seq=1, part=0, game="spy", evaluator="sneak:test", settings="s", settings_json={},
            instance={}, decoys=[], perm_seed=1, ally_probs=None, cham_probs=None, utility=0.5, leakage=None,
            soft=None, binary=None)])
        # the human study: one item, served to a member and answered
        await study.add_items(store, [study.NewItem(key="item-1", task="ally", source="bench", game_id=None,
                                                                tenant="memory", item={})])
        assert await study.serve(store, "memory:2", study.Scope("memory"), per_item=5) is not None
        await study.answer(store, "memory:2", 0, True)
        async with store.write() as conn:  # an agent call of a probe, not tied to an action
            await conn.execute(sa.insert(table_of(AgentCallRow)), [agent_call_values(
                AgentCallRecord(0, "random", raw_output="x"), game_id=gid, action_seq=None, now=datetime.now(UTC))])
            # a process's hold on a game (several bot processes on one PostgreSQL: storage/ownership.py)
            await conn.execute(sa.insert(table_of(TableLeaseRow)).values(
                game_id=gid, owner="proc-1", token=1, expires_at=datetime.now(UTC)))
            # what that process tells the others it serves (its heartbeat row)
            await conn.execute(sa.insert(table_of(ProcessRow)).values(
                owner="proc-1", serves={"platforms": ["memory"]}, expires_at=datetime.now(UTC)))
        tid = await tournaments.create_tournament(
            store, tenant="console", name="nightly", game="spy", variant="classic", options={}, entrants=["random", "random"],
            format="round_robin", seats=4, games_per_pairing=1, duplicate=False, seed=3,
            matches=[tournaments.MatchPlanRecord(0, ["random"] * 4, 11, 0)], schedule="0 3 * * *")
        await tournaments.save_ratings(store, tid, "spy", "classic",
                                       [tournaments.RatingRecord("random", 1, 25.0, 8.3, 0.0, 50.0, 1, {"wins": 1})])
        assert await tournaments.acquire_lease(store, "scheduler", "proc-1", timedelta(minutes=1))
        # people's choices and the privacy record: a research choice, a notice shown, an audited export,
        # an erasure waiting for a game's end and a game whose words retention removed
        await choices.set_research(store, "memory:2", True)
        assert await choices.notice_due(store, "memory", "memory:2")
        await choices.audit(store, actor="cli:op", action="export", scope="jsonl, every game", rows=6)
        async with store.engine.begin() as conn:
            await conn.execute(sa.insert(table_of(PendingErasureRow)).values(user_key="memory:3", requested_by="memory:3"))
            await conn.execute(sa.insert(table_of(TextExpiryRow)).values(game_id=gid))
    # A table that is not ours: APScheduler's job store, as its SQLAlchemyJobStore makes it.
    async with await Store.open(url) as store, store.engine.begin() as conn:
        await conn.execute(sa.text("CREATE TABLE apscheduler_jobs (id VARCHAR(191) PRIMARY KEY, "
                                   "next_run_time FLOAT, job_state BLOB NOT NULL)"))
        await conn.execute(sa.text("INSERT INTO apscheduler_jobs VALUES ('t1', 1795000000.5, :b)"), {"b": b"\x80\x04pickled"})


async def table_counts(url: str) -> dict[str, int]:
    async with await Store.open(url, create=False) as store, store.engine.connect() as conn:
        counts = {t.name: int((await conn.execute(sa.select(sa.func.count()).select_from(t))).scalar_one())
                  for t in metadata.sorted_tables}
        jobs = (await conn.execute(sa.text("SELECT id, next_run_time, job_state FROM apscheduler_jobs"))).all()
    counts["apscheduler_jobs"] = len(jobs)
    assert [(j[0], j[1], bytes(j[2])) for j in jobs] == [("t1", 1795000000.5, b"\x80\x04pickled")]
    return counts


async def exported(url: str) -> str:
    buf = io.StringIO()
    async with await Store.open(url, create=False) as store:
        await export_games(store, out=buf, fmt="jsonl", pseudonymise=False, secret="")
    return buf.getvalue()


async def test_sqlite_to_postgres_and_back(tmp_path: Path, pg_url: str) -> None:
    src = f"sqlite+aiosqlite:///{tmp_path / 'src.db'}"
    await filled_log(src)
    before = await table_counts(src)
    assert all(before.values()), f"every table must hold rows for this test to mean anything: {before}"

    report = await copy_log(src, pg_url)
    assert report.ok, (report.mismatched, report.replay.problems)
    assert report.counts == before and report.replay.replayed == len(GAMES)
    assert await table_counts(pg_url) == before
    assert await exported(pg_url) == await exported(src)

    # The copy is a working log: new ids continue past the copied ones.
    async with await Store.open(pg_url) as store:
        new = await store.create_game(game="spy", variant="classic", config={}, platform="memory", place="y",
                                      place_name="", host="memory:1", lobby={})
        assert new is not None and new > max(g.id or 0 for g in await store.games() if g.id != new)
        assert not await store.claim_inbound("lobby-1")  # the inbound keys came along

    back = f"sqlite+aiosqlite:///{tmp_path / 'back.db'}"
    report = await copy_log(pg_url, back)
    assert report.ok and report.counts["games"] == before["games"] + 1

    with pytest.raises(CopyRefused, match="empty"):
        await copy_log(src, back)


def test_cli_copy_and_refusal(tmp_path: Path) -> None:
    import asyncio

    src = f"sqlite:///{tmp_path / 'a.db'}"
    asyncio.run(filled_log(src))
    runner = CliRunner()
    ok = runner.invoke(app, ["db", "copy", "--from", src, "--to", f"sqlite:///{tmp_path / 'b.db'}"])
    assert ok.exit_code == 0, ok.output
    assert f"{len(GAMES)} game(s) replayed" in ok.output
    again = runner.invoke(app, ["db", "copy", "--from", src, "--to", f"sqlite:///{tmp_path / 'b.db'}"])
    assert again.exit_code == 2 and "empty database" in again.output
    stale = runner.invoke(app, ["db", "copy", "--from", f"sqlite:///{tmp_path / 'none.db'}", "--to", f"sqlite:///{tmp_path / 'c.db'}"])
    assert stale.exit_code == 2 and "no database" in stale.output and not (tmp_path / "none.db").exists()
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    sqlite3.connect(tmp_path / "empty.db").close()  # a file, but never migrated
    old = runner.invoke(app, ["db", "copy", "--from", empty, "--to", f"sqlite:///{tmp_path / 'c.db'}"])
    assert old.exit_code == 2 and "revision" in old.output


async def pseudonymised(url: str) -> str:
    buf = io.StringIO()
    async with await Store.open(url, create=False) as store:
        await export_games(store, out=buf, fmt="jsonl", pseudonymise=True, secret=None)
    return buf.getvalue()


def test_cli_copy_carries_the_export_key_and_refuses_a_missing_folder(tmp_path: Path) -> None:
    import asyncio

    src = f"sqlite:///{tmp_path / 'a.db'}"
    asyncio.run(filled_log(src))
    before = asyncio.run(pseudonymised(src))  # makes the key beside a.db
    assert (tmp_path / "a.db.export-secret").is_file()
    runner = CliRunner()
    ok = runner.invoke(app, ["db", "copy", "--from", src, "--to", f"sqlite:///{tmp_path / 'b.db'}"])
    assert ok.exit_code == 0, ok.output
    assert f"the export key was copied to {tmp_path / 'b.db.export-secret'}" in ok.output
    key = tmp_path / "b.db.export-secret"
    assert key.read_text() == (tmp_path / "a.db.export-secret").read_text() and key.stat().st_mode & 0o777 == 0o600
    assert asyncio.run(pseudonymised(f"sqlite:///{tmp_path / 'b.db'}")) == before  # the same pseudonyms
    missing = runner.invoke(app, ["db", "copy", "--from", src, "--to", f"sqlite:///{tmp_path / 'nowhere' / 'c.db'}"])
    assert missing.exit_code == 2 and "the folder" in missing.output and "does not exist" in missing.output, missing.output
    assert not (tmp_path / "nowhere").exists()
