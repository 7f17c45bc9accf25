"""Calibrated parameters: fitted by ``bench/fit.py`` on the measurements in ``bench/calibration/`` and kept
as data in ``gpuplan/data/fitted/params.json``. Estimators take a :class:`Calibration` argument (default:
the fitted one) so that the fit can evaluate candidate values with the same code users run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import CatalogError
from gpuplan.estimate.engines import ASCEND_BACKEND_ENGINES, METAL_BACKEND_ENGINES, backend_key
from gpuplan.estimate.result import Band
from gpuplan.memo import IdentityMemo

FITTED_PATH = BUNDLED_DIR / "fitted" / "params.json"
# vendors whose parts published speed rows ran on, and for which engines (None: every engine and training): the
# Apple rows are inference on the engines whose Metal kernels have efficiencies of their own (*_<engine>_metal)
# and on MLX; the Ascend rows on vLLM's Ascend plugin (*_vllm_ascend) and MindIE
CALIBRATED_VENDORS: dict[str, tuple[str, ...] | None] = {
    "NVIDIA": None, "Apple": (*METAL_BACKEND_ENGINES, "mlx"), "Huawei": (*ASCEND_BACKEND_ENGINES, "mindie")}


def speed_calibrated(vendor: str, engine: str | None = None) -> bool:
    """Whether published runs on this vendor's parts (with ``engine``; None: training) went into the fitted speed
    parameters: for a backend fitted apart, once the fitted parameters hold its own efficiencies (until then it
    runs on its prior's, ``EFFICIENCY_PRIORS``)."""
    if vendor not in CALIBRATED_VENDORS:
        return False
    engines = CALIBRATED_VENDORS[vendor]
    if engines is None:
        return True
    return engine in engines and f"eta_memory_{backend_key(engine, vendor)}" in fitted().values


@dataclass(frozen=True)
class Calibration:
    """Free parameters of the estimators (see docs/estimators.md for each one's meaning and fit)."""

    values: dict[str, float]
    bands: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    fitted_on: str = ""
    held_out_bands: dict[str, tuple[float, float, int]] = field(default_factory=dict)

    def get(self, name: str) -> float:
        try:
            return self.values[name]
        except KeyError:
            raise CatalogError(str(FITTED_PATH.name), 0, name, "", "calibrated parameter is missing.",
                               "rerun 'python bench/fit.py' to regenerate the fitted parameters.") from None

    def band(self, cls: str) -> Band:
        """The error band of the class ``cls``, one object per calibration and class: a pretraining plan asks
        for about 1,100 (two per training-memory estimate, more per time estimate) of a handful of classes."""
        found = _bands.get(self, None, None, (cls,))
        if found is None:
            low, high, n = self.bands.get(cls, (0.7, 1.3, 0))
            held = self.held_out_bands.get(cls)
            found = _bands.put(self, None, None, (cls,), Band(
                low, high, cls if n else f"{cls} (uncalibrated: ±30 % default)", n,
                held[0] if held else None, held[1] if held else None))
        return found

    def with_values(self, **changes: float) -> Calibration:
        return replace(self, values={**self.values, **changes})

    def to_json(self) -> dict[str, Any]:
        return {"fitted_on": self.fitted_on, "values": self.values,
                "bands": {k: list(v) for k, v in self.bands.items()}}


_bands: IdentityMemo[Band] = IdentityMemo(256)  # by calibration and class (Band is frozen: shared)


@cache
def fitted() -> Calibration:
    try:
        data = json.loads(FITTED_PATH.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogError("gpuplan/data/fitted/params.json", 0, "", "", f"cannot read fitted parameters ({exc}).",
                           "rerun 'python bench/fit.py'.") from None
    def table(key: str) -> dict[str, tuple[float, float, int]]:
        return {k: (float(v[0]), float(v[1]), int(v[2])) for k, v in data.get(key, {}).items()}

    return Calibration(values={k: float(v) for k, v in data["values"].items()}, bands=table("bands"),
                       fitted_on=data.get("fitted_on", ""), held_out_bands=table("held_out_bands"))
