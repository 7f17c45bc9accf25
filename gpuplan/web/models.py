"""Request bodies of the HTTP API (pydantic), made from the table of options, :data:`gpuplan.options.OPTIONS`: a
job request's fields are the options of its command (:data:`gpuplan.options.COMMANDS`; a plan's are those its
library calls take), each with the row's name, type, default, range and help; the query parameters of the
listings, ``fit``, ``compare`` and ``buy`` are their commands' rows too (:data:`QUERIES`, :func:`query_options`).

Field names are the CLI's option names with ``_`` for ``-`` (``--tokens-per-sample`` → ``tokens_per_sample``);
durations are seconds and say so (``deadline_s``). Counts (``samples``, ``tokens`` ...) take a number or the
CLI's text form (``"10k"``, ``"1.4T"``); they are parsed by :func:`gpuplan.units.parse_count` in the adapter,
so a bad one is reported like every other library error. The enums below are checked against the library's
tuples by ``tests/test_web_api.py``. Every number's range and default comes from :data:`gpuplan.options.OPTIONS`
(the CLI's table), so a huge number is a 400 naming the field, and the OpenAPI document states each range; what
a request leaves out takes the command's default in the library (the fields a client sent are what it gave, as
the options typed on a command line are); lists hold at
most :data:`MAX_NAMES` names and texts at most :data:`MAX_TEXT` characters, which bounds each request's work.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from gpuplan.options import COMMANDS, OPTIONS, PLAN_CONSTRAINTS, RANGES, Option, of_stage, option
from gpuplan.signatures import NAMED, F, spliced
from gpuplan.types import Engine, Market, Method, Objective, Recompute, Task
from gpuplan.units import parse_money, parse_seconds

Precision = Literal["bf16-mixed", "fp16-mixed", "fp8-mixed", "fp4-mixed", "bf16", "fp32"]
Optimizer = Literal["adamw", "adamw-8bit", "paged-adamw", "paged-adamw-8bit", "sgd", "sgd-momentum", "adafactor"]
Segment = Literal["datacenter", "workstation", "consumer", "tpu", "npu"]
Currency = Literal["USD", "CNY", "EUR"]
Tier = Literal["on-demand", "spot", "reserved", "marketplace"]  # an offer's pricing (catalog.schemas.PRICINGS)
MAX_NAMES = 64  # names in one list field (GPUs, providers): more than the catalog holds of either
MAX_TEXT = 256  # characters in one text field (a model or GPU name, a count such as "1.4T")
Count = float | Annotated[str, Field(max_length=32)]  # 10000, 1e4 or "10k"
Names = Annotated[list[Annotated[str, Field(max_length=MAX_TEXT)]], Field(max_length=MAX_NAMES)]


def required(flag: str) -> Any:
    """A required whole number whose bounds are the CLI option's range (``--prompt`` → 1 to 10,000,000)."""
    return Field(..., **bounds(flag, whole=True))


def bounds(option: str, whole: bool) -> dict[str, Any]:
    """Pydantic's bounds for the range of ``option``; for a whole number "at least 1" is "above 0", which the
    error message then says."""
    r = RANGES[option]
    if r.above or (whole and r.low >= 1):
        return {"gt": r.low if r.above else r.low - 1, "le": r.high}
    return {"ge": r.low, "le": r.high}


class ErrorBody(BaseModel):
    """Every error response (400, 401, 413, 422, 500): what is wrong, the field it concerns, what to do."""

    error: str
    field: str | None
    fix: str
    error_zh: str = Field(description="`error` in Chinese (the page shows it in Chinese mode)")
    fix_zh: str = Field(description="`fix` in Chinese")


class _Request(BaseModel):
    """Unknown fields are errors (a typo such as ``sample`` must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


MAX_BUCKETS = 16  # request-size buckets in one serving request


class BucketFields(_Request):
    """One request size of the traffic: ``share`` of the requests have ``prompt`` + ``output`` tokens."""

    prompt: int = required("--prompt")
    output: int = required("--output")
    share: float = Field(gt=0, le=1, description="Share of the traffic; the shares of all buckets add up to 1.")


class PercentileFields(_Request):
    """Request lengths at one percentile: ``percentile`` % of the requests have at most ``prompt`` + ``output``
    tokens."""

    percentile: float = Field(gt=0, le=100, description="The percentile, above 0 and at most 100 (e.g. 90).")
    prompt: int = required("--prompt")
    output: int = required("--output")


# The JSON of the options the command line reads from text of its own (``2,2,1,…``, ``512:128:0.7``), and of
# choices the table leaves to the library: their type, and for the first three what the field holds.
SHAPES: dict[str, tuple[Any, str]] = {
    "profile": (Annotated[list[float], Field(max_length=24)],
                "Daily traffic: 24 hourly mean requests per second, hour 0 first. The fleet is sized for its peak (or "
                "peak_rps when larger); the answer's daily_profile prices following it with autoscaling against a "
                "fixed peak fleet."),
    "buckets": (Annotated[list[BucketFields], Field(max_length=MAX_BUCKETS)],
                "Request-size buckets; when given they replace prompt/output."),
    "percentiles": (Annotated[list[PercentileFields], Field(max_length=MAX_BUCKETS)],
                    "Request lengths at percentiles (instead of buckets): each interval between two percentiles is a "
                    "bucket at its upper lengths, requests above the top one count at its lengths."),
    "tiers": (Annotated[list[Tier], Field(max_length=4)], ""),
    "currency": (Currency, ""),
}


def api_type(o: Option) -> Any:
    """The JSON type of option ``o``'s field: a count as a number or its text (``"10k"``), a repeatable option as
    a list of names, a choice as a literal, an enum, text, or the row's number kind."""
    if o.name in SHAPES:
        return SHAPES[o.name][0]
    if o.form == "COUNT":
        return Count
    if o.kind is list:
        return Names
    if o.choices:
        return Literal[tuple(o.kind(c) for c in o.choices)]  # type: ignore[valid-type]
    return o.kind


def request_default(o: Option, commands: Iterable[str]) -> Any:
    """The default of ``o``'s field in a request for ``commands``: theirs where they agree, else None (the
    task's, chosen later); a count's 0 is "not given" (None), a list's is empty."""
    values = {None if c in o.unset_in else o.default_for(c) for c in commands}
    value = values.pop() if len(values) == 1 else None
    if o.kind is list:
        return []
    return None if o.form == "COUNT" and not value else value


_FLAG = re.compile(r"--[a-z][a-z0-9-]*")
_EXAMPLE = re.compile(r"e\.g\. ([^\s.,()]+(?: or [^\s.,()]+)*)")


def described(o: Option, command: str) -> str:
    """The field's description: the command line's help of ``command`` in the API's terms: a flag as its field's
    name (``with --profile`` → ``with profile``, ``--spot`` → ``spot: true``), no "repeatable" (a list says it),
    and a duration's or an amount's example as the number the field takes (``e.g. 500ms`` → ``e.g. 0.5 s``,
    ``500USD`` → ``500``)."""
    if o.name in SHAPES and SHAPES[o.name][1]:
        return SHAPES[o.name][1]
    text = _FLAG.sub(lambda m: _field_of(m.group(0)), o.help_for(command))
    text = text.replace(" (repeatable)", "").replace("repeatable; ", "")
    if o.form in ("DURATION", "MONEY"):
        text = _EXAMPLE.sub(lambda m: "e.g. " + " or ".join(_number(o, t) for t in m.group(1).split(" or ")), text)
    return text


def _field_of(flag: str) -> str:
    """``--profile`` → ``profile``, a switch ``--spot`` → ``spot: true``; another program's flag as it is."""
    rows = {f: o for o in OPTIONS for f in (o.flag, *o.typed)}
    o = rows.get(flag)
    return flag if o is None else f"{o.name}: true" if o.kind is bool else o.name


def _number(o: Option, example: str) -> str:
    if o.form == "DURATION":
        return f"{parse_seconds(example, o.name):g} s"
    return f"{parse_money(example, o.name)[0]:g}"


def job_field(o: Option, commands: tuple[str, ...], command: str) -> tuple[Any, Any]:
    """The type and pydantic field of option ``o`` in the request for ``commands`` (described with the help of
    ``command``): the row's range as bounds, text at most :data:`MAX_TEXT` characters."""
    kind, value = api_type(o), request_default(o, commands)
    extra: dict[str, Any] = {}
    if o.range is not None and not o.choices and o.form != "COUNT":
        extra = bounds(o.flag, whole=o.kind is int)
    elif o.kind is str and not o.choices and o.name not in SHAPES:
        extra = {"min_length": 1, "max_length": MAX_TEXT}
    return (kind | None if value is None else kind), Field(value, description=described(o, command) or None, **extra)


def job_model(name: str, base: type[_Request], fields: Iterable[str], commands: tuple[str, ...],
              command: str) -> Any:
    """A request model with ``base``'s fields and the options ``fields`` of the table (by name, in that order)."""
    rows: dict[str, Any] = {n: job_field(option(n), commands, command) for n in fields}
    return create_model(name, __base__=base, __module__=__name__, **rows)


class _Job(_Request):
    model: str = Field(min_length=1, max_length=MAX_TEXT,
                       description="A preset name from GET /api/models (or its Hub repository id).")


class _Plan(_Job):
    task: Task
    budget_currency: Currency | None = None
    alternatives: bool = Field(False, description="Also price the cheaper changes to a plan that fits (a cheaper "
                                                  "format, engine, method or any GPU): one more plan per change, "
                                                  "so about twice the work; the web page asks for them.")

    @model_validator(mode="after")
    def _plan_defaults(self) -> _Plan:
        """Constraints left out take the defaults of ``gpuplan plan TASK`` (the job's are the library's): a request
        spelled out is the same request."""
        for o in of_stage("plan"):
            if o.by_command and getattr(self, o.name) is None:
                setattr(self, o.name, o.default_for(f"plan {self.task}"))
        return self


PLAN_COMMANDS = ("plan finetune", "plan pretrain", "plan infer", "plan serve")


def plan_fields() -> tuple[str, ...]:
    """A plan request's options: those of the job (:func:`gpuplan.requests.make_job`) and the plan's constraints,
    as the plan commands list them."""
    return tuple(dict.fromkeys([o.name for o in of_stage("job")] + ["engine", *PLAN_CONSTRAINTS]))


# The query parameters of the endpoints that have a command of their own (GET /api/offers: gpuplan offers), in the
# order the OpenAPI document lists them: rows of the command's options (gpuplan.options.COMMANDS). The command
# line's others stay there: a table's columns (--wide, --points), --min-gpus, and buy's --years, --pue and
# --electricity (the endpoint prices with their defaults).
QUERIES: dict[str, tuple[str, ...]] = {
    "gpus": ("market", "min_memory", "vendor", "segment", "sort"),
    "offers": ("gpu", "exact", "market", "currency", "spot", "provider", "tiers", "sort", "limit"),
    "history": ("gpu", "provider", "regions", "tiers"),
    "platforms": ("market",),
    "fit": ("context", "gpus"),
    "compare": ("model",),
    "buy": ("n_gpus", "hours_per_month", "market", "currency", "years", "pue", "electricity"),
}
Text = Annotated[str, Query(max_length=MAX_TEXT)]


def query_type(o: Option, command: str) -> Any:
    """The type of option ``o``'s query parameter in the endpoint of ``command``: a list of names (of tiers) at
    most :data:`MAX_NAMES` (4) long, text in the row's form (``48GB``), a number within the row's range, a choice
    as a literal, an enum, a switch, or text at most :data:`MAX_TEXT` characters; or None where it is not required
    and has no default."""
    kind = o.kind_for(command)
    if kind is list:
        item, most = (Tier, 4) if o.name == "tiers" else (Annotated[str, Query(max_length=MAX_TEXT)], MAX_NAMES)
        return Annotated[list[item] | None, Query(max_length=most)]  # type: ignore[valid-type]
    if o.form:  # text the endpoint reads (48GB), as the command line's
        typed: Any = Text
    elif o.range is not None:
        typed = Annotated[kind, Query(**bounds(o.flag, whole=kind is int))]
    elif o.name == "currency":
        typed = Currency
    elif o.choices:
        typed = Literal[tuple(o.choices)]
    elif kind is str:
        typed = Text
    else:
        typed = kind
    optional = command not in o.required_in and o.default_for(command) is None
    return typed | None if optional else typed


def query_options(command: str) -> Callable[[F], F]:
    """Give the decorated endpoint's parameter ``q`` the query parameters :data:`QUERIES` lists for ``command`` in
    its place, each with its row's type, range and default; the endpoint receives them as one namespace, ``q``
    (named by :attr:`~gpuplan.options.Option.arg`: ``tier`` for ``tiers``, as the command line's)."""
    def parameter(o: Option) -> inspect.Parameter:
        value = inspect.Parameter.empty if command in o.required_in else o.default_for(command)
        return inspect.Parameter(o.arg, NAMED, annotation=query_type(o, command), default=value)

    return lambda func: spliced(func, "q", [parameter(option(n)) for n in QUERIES[command]])


_Estimate = job_model("EstimateRequest", _Job, COMMANDS["estimate"], ("estimate",), "estimate")
_PlanJob = job_model("PlanRequest", _Plan, plan_fields(), PLAN_COMMANDS, "plan")
_Serve = job_model("ServeRequestBody", _Job, COMMANDS["plan serve"], ("plan serve",), "plan serve")


class EstimateRequest(_Estimate):  # type: ignore[misc,valid-type]
    """One configuration (``gpuplan estimate``)."""


class PlanRequest(_PlanJob):  # type: ignore[misc,valid-type]
    """A job and the constraints to plan it under (``gpuplan plan TASK``)."""


class ServeRequestBody(_Serve):  # type: ignore[misc,valid-type]
    """A serving fleet to plan (``gpuplan plan serve --json``). Durations in seconds, money per hour in
    ``currency``, availability in percent."""


__all__ = ["BucketFields", "Currency", "Engine", "ErrorBody", "EstimateRequest", "Market", "Method", "Objective",
           "Optimizer", "PlanRequest", "Precision", "Recompute", "Segment", "ServeRequestBody", "Task", "Tier",
           "job_model"]
