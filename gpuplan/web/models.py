"""Request bodies of the HTTP API (pydantic): field types, enums and positive sizes.

Field names are the CLI's option names with ``_`` for ``-`` (``--tokens-per-sample`` → ``tokens_per_sample``);
durations are seconds and say so (``deadline_s``). Counts (``samples``, ``tokens`` ...) take a number or the
CLI's text form (``"10k"``, ``"1.4T"``); they are parsed by :func:`gpuplan.units.parse_count` in the adapter,
so a bad one is reported like every other library error. The enums below are checked against the library's
tuples by ``tests/test_web_api.py``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveFloat, PositiveInt, model_validator

Task = Literal["finetune", "pretrain", "infer", "serve"]
Method = Literal["full", "lora", "qlora", "ptuning", "freeze"]
Engine = Literal["hf", "vllm", "sglang", "trtllm", "llamacpp"]
Precision = Literal["bf16-mixed", "fp16-mixed", "fp8-mixed", "bf16", "fp32"]
Optimizer = Literal["adamw", "adamw-8bit", "paged-adamw", "paged-adamw-8bit", "sgd", "sgd-momentum", "adafactor"]
Recompute = Literal["none", "selective", "full"]
LoraTargets = Literal["all-linear", "attention", "qv", "mlp"]
KvDtype = Literal["bf16", "fp16", "fp8"]
Market = Literal["cn", "global"]
Segment = Literal["datacenter", "workstation", "consumer", "tpu", "npu"]
Currency = Literal["USD", "CNY"]
Objective = Literal["cost", "time", "value"]
Count = float | str  # 10000, 1e4 or "10k"


class _Request(BaseModel):
    """Unknown fields are errors (a typo such as ``sample`` must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid")
    _defaults: ClassVar[dict[str, dict[str, Any]]] = {}

    @model_validator(mode="after")
    def _fill_defaults(self) -> _Request:
        """Fields left out take the CLI's default for the request's task."""
        for name, value in self._defaults.get(getattr(self, "task", ""), {}).items():
            if getattr(self, name) is None:
                setattr(self, name, value)
        return self


class JobFields(_Request):
    """What both an estimate and a plan describe: the model and the work."""

    model: str = Field(min_length=1, description="A preset name from GET /api/models (or its Hub repository id).")
    method: Method | None = None
    samples: Count | None = None
    tokens_per_sample: Count | None = None
    epochs: PositiveFloat = 1.0
    tokens: Count | None = None
    seq_len: PositiveInt | None = None
    lora_rank: PositiveInt = 16
    lora_targets: LoraTargets = "all-linear"
    prompt: PositiveInt | None = None
    output: PositiveInt | None = None
    batch: NonNegativeInt | None = None  # 0: as many as the engine holds (batch inference)
    requests: Count | None = None
    quant: str | None = Field(None, min_length=1)
    engine: Engine = "vllm"
    framework: str | None = Field(None, min_length=1, max_length=64,
                                  description="Training framework whose defaults apply (gpuplan/data/frameworks.csv).")


class EstimateRequest(JobFields):
    """One configuration (``gpuplan estimate``)."""

    task: Task = "infer"
    gpu: str = Field("H100", min_length=1)
    n_gpus: PositiveInt | None = None
    tp: PositiveInt = 1
    pp: PositiveInt = 1
    zero: Literal[0, 1, 2, 3] = 0
    micro_batch: PositiveInt = 1
    grad_accum: PositiveInt = 1
    recompute: Recompute | None = None  # None: the framework's default (none without one)
    precision: Precision | Literal["auto"] = "auto"
    optimizer: Optimizer | None = None  # None: the framework's default (adamw without one)
    kv_dtype: KvDtype = "bf16"
    # the defaults of `gpuplan estimate`
    method: Method = "full"
    prompt: PositiveInt = 1024
    output: PositiveInt = 256
    batch: NonNegativeInt = 0


class PlanRequest(JobFields):
    """A job and the constraints to plan it under (``gpuplan plan TASK``)."""

    task: Task
    global_batch: int = Field(0, ge=0, description="Sequences per optimizer step (0: 32 for fine-tuning, "
                                                   "4M tokens for pretraining).")
    rps: PositiveFloat | None = None
    ttft_s: PositiveFloat | None = None
    tpot_s: PositiveFloat | None = None
    market: Market | None = None
    providers: list[str] = []
    gpus: list[str] = []
    exclude_gpus: list[str] = []
    max_gpus: PositiveInt | None = None
    budget: PositiveFloat | None = None
    budget_currency: Currency | None = None
    deadline_s: PositiveFloat | None = None
    spot: bool | None = None
    currency: Currency | None = None
    objective: Objective | None = None
    top: PositiveInt = 10

    # the defaults of `gpuplan plan finetune|pretrain|infer|serve`
    _defaults: ClassVar[dict[str, dict[str, Any]]] = {
        "finetune": {"method": "lora", "objective": "cost"},
        "pretrain": {"method": "full", "max_gpus": 2048, "objective": "time"},
        "infer": {"prompt": 1024, "output": 256, "batch": 0, "requests": 1000, "objective": "cost"},
        "serve": {"prompt": 1000, "output": 300, "rps": 1.0, "objective": "cost"},
    }


__all__ = ["EstimateRequest", "JobFields", "PlanRequest"]
