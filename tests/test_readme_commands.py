"""Every command README.md shows exists and runs: each `hushtable ...` command path answers --help, and
each command line shown runs whole here as typed, by the installed script in a fresh folder (the
simulations, then a tournament and every research and operator command on the log it fills, the web
view and its link), or is listed with the reason it cannot (platform tokens, a GPU, the package
registries, the interactive console, minutes of inference, a placeholder); each verb of the console's
table (bot/console/commands.py, driven in tests/bot/console/test_console_commands.py) and each make
target. The README stays a guide of at most 350 lines; measurements live in docs/benchmarks.md."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.console.commands import lookup
from bot.settings import default_model_cache

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CODE = "\n".join(re.findall(r"`([^`\n]+)`", README) + re.findall(r"```(?:sh|text)?\n(.*?)```", README, flags=re.S))
COMMANDS = sorted({m.group(1).strip() for m in re.finditer(r"(?<![/\w])(?:\.venv/bin/)?hushtable((?: [a-z][\w-]*)+)", CODE)})


def test_the_readme_is_a_guide_of_at_most_350_lines() -> None:
    assert len(README.splitlines()) <= 350
    assert "(docs/benchmarks.md)" in README and (ROOT / "docs" / "benchmarks.md").is_file()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_hushtable_command_in_the_readme_exists(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"])
    assert result.exit_code == 0 and "Usage" in result.output, (command, result.output[-1500:])


def test_every_console_verb_in_the_readme_is_a_console_command() -> None:
    table = README.split("| at the console | what it does |", 1)[1].split("\n\n", 1)[0]
    verbs = {v for cell in re.findall(r"^\| (.+?) \|", table, flags=re.M) for v in re.findall(r"`(\w[\w-]*)", cell)}
    assert verbs >= {"play", "join", "leave", "ai", "deadline", "start", "abort", "status", "list", "rules", "show", "export", "help", "quit"}
    assert all(lookup(v) is not None for v in verbs), [v for v in verbs if lookup(v) is None]


def test_every_make_target_in_the_readme_exists() -> None:
    targets = set(re.findall(r"^([a-z]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M))
    shown = set(re.findall(r"\bmake ([a-z]+)\b", CODE))
    assert shown and shown <= targets, shown - targets



# --------------------------------------------------------------------------- README commands run whole

def _shown_commands() -> list[str]:
    """Every command line README.md shows, as typed: each line of a ``sh`` block (its ``#`` comment dropped)
    and each inline code span (one that wraps a line read as one line) that starts, after any
    ``NAME=value`` settings, with ``hushtable``, ``make`` or ``pip``; ``.venv/bin/`` dropped."""
    blocks = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
    prose = re.sub(r"```.*?```", "", README, flags=re.S)
    lines = [re.split(r"\s+#", line, maxsplit=1)[0] for block in blocks for line in block.splitlines()]
    lines += [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]
    command = re.compile(r"^(?:[A-Z_]+=\S+ )*(?:\.venv/bin/)?(?:hushtable|make|pip)(?: |$)")
    return sorted({line.strip().replace(".venv/bin/", "") for line in lines if command.match(line.strip())})


SHOWN = _shown_commands()
HUSHTABLE = Path(sys.executable).parent / "hushtable"  # the script `make install` puts in .venv/bin
_PASSED = {k: os.environ[k] for k in ("PYTHONPYCACHEPREFIX",) if k in os.environ}  # make test's byte-code folder

# The commands that run whole below, in the order a newcomer types them (each later one reads the log the
# tournament wrote in the folder the commands start in).
SIMS = ("hushtable sim spymasters", "hushtable sim decrypto --json", "hushtable sim spymasters -n 6")
RESEARCH = (
    "hushtable tournament create --game decrypto --variant benchmark --games 2 --name nightly", "hushtable tournament run 1",
    "hushtable export --out games.jsonl", "hushtable replay games.jsonl", "hushtable stats",
    "hushtable sneak score -e embed:minilm", "hushtable sneak report --out report/", "hushtable doctor", "hushtable audit",
    "hushtable backup backups/hushtable.db", "hushtable web --port 8080", "hushtable web link [--tenant T] [--game N]",
)
SKIPPED = {
    "make": "the tool's name in prose, not a command",
    "make install": "installs from the package registries, which the tests cannot reach",
    "make run": "opens the interactive console (tests/test_home_untouched.py drives it in a pseudo-terminal)",
    "make test": "the whole suite, this test among it",
    "make test PYTEST_WORKERS=0": "the whole suite, this test among it",
    "make images": "builds container images with podman for minutes",
    "make bench": "the benchmarks run for minutes",
    "pip install 'hushtable[postgres]'": "installs from the package registries, which the tests cannot reach",
    "hushtable run": "the bot itself: platform tokens or the interactive console (tests/bot/test_startup.py, tests/test_home_untouched.py)",
    "hushtable run --hotseat": "the interactive console (tests/bot/console/ drives the hot-seat mode)",
    "HUSHTABLE_DEAL_SEED=<number> hushtable run": "a placeholder, and the bot itself (tests/bot/test_startup.py)",
    "HUSHTABLE_WORKER_URL=http://127.0.0.1:8100 make run": "needs the worker on a GPU and opens the interactive console",
    "hushtable worker --model default --device cuda --port 8100": "needs a CUDA GPU (tests/test_home_untouched.py starts a worker on the CPU)",
    "hushtable sim --json": "names an option in prose; `hushtable sim decrypto --json` runs whole here",
    "hushtable data export|forget --member PLATFORM:ID": "a template of two commands and a placeholder (tests/test_cli_people.py runs both)",
    "hushtable db copy --from sqlite:///hushtable.db --to postgresql://...":
        "the target is a placeholder for a PostgreSQL server (tests/ops/test_dbcopy.py copies into one)",
    "hushtable tom": "a command group named in prose; its experiments ask language models for minutes (tests/research/)",
    "hushtable deep": "named in prose; it needs a language model agent and a judge, minutes of inference (tests/research/test_deep.py)",
    "hushtable spygame": "a command group named in prose; its protocols ask language models for minutes (tests/research/)",
    "hushtable sneak agreement --human": "reads the human study's answers, which members give over days (tests/eval/test_human_agreement.py)",
    "hushtable sneak bias": "named in prose; minutes of embedding on two cores (tests/eval/test_bias.py runs it small)",
    "hushtable sneak relations": "named in prose; minutes of embedding on two cores (tests/eval/test_relations.py runs it small)",
    "hushtable eval decrypto-refine": "named in prose; minutes of games per budget (tests/research/test_decrypto_refine.py runs it small)",
}


def test_every_readme_command_runs_whole_here_or_says_why_not() -> None:
    runs = set(SIMS) | set(RESEARCH)
    assert not runs & set(SKIPPED)
    unknown = sorted(set(SHOWN) - runs - set(SKIPPED))
    assert not unknown, f"README shows commands this test neither runs nor skips with a reason: {unknown}"
    gone = sorted((runs | set(SKIPPED)) - set(SHOWN))
    assert not gone, f"README no longer shows these; drop them here: {gone}"


def _run(line: str, folder: Path) -> str:
    """One README command line, as typed, by the installed ``hushtable`` script in ``folder``: its own
    ``hushtable.db`` there, as on a first start. The agents are the fast two, so a tournament takes seconds."""
    args = [a for a in shlex.split(line) if not (a.startswith("[") or a.endswith("]"))]  # optional parts left out
    assert args[0] == "hushtable"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), "COLUMNS": "200",
           "HUSHTABLE_MODEL_CACHE": str(default_model_cache()), "MPLCONFIGDIR": str(default_model_cache() / "matplotlib"),
           "HUSHTABLE_AGENT_CHOICES": "random,embed:minilm", "HUSHTABLE_DEFAULT_AGENT": "random",
           "HUSHTABLE_FALLBACK_AGENT": "random", **_PASSED}
    out = subprocess.run([str(HUSHTABLE), *args[1:]], cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "Traceback" not in out.stderr, (line, out.stdout[-2000:], out.stderr[-3000:])
    return out.stdout + out.stderr  # some commands say what they wrote on stderr


@pytest.mark.parametrize("line", SIMS)
def test_the_first_commands_play_a_whole_game(line: str, tmp_path: Path) -> None:
    out = _run(line, tmp_path)
    if "--json" in line:
        records = [json.loads(x) for x in out.splitlines()]
        events = [r for r in records if r["type"] == "event"]
        assert records[0]["game"] == "decrypto" and events and all("audience" in e for e in events)  # who may see it
    else:
        assert "RESULT:" in out
        assert ("Player 6" in out) == ("-n 6" in line)
    assert not (tmp_path / "hushtable.db").exists()  # a simulation logs nothing


@pytest.mark.usefixtures("warm_caches")
def test_the_research_commands_run_whole_on_the_log_they_fill(tmp_path: Path) -> None:
    create, run, export, replay, stats, score, report, doctor, audit, backup, web, link = RESEARCH
    assert "created #1 nightly: decrypto (benchmark)" in _run(create, tmp_path)
    board = _run(run, tmp_path)
    assert "random" in board and "embed:minilm" in board
    assert re.search(r"exported (\d+) game", _run(export, tmp_path))
    games = (tmp_path / "games.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(games) == 4  # --games 2: two repetitions of both seatings
    assert "game 4 (line 4): decrypto (benchmark)" in _run(replay, tmp_path)
    assert "decrypto (benchmark)" in _run(stats, tmp_path)
    counted = re.search(r"(\d+) game\(s\), (\d+) message\(s\)", _run(score, tmp_path))
    assert counted is not None and int(counted.group(1)) == 4 and int(counted.group(2)) > 0
    assert "utility_leakage.png" in _run(report, tmp_path) and (tmp_path / "report" / "utility_leakage.png").is_file()
    assert "all games are healthy" in _run(doctor, tmp_path)
    assert "export" in _run(audit, tmp_path)
    assert "To restore" in _run(backup, tmp_path) and (tmp_path / "backups" / "hushtable.db").is_file()
    # The web view as shown, on a port the system picks (8080 may be another program's on a test machine),
    # and the link it prints opening the tournament's games.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), **_PASSED}
    site = subprocess.Popen([str(HUSHTABLE), *shlex.split(web)[1:-1], "0"], cwd=tmp_path, env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert site.stderr is not None
        found = re.search(r"web view on http://[\d.]+:(\d+)", site.stderr.readline())
        assert found, "the web view did not start"
        assert re.search(r"^console: http://\S+/s/\S+/$", _run(link, tmp_path), flags=re.M)
        shown = re.search(r"^console: (http://\S+/s/\S+/)$", _run(f"{link} --port {found.group(1)}", tmp_path), flags=re.M)
        assert shown is not None
        url = shown.group(1)
        with urllib.request.urlopen(url, timeout=60) as page:  # noqa: S310 - our own server on loopback
            assert page.status == 200 and "decrypto" in page.read().decode("utf-8").lower()
    finally:
        site.terminate()
        site.wait(30)
