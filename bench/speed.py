"""Speed benchmark: prints a table of median wall times (a benchmark, not a test).

    python bench/speed.py            # whole-process CLI times, in-process plan time, catalog scaling
    python bench/speed.py --runs 9

Targets (issues 2 and 4, on a 2-core machine): `gpuplan gpus --json` and `gpuplan offers --gpu H100 --json`
≤ 0.5 s as whole processes; one full plan over the bundled catalog ≤ 50 ms in-process; `gpuplan plan …`
≤ 0.6 s as a process; plan time linear in the catalog size (10× and 100× the offers); a serving fleet (issue 11:
capacity per configuration, the mix MILP in every failure scenario, availability) ≤ 1 s in-process.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN_ARGS = ["plan", "finetune", "ChatGLM2-6B", "--method", "lora", "--samples", "10k", "--tokens-per-sample",
             "1088", "--market", "cn", "--objective", "value", "--json"]


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cli(args: list[str], env: dict[str, str] | None = None) -> Callable[[], object]:
    cmd = [sys.executable, "-m", "gpuplan", *args]
    return lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)


def scaled_catalog(factor: int, folder: Path) -> None:
    """A user catalog with (factor − 1) extra copies of every offer (new instance names), so the total is
    ``factor`` × the bundled offers."""
    from gpuplan.catalog.store import BUNDLED_DIR

    (folder / "offers").mkdir(parents=True)
    for src in sorted((BUNDLED_DIR / "offers").glob("*.csv")):
        with src.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        with (folder / "offers" / f"scaled_{src.name}").open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            for k in range(1, factor):
                for r in rows:
                    w.writerow({**r, "instance_type": f"{r['instance_type']}~copy{k}"})


def in_process_plan(extra: tuple[str, ...] = (), pretrain: bool = False) -> Callable[[], object]:
    """The fine-tune plan of PLAN_ARGS, or (``pretrain``) Llama-2-7B pretrained on 1T tokens of 4096, any market:
    the widest enumeration (up to 2048 GPUs, tensor and pipeline layouts)."""
    from gpuplan.catalog import load_catalog
    from gpuplan.plan.planner import Constraints, plan
    from gpuplan.types import Job

    cat = load_catalog(extra)
    if pretrain:
        model = cat.model("Llama-2-7B")
        job = Job(task="pretrain", tokens=1e12, seq_len=4096)
        c = Constraints()
    else:
        model = cat.model("ChatGLM2-6B")
        job = Job(task="finetune", method="lora", samples=10_000, tokens_per_sample=1088, seq_len=1088)
        c = Constraints(market="cn", currency="CNY", objective="value")
    plan(cat, model, job, c)  # warm caches (catalog load, parameter counts) outside the timing
    return lambda: plan(cat, model, job, c)


def in_process_serving(buckets: int = 1) -> Callable[[], object]:
    """A serving fleet for Qwen2.5-7B at 5 req/s mean and 12 at peak, p99 TTFT 2 s and TPOT 50 ms, spot allowed,
    surviving any zone or spot pool lost (issue 11: ≤ 1 s); with ``buckets`` 2, short and long requests."""
    from gpuplan.catalog import load_catalog
    from gpuplan.plan.serving import Bucket, ServeRequest, Targets, plan_serving

    cat = load_catalog()
    sizes = (Bucket(1000, 300),) if buckets == 1 else (Bucket(300, 100, 0.7), Bucket(4000, 500, 0.3))
    r = ServeRequest(5.0, 12.0, sizes, Targets(ttft_p99_s=2.0, tpot_p99_s=0.05), spot=True)
    model = cat.model("Qwen2.5-7B")
    plan_serving(cat, model, r)  # warm the catalog and the assumption table outside the timing
    return lambda: plan_serving(cat, model, r)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="gpuplan speed benchmark")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args(argv)
    rows: list[tuple[str, float, str]] = []
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    floor = [sys.executable, "-c", "import typer, rich, pydantic"]
    rows.append(("python -c 'import typer, rich, pydantic' (floor)",
                 median_time(lambda: subprocess.run(floor, check=True, env=env), args.runs), "reference"))
    for label, cmd, target in (("gpuplan gpus --json (process)", ["gpus", "--json"], "≤ 0.5 s"),
                               ("gpuplan offers --gpu H100 --json (process)", ["offers", "--gpu", "H100", "--json"],
                                "≤ 0.5 s"),
                               ("gpuplan plan finetune … --json (process)", PLAN_ARGS, "≤ 0.6 s")):
        cli(cmd, env)()  # warm the bytecode cache
        rows.append((label, median_time(cli(cmd, env), args.runs), target))
    rows.append(("pretraining plan, in-process (bundled catalog)",
                 median_time(in_process_plan(pretrain=True), args.runs), "≤ 50 ms"))
    rows.append(("plan, in-process (bundled catalog)", median_time(in_process_plan(), args.runs), "≤ 50 ms"))
    base = rows[-1][1]
    rows.append(("serving fleet (MILP), in-process (bundled catalog)", median_time(in_process_serving(), args.runs),
                 "≤ 1 s"))
    rows.append(("serving fleet, 2 request sizes, in-process", median_time(in_process_serving(2), args.runs),
                 "≤ 1 s"))
    tmp = Path(tempfile.mkdtemp())
    try:
        for factor in (10, 100):
            folder = tmp / f"x{factor}"
            scaled_catalog(factor, folder)
            t = median_time(in_process_plan((str(folder),)), max(3, args.runs // 2))
            rows.append((f"plan, in-process ({factor}× offers)", t, f"linear: ≈ {factor}× at most "
                                                                      f"(measured {t / base:.1f}×)"))
    finally:
        shutil.rmtree(tmp)
    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':{width}s}  {'median':>10s}  target")
    for label, seconds, target in rows:
        shown = f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
        print(f"{label:{width}s}  {shown:>10s}  {target}")
    print(f"({args.runs} runs each; {os.cpu_count()} CPUs; Python {sys.version.split()[0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
