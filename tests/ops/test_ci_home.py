"""CI runs `make test` through `.ci/in-empty-home`: with HOME a fresh empty folder, failing and
saying what when anything is left there. Checked here on tiny make targets (the whole suite is
what CI runs it on)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "in-empty-home"

MAKEFILE = """\
clean:
\t@test -z "$$(ls -A "$$HOME")" && echo "home $$HOME"
dirty:
\t@mkdir -p "$$HOME/.cache/pip" && touch "$$HOME/.cache/pip/wheel" "$$HOME/.netrc"
fails:
\t@exit 3
"""


def run(tmp_path: Path, target: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "Makefile").write_text(MAKEFILE, encoding="utf-8")
    return subprocess.run([str(SCRIPT), "make", "-s", target], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "real-home"), "TMPDIR": str(tmp_path)})


def test_ci_runs_make_test_in_an_empty_home() -> None:
    assert ".ci/in-empty-home make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_a_clean_run_passes_in_a_fresh_home_that_is_removed_after(tmp_path: Path) -> None:
    res = run(tmp_path, "clean")
    assert res.returncode == 0, res.stderr
    home = res.stdout.split("home ", 1)[1].split()[0]
    assert home != str(tmp_path / "real-home") and not Path(home).exists()


def test_anything_left_in_home_fails_the_run_and_is_named(tmp_path: Path) -> None:
    res = run(tmp_path, "dirty")
    assert res.returncode == 1
    assert "left 4 path(s) in HOME" in res.stderr
    for path in (".netrc", ".cache", ".cache/pip", ".cache/pip/wheel"):
        assert f"\n  {path}\n" in res.stderr + "\n", res.stderr
    assert not (tmp_path / "real-home").exists()


def test_a_failing_command_keeps_its_exit_status(tmp_path: Path) -> None:
    assert run(tmp_path, "fails").returncode == 2  # make's own status for a failed recipe


def _rustup_home(home: Path, **env: str) -> str:
    """RUSTUP_HOME as the project's Makefile hands it to every recipe, for a given HOME."""
    probe = subprocess.run(["make", "-s", "-C", str(ROOT), "--eval", 'probe: ; @echo "[$$RUSTUP_HOME]"', "probe"],
                           capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(home), **env})
    assert probe.returncode == 0, probe.stderr
    return probe.stdout.strip()[1:-1]


def test_the_makefile_keeps_rustups_settings_out_of_an_empty_home(tmp_path: Path) -> None:
    assert _rustup_home(tmp_path) == str(ROOT / ".hushtable" / "rustup")
    assert _rustup_home(tmp_path, RUSTUP_HOME="/opt/rustup") == "/opt/rustup"  # an operator's own setting holds
    (tmp_path / ".rustup").mkdir()
    assert _rustup_home(tmp_path) == ""  # a rustup already set up for this HOME is left as it is


@pytest.mark.skipif(shutil.which("rustc") is None, reason="pip asks rustc only where one is on the PATH")
def test_pips_user_agent_leaves_an_empty_home_empty_under_the_makefiles_setting(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": f"{Path(sys.executable).parent}:{Path(shutil.which('rustc') or '').parent}:/usr/bin:/bin",
           "HOME": str(home), "RUSTUP_HOME": _rustup_home(home).replace(str(ROOT), str(tmp_path))}
    ran = subprocess.run([sys.executable, "-c", "from pip._internal.network.session import user_agent; print(user_agent())"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert ran.returncode == 0, ran.stderr
    assert not list(home.iterdir()), sorted(p.name for p in home.iterdir())
