"""`hushtable run` as an operator meets it: the real command in a subprocess, one clear line for each
mistake (exit status 2), one line per attempt while a platform cannot be reached, and one line per
surface on a healthy start. Discord and Slack are the local fakes (refusing tokens, or a closed port
for an outage)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.bot.discord.fake_discord import FakeDiscord
from tests.bot.slack.fake_slack import FakeSlack

ROOT = Path(__file__).resolve().parents[2]
# The bots these tests start read the vocabulary matrices filled once for the run (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("warm_caches")
SETTING_PREFIXES = ("HUSHTABLE_", "DISCORD_", "SLACK_")


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The test's environment without any setting of the caller's, a database in ``tmp_path``, AI-free agents."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(SETTING_PREFIXES)}
    env.update(PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1",
               HUSHTABLE_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'hush.db'}",
               HUSHTABLE_DEFAULT_AGENT="random", HUSHTABLE_FALLBACK_AGENT="random",
               HUSHTABLE_AGENT_CHOICES="random", HUSHTABLE_SNEAK_EVALUATORS="embed:minilm",
               HUSHTABLE_LOG_DIR=str(tmp_path / "logs"))
    env.update(extra)
    return env


class Run:
    """A running `hushtable run`: its output lines (stdout and stderr merged) as they come."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._reader = asyncio.create_task(self._read())
        self._more = asyncio.Event()

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.lines.append(line.decode("utf-8", "replace").rstrip("\n"))
            self._more.set()
        self._more.set()

    async def wait_for(self, pred: Callable[[list[str]], bool], timeout: float = 90) -> None:
        async def loop() -> None:
            while not pred(self.lines):
                if self._reader.done():
                    raise AssertionError("hushtable run ended first:\n" + self.text)
                self._more.clear()
                await self._more.wait()
        await asyncio.wait_for(loop(), timeout)

    async def exit_code(self, timeout: float = 120) -> int:
        rc = await asyncio.wait_for(self.proc.wait(), timeout)
        await self._reader
        return rc

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._reader, 5)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def said(self) -> list[str]:
        """The lines but the model-loading progress (a warm-up may start with the services)."""
        return [ln for ln in self.lines if "models.bundled: " not in ln]


@contextlib.asynccontextmanager
async def hushtable_run(tmp_path: Path, env: dict[str, str], *args: str) -> AsyncIterator[Run]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", *args, cwd=tmp_path, env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    run = Run(proc)
    try:
        yield run
    finally:
        await run.stop()


async def refused(tmp_path: Path, env: dict[str, str], *args: str) -> list[str]:
    """Run to the end; the start must be refused with exit status 2 and no traceback."""
    async with hushtable_run(tmp_path, env, *args) as run:
        rc = await run.exit_code()
    assert rc == 2, run.text
    assert "Traceback" not in run.text, run.text
    return run.said


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once the socket is closed


# --------------------------------------------------------------------------- settings

async def test_bad_settings_get_one_line_each_naming_the_setting(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("HUSHTABLE_FALLBAK_AGENT=random\n")  # a typo in .env counts too
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_TURN_DEADLINE_S="abc",
                                             HUSHTABLE_DEADLINE_POLICY="takover", HUSHTABLE_OPS_PORT="abc",
                                             HUSHTABLE_DEFAULT_AGNET="random"))
    assert len(lines) == 5, lines
    text = "\n".join(lines)
    assert "HUSHTABLE_FALLBAK_AGENT is not a setting; did you mean HUSHTABLE_FALLBACK_AGENT?" in text
    assert "HUSHTABLE_TURN_DEADLINE_S must be a number" in text
    assert "HUSHTABLE_DEADLINE_POLICY" in text and "did you mean 'takeover'" in text
    assert "HUSHTABLE_OPS_PORT must be a whole number" in text
    assert "HUSHTABLE_DEFAULT_AGNET is not a setting; did you mean HUSHTABLE_DEFAULT_AGENT?" in text


async def test_a_mistyped_platform_or_hushtable_key_is_one_line_with_a_suggestion(tmp_path: Path) -> None:
    """A typo in a Discord or Slack key (read without the HUSHTABLE_ prefix) is caught like a HUSHTABLE_ one, in
    .env and in the environment alike; another program's DISCORD_ or SLACK_ variable is left alone."""
    (tmp_path / ".env").write_text("DISCORD_TOKN=abc\nHUSHTABLE_DEFALT_AGENT=random\nSLACK_WEBHOOK_URL=https://example.invalid/x\n")
    lines = await refused(tmp_path, base_env(tmp_path, SLACK_BOT_TOKN="xoxb-1", DISCORD_WEBHOOK_URL="https://example.invalid/y"))
    assert sorted(lines) == [
        "hushtable: DISCORD_TOKN is not a setting; did you mean DISCORD_TOKEN?",
        "hushtable: HUSHTABLE_DEFALT_AGENT is not a setting; did you mean HUSHTABLE_DEFAULT_AGENT?",
        "hushtable: SLACK_BOT_TOKN is not a setting; did you mean SLACK_BOT_TOKEN?",
    ], lines
    assert "abc" not in "\n".join(lines) and "xoxb-1" not in "\n".join(lines)  # the values are never echoed


async def test_bad_agents_json_is_one_line(tmp_path: Path) -> None:
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_AGENTS='{"llm:big": '))
    assert len(lines) == 1 and "HUSHTABLE_AGENTS is not valid JSON" in lines[0], lines


async def test_agent_and_evaluator_names_are_checked_at_start(tmp_path: Path) -> None:
    lines = await refused(tmp_path, base_env(
        tmp_path, DISCORD_TOKEN="t", HUSHTABLE_DEFAULT_AGENT="llm:nope", HUSHTABLE_FALLBACK_AGENT="nope",
        HUSHTABLE_AGENT_CHOICES="llm:default,bogus", HUSHTABLE_SNEAK_EVALUATORS="embed:nope"))
    text = "\n".join(lines)
    assert len(lines) == 1 and "HUSHTABLE_SNEAK_EVALUATORS: 'embed:nope'" in text, lines  # checked before the store opens
    lines = await refused(tmp_path, base_env(
        tmp_path, DISCORD_TOKEN="t", HUSHTABLE_DEFAULT_AGENT="llm:nope", HUSHTABLE_FALLBACK_AGENT="nope",
        HUSHTABLE_AGENT_CHOICES="llm:default,bogus"))
    text = "\n".join(lines)
    assert len(lines) == 3, lines
    assert "HUSHTABLE_AGENT_CHOICES: there is no agent called 'bogus'" in text
    assert "HUSHTABLE_DEFAULT_AGENT: there is no agent called 'llm:nope'" in text
    assert "HUSHTABLE_FALLBACK_AGENT: there is no agent called 'nope'" in text


async def test_the_console_without_a_terminal_says_so_instead_of_exiting_0(tmp_path: Path) -> None:
    lines = await refused(tmp_path, base_env(tmp_path))
    assert len(lines) == 1 and "console needs a terminal" in lines[0], lines
    assert "Your name" not in "\n".join(lines)


@pytest.mark.parametrize(("extra", "expected"), [
    ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_APP_TOKEN is missing"),
    ({"SLACK_APP_TOKEN": "xapp-1"}, "SLACK_BOT_TOKEN is missing"),
    ({"SLACK_BOT_TOKEN": "xoxb-1", "HUSHTABLE_SLACK_MODE": "http"}, "needs SLACK_SIGNING_SECRET"),
])
async def test_half_a_slack_configuration_is_an_error_never_a_silent_console(
        tmp_path: Path, extra: dict[str, str], expected: str) -> None:
    lines = await refused(tmp_path, base_env(tmp_path, **extra))
    assert len(lines) == 1 and expected in lines[0], lines


# --------------------------------------------------------------------------- the database

@pytest.mark.parametrize(("url", "expected"), [
    ("hushtable.db", "is not a database URL"),
    ("sqlite+aiosqlite:///{tmp}/missing/x.db", "does not exist; create it"),
    ("sqlite+aiosqlite:///{tmp}/afile/x.db", "which is a file, not a folder"),
    ("sqlite+aiosqlite:///data/x/README.md/x.db", "does not exist; create it"),
    ("sqlite+aiosqlite:////proc/hushtable.db", "HUSHTABLE_DATABASE_URL"),
    ("postgresql+asyncpg://hush:s3cretpw@127.0.0.1:{port}/hush", "cannot reach the database server"),
])
async def test_database_mistakes_are_one_line_and_create_nothing(tmp_path: Path, url: str, expected: str) -> None:
    (tmp_path / "afile").write_text("not a folder")
    url = url.format(tmp=tmp_path, port=closed_port())
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_DATABASE_URL=url))
    assert len(lines) == 1 and expected in lines[0], lines
    assert "s3cretpw" not in lines[0]
    assert not (tmp_path / "missing").exists() and not (tmp_path / "data").exists()


async def test_an_ops_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_OPS_PORT=str(port)))
    assert len(lines) == 1 and f"HUSHTABLE_OPS_PORT: cannot listen on 127.0.0.1:{port}" in lines[0], lines


# --------------------------------------------------------------------------- Discord

@pytest.fixture
async def discord_fake() -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    yield server
    await server.close()


def discord_env(tmp_path: Path, api: str, gateway: str = "ws://127.0.0.1:9/gateway") -> dict[str, str]:
    return base_env(tmp_path, DISCORD_TOKEN="abc", HUSHTABLE_DISCORD_API_URL=api, HUSHTABLE_DISCORD_GATEWAY_URL=gateway)


async def test_a_token_discord_refuses_is_one_line(tmp_path: Path, discord_fake: FakeDiscord) -> None:
    discord_fake.refuse_token()
    lines = await refused(tmp_path, discord_env(tmp_path, discord_fake.api))
    assert len(lines) == 1 and "DISCORD_TOKEN was refused by Discord" in lines[0], lines
    assert discord_fake.faulted, "the token was checked against the (fake) Discord"


async def test_discord_unreachable_retries_with_one_line_per_attempt(tmp_path: Path) -> None:
    env = discord_env(tmp_path, f"http://127.0.0.1:{closed_port()}/api/v10")
    async with hushtable_run(tmp_path, env) as run:
        await run.wait_for(lambda lines: sum("attempt 2 failed" in ln for ln in lines) == 1)
        assert run.proc.returncode is None, "an outage is retried, not fatal"
        run.proc.send_signal(signal.SIGTERM)  # docker stop, systemctl stop: a clean exit
        assert await run.exit_code() == 0, run.text
    attempts = [ln for ln in run.lines if "cannot reach Discord" in ln]
    assert len(attempts) >= 2 and "connection refused); attempt 1 failed, retrying in 1 s" in attempts[0]
    assert run.said[-1] == "hushtable: stopped (SIGTERM)", run.text
    assert len(run.said) == len(attempts) + 1, run.text  # nothing else: no traceback, no voice warning
    assert "Traceback" not in run.text


async def test_a_healthy_discord_start_says_what_runs(tmp_path: Path, discord_fake: FakeDiscord) -> None:
    async with hushtable_run(tmp_path, discord_env(tmp_path, discord_fake.api, discord_fake.gateway)) as run:
        await run.wait_for(lambda lines: any(ln.startswith("hushtable: SNEAK evaluators:") for ln in lines))
        await discord_fake.wait_for(lambda: discord_fake.identifies >= 1, timeout=60)
    surface = [ln for ln in run.lines if ln.startswith("hushtable: ")]
    assert surface[:4] == [
        "hushtable: platforms: discord (as hushtable)",
        f"hushtable: database: sqlite+aiosqlite:///{tmp_path / 'hush.db'}",
        "hushtable: agents: random (default random, fallback random)",
        "hushtable: SNEAK evaluators: embed:minilm",
    ], run.text
    assert "PyNaCl" not in run.text and "Traceback" not in run.text, run.text


# --------------------------------------------------------------------------- Slack

@pytest.fixture
async def slack_fake() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    await server.start()
    yield server
    await server.close()


def slack_env(tmp_path: Path, api: str) -> dict[str, str]:
    return base_env(tmp_path, SLACK_BOT_TOKEN="xoxb-abc", SLACK_APP_TOKEN="xapp-abc", HUSHTABLE_SLACK_API_URL=api)


@pytest.mark.parametrize(("method", "setting"), [("auth.test", "SLACK_BOT_TOKEN"),
                                                  ("apps.connections.open", "SLACK_APP_TOKEN")])
async def test_a_token_slack_refuses_is_one_line(tmp_path: Path, slack_fake: FakeSlack, method: str, setting: str) -> None:
    slack_fake.refuse_token(method)
    lines = await refused(tmp_path, slack_env(tmp_path, slack_fake.api_url))
    assert len(lines) == 1 and f"{setting} was refused by Slack (invalid_auth)" in lines[0], lines


async def test_slack_unreachable_retries_with_one_line_per_attempt(tmp_path: Path) -> None:
    env = slack_env(tmp_path, f"http://127.0.0.1:{closed_port()}/api/")
    async with hushtable_run(tmp_path, env) as run:
        await run.wait_for(lambda lines: sum("attempt 2 failed" in ln for ln in lines) == 1)
    attempts = [ln for ln in run.lines if "cannot reach Slack" in ln]
    assert len(attempts) >= 2 and "connection refused); attempt 1 failed" in attempts[0], run.text
    assert run.said[len(attempts):] in ([], ["hushtable: stopped (SIGTERM)"]), run.text
    assert "Traceback" not in run.text


async def test_a_healthy_slack_start_says_what_runs_and_nothing_else(tmp_path: Path, slack_fake: FakeSlack) -> None:
    async with hushtable_run(tmp_path, slack_env(tmp_path, slack_fake.api_url)) as run:
        await run.wait_for(lambda lines: any(ln.startswith("hushtable: SNEAK evaluators:") for ln in lines))
        await slack_fake.wait_for(lambda: slack_fake._socket is not None, timeout=60)
    assert run.said[0] == "hushtable: platforms: slack (socket mode, workspace Hush)", run.text
    assert "will be unused" not in run.text and "Traceback" not in run.text, run.text
    assert [m for m in (c.method for c in slack_fake.calls) if m == "auth.test"], "the bot token was checked"


async def test_stopping_waits_for_every_surface_to_clean_up() -> None:
    # The scheduler gives up its lease in its clean-up, after the chat adapter has already ended: the
    # store closes only once both are done (it closed under the scheduler, whose cancelled rollback
    # then logged a traceback after "stopped").
    from bot.app import serve_all

    done: list[str] = []

    async def adapter() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            done.append("adapter")

    async def scheduler() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.2)  # the lease's release, in the database
            done.append("scheduler")

    main = asyncio.create_task(serve_all([adapter(), scheduler()]))
    await asyncio.sleep(0.05)
    main.cancel()
    with pytest.raises(asyncio.CancelledError):
        await main
    assert sorted(done) == ["adapter", "scheduler"]


async def test_a_failing_surface_stops_the_others_and_is_raised() -> None:
    from bot.app import serve_all

    stopped: list[str] = []

    async def console() -> None:
        raise RuntimeError("the console broke")

    async def scheduler() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.append("scheduler")

    with pytest.raises(RuntimeError, match="the console broke"):
        await serve_all([console(), scheduler()])
    assert stopped == ["scheduler"]
