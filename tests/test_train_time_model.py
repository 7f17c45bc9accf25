"""Training time behaves as the hardware does: a smaller micro-batch at the same global batch never makes a step
faster, attention weighs more as sequences grow, narrow models and bandwidth-poor parts run further below peak,
and an eager step cannot run faster than its kernels are launched."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import pytest

from gpuplan.catalog import load_catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.train_time import dequantize_bytes, score_traffic_bytes, train_time
from gpuplan.types import Parallelism, TrainSetup

CAT = load_catalog()
TOKENS = 1e9


def _setup(mb: int, accum: int, seq: int = 2048, **kw: object) -> TrainSetup:
    return TrainSetup(method=str(kw.pop("method", "full")), micro_batch=mb, seq_len=seq, grad_accum=accum,
                      parallel=Parallelism(dp=1, zero=0), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", ["GPT-2-124M", "Llama-3.2-1B", "Llama-3.1-8B"])
@pytest.mark.parametrize("gpu", ["H100", "A100-80GB", "RTX4090", "L40S"])
@pytest.mark.parametrize("method", ["full", "lora"])
@pytest.mark.parametrize("framework", ["hf", "torchtune", "megatron"])
def test_halving_the_micro_batch_at_a_fixed_global_batch_never_speeds_a_step(model: str, gpu: str, method: str,
                                                                             framework: str) -> None:
    # 64 sequences per optimizer step, split into 16, 8, 4, 2 or 1 per micro-step: the same FLOPs in smaller
    # GEMMs and more launches
    m, g = CAT.model(model), CAT.gpu(gpu)
    times = [train_time(m, g, _setup(mb, 64 // mb, method=method, framework=framework), TOKENS).total
             for mb in (16, 8, 4, 2, 1)]
    assert all(later >= earlier * (1 - 1e-9) for earlier, later in pairwise(times))


def _seconds_per_token(model: str, seq: int, gpu: str = "H100") -> float:
    # the same 32,768 tokens per micro-step at every length: only the attention span changes
    return train_time(CAT.model(model), CAT.gpu(gpu), _setup(max(1, 32768 // seq), 1, seq), TOKENS).total / TOKENS


@pytest.mark.parametrize("model", ["GPT-2-124M", "Llama-3.1-8B", "Llama-3.1-70B"])
def test_longer_sequences_cost_more_per_token(model: str) -> None:
    times = [_seconds_per_token(model, seq) for seq in (1024, 4096, 8192, 16384, 32768)]
    assert times == sorted(times)
    assert times[-1] > 1.2 * times[0]  # at 32k the attention over the context is a large share of the step


def test_attention_weighs_more_in_a_narrow_model() -> None:
    # going from 2k to 32k tokens of context adds the same attention work per layer and hidden unit, but a
    # narrow model has less matmul work to hide it behind
    def growth(model: str) -> float:
        return _seconds_per_token(model, 32768) / _seconds_per_token(model, 2048)
    assert growth("GPT-2-124M") > growth("Llama-3.1-8B") > growth("Llama-3.1-70B") > 1.0


def test_a_narrow_model_runs_further_below_peak() -> None:
    # same GPU, same 16k tokens per micro-step: GPT-2's 768-wide layers spend more of the step in memory-bound
    # kernels than Llama-3.1-8B's 4096-wide ones
    mfu = {name: train_time(CAT.model(name), CAT.gpu("H100"), _setup(8, 1), TOKENS).rate.mfu
           for name in ("GPT-2-124M", "Llama-3.2-1B", "Llama-3.1-8B")}
    assert mfu["GPT-2-124M"] < mfu["Llama-3.2-1B"] < mfu["Llama-3.1-8B"]


@pytest.mark.parametrize("model", ["GPT-2-124M", "Llama-3.1-8B"])
def test_less_memory_bandwidth_at_the_same_peak_is_slower(model: str) -> None:
    h100 = CAT.gpu("H100")
    narrow = replace(h100, memory_bandwidth_bytes_per_s=h100.memory_bandwidth_bytes_per_s / 2)
    m, s = CAT.model(model), _setup(8, 4)
    assert train_time(m, narrow, s, TOKENS).total > train_time(m, h100, s, TOKENS).total


def test_bandwidth_matters_more_for_a_narrow_model() -> None:
    h100 = CAT.gpu("H100")
    narrow = replace(h100, memory_bandwidth_bytes_per_s=h100.memory_bandwidth_bytes_per_s / 2)

    def slowdown(model: str) -> float:
        m, s = CAT.model(model), _setup(8, 4)
        return train_time(m, narrow, s, TOKENS).total / train_time(m, h100, s, TOKENS).total
    assert slowdown("GPT-2-124M") > slowdown("Llama-3.1-8B")


def test_an_eager_step_is_no_faster_than_its_kernel_launches() -> None:
    # one 64-token sequence per micro-step through 80 layers: the GPU finishes before Python has launched the
    # next layer's kernels (80 ms of launches a step; the GPU's own time for so little work is ~50 ms)
    m = CAT.model("Llama-2-70B")
    s = _setup(1, 1, 64, method="lora", framework="hf")
    est = train_time(m, CAT.gpu("H100"), s, 64 * 1000)
    launch = m.n_layers * fitted().get("layer_launch_s")
    assert est.total >= 1000 * launch
    assert est.breakdown.get("launch_stall") > 0


def test_compiling_never_slows_a_step() -> None:
    m, g = CAT.model("Llama-3.1-8B"), CAT.gpu("A100-80GB")
    eager = train_time(m, g, _setup(2, 8, framework="torchtune"), TOKENS).total
    compiled = train_time(m, g, _setup(2, 8, framework="torchtune", compiled=True), TOKENS).total
    assert compiled <= eager


def test_the_parts_add_up_to_the_total() -> None:
    est = train_time(CAT.model("Llama-3.1-8B"), CAT.gpu("H100"), _setup(4, 8), TOKENS)
    assert sum(v for _, v in est.breakdown.parts) == pytest.approx(est.total)
    assert est.breakdown.get("memory_bound_ops") > 0


def test_a_full_recomputation_repeats_the_forward_tensor_parallel_collectives() -> None:
    # Korthikanti et al. 2022: recomputing the forward reruns its two all-reduces per layer, on top of the
    # forward's two and the backward's two
    m, g = CAT.model("Llama-3.1-70B"), CAT.gpu("H100")
    parts = {}
    for recompute in ("selective", "full"):
        s = TrainSetup(method="full", micro_batch=1, seq_len=4096, grad_accum=1, framework="megatron",
                       recompute=recompute, parallel=Parallelism(tp=8, dp=1, zero=0))
        parts[recompute] = dict(train_time(m, g, s, TOKENS).breakdown.parts)["tensor_parallel_comm"]
    assert parts["full"] == pytest.approx(1.5 * parts["selective"])


def test_llm_foundry_pretraining_is_estimated_with_the_hand_optimised_stacks() -> None:
    m, g = CAT.model("Llama-3.1-8B"), CAT.gpu("H100")
    est = {fw: train_time(m, g, TrainSetup(method="full", micro_batch=4, seq_len=2048, grad_accum=1, framework=fw,
                                           parallel=Parallelism(dp=8, zero=3)), TOKENS)
           for fw in ("llm-foundry", "megatron")}
    assert est["llm-foundry"].band == fitted().band("pretrain_throughput")
    assert est["llm-foundry"].rate.utilisation == pytest.approx(est["megatron"].rate.utilisation)


def test_an_h100_gains_less_over_an_a100_as_attention_grows() -> None:
    # FlashAttention-2 reaches 35 % of an H100's dense peak (Shah et al. 2024, FlashAttention-3, sec. 1) against
    # 50-73 % of an A100's (Dao 2023, sec. 4.1), while GEMMs keep their efficiency: the more of a step is attention
    # (32k tokens: about half of Llama-3.1-8B's FLOPs), the less of the 3.2x peak ratio an H100 shows
    m = CAT.model("Llama-3.1-8B")
    def speedup(seq: int) -> float:
        s = TrainSetup(method="full", micro_batch=1, seq_len=seq, grad_accum=1, framework="torchtitan",
                       recompute="full", parallel=Parallelism(dp=8, zero=3), lengths_vary=False)
        return train_time(m, CAT.gpu("A100-80GB"), s, TOKENS).total / train_time(m, CAT.gpu("H100"), s, TOKENS).total
    assert 1.0 < speedup(32768) < 0.8 * speedup(2048)


def _long_and_short(gpu: str, kernel: str) -> tuple[float, float]:
    m = CAT.model("Llama-3.1-8B")
    def seconds(seq: int) -> float:
        s = TrainSetup(method="full", micro_batch=max(1, 32768 // seq), seq_len=seq, grad_accum=1,
                       framework="llm-foundry", attention_kernel=kernel, parallel=Parallelism(dp=8, zero=3),
                       lengths_vary=False)
        return train_time(m, CAT.gpu(gpu), s, TOKENS).total
    return seconds(32768), seconds(2048)


def test_a_flash_attention_1_kernel_slows_the_attention_not_the_matmuls() -> None:
    # FlashAttention-2 is 1.3-1.5x faster forward and ~2x faster backward than FlashAttention 1 and its Triton
    # port (Dao 2023, sec. 4.1): at 32k tokens, where attention is about half of Llama-3.1-8B's FLOPs, the older
    # kernel costs much more than at 2k, where it is ~6 % — and never more than the 1.83x it costs the attention
    (long2, short2), (long1, short1) = _long_and_short("A100-80GB", "flash2"), _long_and_short("A100-80GB", "flash1")
    assert 1.0 < short1 / short2 < 1.05
    assert 1.2 < long1 / long2 < 6.4 / 3.5


def test_on_hopper_the_older_kernel_is_no_slower_than_flash_attention_2_there() -> None:
    # neither kernel uses Hopper's asynchronous tensor-core instructions (Shah et al. 2024, sec. 1): on an H100 the
    # slower of the two limits holds, and the FlashAttention-2 limit there is the lower one
    cal = fitted()
    assert cal.get("f_attention_hopper") < cal.get("f_attention_flash1")
    assert _long_and_short("H100", "flash1") == pytest.approx(_long_and_short("H100", "flash2"))


@pytest.mark.parametrize(("ultra", "blackwell"), [("GB300", "GB200"), ("B300", "B200")])
def test_blackwell_ultra_speeds_the_attention_not_the_matmuls(ultra: str, blackwell: str) -> None:
    # GB300/B300 have GB200/B200's tensor peaks and bandwidth (gpus.csv) but twice the exponential units' rate,
    # which bounds the attention kernels' softmax (NVIDIA blog "Making Softmax More Efficient with NVIDIA Blackwell
    # Ultra"): at 2k tokens, where attention is ~6 % of Llama-3.1-8B's FLOPs, the step is a little faster; at 32k,
    # where it is about half, much faster; never twice as fast, since only the attention speeds up
    (long_u, short_u), (long_b, short_b) = _long_and_short(ultra, "flash2"), _long_and_short(blackwell, "flash2")
    assert 0.8 < short_u / short_b < 1.0
    assert 0.5 < long_u / long_b < short_u / short_b


def test_an_nvl72_rack_keeps_64_gpus_of_data_parallelism_on_nvlink() -> None:
    # GB200 NVL72: NVLink switches join 72 GPUs (gpus.csv interconnect "72-GPU NVL72 domain"); an HGX B200 node
    # joins 8. Same NVLink 5 (1,800 GB/s both ways, 900 one way). Megatron's distributed optimizer reduce-scatters
    # the gradients and all-gathers the weights, half the bytes each, at NCCL's bus bandwidth on the rack: 344/450 ×
    # 900 = 688 GB/s and 350/450 × 900 = 700 GB/s, so 1 / (0.5/688 + 0.5/700) = 693.9 GB/s; across B200 nodes at
    # the 400 Gb/s (50 GB/s) network: 13.9x the seconds
    from gpuplan.estimate.links import nvlink_domain
    from gpuplan.estimate.train_time import _comm_per_step, links, step_work

    assert (nvlink_domain(CAT.gpu("GB200")), nvlink_domain(CAT.gpu("B200")), nvlink_domain(CAT.gpu("H100"))) \
        == (72, 8, 8)
    m, cal = CAT.model("Llama-3.1-70B"), fitted()
    s = TrainSetup(method="full", micro_batch=1, seq_len=8192, grad_accum=1, framework="megatron",
                   parallel=Parallelism(dp=64, zero=1))
    w = step_work(m, s, cal)
    rack, nodes = (_comm_per_step(s, links(CAT.gpu(g), cal), w)[0] for g in ("GB200", "B200"))
    assert nodes / rack == pytest.approx(693.9 / 50, rel=1e-3)


def test_two_bridged_cards_gather_their_weights_over_the_bridge() -> None:
    # RTX 3090 pair with its NVLink bridge (gpus.csv: 112.5 GB/s both ways, 56.25 one way) against the same pair
    # without one (PCIe Gen4: 32 GB/s × the fitted eta_pcie). Llama-2-7B LoRA under FSDP full-shard, one
    # 128-token sequence per card: each micro-step gathers the 13.5 GB bf16 base twice, half from the other card,
    # so 13.5 GB cross the link: 0.24 s over the bridge, hidden behind the ~0.7 s of compute; ~0.75 s over PCIe,
    # which is not
    from gpuplan.estimate.train_time import training_links

    cal, m = fitted(), CAT.model("Llama-2-7B")
    bridged = CAT.gpu("RTX3090")
    plain = replace(bridged, interconnect="none", interconnect_bytes_per_s=None)
    s = TrainSetup(method="lora", micro_batch=1, seq_len=128, grad_accum=1, recompute="full",
                   parallel=Parallelism(dp=2, zero=3))
    assert training_links(bridged, s, cal).intra_node == pytest.approx(56.25e9)
    assert training_links(plain, s, cal).intra_node == pytest.approx(32e9 * cal.get("eta_pcie"))
    # a bridge joins only its pair: four cards talk over PCIe
    four = replace(s, parallel=Parallelism(dp=4, zero=3))
    assert training_links(bridged, four, cal).intra_node == training_links(plain, four, cal).intra_node

    bridge, pcie = (train_time(m, g, s, TOKENS).breakdown for g in (bridged, plain))
    assert bridge.get("data_parallel_comm") == 0.0 < pcie.get("data_parallel_comm")
    assert bridge.total < pcie.total


def test_an_interleaved_schedule_cuts_the_pipeline_bubble_by_its_model_chunks() -> None:
    # Narayanan et al. 2021 sec. 2.2.2: with v model chunks per stage the 1F1B bubble (p − 1)/m of the ideal time
    # becomes (p − 1)/(v·m). Megatron-Core's Mixtral 8x7B mapping (its MoE README): PP 4, VP 8, 16 micro-batches per
    # step: 3/16 of the compute plain, 3/128 interleaved
    model, gpu = CAT.model("Llama-3.1-8B"), CAT.gpu("H100")
    plain = TrainSetup(micro_batch=1, seq_len=4096, grad_accum=16, framework="megatron",
                       parallel=Parallelism(pp=4, dp=2, zero=1))
    interleaved = replace(plain, parallel=replace(plain.parallel, vp=8))
    parts = [dict(train_time(model, gpu, s, TOKENS, fitted()).breakdown.parts) for s in (plain, interleaved)]
    assert parts[0]["pipeline_bubble"] == pytest.approx(parts[0]["compute"] * 3 / 16)
    assert parts[1]["pipeline_bubble"] == pytest.approx(parts[1]["compute"] * 3 / 128)
    assert parts[1]["compute"] == parts[0]["compute"]  # the chunks change when stages idle, not the work


def test_mamba_2_chunked_scan_traffic_by_hand() -> None:
    # Nemotron 3 Nano (config.json): 23 Mamba-2 layers of 64 heads × 64 (d_inner 4096), 8 groups, state 128, chunk
    # 128. Per token and layer, kernel by kernel (state-spaces/mamba ssd_combined.py), with x/out 4096 16-bit
    # elements (8,192 B), B or C 1024 (2,048 B), the chunk states 4096 FP32 (16,384 B; 8,192 B in 16 bits) and
    # C·Bᵀ 1024 FP32 (4,096 B):
    # forward   chunk_state: B, x in, states out 2,048 + 8,192 + 16,384 = 26,624; state_passing: 16,384 in,
    #           8,192 out = 24,576; bmm_chunk: C, B in, C·Bᵀ out 4,096 + 4,096 = 8,192; chunk_scan: C·Bᵀ, x, C,
    #           states in, out 4,096 + 8,192 + 2,048 + 8,192 + 8,192 = 30,720 — 90,112 B
    # backward  recomputed bmm_chunk 8,192, chunk_state 26,624, state_passing 16,384 + 16,384 = 32,768;
    #           bwd_dstates C, dout in, dstates out 2,048 + 8,192 + 16,384 = 26,624; state_passing_bwd states,
    #           dstates in, both out 16,384 × 2 + 8,192 × 2 = 49,152; bwd_dx x, B, C·Bᵀ, dout, dstates in, dx out
    #           8,192 + 2,048 + 4,096 + 8,192 + 8,192 + 8,192 = 38,912; bwd_db x, dstates, B in, dB out
    #           8,192 + 8,192 + 2,048 + 2,048 = 20,480; bwd_dC states, dout, C in, dC out 8,192 + 8,192 + 2,048
    #           + 2,048 = 20,480; bwd_dcb x, dout in, dC·Bᵀ out 8,192 + 8,192 + 4,096 = 20,480; two bmm_chunk_bwd
    #           (C or B, dC·Bᵀ, residual in, one out) 2 × (2,048 + 4,096 + 2,048 + 2,048) = 20,480; ddAcs x, dout,
    #           C·Bᵀ 8,192 + 8,192 + 4,096 = 20,480 — 284,672 B
    from gpuplan.estimate.train_time import ssd_scan_bytes_per_token

    s = TrainSetup(method="full", micro_batch=1, seq_len=8192, framework="megatron", parallel=Parallelism())
    assert ssd_scan_bytes_per_token(CAT.model("Nemotron-3-Nano-30B-A3B"), s) == 23 * (90_112 + 284_672)
    assert ssd_scan_bytes_per_token(CAT.model("Qwen3-30B-A3B"), s) == 0.0  # no Mamba layers


@pytest.mark.parametrize(("stack_name", "kernel"), [
    ("megatron", "cudnn"),  # Transformer Engine prefers FusedAttention (cuDNN) on sm90+ (TransformerEngine @a0b36d0)
    ("torchtitan", "flash2"),  # SDPA's flash backend: cuDNN SDPA opt-in since torch 2.5.1 (pytorch/pytorch#138522)
    ("hf", "flash2"),  # transformers' sdpa or the flash-attn 2 package
])
def test_each_stack_runs_the_attention_kernel_its_code_selects(stack_name: str, kernel: str) -> None:
    from gpuplan.estimate.frameworks import stack
    from gpuplan.estimate.train_time import attention_kernel

    assert stack(stack_name).attention_kernel == kernel
    assert attention_kernel(TrainSetup(framework=stack_name)) == kernel
    assert attention_kernel(TrainSetup(framework=stack_name, attention_kernel="flash1")) == "flash1"


def _step_seconds(gpu: str, seq: int, kernel: str, cudnn_factor: float) -> float:
    cal = fitted()
    cal = replace(cal, values={**cal.values, "f_attention_hopper_cudnn": cudnn_factor})
    s = TrainSetup(method="full", micro_batch=max(1, 32768 // seq), seq_len=seq, grad_accum=1,
                   framework="megatron", attention_kernel=kernel, parallel=Parallelism(dp=8), lengths_vary=False)
    return train_time(CAT.model("Llama-3.1-8B"), CAT.gpu(gpu), s, TOKENS, cal).total


def test_a_hopper_native_attention_kernel_speeds_long_sequences_on_hopper_only() -> None:
    # cuDNN's fused attention reaches 631 TFLOP/s on an H100 where SDPA's FlashAttention-2 reaches 329
    # (pytorch/pytorch#142132): with the cuDNN family's limit at twice FlashAttention-2's, a 32k-token step, about
    # half attention, is much faster; a 2k-token step (~6 % attention) barely; on an A100 nothing changes, since
    # FlashAttention-2 already reaches 50-73 % of its peak there (Dao 2023, sec. 4.1)
    double = 2 * fitted().get("f_attention_hopper")
    long_ratio = _step_seconds("H100", 32768, "cudnn", double) / _step_seconds("H100", 32768, "flash2", double)
    short_ratio = _step_seconds("H100", 2048, "cudnn", double) / _step_seconds("H100", 2048, "flash2", double)
    assert 0.55 < long_ratio < 0.9
    assert 0.9 < short_ratio < 1.0
    assert _step_seconds("A100-80GB", 32768, "cudnn", double) == pytest.approx(
        _step_seconds("A100-80GB", 32768, "flash2", double))


@pytest.mark.parametrize(("field", "value"), [("attention_kernel", "cuDNN"), ("ep_dispatcher", "deep-ep")])
def test_a_setup_refuses_a_kernel_or_dispatcher_it_would_otherwise_time_as_the_default(field: str,
                                                                                       value: str) -> None:
    # a misspelt "deepep" would be timed as the alltoall dispatcher, a misspelt "cudnn" as the stack's kernel
    from gpuplan.errors import InputError

    with pytest.raises(InputError) as info:
        TrainSetup(framework="megatron", **{field: value})
    assert info.value.field == f"TrainSetup.{field}" and "use one of" in info.value.fix


def _qlora_share(mb: int, gpu: str = "RTX4090") -> float:
    """The time a QLoRA step spends dequantizing its base, as a share of the step."""
    s = _setup(mb, 1, method="qlora", framework="hf", recompute="full")
    parts = train_time(CAT.model("Llama-2-7B"), CAT.gpu(gpu), s, TOKENS).breakdown
    return parts.get("dequantize") / parts.total


def test_dequantizing_a_qlora_base_weighs_on_a_batch_of_one_and_fades_with_the_micro_batch() -> None:
    # bitsandbytes dequantizes every weight per matmul, whatever the tokens in it: Answer.AI's fsdp_qlora runs show
    # QLoRA as fast as LoRA at micro-batch 8-10, while at batch 1 the dequantization shows
    shares = [_qlora_share(mb) for mb in (1, 2, 4, 8)]
    assert shares == sorted(shares, reverse=True)
    assert shares[0] > 4 * shares[-1]  # a fixed time per micro-step against eight times the matmul work


def test_a_16_bit_base_dequantizes_nothing() -> None:
    s = _setup(1, 1, method="lora", framework="hf", recompute="full")
    assert train_time(CAT.model("Llama-2-7B"), CAT.gpu("RTX4090"), s, TOKENS).breakdown.get("dequantize") == 0


def test_qlora_dequantization_bytes_by_hand() -> None:
    # Llama-2-7B's linear layers: 32 × (4 × 4096² + 3 × 4096 × 11008) = 6,476,005,376 weights, read as NF4 with
    # double quantization (4.127 bits) and written in bf16 (2 bytes), in forward, the recomputed forward and
    # backward: 3 × 6.476e9 × (0.516 + 2) = 48.9 GB per micro-step, whatever the micro-batch
    m = CAT.model("Llama-2-7B")
    s = _setup(4, 1, method="qlora", framework="hf", recompute="full")
    assert dequantize_bytes(m, s) == pytest.approx(3 * 6_476_005_376 * (4.127 / 8 + 2), rel=1e-6)
    assert dequantize_bytes(m, replace(s, micro_batch=1)) == dequantize_bytes(m, s)
    # without recomputation the forward runs once; FSDP gathers the packed weights, so every rank still
    # dequantizes all of them, while tensor parallelism splits the matrices
    assert dequantize_bytes(m, replace(s, recompute="none")) == pytest.approx(dequantize_bytes(m, s) * 2 / 3)
    assert dequantize_bytes(m, replace(s, parallel=Parallelism(dp=4, zero=3))) == dequantize_bytes(m, s)
    assert dequantize_bytes(m, replace(s, parallel=Parallelism(tp=2))) == pytest.approx(dequantize_bytes(m, s) / 2)


def _unfused_over_flash(model: str, seq: int, gpu: str = "A100", recompute: str = "none") -> float:
    m, g = CAT.model(model), CAT.gpu(gpu)
    flash = replace(_setup(8 * 1024 // seq, 8, seq, framework="megatron"), recompute=recompute)  # type: ignore[arg-type]
    unfused = replace(flash, flash_attention=False)
    return train_time(m, g, unfused, TOKENS).total / train_time(m, g, flash, TOKENS).total


def test_standard_attention_slows_gpt2_medium_about_as_much_as_flashattention_sped_it() -> None:
    # FlashAttention trained GPT-2 medium (24 layers, 16 heads, 1,024 tokens) on A100s 1.7x faster than
    # Megatron-LM's standard attention (Dao et al. 2022, table 2: 11.5 vs 6.9 days), a baseline whose attention
    # dropout reads and writes the probabilities ~5 more times than the 11 passes counted here: a run without
    # dropout loses less than 1.7x, and far more than the few per cent the doubled score FLOPs alone would cost
    assert 1.3 < _unfused_over_flash("GPT-2-355M", 1024) < 1.7


def test_standard_attention_weighs_more_as_sequences_grow_and_as_models_narrow() -> None:
    # its score matrices grow with s per token while the matmuls do not; a wide model's matmuls grow with h², its
    # scores only with the head count
    assert _unfused_over_flash("GPT-2-355M", 2048) > _unfused_over_flash("GPT-2-355M", 1024) > 1.0
    assert _unfused_over_flash("GPT-2-355M", 2048) > _unfused_over_flash("Llama-2-70B", 2048) > 1.0


def test_a_full_recomputation_writes_standard_attentions_scores_once_more() -> None:
    # the forward's four passes over the scores run again in backward: 15 passes instead of 11
    m, s = CAT.model("Llama-2-7B"), _setup(1, 1, 2048, flash_attention=False)
    plain, full = score_traffic_bytes(m, s), score_traffic_bytes(m, replace(s, recompute="full"))  # type: ignore[arg-type]
    # 32 layers × 32 heads × 2,048 scores per token × 2 bytes × 11 passes
    assert plain == 32 * 32 * 2048 * 2 * 11
    assert full / plain == pytest.approx(15 / 11)
    assert score_traffic_bytes(m, replace(s, flash_attention=True)) == 0.0


# ---------------------------------------------------------------- NVFP4 training


def _megatron_tokens_per_s(model: str, gpu: str, precision: str) -> float:
    s = TrainSetup(method="full", micro_batch=1, seq_len=8192, grad_accum=16, framework="megatron",
                   precision=precision, parallel=Parallelism(dp=8, zero=1))
    return train_time(CAT.model(model), CAT.gpu(gpu), s, TOKENS).rate.tokens_per_s


@pytest.mark.parametrize(("gpu", "peak_ratio"), [
    ("B200", 9000 / 4500), ("GB200", 10000 / 5000), ("B300", 13500 / 4500), ("GB300", 15000 / 5000)])
def test_nvfp4_trains_faster_than_fp8_by_less_than_the_peak_ratio(gpu: str, peak_ratio: float) -> None:
    # Megatron-Bridge's 26.06 tables, Llama-3.1-405B on 256 GB200, same layout: 1,166 tokens/s/GPU in NVFP4 and
    # 843 in FP8, 1.38x where FP4's dense peak is 2x FP8's: attention, the LM head, the norms and the
    # communication do not run faster, and block-scaled FP4 GEMMs reach less of their peak than FP8 ones
    speedup = (_megatron_tokens_per_s("Llama-3.1-8B", gpu, "fp4-mixed")
               / _megatron_tokens_per_s("Llama-3.1-8B", gpu, "fp8-mixed"))
    assert 1.1 < speedup < peak_ratio


def test_nvfp4_training_is_refused_on_a_gpu_without_fp4_naming_the_field() -> None:
    from gpuplan.errors import InfeasibleError
    from gpuplan.estimate.job import check_training_hardware
    from gpuplan.types import Job, Task

    s = TrainSetup(method="full", micro_batch=1, seq_len=4096, framework="megatron", precision="fp4-mixed")
    with pytest.raises(InfeasibleError, match="fp4_tflops") as err:
        check_training_hardware(CAT.gpu("H100"), Job(task=Task.PRETRAIN, tokens=1e9), s)
    assert "fp8-mixed" in err.value.fix
    check_training_hardware(CAT.gpu("B200"), Job(task=Task.PRETRAIN, tokens=1e9), s)  # Blackwell has the path


@pytest.mark.parametrize("gpu", ["GTX1080Ti", "P40", "TITAN-Xp"])
def test_fp16_mixed_training_on_pascal_runs_no_slower_than_fp32(gpu: str) -> None:
    # GP102's FP16 ALU rate is 1/64 of its FP32 one, yet PyTorch's 16-bit training on a GTX 1080 Ti ran a little
    # faster than 32-bit (u39kun/deep-learning-benchmark README, vgg16 train 117.6 vs 131.9 ms): the 16-bit job
    # must not come out dozens of times slower
    m, g = CAT.model("GPT-2-774M"), CAT.gpu(gpu)
    half, full = (train_time(m, g, _setup(4, 8, 1024, precision=p), TOKENS).total for p in ("fp16-mixed", "fp32"))
    assert half <= full * 1.05
