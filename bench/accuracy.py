"""Accuracy report: every calibration row gpuplan can map, its estimate, and the error per class.

    python bench/accuracy.py                  # print the summary, write docs/accuracy.md
    python bench/accuracy.py --no-write       # print only
    python bench/accuracy.py --out PATH       # write the report to PATH instead
    python bench/accuracy.py --loso           # also refit leaving each source out (slower)
    python bench/accuracy.py --check          # refit leaving each source out; fail when a class misses its goal
                                              # or regresses against bench/accuracy_loso.json
    python bench/accuracy.py --check-regressions  # the same, failing on regressions only (what CI runs)
    python bench/accuracy.py --peers          # side by side with other tools even if none is installed
    python bench/accuracy.py --no-peers       # without the side by side (it is on when a tool is installed)

Goals are on the leave-one-source-out (LOSO) median |error|: each source group predicted by a fit that never
saw it, the error to expect on a job unlike any calibrated. ``--loso`` also writes the per-class LOSO figures
to ``bench/accuracy_loso.json``, the baseline ``--check`` compares against.

Error of a row = predicted / measured − 1 (negative: gpuplan under-predicts). For memory rows the
under-prediction rate matters most: an under-predicted memory says "fits" when it does not. Bound rows
("fits in 48 GB", "more than 780 GB") count as exact when the estimate respects the bound.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from calib import CLASSES, Case, Unmapped, all_cases, error_of  # noqa: E402

from gpuplan.estimate.calibration import Calibration, fitted  # noqa: E402

DOC = HERE.parent / "docs" / "accuracy.md"
BASELINE = HERE / "accuracy_loso.json"
REGRESSION_SLACK = 0.005  # a LOSO median may move this much (absolute) between refits without counting as worse
MEMORY = ("inference_memory", "finetune_memory", "pretrain_memory")
LABELS = {
    "inference_memory": "Inference memory", "finetune_memory": "Fine-tune memory",
    "pretrain_memory": "Pretraining memory", "pretrain_throughput": "Pretraining throughput",
    "pretrain_throughput_moe": "Pretraining throughput, mixture-of-experts",
    "pretrain_gpu_hours": "Pretraining GPU-hours / wall time", "finetune_time": "Fine-tune time",
    "serving_throughput": "Serving throughput", "ttft": "TTFT (time to first token)",
    "tpot": "TPOT (time per output token, batch > 1)", "decode_batch1": "Batch-1 decode",
}


@dataclass
class Result:
    case: Case
    predicted: float
    error: float  # predicted / measured - 1, 0 when a bound is respected

    @property
    def under(self) -> bool:
        return self.error < -1e-9


def evaluate(cases: list[Case], cal: Calibration) -> list[Result]:
    out = []
    for c in cases:
        try:
            pred = c.predict(cal)
        except Exception as exc:  # an estimate that raises is reported, not hidden
            print(f"warning: {c.id}: {type(exc).__name__}: {exc}", file=sys.stderr)
            pred = math.nan
        out.append(Result(c, pred, error_of(c, pred)))
    return out


MAX_UNDER_RATE = 0.10  # memory: a plan that says "fits" must fit


@dataclass
class Summary:
    cls: str
    n: int
    median_abs: float
    p90_abs: float
    under_rate: float
    target: float

    @property
    def memory(self) -> bool:
        return self.cls.endswith("_memory")

    @property
    def ok(self) -> bool:
        """The median goal, and for memory also at most 10 % of rows under-predicted."""
        return self.median_abs <= self.target and (not self.memory or self.under_rate <= MAX_UNDER_RATE + 1e-9)

    @property
    def status(self) -> str:
        if self.ok:
            return "meets goal"
        if self.median_abs > self.target:
            return "misses goal (median)"
        return f"misses goal (under-predicted {self.under_rate:.0%} > {MAX_UNDER_RATE:.0%} of rows)"


def summarise(results: list[Result]) -> list[Summary]:
    out = []
    for cls, target in CLASSES.items():
        errs = [r.error for r in results if r.case.cls == cls and r.error == r.error]
        if not errs:
            continue
        abs_errs = sorted(abs(e) for e in errs)
        out.append(Summary(cls, len(errs), statistics.median(abs_errs), abs_errs[int(0.9 * (len(abs_errs) - 1))],
                           sum(1 for e in errs if e < -1e-9) / len(errs), target))
    return out


HELD_BANDS: dict[str, tuple[float, float, int]] = {}  # the held-out bands of the last held_out() call


def held_out(cases: list[Case]) -> list[Result]:
    """Every row predicted by a fit that never saw its source group; also recomputes the held-out bands
    (fit.held_out_bands) from the same refits, into HELD_BANDS."""
    from fit import _band_keys, _quantiles, _ratio, source_refits

    results: list[Result] = []
    ratios: dict[str, list[tuple[float, str]]] = {}
    for held, cal in source_refits(cases):
        results += evaluate(held, cal)
        for c in held:
            if (r := _ratio(c, cal)) is not None:
                for key in _band_keys(c):
                    ratios.setdefault(key, []).append((r, c.group))
    HELD_BANDS.clear()
    HELD_BANDS.update(_quantiles(ratios))
    return results


def check_bands(committed: Calibration, rel: float = 0.05) -> list[str]:
    """The held-out bands in params.json are the ones these refits give (5 % for optimiser noise)."""
    out = []
    for cls, (low, high, n) in committed.held_out_bands.items():
        fresh = HELD_BANDS.get(cls)
        if fresh is None or fresh[2] != n or not (math.isclose(fresh[0], low, rel_tol=rel)
                                                   and math.isclose(fresh[1], high, rel_tol=rel)):
            out.append(f"held-out band {cls}: params.json {low:.3f}–{high:.3f} (n={n}), refits give "
                       + (f"{fresh[0]:.3f}–{fresh[1]:.3f} (n={fresh[2]})" if fresh else "none")
                       + ": run python bench/fit.py")
    return out


def render(results: list[Result], unmapped: list[Unmapped], cal: Calibration, loso: dict[str, Summary] | None,
           extra: list[str] | None = None) -> str:
    groups = _groups_per_class(results)
    lines = [
        "# Accuracy of gpuplan's estimates against published measurements",
        "",
        f"Generated by `python bench/accuracy.py{' --loso' if loso else ''}` (do not edit by hand"
        + ("; the side by side needs the tools of `bench/requirements-peers*.txt`" if extra else "")
        + "). Every row of `bench/calibration/` that can",
        "be mapped to an estimate is estimated with the fitted parameters in `gpuplan/data/fitted/params.json`",
        "(`python bench/fit.py`) and compared with the measurement. Error = predicted / measured − 1; a",
        "negative error is an under-prediction. In-sample errors use the fit that saw every row; the",
        "leave-one-source-out (LOSO) columns predict each source group with a fit that never saw it — that is",
        "the error to expect on a job unlike any calibrated, and the goals apply to it.",
        "",
        f"Calibration: {cal.fitted_on}.",
        "",
        "## Summary",
        "",
        "| class | rows | sources | in-sample median \\|error\\| | in-sample under-predicted | "
        + ("LOSO median \\|error\\| | LOSO p90 | LOSO under-predicted | " if loso else "") + "goal | status |",
        "|---|---:|---:|---:|---:|" + ("---:|---:|---:|" if loso else "") + "---:|---|",
    ]
    for s in summarise(results):
        held = (loso or {}).get(s.cls)
        cols = (f" {held.median_abs:.1%} | {held.p90_abs:.1%} | {held.under_rate:.0%} |" if held else
                " — | — | — |") if loso else ""
        judged = held if loso else s
        status = judged.status if judged else "no held-out rows"
        lines.append(f"| {LABELS[s.cls]} | {s.n} | {groups.get(s.cls, 0)} | {s.median_abs:.1%} | {s.under_rate:.0%} |"
                     f"{cols} ≤ {s.target:.0%} | {status} |")
    lines += ["", "Goals: the LOSO median |error| per class; memory classes also keep under-prediction at or below",
              "10 % of rows (a plan that says 'fits' must fit). Without `--loso` the status is judged in-sample.", ""]
    lines += ran_on_their_card(results, cal)
    lines += ["## Error bands shown with estimates", "",
              "p10–p90 of true ÷ estimated size or time (from `gpuplan/data/fitted/params.json`; a row that measured",
              "tokens/s counts as predicted ÷ measured rate): in-sample, and held out — each source group predicted",
              "by a fit that never saw it, the band for setups unlike any calibrated.",
              "", "| band class | rows | in-sample p10–p90 | held-out p10–p90 |", "|---|---:|---:|---:|"]
    for cls, (low, high, n) in sorted(cal.bands.items()):
        held = cal.held_out_bands.get(cls)
        held_text = f"{held[0]:.2f}×–{held[1]:.2f}×" if held else "—"
        lines.append(f"| {cls} | {n} | {low:.2f}×–{high:.2f}× | {held_text} |")
    lines += ["", "## Rows", ""]
    for cls in CLASSES:
        rows = [r for r in results if r.case.cls == cls]
        if not rows:
            continue
        lines += [f"### {LABELS[cls]}", "", "| id | case | measured | predicted | error | assumption |",
                  "|---|---|---:|---:|---:|---|"]
        for r in sorted(rows, key=lambda r: r.case.id):
            bound = {"upper": " (upper bound)", "lower": " (lower bound)"}.get(r.case.bound, "")
            lines.append(f"| {r.case.id} | {r.case.describe} | {_fmt(r.case.measured)}{bound} | {_fmt(r.predicted)} | "
                         f"{r.error:+.1%} | {r.case.assume} |")
        lines.append("")
    lines += ["## Rows not mapped, and why", "", "| id | reason |", "|---|---|"]
    for u in sorted(unmapped, key=lambda u: u.id):
        lines.append(f"| {u.id} | {u.why} |")
    lines.append("")
    return "\n".join(lines + (extra or []))


def refused_runs(results: list[Result], cal: Calibration) -> tuple[list[tuple[Result, float, float]], int]:
    """The published training runs gpuplan would call too big for the card they ran on, by the rule plans use
    (``gpuplan.estimate.job.needed_memory``: the memory a run needs when the card has no room to spare, the
    allocator's cache given back, raised by its held-out band). Every such run finished on that card, so each is
    a wrong "does not fit" (the pessimistic error, as an under-prediction is the optimistic one). Returns (row,
    needed, card) per run, and how many runs were checked."""
    from gpuplan.estimate.job import needed_memory
    from gpuplan.estimate.memory import training_memory

    out, n = [], 0
    for r in results:
        meta = r.case.meta
        if r.case.cls not in ("finetune_memory", "pretrain_memory") or r.case.bound or "gpu" not in meta:
            continue
        n += 1
        needed, _ = needed_memory(training_memory(meta["model"], meta["setup"], cal))
        if needed > meta["gpu"].memory_bytes:
            out.append((r, needed, meta["gpu"].memory_bytes))
    return out, n


def ran_on_their_card(results: list[Result], cal: Calibration) -> list[str]:
    refused, n = refused_runs(results, cal)
    lines = ["## Runs that fit the card they ran on", "",
             "Every training-memory row above is a run that finished on its card. Plans call a setup too big when",
             "the memory it needs with no room to spare — its tensors and the CUDA context, since PyTorch's caching",
             "allocator gives its cache back and retries before it fails — raised by that figure's held-out band",
             "(measured on PyTorch's allocated peaks; at least 5 % for the cache it cannot give back) exceeds the",
             f"card. By that rule gpuplan would call **{len(refused)} of {n}** of these runs too big for their card: a",
             "\"does not fit\" that is wrong.", ""]
    if refused:
        lines += ["| id | card | needed (floor × band) | card memory | measured |", "|---|---|---:|---:|---:|"]
        for r, needed, card in sorted(refused, key=lambda t: t[0].case.id):
            lines.append(f"| {r.case.id} | {r.case.meta['gpu'].name} | {needed / 2**30:.1f} GiB | "
                         f"{card / 2**30:.1f} GiB | {_fmt(r.case.measured)} ({r.case.meta.get('measure', '')}) |")
        lines.append("")
    return lines


def _groups_per_class(results: list[Result]) -> dict[str, int]:
    out: dict[str, set[str]] = {}
    for r in results:
        out.setdefault(r.case.cls, set()).add(r.case.group)
    return {k: len(v) for k, v in out.items()}


def baseline_json(held: list[Summary]) -> str:
    return json.dumps({s.cls: {"rows": s.n, "median_abs": round(s.median_abs, 4), "p90_abs": round(s.p90_abs, 4),
                               "under_rate": round(s.under_rate, 4)} for s in held}, indent=1) + "\n"


def check(held: list[Summary], goals: bool, band_failures: list[str] | None = None) -> int:
    """Exit status of ``--check``: 1 when a class's LOSO median (or a memory class's under-prediction rate) is
    worse than the committed baseline, when params.json's held-out bands are stale, or — with ``goals`` — when
    a class misses its goal."""
    base = json.loads(BASELINE.read_text(encoding="utf-8")) if BASELINE.exists() else {}
    failures = list(band_failures or [])
    for s in held:
        b = base.get(s.cls)
        if b and s.median_abs > b["median_abs"] + REGRESSION_SLACK:
            failures.append(f"{s.cls}: LOSO median {s.median_abs:.1%}, was {b['median_abs']:.1%} (regressed)")
        # one row changing side between refits on another machine (scipy/numpy builds differ) is not a regression
        if b and s.memory and s.under_rate > b["under_rate"] + max(REGRESSION_SLACK, 1 / s.n) + 1e-9 \
                and s.under_rate > MAX_UNDER_RATE:
            failures.append(f"{s.cls}: LOSO under-predicted {s.under_rate:.0%}, was {b['under_rate']:.0%} (regressed)")
        if goals and not s.ok:
            failures.append(f"{s.cls}: {s.status} (LOSO median {s.median_abs:.1%}, goal ≤ {s.target:.0%})")
    for f in failures:
        print(f"check: {f}")
    print("check: passed" if not failures else f"check: {len(failures)} failure(s)")
    return 1 if failures else 0


def _fmt(x: float) -> str:
    if x != x:
        return "—"
    a = abs(x)
    if a >= 1e9:
        return f"{x / 2**30:,.2f} GiB" if a < 1e13 else f"{x:.3g}"
    if a >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def print_summary(summaries: list[Summary], loso: dict[str, Summary] | None) -> None:
    print(f"{'class':40s} {'rows':>5s} {'median':>8s} {'under':>7s} {'goal':>7s}"
          + (f" {'loso':>7s} {'under':>7s}" if loso else ""))
    for s in summaries:
        held = (loso or {}).get(s.cls)
        lo = (f" {held.median_abs:7.1%} {held.under_rate:7.0%}" if held else "") if loso else ""
        judged = held if loso else s
        print(f"{LABELS[s.cls]:40s} {s.n:5d} {s.median_abs:8.1%} {s.under_rate:7.0%} {s.target:7.0%}{lo}  "
              f"{'ok' if judged and judged.ok else 'MISS'}")


def peer_section(cases: list[Case], cal: Calibration, results: list[Result], held: list[Result] | None,
                 always: bool) -> list[str] | None:
    """The side by side with other tools (bench/peers.py); None when no tool is installed and not asked for.
    ``held``: gpuplan's held-out results (--loso), compared too."""
    from sidebyside import print_comparisons, side_by_side
    from sidebyside import render as render_side

    held_errors = {r.case.id: r.error for r in held} if held is not None else None
    sbs = side_by_side(cases, cal, {r.case.id: r.error for r in results}, held_errors)
    if not (sbs.chosen or always):
        return None
    print_comparisons(sbs, LABELS)
    return render_side(sbs, {r.case.id: (r.predicted, r.error) for r in results}, LABELS, _fmt)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="gpuplan accuracy report")
    ap.add_argument("--no-write", action="store_true", help="do not write docs/accuracy.md")
    ap.add_argument("--out", type=Path, default=DOC, help="write the report here instead of docs/accuracy.md")
    ap.add_argument("--loso", action="store_true", help="leave-one-source-out refits (slower); writes the baseline")
    gate = ap.add_mutually_exclusive_group()
    gate.add_argument("--check", action="store_true", help="with LOSO refits: fail on a missed goal or a regression")
    gate.add_argument("--check-regressions", action="store_true",
                      help="with LOSO refits: fail on a regression against bench/accuracy_loso.json only")
    peer_arg = ap.add_mutually_exclusive_group()
    peer_arg.add_argument("--peers", action="store_true", help="side by side with other tools, listing missing ones")
    peer_arg.add_argument("--no-peers", action="store_true", help="leave out the side by side with other tools")
    args = ap.parse_args(argv)
    cases, unmapped = all_cases()
    cal = fitted()
    results = evaluate(cases, cal)
    loso, held = None, None
    if args.loso or args.check or args.check_regressions:
        held = held_out(cases)
        loso = {s.cls: s for s in summarise(held)}
    print_summary(summarise(results), loso)
    if args.check or args.check_regressions:
        return check(list((loso or {}).values()), goals=args.check, band_failures=check_bands(cal))
    if args.loso and not args.no_write and args.out == DOC:
        BASELINE.write_text(baseline_json(list((loso or {}).values())), encoding="utf-8")
    print(f"{len(unmapped)} calibration rows not mapped (listed in docs/accuracy.md)")
    extra = None if args.no_peers else peer_section(cases, cal, results, held, args.peers)
    if not args.no_write:
        out = args.out.resolve()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render(results, unmapped, cal, loso, extra), encoding="utf-8")
        print(f"wrote {out.relative_to(HERE.parent) if out.is_relative_to(HERE.parent) else out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
