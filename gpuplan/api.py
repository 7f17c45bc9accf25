"""The Python API: ``gpuplan.plan(...)`` and ``gpuplan.estimate(...)`` with the CLI's options and text forms.

    >>> import gpuplan
    >>> p = gpuplan.plan("Qwen2.5-7B", "finetune", samples="20k", tokens_per_sample="1k", budget="50USD")
    >>> p.pick.cost.total, p.to_pandas()          # doctest: +SKIP
    >>> e = gpuplan.estimate("Qwen2.5-7B", "RTX4090", task="finetune", method="qlora", samples="20k",
    ...                      tokens_per_sample="1k")
    >>> e.fits                                    # doctest: +SKIP

Option names are the CLI's with underscores (``tokens_per_sample``, ``max_gpus``); counts take ``20000`` or
``"20k"``, durations seconds or ``"2s"``/``"3d"``, money ``500`` (in ``currency``) or ``"500USD"``/``"¥3000"``.
Results print as a short summary, show as a table in a notebook, and turn into a DataFrame with
``.to_pandas()`` (when pandas is installed); ``.as_dict()`` is the CLI's ``--json``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.options import default, names, of_stage, option_of_arg, refuse_inapplicable
from gpuplan.plan.planner import PlanResult
from gpuplan.types import Market, Task
from gpuplan.units import fmt_bytes, fmt_money, fmt_seconds, parse_count, parse_currency, parse_money, parse_seconds

# the job's options (counts may be text), one configuration's, and the plan's constraints (gpuplan.options)
_JOB_OPTIONS = names(["job"])
_JOB_COUNTS = tuple(o.arg for o in of_stage("job") if o.form == "COUNT")
_PLAN_OPTIONS = names(["plan"])
_ESTIMATE_OPTIONS = names(["layout"])
# the numbers and what the CLI's option takes (int: a whole number); each is checked against the CLI's range
_NUMBERS: dict[str, type] = {o.arg: o.kind for s in ("job", "layout", "plan") for o in of_stage(s)
                             if o.kind in (int, float) and not o.form}


def plan(model: str, task: str = "finetune", *, catalog: Catalog | None = None, **options: Any) -> Plan:
    """Rank the ways to run a job, as ``gpuplan plan TASK MODEL`` does (the same defaults: LoRA for
    fine-tuning; for pretraining, the fastest plan on up to 2,048 GPUs)."""
    from gpuplan.plan.planner import Constraints
    from gpuplan.plan.planner import plan as run_plan

    _check_names(options, (*_JOB_OPTIONS, *_PLAN_OPTIONS), "gpuplan.plan")
    options = _numbers(options)
    cat = catalog or load_catalog()
    for name in ("objective", "max_gpus"):  # the job's own defaults are make_job's
        options.setdefault(name, default(name, f"plan {task}"))
    job = _job(task, "plan", {k: v for k, v in options.items() if k in _JOB_OPTIONS})
    c = {k: v for k, v in options.items() if k in _PLAN_OPTIONS}
    refuse_inapplicable("plan", {option_of_arg(k).name for k, v in c.items() if v is not None}, task=job.task)
    given = c.pop("currency", None)
    currency = parse_currency(_text(given, "currency"), "currency") if given is not None else (
        "CNY" if c.get("market") == Market.CN else "USD")
    budget = c.pop("budget", None)
    deadline = c.pop("deadline", None)
    deadline_s = parse_seconds(deadline, "deadline") if deadline is not None else None
    _in_range("deadline", deadline_s)
    for name in ("providers", "gpus", "exclude_gpus"):
        if isinstance(c.get(name), str):
            c[name] = (c[name],)
        c[name] = tuple(c.get(name) or ())
    if not Task(task).is_training and options.get("quant"):
        c["quant"] = options["quant"]
    constraints = Constraints(currency=currency, budget=_money(cat, budget, currency), deadline_s=deadline_s, **c)
    m = cat.model(model)
    return Plan(run_plan(cat, m, job, constraints))


def estimate(model: str, gpu: str = "H100", task: str = "infer", *, catalog: Catalog | None = None,
             **options: Any) -> Estimate:
    """Memory per GPU, time or speed, band and assumptions for one configuration, as ``gpuplan estimate``."""
    from gpuplan.requests import estimate_config

    _check_names(options, (*_JOB_OPTIONS, *_ESTIMATE_OPTIONS), "gpuplan.estimate")
    options = _numbers(options)
    cat = catalog or load_catalog()
    job = _job(task, "estimate", {k: v for k, v in options.items() if k in _JOB_OPTIONS})
    config = {k: v for k, v in options.items() if k in _ESTIMATE_OPTIONS}
    return Estimate(estimate_config(cat.model(model), cat.gpu(gpu), job, **config))


def _check_names(options: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    import difflib

    for name in options:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=2)
            hint = f"did you mean {' or '.join(near)}? " if near else ""
            raise InputError(name, f"{where} has no option '{name}'.",
                             f"{hint}options: {', '.join(sorted(set(known)))}.")


def _numbers(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with each number read as the CLI reads it (``5``, ``"5"``; an int option refuses ``2.5``)
    and checked against the CLI's range; an error names the argument."""
    out = dict(options)
    for name, kind in _NUMBERS.items():
        if out.get(name) is None:
            continue
        value = out[name]
        if isinstance(value, str):
            try:
                value = kind(value.strip())
            except ValueError:
                value = None
        elif kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and isinstance(value, float)):
            what = "a whole number" if kind is int else "a number"
            raise InputError(name, f"{out[name]!r} is not {what}.", f"give {name} {_range_text(name)}.")
        _in_range(name, value)
        out[name] = value
    return out


def _range_text(name: str) -> str:
    from gpuplan.options import RANGES

    return RANGES[_option(name)].text()


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _in_range(name: str, value: float | None) -> None:
    """The CLI's range check of option ``--name``, its error naming the argument ``name``."""
    from gpuplan.options import check_range

    option = _option(name)
    try:
        check_range(option, value)
    except InputError as err:
        problem = err.message.split(": ", 1)[-1].replace(option, name)
        raise InputError(name, problem, err.fix.replace(option, name)) from None


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(name, f"{value!r} is not text.", "give it as text, e.g. 'USD', 'CNY', 'EUR' or '€'.")
    return value


def _job(task: str, command: str, options: dict[str, Any]) -> Any:
    """The job of ``options`` (the Python API's keywords), counts and durations read from their text forms."""
    from gpuplan.requests import make_job

    given: dict[str, Any] = {}
    for o in of_stage("job"):
        value = options.get(o.arg)
        if value is not None and o.form == "COUNT":
            value = parse_count(value, o.arg)
            _in_range(o.arg, value or None)  # 0: not given, as on the command line
        elif value is not None and o.form == "DURATION":
            value = parse_seconds(value, o.arg)
            _in_range(o.arg, value)
        given[o.name] = value
    return make_job(task, command=command, **given)


def _money(cat: Catalog, amount: Any, currency: str) -> float | None:
    if amount is None:
        return None
    value, unit = parse_money(amount, "budget")
    value = value if unit in (None, currency) else cat.convert(value, unit, currency)
    _in_range("budget", value)
    return value


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas: pip install pandas") from None
    return pandas


def _html_table(rows: list[dict[str, Any]], title: str) -> str:
    if not rows:
        return f"<p>{html.escape(title)}</p>"
    head = "".join(f"<th>{html.escape(str(k))}</th>" for k in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r.values()) + "</tr>" for r in rows)
    return (f"<table><caption style='text-align:left'>{html.escape(title)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


@dataclass(frozen=True)
class Plan:
    """A plan's result (:class:`gpuplan.plan.planner.PlanResult`, as ``.result``) with views for people."""

    result: PlanResult

    def __getattr__(self, name: str) -> Any:  # pick, ranked, pareto, explanation, suggestions, ...
        return getattr(self.result, name)

    def as_dict(self) -> dict[str, Any]:
        return self.result.as_dict()

    def rows(self) -> list[dict[str, Any]]:
        """The ranked plans as the table shows them (text cells)."""
        from gpuplan.requests import settings_text

        out = []
        for i, x in enumerate(self.result.ranked, 1):
            e = x.estimate
            row: dict[str, Any] = {"#": i, "config": e.describe(), "settings": settings_text(e), "provider": x.where,
                                   "time": fmt_seconds(x.time_s),
                                   "cost": fmt_money(x.cost.total, x.cost.currency),
                                   "memory": f"{fmt_bytes(e.needed_bytes)} / {fmt_bytes(e.capacity_bytes)}"}
            if e.job.task is Task.SERVE:  # priced per hour: the latency at the planned load instead of a duration
                del row["time"]
                row["cost"] += "/h"
                if e.speed:
                    row["latency"] = f"{fmt_seconds(e.speed.ttft_s)} / {fmt_seconds(e.speed.tpot_s)}"
            out.append(row)
        return out

    def _title(self) -> str:
        r = self.result
        return f"Plan: {r.model.name}, {r.job.task}, objective {r.constraints.objective}"

    def __repr__(self) -> str:
        r = self.result
        if r.pick is None:
            return f"<{self._title()}: no plan — {r.nothing_fits}>"
        lines = [f"<{self._title()}: {len(r.ranked)} plans"]
        lines += ["  " + " · ".join(str(v) for v in row.values()) for row in self.rows()[:5]]
        if len(r.ranked) > 5:
            lines.append(f"  … {len(r.ranked) - 5} more (.rows(), .to_pandas(), .as_dict())")
        return "\n".join(lines) + ">"

    def _repr_html_(self) -> str:
        r = self.result
        why = f"<p>{html.escape(r.explanation or r.nothing_fits)}</p>"
        return _html_table(self.rows(), self._title()) + why

    def to_pandas(self) -> Any:
        """The ranked plans as a DataFrame: one row each, the CSV's columns (numbers in base units)."""
        from gpuplan.present import _csv_row

        return _pandas().DataFrame([_csv_row(i, x) for i, x in enumerate(self.result.ranked, 1)])


@dataclass(frozen=True)
class Estimate:
    """One configuration's estimate (:class:`gpuplan.estimate.job.JobEstimate`, as ``.result``)."""

    result: JobEstimate

    def __getattr__(self, name: str) -> Any:  # fits, needed_bytes, memory, time, speed, ...
        return getattr(self.result, name)

    def as_dict(self) -> dict[str, Any]:
        return self.result.as_dict()

    def rows(self) -> list[dict[str, Any]]:
        """The memory breakdown: part, bytes, share of the total."""
        mem = self.result.memory
        total = mem.total or 1.0
        return [{"part": k, "bytes": v, "share": v / total} for k, v in mem.breakdown.parts if v]

    def _summary(self) -> str:
        e = self.result
        state = "fits" if e.fits else f"does not fit ({fmt_bytes(e.shortfall_bytes)} short)"
        text = (f"{e.model.name} on {e.describe()}, {e.job.task}: {state}; needs {fmt_bytes(e.needed_bytes)} per "
                f"GPU with a {e.margin:.0%} margin, of {fmt_bytes(e.capacity_bytes)}")
        if e.time:
            text += f"; time {fmt_seconds(e.time.total)}"
        if e.speed:
            text += f"; TTFT {fmt_seconds(e.speed.ttft_s)}, TPOT {fmt_seconds(e.speed.tpot_s)}"
        return text

    def __repr__(self) -> str:
        return f"<Estimate: {self._summary()}>"

    def _repr_html_(self) -> str:
        rows = [{"part": r["part"], "memory": fmt_bytes(r["bytes"]), "share": f"{r['share']:.0%}"} for r in self.rows()]
        return _html_table(rows, self._summary())

    def to_pandas(self) -> Any:
        """The memory breakdown as a DataFrame (part, bytes, share)."""
        return _pandas().DataFrame(self.rows())


__all__ = ["Estimate", "Plan", "estimate", "plan"]
