#!/usr/bin/env bash
# The GPU check, run as is on a machine with an NVIDIA GPU, from anywhere in the checkout:
#
#     bash bench/gpu_check.sh
#
# 1. `pytest -m "gpu or warp"`: the backend parity suite (MuJoCo Warp on CUDA with CUDA graphs,
#    and on Warp's CPU device, against C MuJoCo) and every other Warp/GPU test.
# 2. bench/env_throughput.py: Go1 and G1 flat at 4096 and 8192 envs, CUDA graphs on and off.
# 3. bench/learning_check.py: 50 PPO iterations of Go1 flat at 4096 envs.
# It prints one table and writes docs/results/gpu_<device>.md (e.g. gpu_nvidia_h200.md).
# A failing step is reported in the table; the script still runs the others.
#
# It runs through `uv run` in the workspace. GPU_CHECK_PYTHON (a Python executable, one path)
# takes precedence: for a machine with its own Python and the packages installed, the checkout's
# src folders on PYTHONPATH. Without uv and without it, `python3`.
# Settings (environment): GPU_CHECK_OUT (log folder), GPU_CHECK_MARK (pytest marker expression,
# default "gpu or warp"; "gpu" leaves out the slow Warp-on-CPU variants), GPU_CHECK_STEP_S
# (time limit of each command, seconds, default 1800), GPU_CHECK_TASKS (tasks trained in step 3),
# GPU_CHECK_TESTS (test files or folders for step 1, default: all).
set -uo pipefail
cd "$(dirname "$0")/.."

export WANDB_MODE="${WANDB_MODE:-offline}"
if [ -z "${MENAGERIE_ROOT:-}" ] && [ -d ../shared/menagerie ]; then
  export MENAGERIE_ROOT="$(cd ../shared/menagerie && pwd)"
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu_check: no NVIDIA GPU here (nvidia-smi not found); nothing to measure." >&2
  exit 2
fi
DEVICE_NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
SLUG="$(echo "$DEVICE_NAME" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/_/g; s/^_+|_+$//g')"
OUT="${GPU_CHECK_OUT:-bench/out/gpu_check}"
MARK="${GPU_CHECK_MARK:-gpu or warp}"
STEP_S="${GPU_CHECK_STEP_S:-1800}"
TASKS="${GPU_CHECK_TASKS:-Mjlab-Velocity-Flat-Unitree-Go1}"
read -r -a TESTS <<<"${GPU_CHECK_TESTS:-}"
if [ -n "${GPU_CHECK_PYTHON:-}" ]; then PY=("$GPU_CHECK_PYTHON"); elif command -v uv >/dev/null 2>&1; then PY=(uv run python); else PY=(python3); fi
run() { timeout --kill-after=10 "$STEP_S" "${PY[@]}" "$@"; }
mkdir -p "$OUT" docs/results
rm -f "$OUT"/*.jsonl "$OUT"/pytest.xml "$OUT"/*.log
echo "gpu_check: $DEVICE_NAME -> docs/results/gpu_${SLUG}.md (logs in $OUT)"

echo "== 1/3 parity and GPU tests: pytest -m '$MARK'"
# SIGINT at the limit: pytest still prints its summary and writes the JUnit file.
timeout -s INT --kill-after=30 "$STEP_S" "${PY[@]}" -m pytest -m "$MARK" -q -rfE -p no:cacheprovider \
  --junitxml "$OUT/pytest.xml" ${TESTS[@]+"${TESTS[@]}"} \
  2>&1 | tee "$OUT/pytest.log" | tail -n 15

echo "== 2/3 env throughput"
for task in Mjlab-Velocity-Flat-Unitree-Go1 Mjlab-Velocity-Flat-Unitree-G1; do
  for graph in --cuda-graph --no-cuda-graph; do
    run bench/env_throughput.py --task "$task" --device cuda:0 --num-envs 4096 8192 \
      "$graph" --json-out "$OUT/throughput.jsonl" 2>&1 | tee -a "$OUT/throughput.log" | tail -n 3
  done
done

echo "== 3/3 training: 50 iterations at 4096 envs of $TASKS"
# shellcheck disable=SC2086  # TASKS is a space-separated list
run bench/learning_check.py --tasks $TASKS --device cuda:0 \
  --num-envs 4096 --iterations 50 --json-out "$OUT/learning.jsonl" 2>&1 | tee "$OUT/learning.log" | tail -n 3

"${PY[@]}" bench/gpu_report.py --dir "$OUT" --device-name "$DEVICE_NAME" \
  --markdown "docs/results/gpu_${SLUG}.md"
