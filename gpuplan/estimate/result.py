"""What every estimator returns: a breakdown that sums to a total, the assumptions it used, and an error
band drawn from the calibration residuals of its class."""

from __future__ import annotations

from dataclasses import dataclass, field
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
        return sum(v for _, v in self.parts)

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
class Estimate:
    """A total with its breakdown, band and assumptions; ``extra`` holds derived answers (KV capacity ...);
    ``floor`` (memory only) what the job needs when the card has no room to spare."""

    breakdown: Breakdown
    band: Band
    assumptions: tuple[Assumption, ...]
    extra: dict[str, Any] = field(default_factory=dict)
    floor: Floor | None = None

    @property
    def total(self) -> float:
        return self.breakdown.total

    @property
    def low(self) -> float:
        return self.band.around(self.total)[0]

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
                "assumptions": [a.as_dict() for a in self.assumptions], **self.extra}
