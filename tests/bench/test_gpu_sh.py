"""``bench/gpu.sh --dry-run``: the GPU check's every step on the CPU at its smallest (the bundled
model for the worker's batching, the test backend for the tournament), so the script that waits
for a GPU machine keeps working. Numbers are not checked here: timings belong to the bench."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# About 95 s on an idle 2-core machine, over 600 s (the suite's per-test bound) beside two CPU-bound
# processes and a loaded machine: the bounds only catch a hang, so they leave room for that.
@pytest.mark.real_model
@pytest.mark.timeout(1500)
def test_the_gpu_check_runs_dry_on_the_cpu_and_writes_its_ratios(tmp_path: Path) -> None:
    done = subprocess.run([str(ROOT / "bench" / "gpu.sh"), "--dry-run", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1400, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((tmp_path / "gpu.json").read_text())
    assert summary["device"] == "cpu"
    assert set(summary["batching_vs_one_at_a_time"]) == {"scoring", "generate"}
    assert all(r > 0 for ratios in summary["batching_vs_one_at_a_time"].values() for r in ratios.values())
    tour = json.loads((tmp_path / "tournament.json").read_text())
    assert tour["entrants"] == ["llm:all", "random"] and tour["sequential"]["games"] == tour["concurrent"]["games"] > 0
    assert summary["tournament_concurrent_vs_sequential"] == tour["speedup"] > 0
    assert "the games per hour of sequential" in done.stdout
