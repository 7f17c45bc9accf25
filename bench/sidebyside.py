"""The accuracy report's side by side with other tools: per class and tool, the rows the tool answered, its
median |error| and under-prediction rate, and gpuplan's on the same rows (bench/peers.py answers the rows).

Errors are defined as in bench/accuracy.py (calib.error_of): predicted / measured − 1, 0 within the published
precision and for respected bounds.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from calib import CLASSES, Case, error_of
from peers import NOTES, Peer, PeerAnswer, peers, run

from gpuplan.estimate.calibration import Calibration

INSTALL = ("DS_BUILD_OPS=0 pip install -r bench/requirements-peers.txt && "
           "pip install --no-deps -r bench/requirements-peers-nodeps.txt")


@dataclass(frozen=True)
class Comparison:
    cls: str
    tool: str
    n: int  # rows the tool answered
    of: int  # rows of the class
    median_abs: float
    under_rate: float
    gpuplan_median_abs: float  # on the same rows
    gpuplan_under_rate: float
    closer: int  # rows where the tool's |error| is smaller than gpuplan's
    held_out_median_abs: float | None = None  # gpuplan fitted without the row's source (--loso), same rows

    @property
    def ratio(self) -> float:
        """Tool's median |error| over gpuplan's (> 1: gpuplan is closer)."""
        if self.gpuplan_median_abs == 0:
            return 1.0 if self.median_abs == 0 else math.inf
        return self.median_abs / self.gpuplan_median_abs

    @property
    def better(self) -> bool:
        return self.median_abs < self.gpuplan_median_abs

    @property
    def better_than_held_out(self) -> bool:
        return self.held_out_median_abs is not None and self.median_abs < self.held_out_median_abs


@dataclass(frozen=True)
class SideBySide:
    chosen: list[Peer]
    missing: list[Peer]
    answers: dict[str, list[PeerAnswer]]
    comparisons: list[Comparison]


def _under(errors: list[float]) -> float:
    return sum(1 for e in errors if e < -1e-9) / len(errors)


def _median_abs(errors: list[float]) -> float:
    return statistics.median(abs(e) for e in errors)


def _compare(cls: str, tool: str, rows: list[tuple[str, float]], of: int, gpuplan: dict[str, float],
             held: dict[str, float] | None) -> Comparison:
    """``rows``: (case id, tool error) for each row the tool answered."""
    tool_err, gp_err = [t for _, t in rows], [gpuplan[i] for i, _ in rows]
    closer = sum(1 for t, g in zip(tool_err, gp_err, strict=True) if abs(t) < abs(g) - 1e-12)
    held_med = _median_abs([held[i] for i, _ in rows if held.get(i) == held.get(i)]) if held else None
    return Comparison(cls, tool, len(rows), of, _median_abs(tool_err), _under(tool_err), _median_abs(gp_err),
                      _under(gp_err), closer, held_med)


def compare(gpuplan: dict[str, float], answers: dict[str, list[PeerAnswer]],
            held: dict[str, float] | None = None) -> list[Comparison]:
    """Per class and tool, on the rows the tool answered (and gpuplan estimated)."""
    out = []
    for cls in CLASSES:
        for tool, answered in answers.items():
            in_cls = [a for a in answered if a.case.cls == cls]
            rows = [(a.case.id, error_of(a.case, a.predicted)) for a in in_cls if not a.skipped]
            rows = [(i, t) for i, t in rows if t == t and gpuplan[i] == gpuplan[i]]
            if rows:
                out.append(_compare(cls, tool, rows, len(in_cls), gpuplan, held))
    return out


def side_by_side(cases: list[Case], cal: Calibration, gpuplan: dict[str, float],
                 held: dict[str, float] | None = None) -> SideBySide:
    everyone = peers()
    chosen = [p for p in everyone if p.installed]
    # the other tools have no model of queueing under load: rows measured at a request rate are gpuplan's alone
    answers = run([c for c in cases if c.meta.get("kind") != "load"], cal, chosen)
    fitted_tools = {p.name: answers[p.name] for p in chosen if p.uses_fit}
    own_tools = {p.name: answers[p.name] for p in chosen if not p.uses_fit}
    comparisons = compare(gpuplan, own_tools, held) + compare(gpuplan, fitted_tools)
    order = [p.name for p in chosen]
    comparisons.sort(key=lambda c: (list(CLASSES).index(c.cls), order.index(c.tool)))
    return SideBySide(chosen, [p for p in everyone if not p.installed], answers, comparisons)


# ---------------------------------------------------------------- report


def where_better(comparisons: list[Comparison], labels: dict[str, str]) -> list[str]:
    lines = []
    for c in comparisons:
        if c.better:
            lines.append(f"- **{labels[c.cls]}**: {c.tool}, on the {c.n} rows it answers: median |error| "
                         f"{c.median_abs:.1%} against gpuplan's {c.gpuplan_median_abs:.1%}; it under-predicts "
                         f"{c.under_rate:.0%} of them (gpuplan {c.gpuplan_under_rate:.0%}) and is closer on "
                         f"{c.closer} of {c.n}.")
        elif c.better_than_held_out:
            lines.append(f"- **{labels[c.cls]}**: {c.tool} ({c.median_abs:.1%} on {c.n} rows) beats gpuplan "
                         f"fitted without each row's source ({c.held_out_median_abs:.1%}), though not gpuplan "
                         f"fitted on all rows ({c.gpuplan_median_abs:.1%}).")
    return lines or ["- None: on every class, each tool's median |error| on the rows it answers is at least "
                     "gpuplan's on the same rows."]


def _ratio(c: Comparison) -> str:
    return "—" if math.isinf(c.ratio) else f"{c.ratio:.2f}"


def summary_table(comparisons: list[Comparison], labels: dict[str, str]) -> list[str]:
    held = any(c.held_out_median_abs is not None for c in comparisons)
    lines = ["| class | tool | rows answered | tool median \\|error\\| | tool under-predicted | "
             "gpuplan median \\|error\\| (same rows) | gpuplan under-predicted | error ratio (tool / gpuplan) | "
             "tool closer on |" + (" gpuplan held out (same rows) |" if held else ""),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if held else "")]
    for c in comparisons:
        extra = f" {c.held_out_median_abs:.1%} |" if c.held_out_median_abs is not None else (" — |" if held else "")
        lines.append(f"| {labels[c.cls]} | {c.tool} | {c.n} of {c.of} | {c.median_abs:.1%} | {c.under_rate:.0%} | "
                     f"{c.gpuplan_median_abs:.1%} | {c.gpuplan_under_rate:.0%} | {_ratio(c)} | {c.closer} |{extra}")
    return lines


def skip_table(sbs: SideBySide, labels: dict[str, str]) -> list[str]:
    """Why rows of the classes a tool works on went unanswered; tools with the same reasons share a line."""
    scope = {(c.tool, c.cls) for c in sbs.comparisons}
    shared: dict[tuple[str, str, int], list[str]] = {}
    for tool, rows in sbs.answers.items():
        reasons = Counter((a.case.cls, a.skipped) for a in rows if a.skipped and (tool, a.case.cls) in scope)
        for (cls, why), n in reasons.items():
            shared.setdefault((cls, why, n), []).append(tool)
    order = sorted(shared, key=lambda k: (list(CLASSES).index(k[0]), -k[2], k[1]))
    return ["| class | tool | reason | rows |", "|---|---|---|---:|"] + [
        f"| {labels[cls]} | {', '.join(shared[(cls, why, n)])} | {why} | {n} |" for cls, why, n in order]


def row_tables(sbs: SideBySide, gpuplan: dict[str, tuple[float, float]], labels: dict[str, str],
               fmt: Callable[[float], str]) -> list[str]:
    """Per class, every row some tool answered: measured, gpuplan, and the prediction (error) of each tool that
    answers rows of the class."""
    by_id = {t: {a.case.id: a for a in rows} for t, rows in sbs.answers.items()}
    cases = [a.case for a in next(iter(sbs.answers.values()))] if sbs.answers else []
    lines: list[str] = []
    for cls in CLASSES:
        tools = [c.tool for c in sbs.comparisons if c.cls == cls]
        rows = sorted((c for c in cases if c.cls == cls and any(not by_id[t][c.id].skipped for t in tools)),
                      key=lambda c: c.id)
        if rows:
            lines += [f"#### {labels[cls]}", "", "| id | measured | gpuplan | " + " | ".join(tools) + " |",
                      "|---|---:|---:|" + "---:|" * len(tools)]
            lines += [_row(c, gpuplan[c.id], [by_id[t][c.id] for t in tools], fmt) for c in rows]
            lines.append("")
    return lines


def _row(case: Case, gp: tuple[float, float], answers: list[PeerAnswer], fmt: Callable[[float], str]) -> str:
    cells = [f"{fmt(a.predicted)} ({error_of(case, a.predicted):+.0%})" if not a.skipped else "" for a in answers]
    bound = {"upper": " (upper bound)", "lower": " (lower bound)"}.get(case.bound, "")
    return (f"| {case.id} | {fmt(case.measured)}{bound} | {fmt(gp[0])} ({gp[1]:+.0%}) | " + " | ".join(cells) + " |")


def render(sbs: SideBySide, gpuplan: dict[str, tuple[float, float]], labels: dict[str, str],
           fmt: Callable[[float], str]) -> list[str]:
    lines = [
        "## Side by side with other tools", "",
        "Each tool below predicts the same quantity as gpuplan for every row whose setup it can represent (same",
        "model architecture, GPU datasheet, batch, lengths, parallelism and precision, taken from the row; never the",
        "tool's bundled names); rows it cannot represent are counted with the reason. Errors are defined as above,",
        "and gpuplan's are on the same rows. The error ratio is the tool's median |error| over gpuplan's (above 1:",
        "gpuplan is closer). The tools are benchmark-only dependencies, installed with",
        f"`{INSTALL}`; nothing here reaches the network. `python bench/accuracy.py` writes this section",
        "whenever one of them is importable (`--peers` lists the missing ones, `--no-peers` leaves it out).", "",
    ]
    lines += [f"- **{p.name}** ({p.versions}): {p.answers}." for p in sbs.chosen]
    lines += [f"- **{p.name}**: not installed." for p in sbs.missing]
    if not sbs.chosen:
        return [*lines, "", "No tool is installed: nothing to compare.", ""]
    lines += ["", "Notes on the mappings:", ""] + [f"- {n}" for n in NOTES]
    lines += ["", "### Per class", "", *summary_table(sbs.comparisons, labels)]
    lines += ["", "### Where a peer is better", "", *where_better(sbs.comparisons, labels)]
    lines += ["", "### Rows a tool did not answer, and why", "",
              "Within the classes where the tool answers at least one row.", "", *skip_table(sbs, labels)]
    lines += ["", "### Rows", "", "Prediction (error) per row; empty: the tool does not answer the row.", ""]
    return lines + row_tables(sbs, gpuplan, labels, fmt)


def print_comparisons(sbs: SideBySide, labels: dict[str, str]) -> None:
    if sbs.missing:
        print(f"not installed: {', '.join(p.name for p in sbs.missing)} (install: {INSTALL})")
    if not sbs.comparisons:
        return
    print(f"{'class':40s} {'tool':24s} {'rows':>5s} {'tool':>7s} {'gpuplan':>8s} {'ratio':>6s}")
    for c in sbs.comparisons:
        print(f"{labels[c.cls][:40]:40s} {c.tool:24s} {c.n:5d} {c.median_abs:7.1%} {c.gpuplan_median_abs:8.1%} "
              f"{_ratio(c):>6s}")
