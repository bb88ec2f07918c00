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
mkdir -p "$OUT" docs/results
rm -f "$OUT"/*.jsonl "$OUT"/pytest.xml "$OUT"/*.log
echo "gpu_check: $DEVICE_NAME -> docs/results/gpu_${SLUG}.md (logs in $OUT)"

echo "== 1/3 parity and GPU tests: pytest -m 'gpu or warp'"
uv run pytest -m "gpu or warp" -q -p no:cacheprovider --junitxml "$OUT/pytest.xml" \
  2>&1 | tee "$OUT/pytest.log" | tail -n 15

echo "== 2/3 env throughput"
for task in Mjlab-Velocity-Flat-Unitree-Go1 Mjlab-Velocity-Flat-Unitree-G1; do
  for graph in --cuda-graph --no-cuda-graph; do
    uv run python bench/env_throughput.py --task "$task" --device cuda:0 --num-envs 4096 8192 \
      "$graph" --json-out "$OUT/throughput.jsonl" 2>&1 | tee -a "$OUT/throughput.log" | tail -n 3
  done
done

echo "== 3/3 training: 50 iterations of Go1 flat at 4096 envs"
uv run python bench/learning_check.py --tasks Mjlab-Velocity-Flat-Unitree-Go1 --device cuda:0 \
  --num-envs 4096 --iterations 50 --json-out "$OUT/learning.jsonl" 2>&1 | tee "$OUT/learning.log" | tail -n 3

uv run python bench/gpu_report.py --dir "$OUT" --device-name "$DEVICE_NAME" \
  --markdown "docs/results/gpu_${SLUG}.md"
