"""Tensor-parallel all-reduce cost: over NVLink at the bus bandwidth NCCL measures, not at the link's rate."""

from __future__ import annotations

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.infer_speed import allreduce_seconds, engine_allreduce_seconds
from gpuplan.estimate.links import Collective, links
from gpuplan.types import Engine, InferSetup

# nccl-tests all_reduce_perf on 4× H100 SXM (NVSwitch), out-of-place time per all-reduce:
# waynehacking8/nccl-collectives-bench results/all_reduce.csv @f9883f88eb4337d3a2c515089b04a587cf104c83
NCCL_4X_H100 = [
    (16 * 2**20, 102.10e-6, 0.10),  # a decode batch's hidden states: latency and bytes both count
    (2**30, 4511.11e-6, 0.05),
    (8 * 2**30, 35168.9e-6, 0.03),  # bandwidth-bound: the fitted latency is 0.1 % of it
]


@pytest.mark.parametrize(("size_bytes", "measured_s", "tolerance"), NCCL_4X_H100)
def test_an_nvlink_all_reduce_takes_what_nccl_tests_measured(catalog: Catalog, size_bytes: int, measured_s: float,
                                                             tolerance: float) -> None:
    predicted = allreduce_seconds(catalog.gpu("H100"), 4, size_bytes, fitted())
    assert predicted == pytest.approx(measured_s, rel=tolerance)


def test_an_nvlink_all_reduce_is_slower_than_the_links_one_way_rate(catalog: Catalog) -> None:
    # 8 GiB over 4 GPUs moves 1.5 × 8 GiB per link: 28.6 ms at the full 450 GB/s; NCCL's ring took 35.2 ms
    at_link_rate = 1.5 * 8 * 2**30 / 450e9
    assert allreduce_seconds(catalog.gpu("H100"), 4, 8 * 2**30, fitted()) > 1.2 * at_link_rate


@pytest.mark.parametrize(("gpu", "group", "nvlink"), [
    ("H100", 8, True),             # NVSwitch
    ("A100-80GB-PCIe", 2, True),   # a bridged pair talks over its bridge
    ("A100-80GB-PCIe", 4, False),  # a bridge joins only its pair: four cards talk over PCIe
    ("L40S", 2, False),            # no NVLink at all
])
def test_only_nvlink_links_take_the_nccl_share(catalog: Catalog, gpu: str, group: int, nvlink: bool) -> None:
    assert links(catalog.gpu(gpu), fitted(), group).nvlink is nvlink


def test_a_pcie_all_reduce_keeps_its_fitted_rate(catalog: Catalog) -> None:
    # eta_pcie is already an all-reduce efficiency (fitted on PCIe rows): the NVLink share must not apply twice
    cal, gpu = fitted(), catalog.gpu("L40S")
    size = 2**30
    rate = links(gpu, cal, 4).intra_node
    assert allreduce_seconds(gpu, 4, size, cal) == pytest.approx(1.5 * size / rate, rel=0.01)


# SGLang's own all-reduce kernel on H100, 32,768 elements (one Llama-70B decode token is 8,192 bf16 values):
# 4.5 µs on 2 GPUs, 4.8 µs on 4, 7.8 µs on 8 (sgl-project/sglang PR #2904, unit-test latency table), against
# NCCL's ~30 µs fixed cost per call
@pytest.mark.parametrize("tp", [2, 4, 8])
def test_sglang_reduces_a_decode_token_in_microseconds_not_nccls_latency(catalog: Catalog, tp: int) -> None:
    gpu, cal, token = catalog.gpu("H100"), fitted(), 8192 * 2
    sglang = engine_allreduce_seconds(gpu, InferSetup(engine=Engine.SGLANG, tp=tp), token, cal)
    assert sglang < 10e-6
    assert allreduce_seconds(gpu, tp, token, cal) > 2 * sglang


# TensorRT-LLM's AUTO strategy on H100 under CUDA graphs (TensorRT-LLM 1.2.0rc1, NVIDIA's aiconfigurator
# custom_allreduce_perf table @302edbc4): 8,192 fp16 values (a Llama-70B decode token) in 3.55 µs on 2 GPUs and
# 3.64 µs on 4; 262,144 values (a batch of 32 such tokens) in 4.94 and 8.37 µs. The bytes of the larger message
# go at a ring's 2(p - 1)/p share, where the one-shot kernel reads all p - 1 peers' buffers: 34 % short at 4 GPUs
@pytest.mark.parametrize(("tp", "values", "measured_s", "tolerance"), [
    (2, 8192, 3.55e-6, 0.1), (4, 8192, 3.64e-6, 0.1), (2, 262144, 4.94e-6, 0.1), (4, 262144, 8.37e-6, 0.4)])
def test_tensorrt_llm_reduces_a_decode_batch_as_its_kernel_was_timed(catalog: Catalog, tp: int, values: int,
                                                                     measured_s: float, tolerance: float) -> None:
    gpu, cal = catalog.gpu("H100"), fitted()
    predicted = engine_allreduce_seconds(gpu, InferSetup(engine=Engine.TRTLLM, tp=tp), values * 2, cal)
    assert predicted == pytest.approx(measured_s, rel=tolerance)
    assert predicted < allreduce_seconds(gpu, tp, values * 2, cal) / 3


def test_tensorrt_llm_leaves_a_pcie_pair_to_nccl(catalog: Catalog) -> None:
    # AUTO takes its own kernels only where the GPUs have NVLink; vLLM and SGLang accept a PCIe pair
    g, cal = catalog.gpu("L40S"), fitted()
    s = InferSetup(engine=Engine.TRTLLM, tp=2)
    assert engine_allreduce_seconds(g, s, 2**14, cal) == allreduce_seconds(g, 2, 2**14, cal)


@pytest.mark.parametrize(("engine", "gpu", "tp", "size_bytes"), [
    (Engine.SGLANG, "H100", 8, 16 * 2**20),  # a prefill pass's 16 MiB exceeds the kernel's 8 MiB buffer: NCCL
    (Engine.SGLANG, "L40S", 4, 2**16),       # four GPUs over PCIe: SGLang leaves the all-reduce to NCCL
    (Engine.SGLANG, "H100", 3, 2**16),       # a group size the kernel does not support (2, 4, 6, 8)
    (Engine.VLLM, "H100", 8, 8 * 2**20),     # should_custom_ar takes messages under max_size (8 MiB) only
    (Engine.VLLM, "L40S", 4, 2**16),         # four GPUs over PCIe
    (Engine.VLLM, "Ascend-910B", 2, 2**16),  # vllm-ascend has no such kernel: "not supported on current platform"
    (Engine.VLLM, "MI300X", 2, 2**16),       # v0.6 turns it off on AMD GPUs; later MI300-only and unmeasured
])
def test_an_engine_falls_back_to_nccl_outside_its_kernels_conditions(catalog: Catalog, engine: Engine, gpu: str,
                                                                     tp: int, size_bytes: int) -> None:
    g, cal = catalog.gpu(gpu), fitted()
    assert engine_allreduce_seconds(g, InferSetup(engine=engine, tp=tp), size_bytes, cal) == \
        allreduce_seconds(g, tp, size_bytes, cal)


def test_two_pcie_gpus_still_take_sglangs_kernel(catalog: Catalog) -> None:
    # should_custom_ar accepts a world of 2 without NVLink
    g, cal = catalog.gpu("L40S"), fitted()
    s = InferSetup(engine=Engine.SGLANG, tp=2)
    assert engine_allreduce_seconds(g, s, 2**14, cal) < allreduce_seconds(g, 2, 2**14, cal)


# vLLM's own kernel on H100 at 32,768 elements: 8.7 µs on 2 GPUs, 9.2 µs on 4, 11.8 µs on 8 (sgl-project/sglang
# PR #2904, the same table's vLLM column, timed with the copy into the registered buffer), slower than SGLang's
# but a third of NCCL's ~30 µs fixed cost per call
@pytest.mark.parametrize("tp", [2, 4, 8])
def test_vllm_reduces_a_decode_token_between_sglangs_kernel_and_nccl(catalog: Catalog, tp: int) -> None:
    gpu, cal, token = catalog.gpu("H100"), fitted(), 8192 * 2
    vllm = engine_allreduce_seconds(gpu, InferSetup(engine=Engine.VLLM, tp=tp), token, cal)
    sglang = engine_allreduce_seconds(gpu, InferSetup(engine=Engine.SGLANG, tp=tp), token, cal)
    nccl = allreduce_seconds(gpu, tp, token, cal)
    assert sglang < vllm < 15e-6
    assert nccl > 2 * vllm


def test_sglangs_rocm_build_keeps_its_kernel_on_two_amd_gpus(catalog: Catalog) -> None:
    g, cal = catalog.gpu("MI300X"), fitted()
    s = InferSetup(engine=Engine.SGLANG, tp=2)
    assert engine_allreduce_seconds(g, s, 2**14, cal) < allreduce_seconds(g, 2, 2**14, cal)


# rccl-tests all_reduce_perf on 8× MI300X (xGMI mesh, 7 links of 64 GB/s each way), out-of-place time per
# all-reduce, RCCL 2.22.3 / ROCm 6.3: ROCm/rocm-blogs blogs/software-tools-optimization/mi300x-rccl-xgmi/README.md
# @0e81c2ca45881844429731ad502be4a839ca96f0
RCCL_8X_MI300X = [
    (64 * 2**20, 429.1e-6, 0.10),  # a 405B decode batch's hidden states are ~47 MiB
    (2**30, 5970.6e-6, 0.03),
    (8 * 2**30, 47278e-6, 0.03),  # bus bandwidth 318 GB/s, 71 % of the links' 448
]


@pytest.mark.parametrize(("size_bytes", "measured_s", "tolerance"), RCCL_8X_MI300X)
def test_an_xgmi_all_reduce_takes_what_rccl_tests_measured(catalog: Catalog, size_bytes: int, measured_s: float,
                                                           tolerance: float) -> None:
    predicted = allreduce_seconds(catalog.gpu("MI300X"), 8, size_bytes, fitted())
    assert predicted == pytest.approx(measured_s, rel=tolerance)


def test_an_mi300x_pair_reduces_over_its_one_link(catalog: Catalog) -> None:
    # a pair in the mesh shares one 64 GB/s link: 1 GiB (2(p − 1)/p = 1 of it crosses) takes at least 16.8 ms,
    # where the 8-GPU group's seven links move 1.75 GiB in 6 ms
    gpu, cal = catalog.gpu("MI300X"), fitted()
    assert allreduce_seconds(gpu, 2, 2**30, cal) > 2**30 / 64e9
    assert allreduce_seconds(gpu, 2, 2**30, cal) > 2 * allreduce_seconds(gpu, 8, 2**30, cal)


def test_an_mi300x_stage_sends_over_one_link_not_seven(catalog: Catalog) -> None:
    # a point-to-point send goes over the one direct link to its peer (TransferBench: 45-47 GB/s of its 64)
    rate = links(catalog.gpu("MI300X"), fitted(), 8).intra_bus(Collective.SEND_RECV)
    assert 40e9 < rate < 64e9
