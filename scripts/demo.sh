#!/usr/bin/env bash
# Set up gpuplan in .venv (first run only) and plan the flagship example on the bundled data:
# LoRA fine-tuning of ChatGLM2-6B on 10,000 samples in the China market, ranked by value (性价比).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/gpuplan ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e .
fi
exec .venv/bin/gpuplan plan finetune ChatGLM2-6B --method lora --lora-rank 8 --lora-targets attention \
  --samples 10k --tokens-per-sample 1088 --market cn --objective value --top 5 "$@"
