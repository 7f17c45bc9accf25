"""Expert parallelism in training a mixture-of-experts model: where the experts live, what they exchange.

The layout is Megatron-Core's "MoE parallel folding" (NVIDIA/Megatron-LM ``megatron/core/transformer/moe/
README.md``; ``megatron/core/parallel_state.py`` builds the expert grid ETP × EP × EDP × PP beside the dense grid
TP × CP × DP × PP over the same GPUs). The attention and the other dense layers are split TP × CP × DP as for a
dense model; the routed experts of each MoE layer are split over ``ep`` ranks (E/EP experts each) and replicated
over the expert-data-parallel group EDP = TP × CP × DP / (EP × ETP). Expert tensor parallelism ETP is TP when EP
is 1 (the experts are split like a dense MLP) and 1 otherwise, as Megatron-Core's MoE recipes set it
(``--expert-tensor-parallel-size 1``: smaller experts are not worth splitting). EP ranks are consecutive GPUs,
so an EP group of 8 stays on one HGX node's NVLink and an NVL72 rack keeps up to 72 on its NVLink fabric.

Per training micro-step and MoE layer a GPU sends its tokens to the ranks of their top-k experts (dispatch) and
gets the k outputs back (combine): k × hidden × 2 bytes per token each way (Megatron-Core's
``--moe-token-dispatcher-type alltoall``; 16-bit activations), of which the share (EP − 1)/EP leaves the GPU.
The backward pass runs the same two all-to-alls on the gradients, and a full recomputation (or a selective one
naming ``moe``, ``TrainSetup.reruns_moe``) reruns the forward's (4 or 6 all-to-alls per MoE layer and
micro-step; Lepikhin et al. 2021, GShard, sec. 2.2; DeepSeek-AI 2024, DeepSeek-V3 Technical Report,
arXiv:2412.19437, sec. 3.2.2). The expert destinations of a token are spread
evenly over the EP ranks: (EP − domain)/EP of them on other nodes over the network, (domain − 1)/EP on other
GPUs of the NVLink domain; the two parts are counted one after the other, not overlapped with compute: the
framework default (Megatron-LM's ``--overlap-moe-expert-parallel-comm``, batch-level overlap since Megatron-Core
0.14, is off unless given). NVIDIA-NeMo/Megatron-Bridge's performance recipes set it, ``moe_a2a_overlap``, for
some runs, e.g. DeepSeek-V3 MXFP8 on B200/GB200 and Qwen3-235B-A22B on H100 (``scripts/performance/configs/
deepseek/deepseek_workload_base_configs.py`` @042641823051ce167c52b0ae289941a227c11535; 35 of the 156 MoE runs of
its tables in the calibration, most from release 26.06 on, whose notes say so): where a setup states it
(``TrainSetup.ep_overlap``) the micro-batches its combined 1F1B schedule pairs hide their all-to-alls behind each
other's compute (:func:`gpuplan.estimate.train_time.ep_overlap_exposed`).

DeepEP's kernels (and NVIDIA's HybridEP, both behind Megatron-Core's flex dispatcher; ``s.ep_dispatcher ==
"deepep"``) send a token once to each GPU that holds one of its experts, not once per expert, and across nodes
once per destination node: over the network to the GPU of the same local index there, which forwards it over
NVLink to the node's GPUs that need it (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, sec. 3.2.2;
deepseek-ai/DeepEP ``csrc/kernels/internode.cu`` @b805c0e15e0d697c06d5db05fabcac2f0edb6e30, ``notify_dispatch``
counts a token once per destination RDMA rank and once per destination GPU, ``is_token_in_rank``). With the k
distinct experts of a token drawn evenly from the E, a group of n GPUs holding E·n/EP of them is reached with
chance 1 − C(E − E·n/EP, k) / C(E, k): per token and all-to-all, (nodes − 1) of those chances over the network
(n: a node's GPUs) and (EP − nodes) over NVLink (n = 1: the other GPUs of its own node and the forwarded
copies on the others). Qwen3-30B-A3B on EP 16 over two nodes sends 1.0 network copies of a token instead of 4.

A group-limited router (``ModelSpec.n_expert_groups`` / ``n_routed_groups``, config ``n_group`` / ``topk_group``)
takes a token's k experts within its best ``topk_group`` of ``n_group`` groups of consecutive experts, the groups
ranked by their best experts' scores (transformers ``DeepseekV3TopkRouter``: the sum of each group's top 2;
``DeepseekV2Moe`` under "group_limited_greedy": its top 1), so each chosen group holds about k / ``topk_group``
of them (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, sec. 2.1.2: "the sum of the highest K_r/M affinity
scores of the experts distributed on each node"; with iid random scores 3.97 of the 4 chosen groups receive
one). The groups are taken as drawn evenly, then k / ``topk_group`` experts evenly within each: a block of
experts is missed when every chosen group misses it, averaged over the choices (an elementary symmetric sum) and
over the blocks. DeepSeek-V3 on EP 64 over eight HGX nodes holds one group per node: a token reaches at most 4
nodes, its own with chance 1/2, so 3.5 network copies instead of 7 (4.6 if it were top-8 over all 256).

Around the expert GEMMs every token is copied k times into expert order (permute) and its k outputs are
gathered back and summed with the router's weights (unpermute; Megatron-Core ``moe_utils.permute`` /
``unpermute``): memory-bound passes over k × hidden elements per token and MoE layer that a dense MLP does not
have. Each reads and writes about k × hidden 16-bit elements (the unpermute writes one hidden), forward, and
as much again in backward: 2 × (3k + 1) × hidden elements per token and MoE layer (a full recomputation runs the
forward's again).

A latent MoE (Nemotron 3 Super / Ultra, ``moe_latent_size``) projects each token down to the latent width before
it is routed and back up after the combine, so the all-to-alls, the permutations and the expert inputs carry
latent-width tokens: cutting that traffic by hidden / latent is the design's purpose (Elango et al. 2026,
"LatentMoE: Toward Optimal Accuracy per FLOP and Parameter in Mixture of Experts", arXiv:2601.18089, sec. 2).

In FP8 training the expert GEMMs quantize their inputs in passes of their own: Transformer Engine's grouped
linear casts the permuted tokens (forward) and the output gradients (backward) of every local expert to FP8, with
a row-wise copy for the GEMM and a column-wise one for the weight gradient (NVIDIA/TransformerEngine
``transformer_engine/pytorch/module/grouped_linear.py`` @3ea1356190e88a50d8c2cae17e80c4e6ae96d442,
``_GroupedLinear.forward`` / ``backward``: ``fused_multi_quantize`` with row-wise and column-wise usage). A dense
layer's casts are fused into its LayerNorm and activation kernels (TE ``LayerNormLinear``, ``LayerNormMLP``) and
are part of the fitted dense terms; the experts' are not. Each cast reads a 16-bit element and writes two 8-bit
ones (4 bytes; the scales, 1/32 of that for MXFP8, are left out): the inputs of the first (the dispatched token)
and second (the activation) expert GEMMs forward, and the gradients of their outputs backward — k × (2 × width +
(1 + gate) × expert width) elements per token and MoE layer, the forward's again under a full recomputation.
An NVFP4 cast (Transformer Engine's ``NVFP4BlockScaling``) likewise reads the 16-bit element once and writes a
row-wise and a column-wise 4-bit copy, each with an E4M3 scale per 16 elements (3.125 bytes): the recipe quantizes
both copies from the high-precision input (NVIDIA/TransformerEngine ``transformer_engine/common/recipe/__init__.py``
@d0067d0da6cb01811b8072a7d304f0e00344ce2b, ``NVFP4BlockScaling``); the random Hadamard transform of the column-wise
copy is taken as fused into the same pass (an assumption: no kernel timing of it is at hand).

Transformer Engine's grouped linear (Megatron-Core's ``TEGroupedMLP``) runs the GEMMs of a GPU's local experts as
one cuBLAS GEMM per expert, spread over a few CUDA streams (NVIDIA/TransformerEngine
``transformer_engine/common/gemm/cublaslt_gemm.cu`` @5c62f7283a651b682648ee44d46831d232eef04a,
``multi_stream_cublas_gemm``: a loop over ``num_gemms`` calling ``nvte_cublas_gemm_v2``; the CUTLASS grouped path is
Hopper-only, 16-bit-only and behind ``NVTE_USE_CUTLASS_GROUPED_GEMM``). Each launch pays a fixed cost that does not
shrink with its tokens (launch, tile set-up, the last wave's idle SMs), so a step pays it per local expert and
GEMM: two forward (the expert's two linears), four backward (their data and weight gradients), two more under a
full recomputation (:func:`expert_gemm_launches`, at the fitted ``expert_gemm_launch_s``). It weighs most where
many experts sit on a GPU and few tokens reach each (EP 8 with 128-256 experts at micro-batch 1).

Not modelled: expert load imbalance (tokens are assumed spread evenly, as an auxiliary balancing loss or
Megatron's force-balanced benchmark routing keeps them; a capacity factor above 1 pads the expert GEMMs), FP8
dispatch (DeepEP's; 16-bit counted both ways: errs slow).
"""

from __future__ import annotations

import functools
import math

from gpuplan.errors import InfeasibleError
from gpuplan.estimate.params import count_params
from gpuplan.types import ModelSpec, Parallelism, TrainSetup

DISPATCH_BYTES = 2.0  # 16-bit activations (bf16) each way
CAST_BYTES = 4.0  # an FP8 cast: one 16-bit element read, a row-wise and a column-wise 8-bit copy written
FP4_CAST_BYTES = 2.0 + 2 * (0.5 + 1 / 16)  # an NVFP4 cast: two 4-bit copies, each with an 8-bit scale per 16


def expert_tp(par: Parallelism) -> int:
    """Expert tensor parallelism: TP when the experts are not split over EP ranks, else 1 (module docstring)."""
    return par.tp if par.ep == 1 else 1


def expert_dp(par: Parallelism) -> int:
    """Expert-data-parallel ranks: the copies of each expert shard, TP × CP × DP / (EP × ETP)."""
    return max(1, par.tp * par.cp * par.dp // (par.ep * expert_tp(par)))


def routed_params(m: ModelSpec, s: TrainSetup) -> float:
    """Routed-expert parameters the method trains (the full method: all of them; adapters: none split by EP)."""
    return float(count_params(m).experts) if s.method.trains_every_weight and m.is_moe else 0.0


def gpu_params(m: ModelSpec, s: TrainSetup, trainable: float, sharded: bool = False) -> float:
    """Of ``trainable`` parameters, those one GPU holds: the dense part split TP × PP, the routed experts
    EP × ETP × PP. ``sharded``: further split over the data-parallel group as ZeRO / Megatron's distributed
    optimizer does (the dense part over DP, the experts over EDP; their gradients are reduced over the same
    groups, train_time._comm_bytes)."""
    par = s.parallel
    experts = min(routed_params(m, s), trainable)
    dense = (trainable - experts) / (par.tp * par.pp)
    routed = experts / (par.ep * expert_tp(par) * par.pp)
    if sharded:
        dense /= par.dp
        routed /= expert_dp(par)
    return dense + routed


def dispatch_width(m: ModelSpec) -> int:
    """Elements of one routed token copy: the latent width of a latent MoE, else the hidden size (module
    docstring)."""
    return m.moe_latent or m.hidden


def all_to_all_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes one GPU sends to other EP ranks in a micro-step (module docstring); 0 without expert parallelism."""
    par = s.parallel
    if par.ep <= 1 or not m.is_moe:
        return 0.0
    tokens = s.tokens_per_micro_batch / (par.tp * par.cp)  # a sequence-parallel TP rank dispatches its own share
    per_collective = tokens * m.n_active_experts * dispatch_width(m) * DISPATCH_BYTES * (par.ep - 1) / par.ep
    collectives = 6 if s.reruns_moe else 4
    return collectives * m.n_moe_layers / par.pp * per_collective


def permute_bytes_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes the token permutation and unpermutation of one training token read and write in all MoE layers
    (module docstring), summed over the GPUs that share the token."""
    if not m.is_moe:
        return 0.0
    passes = 3.0 if s.reruns_moe else 2.0  # forward, backward (and the forward again)
    return passes * (3 * m.n_active_experts + 1) * dispatch_width(m) * DISPATCH_BYTES * m.n_moe_layers


def expert_cast_bytes_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes the FP8 (or NVFP4) casts of the expert GEMMs' inputs and output gradients read and write per training
    token in all MoE layers (module docstring), summed over the GPUs that share the token; 0 unless the setup trains
    in FP8 or NVFP4."""
    if not m.is_moe or s.precision not in ("fp8-mixed", "fp4-mixed"):
        return 0.0
    width, expert = dispatch_width(m), m.moe_ffn_hidden
    forward = width + expert  # the dispatched token, the activation
    backward = width + (2 if m.gated_mlp else 1) * expert  # the gradients of the two GEMMs' outputs
    forwards = 2 if s.reruns_moe else 1
    cast = FP4_CAST_BYTES if s.precision == "fp4-mixed" else CAST_BYTES
    return cast * m.n_active_experts * (forwards * forward + backward) * m.n_moe_layers


def all_to_all_collectives(m: ModelSpec, s: TrainSetup) -> float:
    """All-to-alls one GPU takes part in per micro-step (each pays a collective latency)."""
    if s.parallel.ep <= 1 or not m.is_moe:
        return 0.0
    return (6 if s.reruns_moe else 4) * m.n_moe_layers / s.parallel.pp


def expert_gemm_launches(m: ModelSpec, s: TrainSetup) -> float:
    """Per-expert GEMM launches one GPU makes in a micro-step (module docstring): Megatron-Core's grouped linear
    only; other stacks (torchtitan's ``torch._grouped_mm``) run one kernel for all local experts, and so does
    Transformer Engine's fused grouped MLP (``s.fused_grouped_mlp``): its CuTe DSL kernels take the first GEMM with
    the activation, the second GEMM and the weight gradients each as one grouped GEMM over the local experts
    (NVIDIA/TransformerEngine ``transformer_engine/pytorch/ops/fused/grouped_mlp.py``
    @d0067d0da6cb01811b8072a7d304f0e00344ce2b, ``_GroupedMLP_CuTeGEMMBase``: ``grouped_gemm_activation_kernel``,
    ``grouped_gemm_quant_kernel``, ``grouped_gemm_wgrad_kernel``; MXFP8 or NVFP4 on compute capability 10)."""
    if not m.is_moe or not s.framework.per_expert_gemms or s.fused_grouped_mlp:
        return 0.0
    par = s.parallel
    local = m.n_experts / (par.ep if par.ep > 1 else 1)
    gemms = 8 if s.reruns_moe else 6  # 2 forward, 4 backward, 2 forward again
    return local * gemms * m.n_moe_layers / par.pp


def off_domain_share(ep: int, domain: int) -> tuple[float, float]:
    """(share of the bytes a GPU sends that go over the network, share over its NVLink domain) for an EP group
    of ``ep`` consecutive GPUs in domains of ``domain``: destinations spread evenly, those on itself stay."""
    local = min(ep, domain)
    return (ep - local) / (ep - 1), (local - 1) / (ep - 1)


def link_shares(m: ModelSpec, s: TrainSetup, domain: int) -> tuple[float, float]:
    """(share of :func:`all_to_all_bytes` that goes over the network, share over NVLink) for an EP group of
    consecutive GPUs in NVLink domains of ``domain``: the alltoall dispatcher's copies as :func:`off_domain_share`
    splits them; DeepEP's fewer, one per destination GPU and node (module docstring)."""
    ep = s.parallel.ep
    if ep <= 1 or not m.is_moe:
        return 0.0, 0.0
    if s.ep_dispatcher != "deepep":
        return off_domain_share(ep, domain)
    k, experts, local = m.n_active_experts, m.n_experts, min(ep, domain)
    nodes = ep // local
    sent = k * (ep - 1) / ep  # the alltoall dispatcher's copies that leave the GPU, all_to_all_bytes' count
    groups, routed = m.n_expert_groups, m.n_routed_groups
    network = (nodes - 1) * _reached(experts, k, groups, routed, experts * local // ep)
    nvlink = (ep - nodes) * _reached(experts, k, groups, routed, experts // ep)
    return network / sent, nvlink / sent


@functools.cache
def _reached(experts: int, k: int, groups: int, routed: int, held: int) -> float:
    """Chance that a token's k experts include one of a block of ``held`` consecutive experts, averaged over the
    experts / held blocks (a sender is as likely on any node or GPU): k drawn evenly from all experts, or, under
    group-limited routing, ``routed`` of the ``groups`` groups drawn evenly and k / routed experts in each (module
    docstring)."""
    if routed >= groups:
        return 1 - math.comb(experts - held, k) / math.comb(experts, k)
    size, blocks = experts // groups, experts // held
    reached = 0.0
    for first in range(0, blocks * held, held):
        misses = [_group_miss(size, _overlap(first, held, start, size), k / routed)
                  for start in range(0, experts, size)]
        reached += 1 - _elementary_symmetric(misses, routed) / math.comb(groups, routed)
    return reached / blocks


def _overlap(first: int, held: int, start: int, size: int) -> int:
    """Experts that the block first..first+held−1 shares with the group start..start+size−1."""
    return max(0, min(first + held, start + size) - max(first, start))


def _group_miss(size: int, held: int, picks: float) -> float:
    """Chance that ``picks`` distinct experts drawn evenly from a group of ``size`` miss ``held`` given ones; a
    fractional count is taken as its two nearest whole counts in proportion."""
    whole, part = int(picks), picks - int(picks)
    miss = math.comb(size - held, whole) / math.comb(size, whole)
    return (1 - part) * miss + part * math.comb(size - held, whole + 1) / math.comb(size, whole + 1) if part else miss


def _elementary_symmetric(values: list[float], n: int) -> float:
    """Sum over the n-subsets of ``values`` of their products; over C(len(values), n), the mean product of n values
    drawn evenly: with each group's chance of being missed, the chance that n groups chosen evenly all miss."""
    sums = [1.0] + [0.0] * n
    for value in values:
        for j in range(n, 0, -1):
            sums[j] += sums[j - 1] * value
    return sums[n]


def check_expert_layout(m: ModelSpec, par: Parallelism) -> None:
    """Raise when ``par`` cannot split ``m``'s experts: EP must divide the experts and the GPUs of a pipeline
    stage (TP × CP × DP), Megatron-Core's conditions."""
    if par.ep == 1:
        return
    fix = "split the experts over a number of ranks that divides both."
    if not m.is_moe:
        raise InfeasibleError("--gpus", f"{m.name} has no experts to split over {par.ep} expert-parallel ranks.",
                              "train it without expert parallelism (EP 1).")
    if m.n_experts % par.ep:
        raise InfeasibleError("--gpus", f"{m.name}'s {m.n_experts} experts do not split over {par.ep} "
                              "expert-parallel ranks.", fix)
    stage = par.tp * par.cp * par.dp
    if stage % par.ep:
        raise InfeasibleError("--gpus", f"EP {par.ep} does not divide the {stage} GPUs of a pipeline stage "
                              "(TP × CP × DP).", fix)
