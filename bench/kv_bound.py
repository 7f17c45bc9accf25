"""How much of a run's measured time its KV-cache reads alone take (a diagnostic of the fit, not a report).

    python bench/kv_bound.py            # per (source group, model): medians and worst rows
    python bench/kv_bound.py --rows     # also every row, the most constrained first

A finite offline run of N requests of ``isl`` prompt and ``osl`` output tokens each (TensorRT-LLM's perf overview
states N per length pair, ``bench/calib.py`` ``_PERF_OVERVIEW_REQUESTS``) reads, at its j-th decode step of a
request, that request's ``isl + j`` cached tokens: N × (osl × isl + osl × (osl + 1) / 2) tokens' KV bytes per GPU
over the run, however the engine batches them. Two figures per row follow from the published throughput alone:

- ``need``: the share of the GPU's datasheet bandwidth those reads take if nothing else ran (a lower bound on the
  KV bandwidth efficiency the run reached: prefill, GEMMs and weight reads only add time);
- ``at fit``: the time those reads take at the fitted ``eta_kv_<engine>`` over the measured run time. Above 1,
  the fitted efficiency cannot describe the row whatever the other terms: the fit holds it low for other rows.

Rows with attention data parallelism, pipeline stages, MLA or linear-attention layers are left out (their KV
reads per GPU are not the plain product above).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from calib import Case, _perf_overview_requests, inference_cases  # noqa: E402

from gpuplan import load_catalog  # noqa: E402
from gpuplan.estimate.calibration import Calibration, fitted  # noqa: E402
from gpuplan.estimate.infer_speed import _step_terms  # noqa: E402


def run_kv_tokens(n_requests: int, isl: int, osl: int) -> float:
    """Cached tokens a run's decode steps read in all: each of ``n_requests`` reads ``isl + j`` at its j-th step."""
    return n_requests * (osl * isl + osl * (osl + 1) / 2)


def kv_shares(case: Case, cal: Calibration) -> tuple[float, float] | None:
    """(``need``, ``at fit``) of the module docstring for an offline throughput row, None where it does not apply."""
    s, m, gpu = case.meta["setup"], case.meta["model"], case.meta["gpu"]
    if s.attention_dp or s.pp > 1 or m.is_mla:
        return None
    n = _perf_overview_requests({"source_group": case.group}, s.prompt_len, s.output_len)
    t = _step_terms(m, gpu, s, cal)
    if n is None or t.state_per_seq or not gpu.memory_bandwidth_bytes_per_s:
        return None
    kv_bytes = run_kv_tokens(n, s.prompt_len, s.output_len) * t.kv_per_token
    run_s = n * s.output_len / case.measured
    return kv_bytes / run_s / gpu.memory_bandwidth_bytes_per_s, kv_bytes / t.kv_bandwidth / run_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", action="store_true", help="also print every row, the most constrained first")
    args = ap.parse_args()
    cal = fitted()
    cases, _ = inference_cases(load_catalog())
    found: list[tuple[Case, float, float]] = []
    for case in cases:
        if case.cls == "serving_throughput" and case.meta.get("quantity") == "max_batch_output_tokens_per_s":
            shares = kv_shares(case, cal)
            if shares is not None:
                found.append((case, *shares))
    cells: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for case, need, at_fit in found:
        cells.setdefault((case.group, case.meta["model_name"]), []).append((need, at_fit))
    print(f"{'source group':36s} {'model':28s} {'rows':>4s} {'need':>5s} {'max':>5s} {'at fit':>6s} {'max':>5s} "
          f"{'>1':>3s}")
    for (group, model), v in sorted(cells.items()):
        needs, fits = [x[0] for x in v], [x[1] for x in v]
        print(f"{group[:36]:36s} {model[:28]:28s} {len(v):4d} {statistics.median(needs):5.2f} {max(needs):5.2f} "
              f"{statistics.median(fits):6.2f} {max(fits):5.2f} {sum(f > 1 for f in fits):3d}")
    if args.rows:
        for case, need, at_fit in sorted(found, key=lambda x: -x[2]):
            print(f"{case.id:10s} need {need:4.2f} at fit {at_fit:4.2f}  {case.describe}")


if __name__ == "__main__":
    main()
