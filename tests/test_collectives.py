"""NCCL collectives over NVLink run at the bus bandwidth nccl-tests measures, not at the link's one-way rate, in
training and serving alike."""

from __future__ import annotations

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.infer_speed import allreduce_seconds
from gpuplan.estimate.links import Collective, links
from gpuplan.estimate.train_time import _comm_per_step, step_work
from gpuplan.types import Parallelism, TrainSetup

# nccl-tests on 4× H100 SXM (NVSwitch), out-of-place time of one collective over an 8 GiB array, of which each GPU's
# link carries (4 − 1)/4: waynehacking8/nccl-collectives-bench results/all_gather.csv and reduce_scatter.csv
# @f9883f88eb4337d3a2c515089b04a587cf104c83
MEASURED_8GIB_4X_H100 = [
    (Collective.ALL_GATHER, 18_732.3e-6),
    (Collective.REDUCE_SCATTER, 18_389.0e-6),
]


@pytest.mark.parametrize(("collective", "measured_s"), MEASURED_8GIB_4X_H100)
def test_a_gather_or_scatter_over_nvlink_takes_what_nccl_tests_measured(catalog: Catalog, collective: Collective,
                                                                      measured_s: float) -> None:
    bus_bytes = 8 * 2**30 * 3 / 4
    assert bus_bytes / links(catalog.gpu("H100"), fitted(), 4).intra_bus(collective) == pytest.approx(measured_s,
                                                                                                      rel=0.02)


@pytest.mark.parametrize("collective", list(Collective))
def test_every_collective_over_nvlink_runs_below_the_link_rate(catalog: Catalog, collective: Collective) -> None:
    # NCCL's protocol costs ~20 % of NVLink's line rate (nccl-tests issue #212): none reaches 450 GB/s, all pass
    # 300 GB/s
    rate = links(catalog.gpu("H100"), fitted(), 8).intra_bus(collective)
    assert 300e9 < rate < 450e9


@pytest.mark.parametrize("collective", list(Collective))
def test_a_pcie_link_keeps_its_fitted_rate(catalog: Catalog, collective: Collective) -> None:
    # eta_pcie is already the achieved share of PCIe: the NVLink shares must not apply on top of it
    link = links(catalog.gpu("L40S"), fitted(), 4)
    assert link.intra_bus(collective) == link.intra_node


def test_training_and_serving_all_reduce_the_same_bytes_in_the_same_time(catalog: Catalog) -> None:
    # Llama-3.1-8B, TP 8 without sequence parallelism, one 4,096-token micro-batch: 4 all-reduces per layer of
    # 4,096 × 4,096 × 2 bytes. Serving's all-reduce of the same buffer, less its fixed latency, takes as long
    m, gpu, cal = catalog.model("Llama-3.1-8B"), catalog.gpu("H100"), fitted()
    s = TrainSetup(method="full", micro_batch=1, seq_len=4096, grad_accum=1, framework="megatron",
                   parallel=Parallelism(tp=8, sequence_parallel=False))
    buffer = 4096 * m.hidden * 2.0
    _, training = _comm_per_step(s, links(gpu, cal, 8), step_work(m, s, cal))
    serving = 4 * m.n_layers * (allreduce_seconds(gpu, 8, buffer, cal) - cal.get("allreduce_latency_s"))
    assert training == pytest.approx(serving, rel=1e-9)


def test_fsdp_on_one_node_communicates_slower_than_the_links_rate(catalog: Catalog) -> None:
    # Llama-3.1-8B (8.03 B parameters, 16.06 GB in 16-bit) under FSDP on 8 H100s: each micro-step all-gathers the
    # weights twice (2 × 16.06 GB × 7/8 = 28.1 GB across each link) and reduce-scatters the gradients (14.05 GB):
    # 94 ms at NVLink 4's 450 GB/s one way, 28.1 / 344 + 14.05 / 350 = 122 ms at the rates nccl-tests measured
    m, gpu, cal = catalog.model("Llama-3.1-8B"), catalog.gpu("H100"), fitted()
    s = TrainSetup(method="full", micro_batch=1, seq_len=4096, grad_accum=1, framework="torchtitan",
                   parallel=Parallelism(dp=8, zero=3))
    dp, _ = _comm_per_step(s, links(gpu, cal, 8), step_work(m, s, cal))
    assert dp == pytest.approx(0.122, rel=0.02)
