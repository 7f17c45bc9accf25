"""What every estimator returns: a breakdown that sums to a total, the assumptions it used, and an error
band drawn from the calibration residuals of its class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Assumption:
    """A named value an estimate depends on, with where it comes from."""

    name: str
    value: str
    source: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "value": self.value, "source": self.source}


@dataclass(frozen=True, slots=True)
class Band:
    """Multiplicative error band: the true value is expected within [low·x, high·x] for 80 % of cases
    like this one (p10 and p90 of measured/predicted over ``n_rows`` calibration rows of ``cls``).

    ``held_low``/``held_high`` are the same quantiles when each source is left out of the fit: the band to
    expect for a model, GPU or stack unlike any the calibration holds (wider, and the honest one there)."""

    low: float
    high: float
    cls: str
    n_rows: int
    held_low: float | None = None
    held_high: float | None = None

    def around(self, value: float) -> tuple[float, float]:
        return value * self.low, value * self.high

    def held_around(self, value: float) -> tuple[float, float] | None:
        if self.held_low is None or self.held_high is None:
            return None
        return value * self.held_low, value * self.held_high

    def describe(self) -> str:
        """'0.88×–1.62× (finetune_time; held out 0.65×–2.54×)'."""
        held = (f"; held out {self.held_low:.2f}×–{self.held_high:.2f}×"
                if self.held_low is not None and self.held_high is not None else "")
        return f"{self.low:.2f}×–{self.high:.2f}× ({self.cls}{held})"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"p10_ratio": round(self.low, 4), "p90_ratio": round(self.high, 4),
                               "class": self.cls, "calibration_rows": self.n_rows}
        if self.held_low is not None and self.held_high is not None:
            out.update(held_out_p10_ratio=round(self.held_low, 4), held_out_p90_ratio=round(self.held_high, 4))
        return out


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Named parts in one unit (``unit``) that add up to ``total``."""

    unit: str
    parts: tuple[tuple[str, float], ...]

    @property
    def total(self) -> float:
        return sum([v for _, v in self.parts])  # a list, not a generator: the same sum in the same order, sooner

    def get(self, name: str) -> float:
        return sum(v for k, v in self.parts if k == name)

    def as_dict(self) -> dict[str, float]:
        return {k: v for k, v in self.parts}


@dataclass(frozen=True, slots=True)
class Floor:
    """The least of a memory estimate's total a job runs in: the total less what the runtime gives back when
    memory runs short (``given_back``: the breakdown parts left out), with the band of that smaller figure."""

    value: float
    band: Band
    given_back: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"bytes": self.value, "given_back": list(self.given_back), "band": self.band.as_dict()}


@dataclass(frozen=True, slots=True)
class KvCapacity:
    """What an inference-memory estimate on a GPU answers besides its total: what the engine reserves
    (None: it allocates as it goes), the KV-cache budget left (negative when weights and buffers alone exceed the
    engine's share), its capacity in tokens and in sequences of the setup's context, and the longest context at
    the setup's batch (None: not asked for, in a plan's lean estimates)."""

    engine_reserved_bytes: float | None
    kv_budget_bytes: float
    kv_capacity_tokens: int
    max_concurrent_seqs: int
    max_context_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"engine_reserved_bytes": self.engine_reserved_bytes,
                               "kv_budget_bytes": self.kv_budget_bytes, "kv_capacity_tokens": self.kv_capacity_tokens,
                               "max_concurrent_seqs": self.max_concurrent_seqs}
        if self.max_context_tokens is not None:
            out["max_context_tokens"] = self.max_context_tokens
        return out


@dataclass(frozen=True, slots=True)
class TrainedParts:
    """What a training-memory estimate answers besides its total: parameters trained and held, and the
    gradients, activations and logits of a whole step (before the peak moment picks its share of them)."""

    trainable_params: float
    total_params: float
    gradients_bytes: float
    activations_bytes: float
    logits_bytes: float

    def as_dict(self) -> dict[str, Any]:
        return {"trainable_params": self.trainable_params, "total_params": self.total_params,
                "gradients_bytes": self.gradients_bytes, "activations_bytes": self.activations_bytes,
                "logits_bytes": self.logits_bytes}


@dataclass(frozen=True, slots=True)
class TrainRate:
    """What a training-time estimate answers besides its total: MFU, utilisation, GPU-hours, training tokens
    per second, optimizer steps, and the total as a person reads it (``human``)."""

    mfu: float
    utilisation: float
    gpu_hours: float
    tokens_per_s: float
    steps: float
    human: str

    def as_dict(self) -> dict[str, Any]:
        return {"mfu": self.mfu, "utilisation": self.utilisation, "gpu_hours": self.gpu_hours,
                "tokens_per_s": self.tokens_per_s, "steps": self.steps, "human": self.human}


@dataclass(frozen=True, slots=True)
class SpeedFigures:
    """What an inference-speed estimate answers besides its total: TTFT and TPOT at ``batch``, the output and
    request rates, what bounds decoding (``memory`` or ``compute``) and one sequence's decode rate."""

    ttft_s: float
    tpot_s: float
    batch: int
    output_tokens_per_s: float
    requests_per_s: float
    bound: str
    decode_tokens_per_s_per_seq: float

    def as_dict(self) -> dict[str, Any]:
        return {"ttft_s": self.ttft_s, "tpot_s": self.tpot_s, "batch": self.batch,
                "output_tokens_per_s": self.output_tokens_per_s, "requests_per_s": self.requests_per_s,
                "bound": self.bound, "decode_tokens_per_s_per_seq": self.decode_tokens_per_s_per_seq}


@dataclass(frozen=True, slots=True)
class Waves:
    """What a batch-inference job's time answers besides its total: the batches it runs in, one after another."""

    batches: int

    def as_dict(self) -> dict[str, Any]:
        return {"batches": self.batches}


Answers = KvCapacity | TrainedParts | TrainRate | SpeedFigures | Waves


@dataclass(frozen=True, slots=True)
class Estimate:
    """A total with its breakdown, band and assumptions; ``answers`` the figures derived with it, typed by the
    estimator that made them (:class:`KvCapacity`, :class:`TrainedParts`, :class:`TrainRate`,
    :class:`SpeedFigures`, :class:`Waves`; None when there are none), read through :attr:`capacity`,
    :attr:`trained`, :attr:`rate`, :attr:`figures` and :attr:`waves`; ``floor`` (memory only) what the job
    needs when the card has no room to spare."""

    breakdown: Breakdown
    band: Band
    assumptions: tuple[Assumption, ...]
    answers: Answers | None = None
    floor: Floor | None = None

    @property
    def total(self) -> float:
        return self.breakdown.total

    @property
    def low(self) -> float:
        return self.band.around(self.total)[0]

    @property
    def capacity(self) -> KvCapacity | None:
        """An inference-memory estimate's KV-cache answers (None without a GPU or for another estimate)."""
        return self.answers if isinstance(self.answers, KvCapacity) else None

    @property
    def trained(self) -> TrainedParts | None:
        """A training-memory estimate's parameter and per-step figures."""
        return self.answers if isinstance(self.answers, TrainedParts) else None

    @property
    def rate(self) -> TrainRate | None:
        """A training-time estimate's MFU, GPU-hours and tokens per second (None in a plan's lean estimates)."""
        return self.answers if isinstance(self.answers, TrainRate) else None

    @property
    def figures(self) -> SpeedFigures | None:
        """An inference-time estimate's speed figures."""
        return self.answers if isinstance(self.answers, SpeedFigures) else None

    @property
    def waves(self) -> Waves | None:
        """A batch-inference job's time: the batches it runs in."""
        return self.answers if isinstance(self.answers, Waves) else None

    @property
    def high(self) -> float:
        return self.band.around(self.total)[1]

    def as_dict(self, key: str) -> dict[str, Any]:
        """JSON form; ``key`` is the unit-suffixed name of the total (``total_bytes``)."""
        suffix = key.rsplit("_", 1)[-1]
        out: dict[str, Any] = {key: self.total, f"low_{suffix}": self.low, f"high_{suffix}": self.high}
        held = self.band.held_around(self.total)
        if held:
            out.update({f"held_out_low_{suffix}": held[0], f"held_out_high_{suffix}": held[1]})
        if self.floor is not None:
            out["floor"] = self.floor.as_dict()
        return {**out, "breakdown_" + suffix: self.breakdown.as_dict(), "band": self.band.as_dict(),
                "assumptions": [a.as_dict() for a in self.assumptions],
                **(self.answers.as_dict() if self.answers is not None else {})}
