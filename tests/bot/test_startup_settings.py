"""`hushtable run` and `hushtable worker` meeting the mistakes of a community's first week: each setting,
flag and port refused with one line naming it and exit status 2, before anything says the bot runs;
a platform's outage page retried; no password on the screen. Real commands in subprocesses."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bot.fakeserver import Fault
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.test_startup import ROOT, base_env, closed_port, hushtable_run, refused

# The bots these tests start read the vocabulary matrices filled once for the run (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("warm_caches")


def cli(tmp_path: Path, env: dict[str, str], *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The command was refused in exactly one line (exit 2, no traceback); that line."""
    out = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, out)
    assert "Traceback" not in proc.stderr + proc.stdout, out
    assert len(out) == 1, out
    return out[0]


# --------------------------------------------------------------------------- settings

async def test_settings_out_of_range_are_one_line_each(tmp_path: Path) -> None:
    lines = await refused(tmp_path, base_env(
        tmp_path, DISCORD_TOKEN="t", HUSHTABLE_AI_TIMEOUT_S="0", HUSHTABLE_AI_RETRIES="-5",
        HUSHTABLE_ADMIN_USERS="discord:1,1234", HUSHTABLE_WORKER_URL="notaurl", HUSHTABLE_EXPORT_SECRET="x",
        HUSHTABLE_DISCORD_SHARDS="0-99999999/100000000", HUSHTABLE_OPS_HOST="999.1.1.1"))
    text = "\n".join(lines)
    assert len(lines) == 7, lines
    assert "HUSHTABLE_AI_TIMEOUT_S must be more than 0" in text
    assert "HUSHTABLE_AI_RETRIES must be at least 0" in text
    assert "HUSHTABLE_ADMIN_USERS: '1234' names no platform; write each admin as discord:<user id>" in text
    assert "HUSHTABLE_WORKER_URL: 'notaurl' is not a worker URL" in text
    assert "HUSHTABLE_EXPORT_SECRET: the key is too short" in text
    assert "HUSHTABLE_DISCORD_SHARDS='0-99999999/100000000': at most 16384 shards" in text
    assert "HUSHTABLE_OPS_HOST: '999.1.1.1' is not an IPv4 address" in text
    assert "Value error" not in text and "DATABASE_URL" not in text


async def test_privacy_settings_are_one_line_each(tmp_path: Path) -> None:
    lines = await refused(tmp_path, base_env(
        tmp_path, DISCORD_TOKEN="t", HUSHTABLE_PRIVACY_CONTACT="call Bob", HUSHTABLE_RESEARCH_CONSENT="maybe",
        HUSHTABLE_RETENTION_DAYS="0"))
    text = "\n".join(lines)
    assert len(lines) == 3, lines
    assert "HUSHTABLE_PRIVACY_CONTACT: give an e-mail address or a web address" in text
    assert "HUSHTABLE_RESEARCH_CONSENT" in text and "opt-in" in text
    assert "HUSHTABLE_RETENTION_DAYS must be at least 1" in text


async def test_folders_and_shards_that_cannot_work_name_their_setting(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder")
    lines = await refused(tmp_path, base_env(
        tmp_path, DISCORD_TOKEN="t", HUSHTABLE_MODEL_CACHE="/proc/nowhere", HUSHTABLE_LOG_DIR=str(tmp_path / "afile" / "logs")))
    assert len(lines) == 2, lines
    assert lines[0].startswith("hushtable: HUSHTABLE_LOG_DIR: ") and "afile, which is not a folder" in lines[0], lines
    assert lines[1].startswith("hushtable: HUSHTABLE_MODEL_CACHE: cannot create /proc/nowhere"), lines
    assert not Path("/proc/nowhere").exists()
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_DISCORD_SHARDS="abc"))
    assert lines == ["hushtable: HUSHTABLE_DISCORD_SHARDS='abc': write the shards of the total, as '0-3/8', '5/8' or 'auto'"]


async def test_a_fifo_as_env_file_or_log_file_is_refused_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".env")
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t"))
    assert len(lines) == 1 and ".env is not a regular file" in lines[0], lines
    (tmp_path / ".env").unlink()
    (tmp_path / "logs").mkdir()
    os.mkfifo(tmp_path / "logs" / "hushtable.log")
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t"))
    assert len(lines) == 1 and lines[0].startswith("hushtable: HUSHTABLE_LOG_DIR: ") and "not a regular file" in lines[0], lines


async def test_a_worker_url_with_a_password_is_refused_and_the_password_never_shown(tmp_path: Path) -> None:
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_WORKER_TOKEN="tok-123456789",
                                             HUSHTABLE_WORKER_URL="http://bob:hunter2pw@127.0.0.1:8100"))
    assert len(lines) == 1 and "HUSHTABLE_WORKER_URL: a worker URL carries no user name or password" in lines[0], lines
    assert "hunter2pw" not in "\n".join(lines)


@pytest.mark.parametrize("url", ["postgresql+asyncpg://hush:s3cretpw@127.0.0.1:{port}/hush?sslmode=disable",
                                 "postgresql+asyncpg://hush@127.0.0.1:{port}/hush?password=s3cretpw",
                                 "hush:s3cretpw@127.0.0.1:{port}/hush"])
async def test_no_database_password_on_the_screen(tmp_path: Path, url: str) -> None:
    url = url.format(port=closed_port())
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_DATABASE_URL=url))
    assert len(lines) == 1 and "HUSHTABLE_DATABASE_URL" in lines[0], lines
    assert "s3cretpw" not in lines[0], lines
    doctor = cli(tmp_path, base_env(tmp_path), "doctor", "--database", url)
    assert doctor.returncode == 2 and "s3cretpw" not in doctor.stdout + doctor.stderr, doctor.stderr
    assert "Traceback" not in doctor.stderr and len(doctor.stderr.strip().splitlines()) == 1, doctor.stderr


def test_a_setting_wrong_for_a_cli_command_is_one_line_naming_it(tmp_path: Path) -> None:
    line = one_line(cli(tmp_path, base_env(tmp_path, HUSHTABLE_AI_RETRIES="-5"), "doctor"))
    assert line.startswith("error: HUSHTABLE_AI_RETRIES must be at least 0"), line


# --------------------------------------------------------------------------- ports

def _busy() -> socket.socket:
    s = socket.socket()
    s.bind(("0.0.0.0", 0))
    s.listen()
    return s


async def test_a_slack_http_port_in_use_is_one_line_before_anything_runs(tmp_path: Path) -> None:
    with _busy() as busy:
        port = busy.getsockname()[1]
        lines = await refused(tmp_path, base_env(
            tmp_path, SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="s" * 32, HUSHTABLE_SLACK_MODE="http",
            HUSHTABLE_SLACK_PORT=str(port), HUSHTABLE_SLACK_API_URL=f"http://127.0.0.1:{closed_port()}/api/"))
    assert len(lines) == 1 and f"HUSHTABLE_SLACK_PORT: cannot listen on 0.0.0.0:{port}" in lines[0], lines


async def test_an_ops_host_not_of_this_machine_is_blamed_on_the_host(tmp_path: Path) -> None:
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_OPS_HOST="192.0.2.1",
                                             HUSHTABLE_OPS_PORT="0"))
    assert len(lines) == 1 and lines[0].startswith("hushtable: HUSHTABLE_OPS_HOST: cannot listen on 192.0.2.1:0"), lines


WORKER_FLAGS = [
    (["--max-batch", "0"], "--max-batch must be between 1 and 256, not 0"),
    (["--dtype", "float8"], "--dtype 'float8' is not supported; use one of float32, bfloat16, float16"),
    (["--model", "{tmp}"], "holds no model (no config.json)"),
    (["--port", "99999"], "'--port': Input should be less than or equal to 65535"),
    (["--max-wait-ms", "nan"], "--max-wait-ms must be a number of milliseconds from 0 to 10000, not nan"),
]


def test_worker_flags_are_one_line(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def attempt(flags: list[str]) -> subprocess.CompletedProcess[str]:
        return cli(tmp_path, base_env(tmp_path), "worker", *[f.format(tmp=tmp_path) for f in flags])

    with ThreadPoolExecutor(len(WORKER_FLAGS)) as pool:  # five starts at once: the suite stays short
        done = list(pool.map(attempt, [flags for flags, _ in WORKER_FLAGS]))
    for proc, (flags, expected) in zip(done, WORKER_FLAGS, strict=True):
        line = one_line(proc)
        assert expected in line, (flags, line)


def test_a_worker_port_in_use_is_one_line_before_the_model_loads(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = one_line(cli(tmp_path, base_env(tmp_path), "worker", "--model", "fake", "--port", str(port)))
    assert line == f"Error: --port: cannot listen on 127.0.0.1:{port} (Address already in use); pick a free port, " \
                   "or stop what listens there.", line


# --------------------------------------------------------------------------- Slack's outage pages

@pytest.mark.parametrize(("status", "content_type", "body"), [
    (500, "text/html", "<html><body>Slack is down</body></html>"),
    (200, "text/plain", "upstream connect error"),
])
async def test_slack_answering_with_a_page_at_start_is_retried(tmp_path: Path, status: int, content_type: str, body: str) -> None:
    fake = FakeSlack()
    await fake.start()
    try:
        fake.faults.append(Fault(lambda _m, path: path == "/api/auth.test", body, status, content_type))
        env = base_env(tmp_path, SLACK_BOT_TOKEN="xoxb-abc", SLACK_APP_TOKEN="xapp-abc", HUSHTABLE_SLACK_API_URL=fake.api_url)
        async with hushtable_run(tmp_path, env) as run:
            await run.wait_for(lambda lines: any("attempt 1 failed" in ln for ln in lines), timeout=60)
            assert run.proc.returncode is None, run.text
            run.proc.send_signal(signal.SIGTERM)
            assert await run.exit_code() == 0, run.text
    finally:
        await fake.close()
    attempts = [ln for ln in run.said if "cannot reach Slack" in ln]
    assert attempts and "Slack answered" in attempts[0], run.text
    assert "this is a bug" not in run.text and "Traceback" not in run.text, run.text


# --------------------------------------------------------------------------- nothing after the one line

async def test_a_refused_token_is_the_last_line_and_no_model_was_loaded(tmp_path: Path) -> None:
    # Agents that play with both embedding models: they are built (and checked) before the token is,
    # but their models warm up only once the start has said what runs.
    fake = FakeSlack()
    await fake.start()
    try:
        fake.refuse_token("auth.test")
        env = base_env(tmp_path, SLACK_BOT_TOKEN="xoxb-abc", SLACK_APP_TOKEN="xapp-abc", HUSHTABLE_SLACK_API_URL=fake.api_url,
                       HUSHTABLE_DEFAULT_AGENT="strategist", HUSHTABLE_FALLBACK_AGENT="embed:minilm",
                       HUSHTABLE_AGENT_CHOICES="strategist,embed:minilm,embed:assoc,random")
        async with hushtable_run(tmp_path, env) as run:
            rc = await run.exit_code()
    finally:
        await fake.close()
    assert rc == 2 and run.lines == [run.lines[0]] and "SLACK_BOT_TOKEN was refused by Slack" in run.lines[0], run.lines
    log = (tmp_path / "logs" / "hushtable.log").read_text(encoding="utf-8")
    assert "loading model" not in log, log


@pytest.mark.skipif(shutil.which("make") is None or not (ROOT / ".venv" / "bin" / "hushtable").exists(),
                    reason="needs make and the checkout's .venv")
def test_make_run_says_a_refusal_once_plus_makes_own_line(tmp_path: Path) -> None:
    env = base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_AI_RETRIES="-5")
    # A user types `make run` at a shell: without the suite's own make (make test) around it, whose
    # MAKELEVEL would turn make's line into "make[1]: ...".
    for inherited in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"):
        env.pop(inherited, None)
    # -o: the install stamp counts as fresh (the test never reinstalls the checkout).
    proc = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "-o", ".venv/.installed", "run"], env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    out = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 2, out
    assert len(out) == 2 and out[0] == "hushtable: HUSHTABLE_AI_RETRIES must be at least 0, not '-5'", out
    assert out[1].startswith("make: *** [") and out[1].endswith("Error 2"), out

