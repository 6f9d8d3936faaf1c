"""CI runs `make test` through `.ci/in-empty-home`: with HOME a fresh empty folder, failing and
saying what when anything is left there. Checked here on tiny make targets (the whole suite is
what CI runs it on)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "in-empty-home"

MAKEFILE = """\
clean:
\t@test -z "$$(ls -A "$$HOME")" && echo "home $$HOME" && echo "pip cache $$PIP_CACHE_DIR"
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
    assert f"pip cache {tmp_path}/.hushtable/cache/pip" in res.stdout  # pip's cache is the project's, not the home's


def test_anything_left_in_home_fails_the_run_and_is_named(tmp_path: Path) -> None:
    res = run(tmp_path, "dirty")
    assert res.returncode == 1
    assert "left 4 path(s) in HOME" in res.stderr
    for path in (".netrc", ".cache", ".cache/pip", ".cache/pip/wheel"):
        assert f"\n  {path}\n" in res.stderr + "\n", res.stderr
    assert not (tmp_path / "real-home").exists()


def test_a_failing_command_keeps_its_exit_status(tmp_path: Path) -> None:
    assert run(tmp_path, "fails").returncode == 2  # make's own status for a failed recipe
