"""Every option a user gives, declared once: its name in the library and the HTTP API, its command-line flag,
what it takes, its default (per command where commands differ), its range, and where it applies.

The command line (:mod:`gpuplan.cli`: typer defaults, range checks, help's ``Range:``), the HTTP API's request
models (:mod:`gpuplan.web.models`: bounds, defaults), the Python API (:mod:`gpuplan.api`: names, number kinds)
and the library (:func:`gpuplan.requests.make_job`, :func:`gpuplan.requests.estimate_config`: defaults, ranges,
refusals) all read :data:`OPTIONS`. The skins pass the library only what the user gave; an option given where it
does not apply is refused naming its flag, even at its default value (``--method full --lora-rank 16``).

Commands are named as typed: ``estimate``, ``plan finetune``, ``plan pretrain``, ``plan infer``, ``plan serve``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from gpuplan.errors import InputError
from gpuplan.types import KV_DTYPES, OPTIMIZERS, PRECISIONS, Engine, Market, Method, Objective, Recompute, Task
from gpuplan.units import fmt_bytes

LORA_TARGETS = ("all-linear", "attention", "qv", "mlp")
FOR_TRAINING = "training (--task finetune or pretrain)"
FOR_INFERENCE = "inference (--task infer or serve)"


@dataclass(frozen=True, slots=True)
class Range:
    """The numbers an option accepts: ``low`` to ``high`` inclusive, or above ``low`` when ``above``."""

    low: float
    high: float
    above: bool = False
    zero: str = ""  # what 0 means where 0 is accepted as a choice ("all", "gpuplan chooses")
    hint: str = ""  # what the number is, where the range alone does not say
    unit: str = ""  # the unit the number is in ("seconds"), or a formatter for the bounds
    fmt: Callable[[float], str] | None = None

    def contains(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return (value > self.low if self.above else value >= self.low) and value <= self.high

    def text(self) -> str:
        """``1 to 100,000``, ``more than 0 and at most 50 years``, ``0 to 1,000,000 (0: all)``."""
        show = self.fmt or shown
        unit = f" {self.unit}" if self.unit else ""
        span = (f"more than {show(self.low)} and at most {show(self.high)}{unit}" if self.above
                else f"{show(self.low)} to {show(self.high)}{unit}")
        return span + (f" (0: {self.zero})" if self.zero else "")


@dataclass(frozen=True, slots=True)
class Applies:
    """Where an option means something: ``tasks`` and fine-tuning ``methods`` (None: all of them). ``refusal``
    (of the flag) replaces "applies to ``text``" where the option's own words say more; a task of the other kind
    (training for an inference option) always gets the plain sentence."""

    tasks: frozenset[Task] | None = None
    methods: frozenset[Method] | None = None
    text: str = ""
    refusal: Callable[[str], InputError] | None = None

    def task_refusal(self, flag: str, task: Task) -> InputError | None:
        """The error for ``flag`` given to ``task`` (None: it applies)."""
        if self.tasks is None or task in self.tasks:
            return None
        kinds = {t.is_training for t in self.tasks}
        if kinds != {task.is_training} and len(kinds) == 1:  # an inference option in training, or back
            where = FOR_INFERENCE if task.is_training else FOR_TRAINING
            return InputError(flag, f"{flag} applies to {where}, not to --task {task}.", f"drop {flag}.")
        if self.refusal is not None:
            return self.refusal(flag)
        return InputError(flag, f"{flag} applies to {self.text}, not to --task {task}.", f"drop {flag}.")

    def method_refusal(self, flag: str, method: Method) -> InputError | None:
        """The error for ``flag`` given with ``method`` (None: it applies)."""
        if self.methods is None or method in self.methods:
            return None
        return InputError(flag, f"{flag} applies to {self.text}, not {method}.", f"drop {flag}.")


def _serving_only(field: str) -> InputError:
    return InputError(field, f"{field} applies to --task serve; a batch-inference job runs its requests as fast as "
                      "it can.", f"drop {field}, or use --task serve.")


def _batch_only(field: str) -> InputError:
    return InputError(field, "serving is sized by a request rate, not a request count.",
                      "use --task infer for a batch of requests.")


def _runs_to_an_end(field: str) -> InputError:
    return InputError(field, "serving runs continuously; a deadline does not apply.",
                      f"drop {field}; use --ttft and --tpot for latency targets.")


EVERYWHERE = Applies()
TRAINING = Applies(frozenset({Task.FINETUNE, Task.PRETRAIN}), text=FOR_TRAINING)
INFERENCE = Applies(frozenset({Task.INFER, Task.SERVE}), text=FOR_INFERENCE)
SERVING = Applies(frozenset({Task.SERVE}), text="--task serve", refusal=_serving_only)
BATCH_INFERENCE = Applies(frozenset({Task.INFER}), text="--task infer", refusal=_batch_only)
RUNS_TO_AN_END = Applies(frozenset({Task.FINETUNE, Task.PRETRAIN, Task.INFER}), text="jobs that end",
                         refusal=_runs_to_an_end)
LORA = Applies(methods=frozenset({Method.LORA, Method.QLORA}), text="--method lora or qlora")
PTUNING = Applies(methods=frozenset({Method.PTUNING}), text="--method ptuning")


@dataclass(frozen=True, slots=True)
class Option:
    """One option. ``name`` is the library's keyword and the HTTP API's field; ``flag`` the command line's
    (whose ``--`` dropped and ``-`` as ``_`` is :attr:`arg`, the Python API's keyword). ``kind`` is what the
    value is once read (int, float, str, bool or an enum); ``form`` the text form a skin parses it from (COUNT
    ``10k``, DURATION ``2s``, MONEY ``500USD``, SIZE ``48GB``, FORMAT). ``stages`` say which library call takes
    it: ``job`` (:func:`~gpuplan.requests.make_job`), ``layout`` (:func:`~gpuplan.requests.estimate_config`),
    ``plan`` (the plan's constraints); ``by_command`` holds the defaults of the commands that differ."""

    name: str
    flag: str
    kind: type = float
    default: Any = None
    range: Range | None = None
    applies: Applies = EVERYWHERE
    stages: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    form: str = ""
    by_command: tuple[tuple[str, Any], ...] = ()

    @property
    def arg(self) -> str:
        return self.flag[2:].replace("-", "_")

    def default_for(self, command: str) -> Any:
        """The default of ``command`` (``plan serve``: first its own, then ``plan``'s, then the option's)."""
        found = dict(self.by_command)
        words = command.split()
        for key in (" ".join(words[:n]) for n in range(len(words), 0, -1)):
            if key in found:
                return found[key]
        return self.default


def _o(flag: str, low: float, high: float, **kw: Any) -> Option:
    """A number with a range, known by its flag (its name is the flag's, with ``_``)."""
    above = kw.pop("above", False)
    r = Range(low, high, above, **{k: kw.pop(k) for k in ("zero", "hint", "unit", "fmt") if k in kw})
    return Option(kw.pop("name", flag[2:].replace("-", "_")), flag, range=r, **kw)


_JOB, _LAYOUT, _PLAN = ("job",), ("layout",), ("plan",)

# Beyond these ranges a request is a typo, not a plan: the largest published runs are ~15T tokens on ~100k GPUs
# with 1M-token contexts. Durations are seconds, money the plan's currency. The order is the order of refusals.
OPTIONS: tuple[Option, ...] = (
    # the work (make_job)
    Option("method", "--method", Method, Method.FULL, stages=_JOB, by_command=(("plan finetune", Method.LORA),)),
    _o("--samples", 0, 1e12, above=True, default=0.0, applies=TRAINING, stages=_JOB, form="COUNT"),
    _o("--tokens-per-sample", 0, 1e7, above=True, default=0.0, applies=TRAINING, stages=_JOB, form="COUNT"),
    _o("--epochs", 0, 1e4, above=True, default=1.0, applies=TRAINING, stages=_JOB),
    _o("--tokens", 0, 1e15, above=True, default=0.0, applies=TRAINING, stages=_JOB, form="COUNT"),
    _o("--seq-len", 1, 1e7, kind=int, applies=TRAINING, stages=_JOB),
    _o("--global-batch", 0, 1e8, zero="gpuplan chooses", kind=int, default=0, applies=TRAINING, stages=_JOB),
    Option("framework", "--framework", str, applies=TRAINING, stages=("job", "layout")),
    _o("--prompt", 1, 1e7, kind=int, default=1024, applies=INFERENCE, stages=_JOB,
       by_command=(("plan serve", 1000),)),
    _o("--output", 1, 1e7, kind=int, default=256, applies=INFERENCE, stages=_JOB, by_command=(("plan serve", 300),)),
    _o("--batch", 0, 1e6, zero="as many as fit", kind=int, default=0, applies=INFERENCE, stages=_JOB),
    _o("--requests", 0, 1e12, above=True, default=0.0, applies=BATCH_INFERENCE, stages=_JOB, form="COUNT",
       by_command=(("plan infer", 1000.0),)),
    _o("--rps", 0, 1e6, above=True, default=0.0, applies=SERVING, stages=_JOB, by_command=(("plan serve", 1.0),)),
    _o("--ttft", 0, 3600, above=True, unit="seconds", name="ttft_s", applies=SERVING, stages=_JOB, form="DURATION"),
    _o("--tpot", 0, 60, above=True, unit="seconds", name="tpot_s", applies=SERVING, stages=_JOB, form="DURATION"),
    Option("quant", "--quant", str, stages=_JOB, form="FORMAT"),  # where it applies depends on its value
    _o("--lora-rank", 1, 1e5, kind=int, default=16, applies=LORA, stages=_JOB),
    Option("lora_targets", "--lora-targets", str, "all-linear", applies=LORA, stages=_JOB, choices=LORA_TARGETS),
    Option("train_embeddings", "--train-embeddings", bool, False, applies=LORA, stages=_JOB),
    _o("--dataset-tokens", 0, 1e15, above=True, form="COUNT"),
    _o("--context", 1, 1e8, kind=int, default=2048),
    # one configuration (estimate_config)
    _o("--n-gpus", 1, 100_000, kind=int, stages=_LAYOUT),
    _o("--tp", 1, 1024, kind=int, default=1, stages=_LAYOUT),
    _o("--pp", 1, 1024, kind=int, default=1, stages=_LAYOUT),
    _o("--zero", 0, 3, kind=int, default=0, applies=TRAINING, stages=_LAYOUT, choices=("0", "1", "2", "3")),
    _o("--micro-batch", 1, 1e5, kind=int, default=1, applies=TRAINING, stages=_LAYOUT),
    _o("--grad-accum", 1, 1e6, kind=int, default=1, applies=TRAINING, stages=_LAYOUT),
    Option("recompute", "--recompute", Recompute, applies=TRAINING, stages=_LAYOUT),  # None: the framework's
    Option("precision", "--precision", str, "auto", applies=TRAINING, stages=_LAYOUT, choices=("auto", *PRECISIONS)),
    Option("optimizer", "--optimizer", str, applies=TRAINING, stages=_LAYOUT, choices=OPTIMIZERS),  # None: its
    _o("--prefix-len", 1, 1e5, kind=int, default=128, applies=PTUNING, stages=_LAYOUT),
    Option("engine", "--engine", Engine, Engine.VLLM, applies=INFERENCE, stages=("layout", "plan")),
    Option("kv_dtype", "--kv-dtype", str, "bf16", applies=INFERENCE, stages=_LAYOUT, choices=KV_DTYPES),
    # plan constraints
    _o("--max-gpus", 1, 100_000, kind=int, stages=_PLAN, by_command=(("plan pretrain", 2048),)),
    _o("--top", 1, 1000, kind=int, default=10, stages=_PLAN),
    _o("--budget", 0, 1e12, above=True, stages=_PLAN, form="MONEY"),
    _o("--deadline", 0, 10 * 365 * 86400, above=True, unit="seconds (10 years)", name="deadline_s", stages=_PLAN,
       form="DURATION", applies=RUNS_TO_AN_END),
    Option("objective", "--objective", Objective, Objective.COST, stages=_PLAN,
           by_command=(("plan pretrain", Objective.TIME),)),
    Option("market", "--market", Market, stages=_PLAN),
    Option("providers", "--providers", list, stages=_PLAN),
    Option("gpus", "--gpus", list, stages=_PLAN),
    Option("exclude_gpus", "--exclude-gpus", list, stages=_PLAN),
    Option("spot", "--spot", bool, stages=_PLAN, by_command=(("plan serve", False),)),  # None: spot and not
    Option("currency", "--currency", str, stages=_PLAN),  # None: the market's
    # serving that stays up (gpuplan.plan.serving)
    _o("--peak-rps", 0, 1e6, above=True),
    _o("--ttft-p99", 0, 3600, above=True, unit="seconds", name="ttft_p99_s"),
    _o("--tpot-p99", 0, 60, above=True, unit="seconds", name="tpot_p99_s"),
    _o("--availability", 0, 100, above=True, unit="percent", hint="a percentage below 100, e.g. 99.9", default=99.9),
    _o("--prefix-hit", 0, 0.99, hint="share of prompt tokens found in the prefix cache", default=0.0),
    _o("--max-per-offer", 1, 100_000, kind=int),
    _o("--adapters", 0, 10_000, zero="none", kind=int, default=0),
    _o("--adapter-rank", 1, 512, kind=int, default=16),
    # listings
    _o("--limit", 0, 1e6, zero="all", kind=int, default=40),
    _o("--min-gpus", 0, 1e5, above=True),
    _o("--min-memory", 0, 2**50, above=True, fmt=lambda n: fmt_bytes(n, 0), form="SIZE"),
    # rent or buy
    _o("--hours-per-month", 0, 744, unit="hours"),
    _o("--years", 0, 50, above=True, unit="years"),
    _o("--electricity", 0, 100, unit="per kWh", form="MONEY"),
    _o("--pue", 1, 4, hint="facility power over IT power: 1.0 at a desk, 1.1-1.6 in a data center"),
    # the server
    _o("--port", 1, 65535, kind=int, default=8000),
    _o("--workers", 1, 64, kind=int, default=1),
)

# every number a user gives, by flag (the HTTP API's fields take the same ranges, in the same units)
RANGES: dict[str, Range] = {o.flag: o.range for o in OPTIONS if o.range is not None}


@cache
def _by_name() -> dict[str, Option]:
    return {o.name: o for o in OPTIONS}


def option(name: str) -> Option:
    """The row of ``name`` (the library's and the HTTP API's name, e.g. ``ttft_s``)."""
    return _by_name()[name]


def option_of_arg(arg: str) -> Option:
    """The row of the Python API's keyword (the command line's parameter name) ``arg``: ``ttft`` → ``ttft_s``."""
    return _by_arg()[arg]


@cache
def _by_arg() -> dict[str, Option]:
    return {o.arg: o for o in OPTIONS}


def default(name: str, command: str = "estimate") -> Any:
    """The default of option ``name`` in ``command`` (``plan finetune``), as a plain value (an enum's text)."""
    value = option(name).default_for(command)
    return value.value if isinstance(value, StrEnum) else value


def defaults(command: str) -> dict[str, Any]:
    """Every option's default in ``command``, by name, as plain values (an enum's text)."""
    return {o.name: default(o.name, command) for o in OPTIONS}


def of_stage(stage: str) -> tuple[Option, ...]:
    """The options one library call takes (``job``, ``layout``, ``plan``), in the table's order."""
    return tuple(o for o in OPTIONS if stage in o.stages)


def with_defaults(stage: str, command: str, given: dict[str, Any]) -> dict[str, Any]:
    """Every option of ``stage`` with the user's value where given, else ``command``'s default; a name the stage
    does not take is a TypeError (a caller's bug, as an unknown keyword argument is)."""
    rows = of_stage(stage)
    names = {o.name for o in rows}
    for name in given:
        if name not in names:
            raise TypeError(f"unexpected option {name!r}; the {stage} options are: {', '.join(sorted(names))}")
    return {o.name: o.default_for(command) for o in rows} | given


def check_ranges(stage: str, values: dict[str, Any]) -> None:
    """Every number of ``values`` within its option's range; a 0 where 0 is the default means "not given", and
    an option of choices (``--zero``) is checked as a choice."""
    for o in of_stage(stage):
        value = values.get(o.name)
        if o.range is not None and not o.choices and value is not None and not (value == 0 and o.default == 0):
            check_range(o.flag, value)


def refuse_inapplicable(stage: str, given: Collection[str], task: Task | None = None,
                        method: Method | None = None) -> None:
    """Refuse the first option of ``stage`` in ``given`` that does not apply to ``task`` (the kind of task
    first, then the task itself) or to ``method``."""
    rows = [o for o in of_stage(stage) if o.name in given]
    for err in (*(o.applies.task_refusal(o.flag, task) for o in rows if task is not None and _kind_differs(o, task)),
                *(o.applies.task_refusal(o.flag, task) for o in rows if task is not None),
                *(o.applies.method_refusal(o.flag, method) for o in rows if method is not None)):
        if err is not None:
            raise err


def _kind_differs(o: Option, task: Task) -> bool:
    tasks = o.applies.tasks
    return tasks is not None and all(t.is_training != task.is_training for t in tasks)


def check_range(flag: str, value: float | None, typed: str | None = None) -> None:
    """``value`` (None: not given) lies in the range :data:`RANGES` states for ``flag``; ``typed`` is the text
    the user typed, when that differs from the number (``2d`` for 172800 seconds)."""
    if value is None or isinstance(value, bool):
        return
    r = RANGES[flag]
    if r.contains(value):
        return
    given = typed if typed is not None else shown(value)
    raise InputError(flag, f"{given} is out of range: {flag} takes {r.text()} ({r.hint})." if r.hint else
                     f"{given} is out of range: {flag} takes {r.text()}.",
                     f"give {flag} {r.text()}; check its unit." if r.high > 1e6 else f"give {flag} {r.text()}.")


def shown(value: float) -> str:
    """A number for a message: a huge integer as its digit count, not as all its digits."""
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"a {len(str(abs(value)))}-digit number"
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


@cache
def _by_flag() -> dict[str, Option]:
    return {o.flag: o for o in OPTIONS}


def option_of_flag(flag: str) -> Option:
    """The row of the command line's ``flag`` (``--ttft`` → ``ttft_s``)."""
    return _by_flag()[flag]


def flag_form(flag: str) -> str:
    """The text form the option ``flag`` is typed in (COUNT, DURATION, ...; empty: none)."""
    o = _by_flag().get(flag)
    return o.form if o else ""


def flag_choices(flag: str) -> tuple[str, ...] | None:
    """The values the option ``flag`` takes, where it is a choice (None: any text or number)."""
    o = _by_flag().get(flag)
    if o is None:
        return None
    if isinstance(o.kind, type) and issubclass(o.kind, StrEnum):
        return tuple(m.value for m in o.kind)
    return o.choices or None


def names(stages: Iterable[str]) -> tuple[str, ...]:
    """The Python API's keywords (:attr:`Option.arg`) of the options of ``stages``."""
    return tuple(dict.fromkeys(o.arg for s in stages for o in of_stage(s)))
