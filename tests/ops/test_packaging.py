"""The installed package carries every file the code reads: a wheel built from the tree holds every
tracked non-Python file under the package folders (a missing data file breaks only installs, never
the tests that run from the tree)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "games", "models", "storage")


def test_the_wheel_carries_every_tracked_data_file(tmp_path: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "pyproject.toml", "README.md", *PACKAGES],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    files = [p for p in listed if (ROOT / p).is_file()]
    # A copy of the tree as git sees it: no build/ or egg-info of earlier builds can stand in, and
    # the build leaves nothing in the checkout.
    src = tmp_path / "src"
    for p in files:
        (src / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / p, src / p)
    data = {p for p in files if p.startswith(PACKAGES) and not p.endswith(".py") and not p.endswith("README.md")}
    out = tmp_path / "wheel"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    [wheel] = out.glob("hushtable-*.whl")
    with zipfile.ZipFile(wheel) as z:
        shipped = set(z.namelist())
    assert data, "the package folders hold data files"
    assert sorted(data - shipped) == []
