"""Expert parallelism in training a mixture-of-experts model (gpuplan/estimate/moe_train.py): where the experts
live, what the all-to-alls move, and what the planner and the calibration mapping do with it. Expected values
are worked out by hand from the models' Hugging Face configs and the GPU datasheets."""

from __future__ import annotations

import csv
import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpuplan.catalog import Catalog
from gpuplan.errors import InfeasibleError
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.flops import train_flops_per_token
from gpuplan.estimate.job import check_training_shape
from gpuplan.estimate.memory import training_memory
from gpuplan.estimate.moe_train import (
    all_to_all_bytes,
    expert_cast_bytes_per_token,
    expert_gemm_launches,
    gpu_params,
    link_shares,
    off_domain_share,
    permute_bytes_per_token,
)
from gpuplan.estimate.params import count_params
from gpuplan.estimate.train_time import (
    ep_overlap_exposed,
    expert_parallel_seconds,
    links,
    moe_layer_shares,
    step_work,
    train_time,
)
from gpuplan.plan.enumeration import training_layouts
from gpuplan.types import Job, Parallelism, Task, TrainSetup

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from calib_rows import _pretrain_case  # noqa: E402

# DeepSeek-V3 config.json: 61 layers, the first 3 dense (first_k_dense_replace), 256 routed experts of
# moe_intermediate_size 2048 on hidden 7168, three matrices each (gate, up, down)
DEEPSEEK_V3_ROUTED = 58 * 256 * 3 * 7168 * 2048  # 653,908,770,816


def _megatron(par: Parallelism, mb: int = 1, seq: int = 4096, recompute: str = "none") -> TrainSetup:
    return TrainSetup(method="full", micro_batch=mb, seq_len=seq, framework="megatron", recompute=recompute,
                      precision="bf16-mixed", parallel=par)


def test_deepseek_v3_routed_experts_are_counted_as_its_config_gives(catalog: Catalog) -> None:
    assert count_params(catalog.model("DeepSeek-V3")).experts == DEEPSEEK_V3_ROUTED


def test_expert_parallelism_splits_only_the_routed_experts(catalog: Catalog) -> None:
    m = catalog.model("DeepSeek-V3")
    total = count_params(m).total
    # DP 64 EP 64: every GPU keeps the dense part whole and 4 of the 256 experts of each MoE layer
    s = _megatron(Parallelism(dp=64, ep=64, zero=1))
    assert gpu_params(m, s, total) == pytest.approx(total - DEEPSEEK_V3_ROUTED * 63 / 64)
    # the distributed optimizer then shards the dense part over 64 DP ranks and the experts over EDP = 1
    assert gpu_params(m, s, total, sharded=True) == pytest.approx((total - DEEPSEEK_V3_ROUTED) / 64 +
                                                                  DEEPSEEK_V3_ROUTED / 64)


def test_megatron_weights_of_deepseek_v3_with_ep_64_and_pp_4(catalog: Catalog) -> None:
    # 256 GPUs, PP 4, EP 64, DP 64: 16-bit weights of a quarter of the dense part and 1/256 of the experts
    m = catalog.model("DeepSeek-V3")
    total = count_params(m).total
    s = _megatron(Parallelism(pp=4, dp=64, ep=64, zero=1))
    weights = dict(training_memory(m, s, fitted(), describe=False).breakdown.parts)["weights"]
    assert weights == pytest.approx(2 * ((total - DEEPSEEK_V3_ROUTED) / 4 + DEEPSEEK_V3_ROUTED / 256))
    # without EP the same GPU would hold a quarter of all 671 B parameters: 335 GB of 16-bit weights
    plain = dict(training_memory(m, _megatron(Parallelism(pp=4, dp=64, zero=1)), fitted(),
                                 describe=False).breakdown.parts)["weights"]
    assert plain / 1e9 == pytest.approx(335.5, rel=0.01)
    assert weights / 1e9 == pytest.approx(13.67, rel=0.01)  # 2 × (17.12 B / 4 + 653.9 B / 256) = 2 × 6.83 B


def test_qwen3_30b_a3b_all_to_all_bytes_by_hand(catalog: Catalog) -> None:
    # Qwen3-30B-A3B: 48 MoE layers, hidden 2048, top-8. Micro-batch 4 × 4096 tokens on one GPU, EP 8: each
    # dispatch or combine sends 16,384 × 8 × 2048 × 2 bytes × 7/8 = 469,762,048 bytes; 4 per layer and
    # micro-step (forward and backward), 48 layers: 90.19 GB
    m = catalog.model("Qwen3-30B-A3B")
    s = _megatron(Parallelism(dp=8, ep=8, zero=1), mb=4)
    assert all_to_all_bytes(m, s) == pytest.approx(4 * 48 * 469_762_048)
    # a full recomputation reruns the forward's two
    assert all_to_all_bytes(m, _megatron(s.parallel, mb=4, recompute="full")) == pytest.approx(6 * 48 * 469_762_048)
    assert all_to_all_bytes(m, _megatron(Parallelism(dp=8, zero=1), mb=4)) == 0.0


def test_qwen3_30b_a3b_all_to_all_seconds_on_an_h100_node(catalog: Catalog) -> None:
    # EP 8 inside one HGX H100 node: all of it over NVLink 4, 900 GB/s both ways = 450 GB/s each way, of which
    # NCCL's all-to-all moves ~370 GB/s (nccl-tests issue #212): 90.19 GB / 370 GB/s = 0.2438 s, and 192
    # collectives × the fitted latency
    m, gpu, cal = catalog.model("Qwen3-30B-A3B"), catalog.gpu("H100"), fitted()
    s = _megatron(Parallelism(dp=8, ep=8, zero=1), mb=4)
    seconds = expert_parallel_seconds(m, s, links(gpu, cal), step_work(m, s, cal), cal)
    assert seconds == pytest.approx(90.194e9 / 370e9 + 192 * cal.get("allreduce_latency_s"), rel=1e-3)


@pytest.mark.parametrize(("ep", "domain", "network", "nvlink"), [
    (8, 8, 0.0, 1.0),  # one HGX node: every other destination is on NVLink
    (32, 8, 24 / 31, 7 / 31),  # four nodes: 24 of the 31 other ranks are on other nodes
    (64, 72, 0.0, 1.0),  # an NVL72 rack keeps EP 64 on its NVLink fabric
])
def test_all_to_all_destinations_split_between_network_and_nvlink(ep: int, domain: int, network: float,
                                                                   nvlink: float) -> None:
    assert off_domain_share(ep, domain) == pytest.approx((network, nvlink))


def test_deepep_sends_a_token_once_per_destination_node(catalog: Catalog) -> None:
    # Qwen3-30B-A3B (128 experts, top-8) on EP 16 over two HGX nodes: the alltoall dispatcher sends the 4 of a
    # token's 8 expert copies that live on the other node over the network; DeepEP sends the token there once when
    # any of its experts is there: 1 − C(64, 8) / C(128, 8) = 0.99690 copies, a quarter of the bytes
    m = catalog.model("Qwen3-30B-A3B")
    alltoall = _megatron(Parallelism(dp=16, ep=16, zero=1))
    deepep = replace(alltoall, ep_dispatcher="deepep")
    # both count the alltoall dispatcher's 8 × 15/16 = 7.5 copies that leave a GPU...
    assert all_to_all_bytes(m, deepep) == all_to_all_bytes(m, alltoall)
    assert link_shares(m, alltoall, 8)[0] == pytest.approx(4 / 7.5)
    assert link_shares(m, deepep, 8)[0] == pytest.approx(0.99690 / 7.5, rel=1e-4)  # ...of which DeepEP sends fewer


def test_deepep_inside_one_node_sends_a_token_once_per_gpu(catalog: Catalog) -> None:
    # EP 8 on one node, 16 experts per GPU: a token reaches each of the 7 other GPUs with chance
    # 1 − C(112, 8) / C(128, 8) = 0.66742, 4.672 copies where the alltoall dispatcher sends 7
    m = catalog.model("Qwen3-30B-A3B")
    alltoall = _megatron(Parallelism(dp=8, ep=8, zero=1))
    assert link_shares(m, alltoall, 8) == pytest.approx((0.0, 1.0))
    assert link_shares(m, replace(alltoall, ep_dispatcher="deepep"), 8) == pytest.approx((0.0, 4.672 / 7), rel=1e-4)


def test_deepep_exposes_less_all_to_all_time_across_nodes(catalog: Catalog) -> None:
    m, gpu, cal = catalog.model("DeepSeek-V3"), catalog.gpu("H100"), fitted()
    s = _megatron(Parallelism(pp=8, dp=32, ep=64, zero=1))
    alltoall = expert_parallel_seconds(m, s, links(gpu, cal), step_work(m, s, cal), cal)
    deepep = replace(s, ep_dispatcher="deepep")
    fewer = expert_parallel_seconds(m, deepep, links(gpu, cal), step_work(m, deepep, cal), cal)
    # eight nodes: 3.5 network copies of a token instead of 7 (0.5×; node-limited routing, next test), the bulk of
    # the time at 400 Gb/s per GPU; the copies forwarded over NVLink inside the destination nodes (6.7 instead of 0.9)
    # add a little back
    assert 0.5 * alltoall < fewer < 0.66 * alltoall


def test_node_limited_routing_caps_the_nodes_a_token_reaches(catalog: Catalog) -> None:
    # DeepSeek-V3 (256 experts in 8 groups of 32, top-8 within the best 4 groups) on EP 64 over eight HGX nodes: a
    # node holds exactly one group, so a token reaches at most 4 nodes (DeepSeek-V3 Technical Report sec. 2.1.2,
    # M = 4), its own among them with chance 4/8: 4 − 1/2 = 3.5 network copies of the 8 × 63/64 = 7.875 that leave a
    # GPU. Routed over all 256 experts it would reach 7 × (1 − C(224, 8) / C(256, 8)) = 4.63 other nodes
    m = catalog.model("DeepSeek-V3")
    s = _megatron(Parallelism(pp=8, dp=32, ep=64, zero=1))
    deepep = replace(s, ep_dispatcher="deepep")
    network, nvlink = link_shares(m, deepep, 8)
    assert network * 7.875 == pytest.approx(3.5)
    unlimited = replace(m, n_expert_groups=1, n_routed_groups=1)
    assert link_shares(unlimited, deepep, 8)[0] * 7.875 == pytest.approx(4.6328, rel=1e-4)
    # a GPU holds 4 experts of one group; the token picks 2 of that group's 32 when the group is chosen: reached with
    # chance 1/2 × (1 − C(28, 2) / C(32, 2)) = 0.11895, on the 64 − 8 GPUs that are not a node's entry
    assert nvlink * 7.875 == pytest.approx(56 * 0.5 * (1 - 378 / 496))
    # the alltoall dispatcher sends a copy per expert wherever it lives: the limit changes none of its bytes
    assert link_shares(m, s, 8) == link_shares(unlimited, s, 8)


def test_groups_spanning_two_nodes_are_reached_with_either(catalog: Catalog) -> None:
    # DeepSeek-V3 on EP 32 over four HGX nodes: each node holds two groups of 32, missed only when neither is among
    # the token's 4 of 8: C(6, 4) / C(8, 4) = 15/70, so 3 × 55/70 = 2.357 network copies (2.71 routed over all)
    m = catalog.model("DeepSeek-V3")
    deepep = replace(_megatron(Parallelism(pp=8, dp=32, ep=32, zero=1)), ep_dispatcher="deepep")
    assert link_shares(m, deepep, 8)[0] * 8 * 31 / 32 == pytest.approx(3 * 55 / 70)


def test_ep_across_hgx_nodes_is_slower_than_inside_one(catalog: Catalog) -> None:
    # 16 B200s (two HGX nodes): EP 16 sends 8/15 of the tokens' expert traffic over the 400 Gb/s network,
    # EP 8 keeps it on NVLink 5 (1.8 TB/s): the first exposes more all-to-all time
    m, gpu = catalog.model("Qwen3-30B-A3B"), catalog.gpu("B200")
    inside = train_time(m, gpu, _megatron(Parallelism(dp=16, ep=8, zero=1), mb=4), 1e9)
    across = train_time(m, gpu, _megatron(Parallelism(dp=16, ep=16, zero=1), mb=4), 1e9)
    part = dict(inside.breakdown.parts)["expert_parallel_comm"], dict(across.breakdown.parts)["expert_parallel_comm"]
    assert 0 < part[0] < part[1]
    assert across.band.cls.startswith("pretrain_throughput_moe")  # its own band, not the dense models'


def test_permutation_traffic_by_hand(catalog: Catalog) -> None:
    # Qwen3-30B-A3B: (3 × 8 + 1) × 2048 elements × 2 bytes, forward and backward, 48 layers: 9.83 MB per token
    m = catalog.model("Qwen3-30B-A3B")
    assert permute_bytes_per_token(m, _megatron(Parallelism())) == pytest.approx(2 * 25 * 2048 * 2 * 48)
    assert permute_bytes_per_token(catalog.model("Llama-3.1-8B"), _megatron(Parallelism())) == 0.0


def test_a_latent_moe_dispatches_latent_width_tokens(catalog: Catalog) -> None:
    # Nemotron 3 Super (config.json): hidden 4096, moe_latent_size 1024, top-22, 40 MoE blocks. Its tokens are
    # projected to the latent width before they are routed (LatentMoE, arXiv:2601.18089): micro-batch 1 × 8192 on
    # EP 8 sends 8192 × 22 × 1024 × 2 bytes × 7/8 = 322,961,408 bytes per all-to-all, 4 per layer: a quarter of
    # what 4096-wide tokens would
    m = catalog.model("Nemotron-3-Super-120B-A12B")
    s = _megatron(Parallelism(dp=8, ep=8, zero=1), seq=8192)
    assert all_to_all_bytes(m, s) == pytest.approx(4 * 40 * 322_961_408)
    assert permute_bytes_per_token(m, s) == pytest.approx(2 * (3 * 22 + 1) * 1024 * 2 * 40)


def test_fp8_expert_casts_by_hand(catalog: Catalog) -> None:
    # Qwen3-30B-A3B, 48 MoE layers, top-8, hidden 2048, moe_intermediate_size 768, gated experts: Transformer
    # Engine's grouped linear casts the dispatched token (2048) and the activation (768) forward, the gradients of
    # the down (2048) and gate+up (2 × 768) outputs backward; each element read as 2 bytes and written as a
    # row-wise and a column-wise byte: 4 × 8 × (2816 + 3584) × 48 = 9,830,400 bytes per token
    m = catalog.model("Qwen3-30B-A3B")
    fp8 = replace(_megatron(Parallelism(dp=8, ep=8, zero=1)), precision="fp8-mixed")
    assert expert_cast_bytes_per_token(m, fp8) == pytest.approx(9_830_400)
    assert expert_cast_bytes_per_token(m, _megatron(Parallelism(dp=8, ep=8, zero=1))) == 0.0  # BF16: no casts
    assert expert_cast_bytes_per_token(catalog.model("Llama-3.1-8B"), replace(fp8, parallel=Parallelism())) == 0.0
    # NVFP4 writes the two copies in 4 bits, each with an E4M3 scale per 16 elements: 2 + 2 × (0.5 + 1/16) =
    # 3.125 bytes per element, 3.125 × 8 × 6,400 × 48 = 7,680,000 bytes per token
    assert expert_cast_bytes_per_token(m, replace(fp8, precision="fp4-mixed")) == pytest.approx(7_680_000)


def test_fp8_gains_a_moe_step_less_than_a_dense_one(catalog: Catalog) -> None:
    # NVIDIA-NeMo/Megatron-Bridge performance tables, NeMo container 25.11, DeepSeek-V3 on 256 GB300, PP 2 VP 4
    # EP 32, micro-batch 1, GBS 4096: 3,848 tokens/s/GPU in BF16, 4,357 in FP8-MX, 1.13×. The FP8 rate doubles the
    # matmuls, not the all-to-alls, permutations, casts or attention: the estimate gains far less than 2× and less
    # than a dense model's on the same stack
    def speedup(model: str, par: Parallelism, gpu: str, global_batch: int) -> float:
        rates = []
        for precision in ("bf16-mixed", "fp8-mixed"):
            s = TrainSetup(method="full", micro_batch=1, seq_len=4096, framework="megatron", precision=precision,
                           grad_accum=global_batch // par.dp, parallel=par)
            rates.append(train_time(catalog.model(model), catalog.gpu(gpu), s, 1e10).rate.tokens_per_s)
        return rates[1] / rates[0]

    moe = speedup("DeepSeek-V3", Parallelism(pp=2, vp=4, dp=128, ep=32, zero=1), "GB300", 4096)
    dense = speedup("Llama-3.1-8B", Parallelism(dp=8, zero=1), "GB300", 128)
    assert 1.0 < moe < 1.13 * 1.2
    assert moe < dense


def test_an_ep_that_does_not_divide_the_experts_is_refused(catalog: Catalog) -> None:
    m = catalog.model("Qwen3-30B-A3B")  # 128 experts
    with pytest.raises(InfeasibleError, match="experts do not split over 3"):
        check_training_shape(m, _megatron(Parallelism(dp=3, ep=3, zero=1)))
    with pytest.raises(InfeasibleError, match="does not divide the 4 GPUs"):
        check_training_shape(m, _megatron(Parallelism(dp=4, ep=8, zero=1)))
    with pytest.raises(InfeasibleError, match="no experts"):
        check_training_shape(catalog.model("Llama-3.1-8B"), _megatron(Parallelism(dp=8, ep=8, zero=1)))


def test_the_planner_splits_experts_only_for_moe_models(catalog: Catalog) -> None:
    job = Job(task=Task.PRETRAIN, tokens=1e9)
    moe = training_layouts(catalog.model("DeepSeek-V3"), 256, job)
    eps = {p.ep for p in moe}
    assert {8, 64} <= eps  # inside one node, and the largest in Megatron's recipes
    assert all(256 % p.n_gpus == 0 and 256 % p.ep == 0 and (p.tp * p.dp) % p.ep == 0 for p in moe)
    assert {p.ep for p in training_layouts(catalog.model("Llama-3.1-8B"), 256, job)} == {1}


def test_a_megatron_bridge_moe_row_runs_with_the_ep_its_notes_state(catalog: Catalog) -> None:
    with (BENCH / "calibration" / "training_more.csv").open(encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    row = rows["trm-mb-2608-gb300-deepseekv3-mxfp8-256-g4096-p-tokgpu"]  # "TP 1, PP 2, CP 1, VP 8, EP 32"
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert case.meta["setup"].parallel == Parallelism(pp=2, dp=128, ep=32, zero=1, vp=8)
    assert case.cls == "pretrain_throughput_moe"
    assert math.isfinite(case.predict(fitted()))
    unstated, why = _pretrain_case(catalog, {**row, "notes": "layout not given"})
    assert unstated is None and "expert-parallel degree" in why


@pytest.mark.parametrize(("row_id", "dispatcher"), [
    ("trm-mzoo-q3235b-h100-256-ep32-pp8-tokgpu", "deepep"),  # "dispatcher DeepEP"
    ("trm-mzoo-q3235b-h100-256-ep8-pp32-a2a-tokgpu", "alltoall"),  # "dispatcher A2A"
    ("trm-automodel-kimik2-256-tokgpu", "deepep"),  # "kernel optimizations 'TE + DeepEP'"
    ("trm-mb-2608-gb300-deepseekv3-mxfp8-256-g4096-p-tokgpu", "deepep"),  # its release's recipe: HybridEP
    ("trm-mb-2511-gb300-deepseekv3womtp-fp8mx-256-g4096-p-tokgpu", "alltoall"),  # no recipe matched: the default
])
def test_a_moe_row_runs_with_the_dispatcher_it_names(catalog: Catalog, row_id: str, dispatcher: str) -> None:
    with (BENCH / "calibration" / "training_more.csv").open(encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["id"] == row_id)
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert case.meta["setup"].ep_dispatcher == dispatcher


# Qwen3-30B-A3B config.json: 48 MoE layers of 128 experts, moe_intermediate_size 768 on hidden 2048, three matrices
QWEN3_30B_ROUTED = 48 * 128 * 3 * 2048 * 768  # 28,991,029,248


def test_expert_gradients_are_reduced_over_their_expert_data_parallel_copies(catalog: Catalog) -> None:
    # 16 GPUs, DP 16, ZeRO-1. The dense rest (attention, embeddings, router) is reduced over DP 16: a ring moves
    # 2 × 15/16 of its 16-bit gradients. EP 16 leaves each expert one copy (EDP = 16/16 = 1): nothing more to
    # reduce. EP 8 holds each expert shard twice (EDP 2): its routed/8 gradients move 2 × 1/2 of themselves.
    m = catalog.model("Qwen3-30B-A3B")
    dense = count_params(m).total - QWEN3_30B_ROUTED
    ep16 = step_work(m, _megatron(Parallelism(dp=16, ep=16, zero=1)), fitted()).dp_bytes
    ep8 = step_work(m, _megatron(Parallelism(dp=16, ep=8, zero=1)), fitted()).dp_bytes
    assert ep16 == pytest.approx(dense * 2 * 2 * 15 / 16, rel=1e-6)
    assert ep8 == pytest.approx(ep16 + QWEN3_30B_ROUTED / 8 * 2 * 2 * 1 / 2, rel=1e-6)


def test_hgx_expert_gradients_cross_the_network_behind_one_micro_step(catalog: Catalog) -> None:
    # gpt-oss-120b on 64 GPUs, DP 64, micro-batch 4 × 4096, global batch 1280 sequences: 5 micro-steps a step
    # (Megatron-Bridge's recipes). On eight HGX B200 nodes EP 8 keeps each node's experts on NVLink but gives
    # every expert shard 8 copies, one per node: its gradients (tens of GB a step) are reduced over the
    # 400 Gb/s network after the last micro-batch's backward, behind one micro-step of compute, not five, and
    # part of it shows. On a GB200 NVL72 rack EP 64 leaves each expert one copy and the dense rest is reduced
    # over NVLink: none shows.
    m = catalog.model("gpt-oss-120b")
    s = replace(_megatron(Parallelism(dp=64, ep=8, zero=1), mb=4), grad_accum=5)
    hgx = dict(train_time(m, catalog.gpu("B200"), s, 1e9).breakdown.parts)
    rack = dict(train_time(m, catalog.gpu("GB200"), replace(s, parallel=Parallelism(dp=64, ep=64, zero=1)),
                           1e9).breakdown.parts)
    assert hgx["data_parallel_comm"] > 0.1 * hgx["compute"]
    assert rack["data_parallel_comm"] == 0.0


def test_plain_1f1b_waits_on_its_stage_sends_over_the_network(catalog: Catalog) -> None:
    # DeepSeek-V3 on 256 HGX B200s, PP 16: stages are 256/16 = 16 ranks apart, on other nodes. Per micro-step a
    # stage sends 1 × 4096 × 7168 × 2 bytes = 58.7 MB forward and as much backward over the 50 GB/s network:
    # 2.35 ms. The interleaved schedule overlaps them (none counted); on one node they go over NVLink 5
    # (900 GB/s each way) at NCCL's point-to-point share, 370/450 of it: 740 GB/s.
    from gpuplan.estimate.train_time import pipeline_send_seconds

    act = 1 * 4096 * 7168 * 2
    b200 = catalog.gpu("B200")
    link = links(b200, fitted())
    assert link.inter_node == pytest.approx(50e9)
    plain = _megatron(Parallelism(dp=16, pp=16, ep=8, zero=1))
    assert pipeline_send_seconds(plain, 7168, link) == pytest.approx(2 * act / 50e9)
    assert pipeline_send_seconds(_megatron(Parallelism(dp=16, pp=16, vp=2, ep=8, zero=1)), 7168, link) == 0.0
    assert pipeline_send_seconds(_megatron(Parallelism(dp=2, pp=4)), 7168, link) == pytest.approx(2 * act / 740e9)


def test_per_expert_gemm_launches_by_hand(catalog: Catalog) -> None:
    # Qwen3-30B-A3B, 128 experts, 48 MoE layers, EP 8: 16 local experts × 6 GEMMs (2 forward, 4 backward) × 48
    m = catalog.model("Qwen3-30B-A3B")
    assert expert_gemm_launches(m, _megatron(Parallelism(dp=8, ep=8, zero=1))) == 16 * 6 * 48
    # EP 32 leaves 4 experts a GPU: a quarter of the launches; a full recomputation adds the forward's two
    assert expert_gemm_launches(m, _megatron(Parallelism(dp=32, ep=32, zero=1))) == 4 * 6 * 48
    assert expert_gemm_launches(m, _megatron(Parallelism(dp=8, ep=8, zero=1), recompute="full")) == 16 * 8 * 48
    # torchtitan's grouped GEMM is one kernel for all local experts; a dense model has none
    titan = replace(_megatron(Parallelism(dp=8, ep=8, zero=1)), framework="torchtitan")
    assert expert_gemm_launches(m, titan) == 0.0
    assert expert_gemm_launches(catalog.model("Llama-3.1-8B"), _megatron(Parallelism(dp=8))) == 0.0


def test_launch_cost_weighs_most_at_micro_batch_1(catalog: Catalog) -> None:
    # the launches do not shrink with the tokens: at 10 µs a launch, Qwen3-30B-A3B on 8 B200s (EP 8) pays
    # 4,608 × 10 µs = 46 ms per micro-step whatever its micro-batch, a larger share of a micro-batch-1 step
    m, gpu = catalog.model("Qwen3-30B-A3B"), catalog.gpu("B200")
    cal = replace(fitted(), values={**fitted().values, "expert_gemm_launch_s": 1e-5})
    shares = []
    for mb in (1, 4):
        s = _megatron(Parallelism(dp=8, ep=8, zero=1), mb=mb)
        parts = dict(train_time(m, gpu, s, 1e9, cal).breakdown.parts)
        micro_steps = 1e9 / (mb * 4096 * 8)
        assert parts["expert_gemm_launches"] / micro_steps == pytest.approx(4608 * 1e-5)
        shares.append(parts["expert_gemm_launches"] / sum(parts.values()))
    assert shares[0] > 2 * shares[1]


def _deepseek_v3_row() -> dict[str, str]:
    with (BENCH / "calibration" / "training_more.csv").open(encoding="utf-8") as f:
        return next(r for r in csv.DictReader(f) if r["id"] == "trm-dsv3-pretrain-gpuh")


def test_dualpipe_hides_the_all_to_alls_behind_compute_but_not_beyond_it(catalog: Catalog) -> None:
    # DeepSeek-V3 report sec. 3.2.1: DualPipe runs one micro-batch's all-to-alls and pipeline sends while another
    # computes. On 2,048 H800 (PP 16, EP 64 over 8 nodes) the all-to-alls are about as long as the compute (the
    # report's "computation-to-communication ratio of approximately 1:1"), so the run loses them, and the sends,
    # where compute covers them, and keeps the rest: the run can never end before its compute and the other parts
    m, gpu = catalog.model("DeepSeek-V3"), catalog.gpu("H800")
    plain = _megatron(Parallelism(pp=16, dp=128, ep=64, zero=1), seq=4096)
    plain = replace(plain, grad_accum=120)
    before = dict(train_time(m, gpu, plain, 1e12).breakdown.parts)
    after = dict(train_time(m, gpu, replace(plain, dualpipe=True), 1e12).breakdown.parts)
    assert before["expert_parallel_comm"] > 0.5 * before["compute"]
    hidden = min(before["expert_parallel_comm"] + before["pipeline_parallel_comm"], before["compute"])
    assert sum(before.values()) - sum(after.values()) == pytest.approx(hidden, rel=1e-9)
    assert after["compute"] == before["compute"] and after["pipeline_bubble"] == before["pipeline_bubble"]
    # with no expert parallelism and no pipeline the schedule has nothing to hide
    dense = catalog.model("Llama-3.1-8B")
    s = _megatron(Parallelism(dp=8, zero=1))
    assert train_time(dense, gpu, replace(s, dualpipe=True), 1e10).total == train_time(dense, gpu, s, 1e10).total


def test_the_deepseek_v3_run_is_mapped_with_the_schedule_and_dispatch_its_report_states(catalog: Catalog) -> None:
    # sec. 3.2.1 (DualPipe) and sec. 3.2.2 (a token crosses to a node once, then NVLink: DeepEP), quoted in the notes
    case, why = _pretrain_case(catalog, _deepseek_v3_row())
    assert case is not None, why
    assert case.meta["setup"].dualpipe and case.meta["setup"].ep_dispatcher == "deepep"
    # its 2.664M H800 GPU-hours for 14.8T tokens (180K per trillion, sec. 1): within a quarter, where the
    # all-to-alls counted exposed and sent once per expert put it two thirds over
    assert case.predict(fitted()) == pytest.approx(2.664e6, rel=0.25)


def _ep_parts(m, gpu, s: TrainSetup) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    parts = dict(train_time(m, gpu, s, 1e10).breakdown.parts)
    return parts["expert_parallel_comm"], sum(parts.values())


def test_megatron_ep_overlap_hides_the_all_to_alls_of_the_paired_micro_batches(catalog: Catalog) -> None:
    # Megatron-Core's combined 1F1B schedule (combined_1f1b.py): with 4 micro-batches and no pipeline it runs
    # mb1 F | mb1 B + mb2 F | mb2 B + mb3 F | mb3 B + mb4 F | mb4 B, so the first forward and the last backward, one
    # micro-batch's all-to-alls of four, find nothing to hide behind; on one HGX node (EP 8 over NVLink) each
    # phase's compute outlasts the other micro-batch's all-to-alls, so a quarter of them stays exposed
    m, gpu = catalog.model("Qwen3-30B-A3B"), catalog.gpu("H100")
    plain = replace(_megatron(Parallelism(dp=8, ep=8, zero=1), mb=2), grad_accum=4)
    ep_plain, total_plain = _ep_parts(m, gpu, plain)
    ep_overlap, total_overlap = _ep_parts(m, gpu, replace(plain, ep_overlap=True))
    assert ep_plain > 0.05 * total_plain
    assert ep_overlap == pytest.approx(ep_plain / 4, rel=1e-9)
    assert total_plain - total_overlap == pytest.approx(0.75 * ep_plain, rel=1e-9)
    # more micro-batches per step leave fewer unpaired
    more = replace(plain, grad_accum=16)
    assert _ep_parts(m, gpu, replace(more, ep_overlap=True))[0] == pytest.approx(_ep_parts(m, gpu, more)[0] / 16)


@pytest.mark.parametrize(("shares", "exposed", "why"), [
    # 4 s of all-to-alls and 6 s of compute over 4 micro-batches: a quarter unpaired (1 s); of the paired 3 s each
    # all-to-all kind takes 0.75 s beside 4.5 s of compute. Attention side 20 %: its forward (or data-gradient) pass
    # is 0.3 s, so each combine shows 0.45 s; the dispatches (1.5 s) fit beside the experts' 2.7 s
    ((0.2, 0.6), 1.0 + 2 * 0.45, "short attention side: both combines outlast it"),
    ((0.4, 0.5), 1.0 + 2 * 0.15, "attention side 0.6 s: 0.15 s of each combine shows"),
    ((0.6, 0.4), 1.0, "every window's computation outlasts its all-to-alls: only the unpaired quarter"),
    ((0.6, 0.2), 1.0 + 1.5 - 0.9, "experts 0.9 s: the two dispatches (1.5 s) outlast them"),
])
def test_megatron_ep_overlap_hides_each_all_to_all_behind_its_own_window(shares: tuple[float, float],
                                                                          exposed: float, why: str) -> None:
    # model_chunk_schedule_plan.py TransformerLayerSchedulePlan.run: combine_bwd | pre_dispatch_fwd, then
    # dispatch_fwd + dispatch_bwd | mlp_bwd + mlp_bwd_dw + mlp_fwd, then combine_fwd | pre_dispatch_bwd, each
    # window waiting for both streams; pooled over the step (3 s of all-to-alls under 4.5 s of compute) all would hide
    s = replace(_megatron(Parallelism(dp=8, ep=8, zero=1)), grad_accum=4)
    assert ep_overlap_exposed(s, 4.0, 6.0, shares) == pytest.approx(exposed, rel=1e-9), why


def test_megatron_ep_overlap_leaves_the_combines_exposed_across_h100_nodes(catalog: Catalog) -> None:
    # Qwen3-235B-A22B as Megatron-Bridge's H100 recipe runs it (TP 2, PP 8 × VP 4, EP 32 over four HGX nodes, 8,192
    # sequences): over 400 Gb/s links its all-to-alls take about as long as its compute, a quarter each kind, and its
    # attention side is two fifths of the FLOPs, so one pass of it (2/15 of the compute) is shorter than a combine:
    # far more than the unpaired share (8 of 512 micro-batches) stays on the critical path, which pooling the whole
    # step's compute against its all-to-alls would hide
    m, gpu = catalog.model("Qwen3-235B-A22B"), catalog.gpu("H100")
    s = replace(_megatron(Parallelism(tp=2, pp=8, vp=4, dp=16, ep=32, zero=1)), grad_accum=512)
    attention, experts = moe_layer_shares(m, s)
    assert 0.3 < attention < 0.5 and 0.5 < experts < 0.7
    plain, _ = _ep_parts(m, gpu, s)
    overlapped, _ = _ep_parts(m, gpu, replace(s, ep_overlap=True))
    unpaired = plain * 8 / 512
    assert overlapped > 5 * unpaired
    assert overlapped < 0.5 * plain  # the dispatches still hide behind the experts


def test_megatron_ep_overlap_under_the_interleaved_pipeline_leaves_the_warm_up_exposed(catalog: Catalog) -> None:
    # interleaved 1F1B: stage r runs 2(p - r - 1) + (v - 1)p + 1 warm-up forward chunks alone (and as many cool-down
    # backward chunks), vp on average over the stages, of m·v: PP 4 × VP 2 with 16 micro-batches leaves 4/16
    m, gpu = catalog.model("Qwen3-30B-A3B"), catalog.gpu("H100")
    interleaved = replace(_megatron(Parallelism(pp=4, vp=2, dp=2, ep=2, zero=1), mb=2), grad_accum=16)
    ep_plain, _ = _ep_parts(m, gpu, interleaved)
    assert _ep_parts(m, gpu, replace(interleaved, ep_overlap=True))[0] == pytest.approx(ep_plain / 4, rel=1e-9)
    # Megatron-Core refuses the option with a pipeline but no virtual stages, and with full recomputation
    # (TransformerConfig.__post_init__): such a setup is timed as without it
    for refused in (replace(interleaved, parallel=replace(interleaved.parallel, vp=1)),
                    replace(interleaved, recompute="full")):
        assert _ep_parts(m, gpu, replace(refused, ep_overlap=True)) == _ep_parts(m, gpu, refused)


@pytest.mark.parametrize(("field", "on_id", "off_id", "why"), [
    ("ep_overlap", "trm-mb-2608-gb200-deepseekv3-mxfp8-256-g4096-p-tokgpu",
     "trm-mb-2608-gb300-nemotron3super-mxfp8-64-g512-p-tokgpu",
     "the notes end with the recipe's moe_a2a_overlap, read at the release's commit"),
    ("fused_grouped_mlp", "trm-mb-2606-gb200-qwen330ba3b-mxfp8-8-g512-p-tokgpu",
     "trm-mb-260401-gb200-qwen330ba3b-mxfp8-8-g512-p-tokgpu",
     "26.06's Qwen3-30B-A3B MXFP8 recipe on GB200 sets cutedsl_fused_grouped_mlp; 26.04.01's does not"),
])
def test_megatron_bridge_rows_are_mapped_with_what_their_recipe_sets(catalog: Catalog, field: str, on_id: str,
                                                                     off_id: str, why: str) -> None:
    with (BENCH / "calibration" / "training_more.csv").open(encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    on, _ = _pretrain_case(catalog, rows[on_id])
    off, _ = _pretrain_case(catalog, rows[off_id])
    assert on is not None and off is not None
    assert getattr(on.meta["setup"], field) and not getattr(off.meta["setup"], field), why


@pytest.mark.parametrize(("row_id", "dispatcher", "overlap", "modules"), [
    # 25.09's run_script.py (r0.1.0 @684a686): DeepSeek-V3 on H100 runs DeepEP with the A2A 1F1B overlap and
    # recomputes mla_up_proj and mlp; B200 and GB200 run it token-dropping, which turns DeepEP off, and recompute
    # mla_up_proj only
    ("trm-mb-2509-h100-deepseekv3dropless-fp8-1024-g8192-p-tokgpu", "deepep", True, ("mla_up_proj", "mlp")),
    ("trm-mb-2509-b200-deepseekv3tokendrop-fp8-256-g2048-p-tokgpu", "alltoall", False, ("mla_up_proj",)),
    ("trm-mb-2509-gb200-deepseekv3tokendrop-fp8-256-g2048-p-tokgpu", "alltoall", False, ("mla_up_proj",)),
])
def test_megatron_bridge_25_09_deepseek_rows_carry_their_run_scripts_settings(
        catalog: Catalog, row_id: str, dispatcher: str, overlap: bool, modules: tuple[str, ...]) -> None:
    with (BENCH / "calibration" / "training_more.csv").open(encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["id"] == row_id)
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    s = case.meta["setup"]
    assert (s.ep_dispatcher, s.ep_overlap, s.recompute, s.recompute_modules) == (
        dispatcher, overlap, "selective", modules)


@pytest.mark.parametrize(("row_id", "parallel", "dispatcher", "overlap", "modules"), [
    # 26.02 (tag v0.3.0): Qwen3-30B-A3B on H100 as the table prints it, DeepEP with moe_a2a_overlap; gpt-oss-120b on
    # B200 recomputes layernorm and moe_act, on B300 nothing, both through the alltoall dispatcher
    ("trm-mb-2602-h100-qwen330ba3b-fp8-16-g1024-p-tokgpu", Parallelism(pp=2, dp=8, ep=8, zero=1, vp=12), "deepep",
     True, ()),
    ("trm-mb-2602-b200-gptoss120b-bf16-64-g1280-p-tokgpu", Parallelism(dp=64, ep=64, zero=1), "alltoall", False,
     ("layernorm", "moe_act")),
    ("trm-mb-2602-b300-gptoss120b-bf16-64-g1280-p-tokgpu", Parallelism(dp=64, ep=64, zero=1), "alltoall", False, ()),
    # 26.02.01 (r0.3.0 @1f0cfc3): the recipe had moved Qwen3-30B-A3B on H100 to EP 16 without a pipeline and HybridEP,
    # while the table still printed 26.02's PP 2 / VP 12 / EP 8
    ("trm-mb-260201-h100-qwen330ba3b-fp8-16-g1024-p-tokgpu", Parallelism(dp=16, ep=16, zero=1), "deepep", False, ()),
])
def test_megatron_bridge_26_02_rows_carry_their_recipes_settings(
        catalog: Catalog, row_id: str, parallel: Parallelism, dispatcher: str, overlap: bool,
        modules: tuple[str, ...]) -> None:
    with (BENCH / "calibration" / "training_more.csv").open(encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["id"] == row_id)
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    s = case.meta["setup"]
    assert (s.parallel, s.ep_dispatcher, s.ep_overlap, s.recompute_modules) == (parallel, dispatcher, overlap, modules)


def test_a_26_02_01_run_is_timed_as_the_26_04_run_of_the_same_recipe(catalog: Catalog) -> None:
    # Qwen3-30B-A3B FP8 on 16 H100: 26.02.01 and 26.04 ran the same preset (EP 16, HybridEP, no pipeline) and measured
    # 9,058 and 8,901 tokens/s/GPU; read with the table's stale PP 2 / VP 12 / EP 8, the first was a different setup
    with (BENCH / "calibration" / "training_more.csv").open(encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    earlier, _ = _pretrain_case(catalog, rows["trm-mb-260201-h100-qwen330ba3b-fp8-16-g1024-p-tokgpu"])
    later, _ = _pretrain_case(catalog, rows["trm-mb-2604-h100-qwen330ba3b-fp8-16-g1024-p-tokgpu"])
    assert earlier is not None and later is not None
    assert earlier.meta["setup"] == later.meta["setup"]
    cal = fitted()
    assert earlier.predict(cal) == pytest.approx(later.predict(cal), rel=1e-9)
    assert earlier.measured == pytest.approx(later.measured, rel=0.02)


def test_fused_grouped_mlp_pays_no_per_expert_launches(catalog: Catalog) -> None:
    # Transformer Engine's fused grouped MLP runs each expert GEMM as one grouped kernel over the local experts: the
    # 16 × 6 × 48 = 4,608 per-expert launches of Qwen3-30B-A3B on EP 8 go, and at 47 µs a launch (the fitted order)
    # that is 0.22 s of a micro-step at micro-batch 4 on a GB200, where the measured step takes 0.4-0.6 s
    m, gpu = catalog.model("Qwen3-30B-A3B"), catalog.gpu("GB200")
    grouped = _megatron(Parallelism(dp=8, ep=8, zero=1), mb=4)
    fused = replace(grouped, fused_grouped_mlp=True)
    assert expert_gemm_launches(m, grouped) == 16 * 6 * 48
    assert expert_gemm_launches(m, fused) == 0.0
    cal = fitted().with_values(expert_gemm_launch_s=47e-6)
    seconds = {name: dict(train_time(m, gpu, s, s.tokens_per_micro_batch * 8, cal).breakdown.parts)
               for name, s in (("grouped", grouped), ("fused", fused))}
    assert seconds["grouped"]["expert_gemm_launches"] == pytest.approx(4608 * 47e-6, rel=1e-9)
    assert seconds["fused"]["expert_gemm_launches"] == 0.0
    # nothing else of the step moves
    rest = {k: v for k, v in seconds["grouped"].items() if k != "expert_gemm_launches"}
    assert rest == {k: v for k, v in seconds["fused"].items() if k != "expert_gemm_launches"}


def test_selective_recompute_costs_the_forward_flops_of_the_modules_it_names(catalog: Catalog) -> None:
    m = catalog.model("DeepSeek-V3")
    s = _megatron(Parallelism(pp=8, dp=32, ep=32, zero=1))
    none = train_flops_per_token(m, s)

    def extra(*modules: str) -> float:
        return train_flops_per_token(m, replace(s, recompute="selective", recompute_modules=modules)) - none

    # element-wise kernels only (Megatron-Core's output-discarding checkpoints of norms and the MoE activation)
    assert extra("layernorm", "moe_act") == 0 and extra() == 0
    # MLA's up-projections from its config: q 1536 -> 128 heads x 192, kv 512 -> 128 x (128 + 128), 61 layers,
    # 2 FLOPs per multiply-add: 2 x 61 x (37,748,736 + 16,777,216) = 6.65 GFLOP per token, a few % of the step
    assert extra("mla_up_proj") == pytest.approx(6.652e9, rel=1e-3)
    # the MoE layers rerun the token's 8 routed experts and the shared one: more than the up-projections, less
    # than a full recomputation of every layer
    full = train_flops_per_token(m, replace(s, recompute="full")) - none
    assert extra("mla_up_proj") < extra("moe") < full


def test_recomputing_the_moe_layers_reruns_their_all_to_alls(catalog: Catalog) -> None:
    # Megatron-Core's MoELayer checkpoints route, dispatch, experts and combine together (moe_layer.py
    # custom_forward), so the backward repeats the forward's dispatch and combine as a full recomputation does
    m = catalog.model("Qwen3-30B-A3B")
    s = _megatron(Parallelism(dp=16, ep=16, zero=1))
    moe = replace(s, recompute="selective", recompute_modules=("moe", "layernorm"))
    assert all_to_all_bytes(m, moe) == pytest.approx(1.5 * all_to_all_bytes(m, s))
    assert all_to_all_bytes(m, moe) == all_to_all_bytes(m, replace(s, recompute="full"))
    assert all_to_all_bytes(m, replace(moe, recompute_modules=("moe_act",))) == all_to_all_bytes(m, s)
    # and Megatron-Core will not overlap the all-to-alls then (TransformerConfig.__post_init__)
    gpu = catalog.gpu("H100")
    assert _ep_parts(m, gpu, replace(moe, ep_overlap=True)) == _ep_parts(m, gpu, moe)


def test_megatron_bridge_rows_are_mapped_with_the_recompute_modules_their_recipe_sets(catalog: Catalog) -> None:
    with (BENCH / "calibration" / "training_more.csv").open(encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    setups = {}
    for rid in ("trm-mb-2604-h100-nemotron3nano-fp8-16-g1024-p-tokgpu",  # recipe: moe, layernorm, core_attn, moe_act
                "trm-mb-2606-gb300-deepseekv3-mxfp8-256-g4096-p-tokgpu",  # recipe: recompute_modules []
                "trm-mzoo-q3235b-h100-256-ep32-pp8-tokgpu"):  # column: yes (selective: layernorm, moe_act)
        case, why = _pretrain_case(catalog, rows[rid])
        assert case is not None, why
        setups[rid] = case.meta["setup"]
    nano, dsv3, mzoo = setups.values()
    assert nano.recompute == "selective" and nano.recompute_modules == ("moe", "layernorm", "core_attn", "moe_act")
    assert dsv3.recompute == "none" and dsv3.recompute_modules == ()
    assert mzoo.recompute == "selective" and mzoo.recompute_modules == ("layernorm", "moe_act")
