"""Signed TTFT error against the work of one prefill pass (a diagnostic, not a report).

    python bench/prefill_work.py              # median signed error per engine and bin of work per pass
    python bench/prefill_work.py --rows       # also every selected row, by work

Training time ramps its utilisation with the work of a micro-step (``train_time.step_work``: GEMMs of few rows
fill a GPU's SMs less well); prefill takes one ``eta_compute`` per engine whatever the pass. This asks whether the
TTFT rows say otherwise. A row is kept where its prompt's prefill is at least ``--share`` of the predicted TTFT (the
rest is queueing, decode steps and the engine's request overhead) and the pass is compute-bound: its FLOPs at
``eta_compute`` take at least ``--compute`` of the pass. W is one pass's FLOPs per GPU in TFLOP: the prompt capped
at the engine's token budget, forward FLOPs per token at half the prompt's context, over the tensor-parallel GPUs.
A utilisation ramp would show as signed errors that fall from negative (too fast) at small W to zero at large W.
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from calib import Case, all_cases, error_of  # noqa: E402

from gpuplan.estimate.calibration import Calibration, fitted  # noqa: E402
from gpuplan.estimate.engines import efficiency_keys, engine, metal_tensor_gemm, token_budget  # noqa: E402
from gpuplan.estimate.flops import forward_flops_per_token  # noqa: E402
from gpuplan.estimate.infer_speed import compute_peak, prefill_seconds  # noqa: E402
from gpuplan.estimate.quant import weight_format  # noqa: E402
from gpuplan.units import TERA  # noqa: E402

BINS_TFLOP = (0.0, 1.0, 3.0, 10.0, 30.0, math.inf)


def pass_tokens(case: Case) -> float:
    """Prompt tokens in one prefill pass of the case's prompt: the prompt in equal passes of at most the budget."""
    s = case.meta["setup"]
    budget = token_budget(case.meta["model"], s)
    return s.prompt_len / max(1, math.ceil(s.prompt_len / budget)) if budget else float(s.prompt_len)


def pass_work_tflop(case: Case) -> float:
    """W: one prefill pass's forward FLOPs per GPU, in TFLOP."""
    m, s = case.meta["model"], case.meta["setup"]
    return pass_tokens(case) * forward_flops_per_token(m, (s.prompt_len + 1) / 2) / s.tp / TERA


def compute_share(case: Case, cal: Calibration) -> float:
    """The pass's FLOPs at the engine's fitted ``eta_compute`` over the pass's predicted seconds."""
    m, g, s = case.meta["model"], case.meta["gpu"], case.meta["setup"]
    eng = engine(s.engine)
    peak = compute_peak(g, weight_format(s.weight_format), eng, metal_tensor_gemm(s))[0]
    eta = next(cal.values[k] for k in efficiency_keys("eta_compute", s.engine, g) if k in cal.values)
    tokens = pass_tokens(case)
    return pass_work_tflop(case) * TERA / (peak * eta) / prefill_seconds(m, g, s, tokens, cal)


def selected(cases: list[Case], cal: Calibration, share: float, compute: float) -> list[tuple[Case, float, float]]:
    """(case, W, signed error) of the TTFT rows whose predicted TTFT is mostly a compute-bound prefill."""
    out = []
    for c in cases:
        if c.cls != "ttft":
            continue
        predicted = c.predict(cal)
        err = error_of(c, predicted)
        if err != err or not math.isfinite(predicted):
            continue
        m, g, s = c.meta["model"], c.meta["gpu"], c.meta["setup"]
        if prefill_seconds(m, g, s, s.prompt_len, cal) >= share * predicted and compute_share(c, cal) >= compute:
            out.append((c, pass_work_tflop(c), err))
    return out


def table(rows: list[tuple[Case, float, float]]) -> list[str]:
    bins = list(itertools.pairwise(BINS_TFLOP))
    lines = [f"{'engine':9s} " + " ".join(f"{f'W {lo:g}-{hi:g}':>17s}" for lo, hi in bins)]
    engines = sorted({c.meta["engine"] for c, _, _ in rows})
    for eng in ["all", *engines]:
        cells = []
        for lo, hi in bins:
            errs = [e for c, w, e in rows if lo <= w < hi and eng in ("all", c.meta["engine"])]
            cells.append(f"{len(errs):4d} {statistics.median(errs):+8.1%}    " if errs else f"{'':17s}")
        lines.append(f"{eng:9s} " + " ".join(cells))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--share", type=float, default=0.4, help="least share of the predicted TTFT that is prefill")
    ap.add_argument("--compute", type=float, default=0.4, help="least share of the pass that is GEMM FLOPs")
    ap.add_argument("--rows", action="store_true", help="also list the selected rows, by work per pass")
    args = ap.parse_args(argv)
    cal = fitted()
    rows = selected(all_cases()[0], cal, args.share, args.compute)
    print(f"{len(rows)} TTFT rows, prefill >= {args.share:.0%} of the prediction, compute-bound >= {args.compute:.0%}"
          "; per bin of W (TFLOP per GPU per pass): rows, median signed error")
    print("\n".join(table(rows)))
    if args.rows:
        for c, w, e in sorted(rows, key=lambda r: r[1]):
            print(f"{c.id:12s} W {w:8.2f}  {e:+8.1%}  {c.describe}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
