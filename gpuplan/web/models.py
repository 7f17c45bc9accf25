"""Request bodies of the HTTP API (pydantic): field types, enums and positive sizes.

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

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpuplan.options import RANGES, of_stage, option, option_of_flag
from gpuplan.types import Engine, Market, Method, Objective, Recompute, Task

Precision = Literal["bf16-mixed", "fp16-mixed", "fp8-mixed", "bf16", "fp32"]
Optimizer = Literal["adamw", "adamw-8bit", "paged-adamw", "paged-adamw-8bit", "sgd", "sgd-momentum", "adafactor"]
LoraTargets = Literal["all-linear", "attention", "qv", "mlp"]
KvDtype = Literal["bf16", "fp16", "fp8"]
Segment = Literal["datacenter", "workstation", "consumer", "tpu", "npu"]
Currency = Literal["USD", "CNY", "EUR"]
Tier = Literal["on-demand", "spot", "reserved", "marketplace"]  # an offer's pricing (catalog.schemas.PRICINGS)
MAX_NAMES = 64  # names in one list field (GPUs, providers): more than the catalog holds of either
MAX_TEXT = 256  # characters in one text field (a model or GPU name, a count such as "1.4T")
Count = float | Annotated[str, Field(max_length=32)]  # 10000, 1e4 or "10k"
Names = Annotated[list[Annotated[str, Field(max_length=MAX_TEXT)]], Field(max_length=MAX_NAMES)]


def ranged(option: str, command: str | None = None, whole: bool = True, required: bool = False,
           **extra: Any) -> Any:
    """A field whose bounds are the CLI option's range (``--max-gpus`` → 1 to 100,000) and whose default is
    ``command``'s (None without one; none at all when ``required``)."""
    value = ... if required else option_of_flag(option).default_for(command) if command else None
    return Field(value, **bounds(option, whole), **extra)


def table(name: str, command: str = "estimate", **extra: Any) -> Any:
    """A field whose default is ``command``'s for option ``name`` (:data:`gpuplan.options.OPTIONS`)."""
    return Field(option(name).default_for(command), **extra)


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


class JobFields(_Request):
    """What both an estimate and a plan describe: the model and the work."""

    model: str = Field(min_length=1, max_length=MAX_TEXT,
                       description="A preset name from GET /api/models (or its Hub repository id).")
    method: Method | None = None
    samples: Count | None = None
    tokens_per_sample: Count | None = None
    epochs: float = ranged("--epochs", "estimate")
    tokens: Count | None = None
    seq_len: int | None = ranged("--seq-len")
    lora_rank: int = ranged("--lora-rank", "estimate")
    lora_targets: LoraTargets = table("lora_targets")
    train_embeddings: bool = table("train_embeddings", description="LoRA/QLoRA also trains the embedding and "
                                   "output layer (PEFT modules_to_save), as when tokens are added.")
    prompt: int | None = ranged("--prompt")
    output: int | None = ranged("--output")
    batch: int | None = ranged("--batch")  # 0: as many as the engine holds (batch inference)
    requests: Count | None = None
    quant: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    engine: Engine = table("engine")
    framework: str | None = Field(None, min_length=1, max_length=64,
                                  description="Training framework whose defaults apply (gpuplan/data/frameworks.csv).")


class EstimateRequest(JobFields):
    """One configuration (``gpuplan estimate``)."""

    task: Task = Task.INFER
    gpu: str = Field("H100", min_length=1, max_length=MAX_TEXT)
    n_gpus: int | None = ranged("--n-gpus")
    tp: int = ranged("--tp", "estimate")
    pp: int = ranged("--pp", "estimate")
    zero: Literal[0, 1, 2, 3] = table("zero")
    micro_batch: int = ranged("--micro-batch", "estimate")
    grad_accum: int = ranged("--grad-accum", "estimate")
    recompute: Recompute | None = None  # None: the framework's default (none without one)
    precision: Precision | Literal["auto"] = table("precision")
    optimizer: Optimizer | None = None  # None: the framework's default (adamw without one)
    kv_dtype: KvDtype = table("kv_dtype")
    # the defaults of `gpuplan estimate`
    method: Method = table("method")
    prompt: int = ranged("--prompt", "estimate")
    output: int = ranged("--output", "estimate")
    batch: int = ranged("--batch", "estimate")


class PlanRequest(JobFields):
    """A job and the constraints to plan it under (``gpuplan plan TASK``)."""

    task: Task
    global_batch: int = ranged("--global-batch", "plan", description="Sequences per optimizer step (0: 32 for "
                                                                  "fine-tuning, 4M tokens for pretraining).")
    rps: float | None = ranged("--rps")
    ttft_s: float | None = ranged("--ttft")
    tpot_s: float | None = ranged("--tpot")
    market: Market | None = None
    providers: Names = []
    gpus: Names = []
    exclude_gpus: Names = []
    max_gpus: int | None = ranged("--max-gpus")
    budget: float | None = ranged("--budget")
    budget_currency: Currency | None = None
    deadline_s: float | None = ranged("--deadline")
    spot: bool | None = None
    tiers: list[Tier] = Field([], max_length=4, description="Pricing tiers to plan with (default: on-demand and "
                                                            "spot; reserved and marketplace only when named).")
    currency: Currency | None = None
    objective: Objective | None = None
    top: int = ranged("--top", "plan")
    alternatives: bool = Field(False, description="Also price the cheaper changes to a plan that fits (a cheaper "
                                                  "format, engine, method or any GPU): one more plan per change, "
                                                  "so about twice the work; the web page asks for them.")

    @model_validator(mode="after")
    def _plan_defaults(self) -> PlanRequest:
        """Constraints left out take the defaults of ``gpuplan plan TASK`` (the job's are the library's): a request
        spelled out is the same request."""
        for o in of_stage("plan"):
            if o.by_command and getattr(self, o.name) is None:
                setattr(self, o.name, o.default_for(f"plan {self.task}"))
        return self


Tolerate = Literal["zone", "region", "none"]
GuardMode = Literal["serial", "parallel"]
MAX_BUCKETS = 16  # request-size buckets in one serving request


class BucketFields(_Request):
    """One request size of the traffic: ``share`` of the requests have ``prompt`` + ``output`` tokens."""

    prompt: int = ranged("--prompt", required=True)
    output: int = ranged("--output", required=True)
    share: float = Field(gt=0, le=1, description="Share of the traffic; the shares of all buckets add up to 1.")


class PercentileFields(_Request):
    """Request lengths at one percentile: ``percentile`` % of the requests have at most ``prompt`` + ``output``
    tokens."""

    percentile: float = Field(gt=0, le=100, description="The percentile, above 0 and at most 100 (e.g. 90).")
    prompt: int = ranged("--prompt", required=True)
    output: int = ranged("--output", required=True)


class ServeRequestBody(_Request):
    """A serving fleet to plan (``gpuplan plan serve --json``). Durations in seconds, money per hour in
    ``currency``, availability in percent."""

    model: str = Field(min_length=1, max_length=MAX_TEXT,
                       description="A preset name from GET /api/models (or its Hub repository id).")
    rps: float | None = ranged("--rps", whole=False, description="Mean requests per second (default 1; with "
                               "profile, the profile's mean).")
    peak_rps: float | None = ranged("--peak-rps", whole=False,
                                    description="Peak requests per second (default: the mean).")
    profile: Annotated[list[float], Field(max_length=24)] | None = Field(
        None, description="Daily traffic: 24 hourly mean requests per second, hour 0 first. The fleet is sized for "
        "its peak (or peak_rps when larger); the answer's daily_profile prices following it with autoscaling "
        "against a fixed peak fleet.")
    prompt: int = ranged("--prompt", "plan serve")
    output: int = ranged("--output", "plan serve")
    buckets: Annotated[list[BucketFields], Field(max_length=MAX_BUCKETS)] = Field(
        [], description="Request-size buckets; when given they replace prompt/output.")
    percentiles: Annotated[list[PercentileFields], Field(max_length=MAX_BUCKETS)] = Field(
        [], description="Request lengths at percentiles (instead of buckets): each interval between two "
        "percentiles is a bucket at its upper lengths, requests above the top one count at its lengths.")
    ttft_s: float | None = ranged("--ttft", whole=False, description="Median TTFT target.")
    ttft_p99_s: float | None = ranged("--ttft-p99", whole=False, description="p99 TTFT target (5 s when no TTFT "
                                                                             "target is given).")
    tpot_s: float | None = ranged("--tpot", whole=False, description="Median TPOT target.")
    tpot_p99_s: float | None = ranged("--tpot-p99", whole=False, description="p99 TPOT target.")
    availability: float = ranged("--availability", "plan serve", whole=False,
                                 description="Availability target in percent, below 100.")
    tolerate: Tolerate = "zone"
    market: Market | None = None
    users: Market = Field(Market.GLOBAL, description="Where the users are: cn (mainland China) adds the China "
                                                     "compliance checklist to the answer.")
    providers: Names = []
    regions: Names = []
    gpus: Names = []
    exclude_gpus: Names = []
    spot: bool = table("spot", "plan serve", description="Allow spot capacity in the mix.")
    allow_marketplace: bool = Field(False, description="Allow marketplace / community hosts.")
    tiers: list[Tier] = Field([], max_length=4, description="Pricing tiers the fleet may rent (default: on-demand, "
                                                            "with spot and marketplace when allowed; reserved only "
                                                            "when named).")
    prefix_hit: float = ranged("--prefix-hit", "plan serve", whole=False)
    quant: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    engine: Engine = table("engine", "plan serve")
    currency: Currency | None = None
    budget: float | None = ranged("--budget", whole=False, description="Most the fleet may cost per hour.")
    max_per_offer: int | None = ranged("--max-per-offer")
    adapters: int = ranged("--adapters", "plan serve", description="LoRA adapters served on the same base "
                           "(multi-LoRA), all resident on every replica.")
    adapter_rank: int = ranged("--adapter-rank", "plan serve", description="Rank of the largest adapter.")
    guard: str = Field("none", min_length=1, max_length=MAX_TEXT,
                       description="Content-safety guard: a guard preset sized as a second model, api (a moderation "
                                   "service), api:SERVICE, or none (gpuplan/data/guards.csv, moderation_apis.csv).")
    guard_mode: GuardMode = Field("serial", description="serial: the guard checks the prompt before the main "
                                                        "prefill; parallel: alongside it.")


__all__ = ["BucketFields", "ErrorBody", "EstimateRequest", "JobFields", "PlanRequest", "ServeRequestBody"]
