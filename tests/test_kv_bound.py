"""The KV-read bound of bench/kv_bound.py, checked on runs worked by hand."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from calib import _inference_case  # noqa: E402
from kv_bound import kv_shares, run_kv_tokens  # noqa: E402

from gpuplan.catalog import Catalog  # noqa: E402
from gpuplan.estimate.calibration import fitted  # noqa: E402


def test_a_request_reads_its_prompt_and_every_token_made_so_far_at_each_step() -> None:
    # 3 requests of 10 prompt and 4 output tokens: the steps read 11, 12, 13 and 14 cached tokens, 50 a request
    assert run_kv_tokens(3, 10, 4) == 150


def test_the_8b_perf_overview_run_needs_nearly_half_the_h100_bandwidth_for_its_kv_reads_alone(
        catalog: Catalog) -> None:
    with (BENCH / "calibration" / "inference_serving.csv").open(encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["id"] == "srv-0022")
    case = _inference_case(catalog, row)[0]
    assert case is not None
    shares = kv_shares(case, fitted())
    assert shares is not None
    # Llama-3.1-8B FP8 on one H100, 3,000 requests of 1,000/1,000 tokens at 15,244.78 output tokens/s: 196.8 s.
    # 3,000 × 1,500,500 tokens × 64 KiB (32 layers × 8 KV heads × 128 × 2 × 1 byte) = 295.0 TB, 1.499 TB/s,
    # 0.447 of the datasheet's 3,350 GB/s
    assert shares[0] == pytest.approx(0.4475, rel=0.01)
