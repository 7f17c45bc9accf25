"""Signed errors of the speed classes per source, engine and load mode (a diagnostic, not a report).

    python bench/errors_by_source.py                 # in-sample, with the committed fit
    python bench/errors_by_source.py --loso          # each source predicted by a fit that never saw it (slow)
    python bench/errors_by_source.py --rows ttft     # also every row of one class, worst first
    python bench/errors_by_source.py --memory        # the memory classes instead (inference: per engine and counter)
    python bench/errors_by_source.py --training      # the training-time classes instead, per stack and GPU

Each line is one (class, source group, engine, mode) cell: its rows, the median signed error
(predicted / measured − 1; negative: under-predicted), the median |error| and the share under-predicted. The mode
says how the source loaded the engine: ``rate`` (Poisson arrivals), ``clients`` (a closed loop of N clients),
``offline`` (all requests queued), ``batch`` (a fixed batch) or ``prefill``/``decode`` (one sequence). For the
training-memory classes (``--memory``) the engine column is the modeling stack and the mode the method (with the
quantized base's format); for inference memory (``--memory`` too) the engine and the counter the source read
(``device``: all the device's memory, or a process's resident set; ``active``: the framework's allocated peak;
``weights``: the weights alone); for the training-time classes (``--training``: pretraining throughput, dense and
mixture-of-experts, GPU-hours, fine-tuning time) the stack and the GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from accuracy import Result, evaluate, held_out  # noqa: E402
from calib import SPEED_CLASSES, Case, all_cases  # noqa: E402

MEMORY_CLASSES = ("finetune_memory", "pretrain_memory")
INFERENCE_MEMORY = "inference_memory"
TIME_CLASSES = ("pretrain_throughput", "pretrain_throughput_moe", "pretrain_gpu_hours", "finetune_time")

from gpuplan.estimate.calibration import fitted  # noqa: E402


def mode(case: Case) -> str:
    meta = case.meta
    if case.cls in MEMORY_CLASSES:
        setup = meta["setup"]
        return setup.method + (f":{setup.base_quant}" if setup.base_quant else "")
    if case.cls == INFERENCE_MEMORY:
        return str(meta["measure"])
    if case.cls in TIME_CLASSES:
        return str(meta["gpu"].name)
    if meta.get("kind") == "load":
        return "rate" if meta.get("rate") else "clients"
    if meta.get("quantity") == "max_batch_output_tokens_per_s":
        return "offline"
    setup = meta.get("setup")
    if setup is not None and getattr(setup, "batch", 1) > 1:
        return "batch"
    return str(meta.get("kind", ""))


def cells(results: list[Result]) -> dict[tuple[str, str, str, str], list[float]]:
    out: dict[tuple[str, str, str, str], list[float]] = {}
    for r in results:
        if r.error == r.error:
            stack = r.case.cls in MEMORY_CLASSES + TIME_CLASSES
            engine = r.case.meta["setup"].framework if stack else r.case.meta.get("engine", "")
            key = (r.case.cls, r.case.group, str(engine), mode(r.case))
            out.setdefault(key, []).append(r.error)
    return out


def table(results: list[Result], classes: tuple[str, ...] = SPEED_CLASSES) -> list[str]:
    by = cells(results)
    lines = [f"{'class':23s} {'source group':42s} {'engine':8s} {'mode':8s} {'rows':>5s} {'signed':>8s} "
             f"{'|error|':>8s} {'under':>6s}"]
    for cls in classes:
        everything = [e for k, v in by.items() if k[0] == cls for e in v]
        if not everything:
            continue
        keys = sorted((k for k in by if k[0] == cls), key=lambda k: -len(by[k]))
        for k in [(cls, "all", "", ""), *keys]:
            errs = everything if k[1] == "all" else by[k]
            lines.append(f"{k[0]:23s} {k[1][:42]:42s} {k[2]:8s} {k[3]:8s} {len(errs):5d} "
                         f"{statistics.median(errs):+8.1%} {statistics.median(map(abs, errs)):8.1%} "
                         f"{sum(e < 0 for e in errs) / len(errs):6.0%}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loso", action="store_true", help="predict each source with a fit that never saw it")
    ap.add_argument("--memory", action="store_true", help="the memory classes instead of the speed classes")
    ap.add_argument("--training", action="store_true", help="the training-time classes instead of the speed classes")
    ap.add_argument("--rows", choices=(*SPEED_CLASSES, INFERENCE_MEMORY, *MEMORY_CLASSES, *TIME_CLASSES),
                    help="also list this class's rows, worst first")
    args = ap.parse_args(argv)
    classes = (INFERENCE_MEMORY, *MEMORY_CLASSES) if args.memory else TIME_CLASSES if args.training else SPEED_CLASSES
    cases = all_cases()[0]
    results = held_out(cases) if args.loso else evaluate(cases, fitted())
    results = [r for r in results if r.case.cls in classes + ((args.rows,) if args.rows else ())]
    print("\n".join(table(results, classes)))
    if args.rows:
        rows = sorted((r for r in results if r.case.cls == args.rows and r.error == r.error),
                      key=lambda r: -abs(r.error))
        for r in rows:
            print(f"{r.case.id:12s} {r.error:+8.1%}  {r.case.describe}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
