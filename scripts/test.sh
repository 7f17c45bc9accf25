#!/usr/bin/env bash
# Set up .venv with the test dependencies (first run only) and run every check: lint (ruff), types (mypy),
# the test suite (pytest), and the calibration/accuracy commands on the shipped data.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -f .venv/.test-deps-peers ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
  # torch 2.13.0 CPU is what the machine provides as a local wheel; transformers builds models on the meta
  # device for the exact parameter-count and FLOP cross-checks.
  .venv/bin/python -m pip install --quiet -e ".[test,web,crosscheck]"
  # the other tools the accuracy report compares with (bench/peers.py): their tests must run, not skip
  DS_BUILD_OPS=0 .venv/bin/python -m pip install --quiet -r bench/requirements-peers.txt
  .venv/bin/python -m pip install --quiet --no-deps -r bench/requirements-peers-nodeps.txt
  touch .venv/.test-deps-peers
fi
# a test dependency added after the venv was made (schemathesis: the API fuzzing) is installed on the next run
.venv/bin/python -c "import hypothesis, schemathesis" 2>/dev/null || .venv/bin/python -m pip install --quiet -e ".[test]"
# ... and skypilot (tests/test_providers.py checks providers.csv against its cloud registry), without its clashing pins
.venv/bin/python -c "import sky.clouds" 2>/dev/null || \
  .venv/bin/python -m pip install --quiet --no-deps -r bench/requirements-peers-nodeps.txt
# ... and what the export tests need to load tasks with SkyPilot's task loader and accelerator registry, and to
# validate manifests with kubernetes-validate (tests/requirements-export.txt)
.venv/bin/python -c "import sky.task, pandas, pendulum, kubernetes_validate" 2>/dev/null || \
  .venv/bin/python -m pip install --quiet -e ".[test]" -r tests/requirements-export.txt
# ... and the training exports' own parsers (tests/test_export_frameworks.py: TRL's and torchtitan's)
.venv/bin/python -c "import trl, torchtitan, triton" 2>/dev/null || .venv/bin/python -m pip install --quiet -e ".[test]"
# ... at the torchao release torchtitan's recipes load with (a venv made before the pin holds an older one)
.venv/bin/python -c "import importlib.metadata as m; assert m.version('torchao') == '0.17.0'" 2>/dev/null || \
  .venv/bin/python -m pip install --quiet --no-deps "torchao==0.17.0"
# ... and LitGPT's, ms-swift's, Axolotl's, torchtune's and unsloth's, without their pins (tests/requirements-export-nodeps.txt)
.venv/bin/python -c "import importlib.metadata as m; [m.version(p) for p in ('litgpt', 'ms-swift', 'axolotl', 'addict', 'torchtune', 'unsloth', 'unsloth_zoo')]" \
  2>/dev/null || .venv/bin/python -m pip install --quiet --no-deps -r tests/requirements-export-nodeps.txt
# ... and torchao 0.13.0 for torchtune's tests only, apart (torchtune 0.6.1 cannot import 0.17, torchtitan not 0.13)
[ -d .venv/torchao-for-torchtune/torchao ] || \
  .venv/bin/python -m pip install --quiet --no-deps --target .venv/torchao-for-torchtune 'torchao==0.13.0'
# ... and LLM Foundry 0.22.0 with its Composer and Streaming, apart, for its export's tests (they pin torch 2.7 and
# transformers 4.51; tests/requirements-export-foundry.txt)
[ -d .venv/llm-foundry-0.22.0/llmfoundry ] || .venv/bin/python -m pip install --quiet --no-deps \
  --target .venv/llm-foundry-0.22.0 -r tests/requirements-export-foundry.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 GPUPLAN_OFFLINE=1
.venv/bin/ruff check gpuplan bench tests
.venv/bin/mypy
# the summary line (counts of passed/failed) is printed; a skipped test fails the run
GPUPLAN_FAIL_ON_SKIP=1 .venv/bin/python -m pytest -rfE "$@"
# ... and the benchmarks the default run leaves out (pyproject.toml's 'benchmark' marker: the refit of
# tests/test_fit.py), so that nothing stops being checked
GPUPLAN_FAIL_ON_SKIP=1 .venv/bin/python -m pytest -rfE -m benchmark
.venv/bin/python bench/fit.py --check
.venv/bin/python bench/accuracy.py --check-regressions  # leave-one-source-out refits; fails on a regression
