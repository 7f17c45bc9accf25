"""Measured matmul ceilings (Maximum Achievable Matmul FLOPS), read from ``data/matmul_efficiency.csv``.

The fitted compute efficiencies (``eta_compute_*``) are shares of datasheet peaks, fitted on rows that ran on
NVIDIA parts, whose best BF16 matmul reaches 80-87 % of the datasheet (stas00/ml-engineering's MAMF table: A100
86.9 %, GH200 83.6 %, H100 80.3 %). A part whose best matmul reaches less of its datasheet (MI300X 51.4 %) cannot
run an engine's GEMMs at the same share: its peak is taken at its own MAMF share over the reference part's."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.types import Gpu

_COLUMNS = (
    Column("gpu", required=True), Column("mamf_bf16_tflops", "float", True, positive=True),
    Column("peak_bf16_tflops", "float", True, positive=True), Column("software", required=True),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"),
)
REFERENCE_GPU = "H100"  # the part the fitted efficiencies are read against


@cache
def mamf_shares() -> Mapping[str, float]:
    """Best measured BF16 matmul over the datasheet peak, per catalog GPU name."""
    rows = read_table(BUNDLED_DIR / "matmul_efficiency.csv", _COLUMNS, ["gpu"], "gpuplan/data/matmul_efficiency.csv")
    return MappingProxyType({r.values["gpu"]: r.values["mamf_bf16_tflops"] / r.values["peak_bf16_tflops"]
                             for r in rows})


def matmul_share(gpu: Gpu) -> float:
    """The part's MAMF share over the reference part's (1 for a part without a measurement, and for NVIDIA parts,
    whose shares the fitted efficiencies already hold): the factor on its datasheet tensor peak."""
    shares = mamf_shares()
    if gpu.vendor == "NVIDIA" or gpu.name not in shares:
        return 1.0
    return shares[gpu.name] / shares[REFERENCE_GPU]
