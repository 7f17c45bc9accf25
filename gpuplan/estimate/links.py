"""The links a collective runs over (NVLink/xGMI, a bridge, PCIe, the network) and the calibration warning for
parts no speed row ran on: what training time and inference speed both ask for.

Kept apart from :mod:`gpuplan.estimate.train_time` so that an inference estimate does not import the training
time model (its step terms, its frameworks' and MoE training tables)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from gpuplan.estimate.calibration import Calibration, speed_calibrated
from gpuplan.memo import IdentityMemo
from gpuplan.types import Gpu
from gpuplan.units import GB

GPUS_PER_NODE = 8


class Collective(Enum):
    """The NCCL operations training and serving run: each has its own algorithm, so its own achieved rate."""

    ALL_REDUCE = "all_reduce"
    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_TO_ALL = "all_to_all"
    SEND_RECV = "send_recv"


# NCCL's bus bandwidth over NVLink against the link's one-way rate, per collective: the rate at which the bytes that
# cross each GPU's link (2(p − 1)/p of the buffer for an all-reduce, (p − 1)/p for an all-gather or a reduce-scatter
# of the whole array: NVIDIA/nccl-tests doc/PERFORMANCE.md @a0b82b2260cf5152b9f8c061bbf7eaf0ba096432) move. nccl-tests
# on 4× H100 SXM (NVLink 4, 450 GB/s each way), out-of-place bus bandwidth at 8 GiB (waynehacking8/
# nccl-collectives-bench results/*.csv @f9883f88eb4337d3a2c515089b04a587cf104c83): all_reduce_perf (ring) 366 GB/s,
# all_gather_perf 344, reduce_scatter_perf 350; the ring keeps its rate at 2, 4 and 6 GPUs
# (results/scaling_attributed/report.md @ec97f06204de7297d1b682a4c60f0924602c677d). For point-to-point operations
# (an all-to-all is a merged loop of sends and receives to every peer; pipeline stages' sends) NCCL's maintainer
# gives the same protocol overhead: "450GB/s is the line rate. With the protocol overhead (~20%) NCCL can get an
# effective NVLink bandwidth of 370GB/s, which you can observe as BusBw when running non-allreduce operations"
# (NVIDIA/nccl-tests issue #212, sjeaugey, 2024-05-06). PCIe's efficiency is the fitted eta_pcie, already in its
# link rate; other vendors' links have no measurement here and keep their rate.
NVLINK_BUS_SHARE = MappingProxyType({
    Collective.ALL_REDUCE: 366 / 450,
    Collective.ALL_GATHER: 344 / 450,
    Collective.REDUCE_SCATTER: 350 / 450,
    Collective.ALL_TO_ALL: 370 / 450,
    Collective.SEND_RECV: 370 / 450,
})

# AMD's 8-GPU CDNA 3 platforms (MI300X, MI325X) join every GPU to each of its 7 peers by one xGMI link of 64 GB/s each
# way, 448 GB/s in all (the catalog's 896 GB/s both ways), with no switch: a collective over p GPUs has p − 1 of
# the 7 links, and a point-to-point send has one. CRC and protocol overhead leave about 48 GB/s of a link's 64
# (ROCm/rccl issue #1210, gilbertlee-amd, 2024-07-02: RCCL's `ncclTopoXGMISpeed` models gfx94x links at 48). Measured
# on 8 MI300X (ROCm/rocm-blogs blogs/software-tools-optimization/mi300x-rccl-xgmi/README.md
# @0e81c2ca45881844429731ad502be4a839ca96f0, "Understanding RCCL Bandwidth and xGMI Performance", 2025-03, RCCL
# 2.22.3, ROCm 6.3): rccl-tests all_reduce_perf out-of-place bus bandwidth 318 GB/s at 8 GiB (197 at 16 MiB, 274 at
# 64 MiB); TransferBench with all 56 links busy 45.1–47.2 GB/s a link (mean 46.6), 315.7–319.3 GB/s a GPU at its
# slowest link × 7, which the post gives as the cap of RCCL's collectives ("310-330 GB/s"): the share taken for the
# collectives rccl-tests was not quoted for there. Shares of the links in use, as NVLINK_BUS_SHARE's of NVLink.
XGMI_MESH_BUS_SHARE = MappingProxyType({
    Collective.ALL_REDUCE: 318 / 448,
    Collective.ALL_GATHER: 316 / 448,
    Collective.REDUCE_SCATTER: 316 / 448,
    Collective.ALL_TO_ALL: 316 / 448,
    Collective.SEND_RECV: 46.6 / 64,
})


@dataclass(frozen=True, slots=True)
class Links:
    """Bandwidths (bytes/s, one direction) that collectives use."""

    intra_node: float
    inter_node: float
    intra_name: str
    inter_name: str
    domain: int = GPUS_PER_NODE  # GPUs the intra-node fabric joins: an HGX node's 8, or a rack-scale NVLink domain
    nvlink: bool = False  # intra_node is NVLink (a switched fabric or a bridge), not PCIe or another vendor's link
    mesh_links: int = 0  # intra_node is this many direct xGMI links to the group's peers (xgmi_mesh_links), else 0

    def intra_bus(self, collective: Collective) -> float:
        """Bytes/s the intra-node link moves ``collective``'s bus bytes at: :data:`NVLINK_BUS_SHARE` of an NVLink's
        one-way rate, :data:`XGMI_MESH_BUS_SHARE` of an xGMI mesh's links in use (one link for a send); a PCIe
        link's rate already holds its fitted efficiency."""
        if self.mesh_links:
            rate = self.intra_node / self.mesh_links if collective is Collective.SEND_RECV else self.intra_node
            return rate * XGMI_MESH_BUS_SHARE[collective]
        return self.intra_node * (NVLINK_BUS_SHARE[collective] if self.nvlink else 1.0)


def nvlink_domain(gpu: Gpu) -> int:
    """GPUs one NVLink fabric joins: the domain the catalog's interconnect names ("NVLink 5 (72-GPU NVL72
    domain)": GB200/GB300 NVL72 racks, whose NVLink switches join 72 GPUs), else a node of GPUS_PER_NODE."""
    found = re.search(r"(\d+)-GPU NVL", gpu.interconnect)
    return int(found.group(1)) if found and gpu.has_fast_interconnect else GPUS_PER_NODE


def xgmi_mesh_links(gpu: Gpu) -> int:
    """Links from each GPU to its peers where the part's node is a full xGMI mesh (CDNA 3, "Infinity Fabric (7
    links)": one link to each of 7 peers, :data:`XGMI_MESH_BUS_SHARE`), else 0."""
    found = re.fullmatch(r"Infinity Fabric \((\d+) links\)", gpu.interconnect)
    if found is None or gpu.architecture != "CDNA 3" or not gpu.has_fast_interconnect:
        return 0
    return int(found.group(1))


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
    mesh = xgmi_mesh_links(gpu)
    in_use = max(1, min(mesh, group - 1))
    if mesh:  # a group of p GPUs has p − 1 of the mesh's links
        intra = intra * in_use / mesh
        name = name if in_use == mesh else f"{name}, {in_use} of them in use"
    net = cal.get("network_bytes_per_s_per_gpu")
    return Links(intra, net, name, f"{net * 8 / 1e9:.0f} Gb/s per GPU network", nvlink_domain(gpu),
                 name.startswith("NVLink"), in_use if mesh else 0)


def uncalibrated_note(gpu: Gpu, engine: str | None = None) -> str:
    """A warning for parts whose vendor no calibration row ran on (with ``engine``; None: training)."""
    if speed_calibrated(gpu.vendor, engine):
        return ""
    return f"; none on {gpu.vendor} parts: their efficiency is not calibrated"
