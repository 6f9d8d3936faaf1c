"""Operations: /metrics counters move when games are played, /healthz fails when the database is
gone (a deleted SQLite file, a dropped PostgreSQL database), and logs go to a rotating file, never
onto the console game screen, as text or JSON lines, with credentials masked."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.ops.logs import setup_logging
from bot.ops.wiring import start_ops
from storage.store import Store
from tests.postgres import PostgresServer
from tests.storage.test_backends import GAMES, play_ai_tables


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def total(page: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return sum(v for (n, lab), v in page.items() if n == name and all((k, want) in lab for k, want in labels.items()))


async def get(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}{path}") as resp:
        return resp.status, await resp.text()


async def test_metrics_move_when_games_are_played(tmp_path: Path) -> None:
    async with await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'hush.db'}") as store:
        ops = await start_ops(SimpleNamespace(ops_port=0, ops_host="127.0.0.1"), store)
        try:
            assert ops.server is not None
            status, before_text = await get(ops.server.port, "/metrics")
            assert status == 200
            before = samples(before_text)
            assert total(before, "hushtable_commands_total") == 0
            await play_ai_tables(store, GAMES, observer=ops.observer)
            status, text = await get(ops.server.port, "/metrics")
            (tmp_path / "metrics.txt").write_text(text)
        finally:
            await ops.aclose()
    after = samples(text)
    for kind in ("create", "add_ai", "start"):
        assert total(after, "hushtable_commands_total", kind=kind, ok="true") == len(GAMES)
    assert total(after, "hushtable_command_seconds_count") == 3 * len(GAMES)
    for game, _, _ in GAMES:
        assert total(after, "hushtable_actions_total", game=game, source="ai") > 0
    assert total(after, "hushtable_tables_running") == 0  # all over again
    assert total(after, "hushtable_inbound_duplicates_total") == 0
    assert ('hushtable_deadlines_open' in text) and ("hushtable_ai_move_seconds" in text)


async def test_healthz_fails_when_the_sqlite_file_is_gone(tmp_path: Path) -> None:
    db = tmp_path / "hush.db"
    async with await Store.open(f"sqlite+aiosqlite:///{db}") as store:
        ops = await start_ops(SimpleNamespace(ops_port=0), store)
        try:
            assert ops.server is not None
            assert await get(ops.server.port, "/healthz") == (200, "ok\n")
            db.unlink()
            status, body = await get(ops.server.port, "/healthz")
            assert status == 503 and "missing" in body and str(tmp_path) not in body
            _, text = await get(ops.server.port, "/metrics")
            assert total(samples(text), "hushtable_database_up") == 0
        finally:
            await ops.aclose()


async def test_healthz_fails_when_the_postgres_database_is_gone(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    async with await Store.open(url) as store:
        ops = await start_ops(SimpleNamespace(ops_port=0), store)
        try:
            assert ops.server is not None
            assert (await get(ops.server.port, "/healthz"))[0] == 200
            postgres_server.drop_database(url)  # WITH (FORCE): open connections are cut too
            status, body = await get(ops.server.port, "/healthz")
            assert status == 503 and "database" in body and "postgres" not in body.lower().replace("database", "")
        finally:
            await ops.aclose()


async def test_no_port_no_server(tmp_path: Path) -> None:
    async with await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'h.db'}") as store:
        ops = await start_ops(SimpleNamespace(ops_port=None), store)
        assert ops.server is None and ops.observer.render().startswith(b"# HELP")


@pytest.fixture
def clean_root() -> object:
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    yield root
    for h in list(root.handlers):
        if h not in saved:
            root.removeHandler(h)
            h.close()
    for h in saved:
        if h not in root.handlers:
            root.addHandler(h)
    root.setLevel(level)


def test_console_logs_go_to_the_file_only(tmp_path: Path, capfd: pytest.CaptureFixture[str], clean_root: object) -> None:
    token = "xoxb-0123456789-abcdefghij"
    logging.basicConfig(level=logging.INFO)  # what a careless caller may have set up first
    settings = SimpleNamespace(log_dir=tmp_path / "logs", log_format="text", log_level="INFO", slack_bot_token=token)
    path = setup_logging(settings, console=True)
    logging.getLogger("bot.test").warning("agent failed with token %s", token)
    import warnings

    warnings.warn("a library warning", UserWarning, stacklevel=1)
    out, err = capfd.readouterr()
    assert "agent failed" not in out + err and "library warning" not in out + err
    text = path.read_text()
    assert path == tmp_path / "logs" / "hushtable.log"
    assert "WARNING bot.test: agent failed with token [redacted]" in text and token not in text
    assert "a library warning" in text


def test_json_lines_and_stderr_for_services(tmp_path: Path, capfd: pytest.CaptureFixture[str], clean_root: object) -> None:
    settings = SimpleNamespace(log_dir=tmp_path / "logs", log_format="json", log_level="INFO")
    path = setup_logging(settings, console=False)
    setup_logging(settings, console=False)  # idempotent: still one file handler and one stderr handler
    logging.getLogger("bot.svc").info("table %d started", 7)
    err = capfd.readouterr().err
    assert err.count("table 7 started") == 1
    [line] = [json.loads(x) for x in path.read_text().splitlines() if "table 7" in x]
    assert line["level"] == "INFO" and line["logger"] == "bot.svc" and line["message"] == "table 7 started"
    assert line["time"].endswith("+00:00")
