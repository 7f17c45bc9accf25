"""The links a collective runs over (NVLink/xGMI, a bridge, PCIe, the network) and the calibration warning for
parts no speed row ran on: what training time and inference speed both ask for.

Kept apart from :mod:`gpuplan.estimate.train_time` so that an inference estimate does not import the training
time model (its step terms, its frameworks' and MoE training tables)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuplan.estimate.calibration import Calibration, speed_calibrated
from gpuplan.memo import IdentityMemo
from gpuplan.types import Gpu
from gpuplan.units import GB

GPUS_PER_NODE = 8


@dataclass(frozen=True, slots=True)
class Links:
    """Bandwidths (bytes/s, one direction) that collectives use."""

    intra_node: float
    inter_node: float
    intra_name: str
    inter_name: str
    domain: int = GPUS_PER_NODE  # GPUs the intra-node fabric joins: an HGX node's 8, or a rack-scale NVLink domain
    nvlink: bool = False  # intra_node is NVLink (a switched fabric or a bridge), not PCIe or another vendor's link


def nvlink_domain(gpu: Gpu) -> int:
    """GPUs one NVLink fabric joins: the domain the catalog's interconnect names ("NVLink 5 (72-GPU NVL72
    domain)": GB200/GB300 NVL72 racks, whose NVLink switches join 72 GPUs), else a node of GPUS_PER_NODE."""
    found = re.search(r"(\d+)-GPU NVL", gpu.interconnect)
    return int(found.group(1)) if found and gpu.has_fast_interconnect else GPUS_PER_NODE


def links(gpu: Gpu, cal: Calibration, group: int = 8) -> Links:
    """Bandwidth for a collective over ``group`` GPUs: NVLink/xGMI where the part has a switched fabric (or a
    bridge and the group is a bridged pair), else PCIe at the fitted all-reduce efficiency; between nodes,
    the network assumption. Made once per GPU, calibration and group: a plan asks thousands of times."""
    hit = _links.get(gpu, cal, None, (group,))
    if hit is not None:
        return hit
    return _links.put(gpu, cal, None, (group,), _links_of(gpu, cal, group))


_links: IdentityMemo[Links] = IdentityMemo(1024)


def _links_of(gpu: Gpu, cal: Calibration, group: int) -> Links:
    pcie = {3: 16.0, 4: 32.0, 5: 64.0, 6: 128.0}.get(gpu.pcie_gen or 4, 32.0) * GB * cal.get("eta_pcie")
    bridged_only = "bridge" in gpu.interconnect.lower()
    if gpu.has_fast_interconnect and gpu.interconnect_bytes_per_s and (group <= 2 or not bridged_only):
        intra, name = gpu.interconnect_bytes_per_s / 2, gpu.interconnect
    else:
        intra, name = pcie, f"PCIe Gen{gpu.pcie_gen or 4}"
    net = cal.get("network_bytes_per_s_per_gpu")
    return Links(intra, net, name, f"{net * 8 / 1e9:.0f} Gb/s per GPU network", nvlink_domain(gpu),
                 name.startswith("NVLink"))


def uncalibrated_note(gpu: Gpu, engine: str | None = None) -> str:
    """A warning for parts whose vendor no calibration row ran on (with ``engine``; None: training)."""
    if speed_calibrated(gpu.vendor, engine):
        return ""
    return f"; none on {gpu.vendor} parts: their efficiency is not calibrated"
