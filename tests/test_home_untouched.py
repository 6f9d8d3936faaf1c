"""Nothing is written in the home folder: with HOME an empty folder (and no XDG_CACHE_HOME or MPLCONFIGDIR to
lean on), the console's start-up and a game of each menu game, a tournament, the clue scores and their report
(matplotlib's plot), an export and the inference worker leave it empty. Caches go under the model cache
(HUSHTABLE_MODEL_CACHE, pointed here at the suite's own so nothing is converted again) or the data folder."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pexpect

from bot.console.app import game_menu
from bot.settings import default_model_cache
from tests.conformance.test_console import play
from tests.seeds import bot_env

ROOT = Path(__file__).resolve().parents[1]


def _env(tmp_path: Path, home: Path) -> dict[str, str]:
    env = bot_env({"HOME": str(home), "HUSHTABLE_MODEL_CACHE": str(default_model_cache()),
                   "HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/h.db", "HUSHTABLE_LOG_DIR": str(tmp_path / "logs"),
                   "HUSHTABLE_DEFAULT_AGENT": "random", "HUSHTABLE_FALLBACK_AGENT": "random",
                   "HUSHTABLE_AGENT_CHOICES": "random,embed:minilm", "DISCORD_TOKEN": "", "SLACK_BOT_TOKEN": "",
                   "PYTHONUNBUFFERED": "1"})
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "MPLCONFIGDIR"):
        env.pop(name, None)
    return env


def test_nothing_lands_in_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = _env(tmp_path, home)

    child = pexpect.spawn(sys.executable, ["-m", "bot.cli", "run"], cwd=str(work), env=env, encoding="utf-8",
                          timeout=240, dimensions=(50, 200))
    child.ptyproc.delayafterterminate = 5.0
    try:
        child.expect("Your name")
        child.sendline("Ann")
        for number, d in enumerate(game_menu(), start=1):
            child.expect("game> ")
            child.sendline(str(number))
            if len(d.variants) > 1:
                child.expect(r"variant \(")
                child.sendline("")
            play(child, "Ann")
            child.sendline("")  # Enter at "Play again?": the menu
        child.expect("game> ")
        child.sendline("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)

    def cli(*args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "bot.cli", *args], cwd=work, env=env, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, (args, out.stderr[-2000:])
        return out.stdout

    cli("tournament", "create", "--game", "chameleon", "--seats", "4", "--seed", "4", "--name", "home")
    cli("tournament", "run", "1")
    cli("sneak", "score", "-e", "embed:minilm")
    assert "utility_leakage.png" in cli("sneak", "report", "--out", str(tmp_path / "report"))
    cli("export", "--out", str(tmp_path / "games.jsonl"))

    worker = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker", "--port", "0"], cwd=work, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert worker.stdout is not None
        for line in worker.stdout:
            if "listening on" in line:
                break
        else:
            raise AssertionError("the worker ended before it listened")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=120)

    left = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert left == [], f"written in the home folder: {left}"
