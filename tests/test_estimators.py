"""Training time and inference speed: scaling, ordering and the roofline regime, plus what every Estimate
carries (assumptions, an error band around the total)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import InfeasibleError, InputError
from gpuplan.estimate.infer_speed import latency, speed, throughput
from gpuplan.estimate.memory import inference_memory, training_memory
from gpuplan.estimate.result import Estimate
from gpuplan.estimate.train_time import train_time
from gpuplan.types import InferSetup, Parallelism, TrainSetup

CAT = load_catalog()

# ---------------------------------------------------------------- training time


def _dp_job(dp: int, framework: str) -> TrainSetup:
    # pure data parallelism (no ZeRO sharding), one micro-batch of 64 sequences per step: the gradient
    # all-reduce hides behind its backward pass (with accumulation it would hide behind the last micro-batch's
    # only: test_gradients_are_reduced_behind_one_micro_step_not_the_whole_step)
    return TrainSetup(method="full", micro_batch=64, seq_len=2048, grad_accum=1, framework=framework,
                      parallel=Parallelism(dp=dp, zero=0))


@pytest.mark.parametrize("gpu", ["H100", "A100-80GB", "L40S"])
@pytest.mark.parametrize("framework", ["hf", "megatron", "deepspeed"])
@pytest.mark.parametrize("dp", [1, 2, 4])
def test_time_halves_when_data_parallel_gpus_double(catalog: Catalog, gpu: str, framework: str, dp: int) -> None:
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu(gpu)
    fewer = train_time(m, g, _dp_job(dp, framework), 1e9)
    more = train_time(m, g, _dp_job(2 * dp, framework), 1e9)
    assert more.breakdown.get("data_parallel_comm") == 0.0  # precondition: not communication-bound
    assert more.total / fewer.total == pytest.approx(0.5, abs=0.025)


@given(st.sampled_from(["Llama-3.1-8B", "Qwen2.5-0.5B", "Mixtral-8x7B"]), st.sampled_from(["full", "lora", "qlora"]),
       st.floats(1e5, 1e11), st.floats(1.0, 100.0))
def test_more_tokens_take_more_time(name: str, method: str, tokens: float, factor: float) -> None:
    m, g = CAT.model(name), CAT.gpu("H100")
    s = TrainSetup(method=method, micro_batch=2, seq_len=1024, parallel=Parallelism(dp=8))
    shorter, longer = train_time(m, g, s, tokens).total, train_time(m, g, s, tokens * factor).total
    assert shorter <= longer
    if factor >= 2:
        assert shorter < longer


def test_a_job_without_tokens_is_an_input_error(catalog: Catalog) -> None:
    with pytest.raises(InputError, match="tokens"):
        train_time(catalog.model("Llama-3.1-8B"), catalog.gpu("H100"), TrainSetup(), 0)


# 1F1B: the bubble is (p − 1)/m of the ideal compute time (Narayanan et al. 2021, eq. 1), worked out per row
@pytest.mark.parametrize(("pp", "accum", "share"), [(2, 1, 1.0), (4, 8, 0.375), (8, 64, 0.109375)])
def test_pipeline_bubble_is_p_minus_1_over_m_of_compute(catalog: Catalog, pp: int, accum: int, share: float) -> None:
    s = TrainSetup(method="full", micro_batch=1, seq_len=2048, grad_accum=accum, framework="megatron",
                   parallel=Parallelism(pp=pp))
    b = train_time(catalog.model("Llama-2-13B"), catalog.gpu("H100"), s, 1e9).breakdown
    assert b.get("pipeline_bubble") == pytest.approx(share * b.get("compute"))


def test_data_parallel_ranks_beyond_the_global_batch_are_infeasible() -> None:
    from gpuplan.estimate.job import default_global_batch, training_setup
    from gpuplan.types import Job

    job = Job(task="finetune", method="lora", samples=1000, tokens_per_sample=512, seq_len=512, global_batch=16)
    setup = training_setup(job, Parallelism(dp=4), micro_batch=2)
    assert setup.grad_accum == 2  # 4 ranks × 2 sequences × 2 steps = 16
    with pytest.raises(InfeasibleError, match="global batch of 16") as info:
        training_setup(job, Parallelism(dp=8), micro_batch=4)
    assert info.value.field == "--global-batch"
    pre = Job(task="pretrain", tokens=1e12, seq_len=4096)
    assert default_global_batch(pre) * 4096 == 4 * 1024 * 1024  # LLaMA's 4M-token batch


JOBS = [
    ("Llama-3.1-8B", TrainSetup(method="full", micro_batch=2, seq_len=4096, parallel=Parallelism(dp=8, zero=3))),
    ("Llama-3.1-8B", TrainSetup(method="lora", micro_batch=4, seq_len=2048)),
    ("Qwen2.5-7B", TrainSetup(method="qlora", micro_batch=1, seq_len=2048)),
    ("Llama-2-70B", TrainSetup(method="full", micro_batch=1, seq_len=4096, framework="megatron",
                               parallel=Parallelism(tp=8, pp=4, dp=4))),
]


@pytest.mark.parametrize(("model", "setup"), JOBS, ids=[f"{m}-{s.method}" for m, s in JOBS])
def test_h100_trains_faster_than_a100(catalog: Catalog, model: str, setup: TrainSetup) -> None:
    m = catalog.model(model)
    h100 = train_time(m, catalog.gpu("H100"), setup, 1e9).total
    a100 = train_time(m, catalog.gpu("A100-80GB"), setup, 1e9).total
    assert h100 < a100


@pytest.mark.parametrize("setup", [InferSetup(), InferSetup(batch=32, prompt_len=2048, output_len=512),
                                   InferSetup(engine="hf", batch=4), InferSetup(weight_format="int4-wo", batch=8)])
def test_h100_serves_faster_than_a100(catalog: Catalog, setup: InferSetup) -> None:
    m = catalog.model("Llama-3.1-8B")
    h100 = speed(m, catalog.gpu("H100"), setup)
    a100 = speed(m, catalog.gpu("A100-80GB"), setup)
    assert h100.ttft_s < a100.ttft_s and h100.tpot_s < a100.tpot_s
    assert throughput(m, catalog.gpu("H100"), setup).figures.output_tokens_per_s > \
        throughput(m, catalog.gpu("A100-80GB"), setup).figures.output_tokens_per_s


# ---------------------------------------------------------------- the decode roofline


def test_decode_is_memory_bound_at_batch_1(catalog: Catalog) -> None:
    # one sequence: every step reads 16 GB of weights for 16 GFLOP of work (Pope et al. 2022, sec. 2)
    sp = speed(catalog.model("Llama-3.1-8B"), catalog.gpu("H100"), InferSetup(batch=1))
    assert sp.bound == "memory"


def test_decode_is_compute_bound_at_large_batch(catalog: Catalog) -> None:
    # 1024 short sequences share one read of the weights: 1024 × 16 GFLOP per step outweighs it. (With long
    # contexts each sequence's KV-cache read keeps the step memory-bound; hence 32 + 32 tokens here.)
    sp = speed(catalog.model("Llama-3.1-8B"), catalog.gpu("H100"), InferSetup(batch=1024, prompt_len=32,
                                                                               output_len=32))
    assert sp.bound == "compute"


@given(st.integers(1, 512), st.integers(1, 512))
def test_decode_step_grows_and_throughput_improves_with_batch(b1: int, b2: int) -> None:
    small, large = sorted((b1, b2))
    m, g, s = CAT.model("Llama-3.1-8B"), CAT.gpu("H100"), InferSetup(prompt_len=512, output_len=128)
    lo, hi = speed(m, g, s, small), speed(m, g, s, large)
    assert lo.tpot_s <= hi.tpot_s  # a bigger batch never makes a step faster
    # nor the total rate slower, beyond the fixed cost of one more prefill pass where the prompts spill into it
    # (Llama-3.1-8B on an H100: 384 prompts of 512 tokens fill 24 passes of 8,192 tokens; 385 take a 25th, and the
    # rate dips 0.01 %)
    assert lo.output_tokens_per_s <= hi.output_tokens_per_s * (1 + 1e-3)


def test_model_that_does_not_fit_is_infeasible(catalog: Catalog) -> None:
    with pytest.raises(InfeasibleError) as info:
        throughput(catalog.model("Llama-2-70B"), catalog.gpu("T4"), InferSetup())
    assert info.value.fix


# ---------------------------------------------------------------- every Estimate: assumptions and band

GPU = CAT.gpu("H100")
ESTIMATES = {
    "inference_memory": lambda: inference_memory(CAT.model("Llama-3.1-8B"), GPU, InferSetup(batch=8)),
    "training_memory": lambda: training_memory(CAT.model("Llama-3.1-8B"), TrainSetup(method="qlora")),
    "train_time": lambda: train_time(CAT.model("Llama-3.1-8B"), GPU, TrainSetup(method="lora"), 1e8),
    "latency": lambda: latency(CAT.model("Llama-3.1-8B"), GPU, InferSetup()),
    "throughput": lambda: throughput(CAT.model("Qwen3-30B-A3B"), GPU, InferSetup(weight_format="fp8")),
}


@pytest.mark.parametrize("name", list(ESTIMATES))
def test_every_estimate_has_assumptions_and_a_band(name: str) -> None:
    est: Estimate = ESTIMATES[name]()
    assert est.assumptions
    assert all(a.name and a.value and a.source for a in est.assumptions)
    assert est.band.low <= 1.0 <= est.band.high
    assert 0 < est.low <= est.total <= est.high
    assert est.band.cls  # names the calibration class the band comes from


@given(st.sampled_from(["Llama-3.1-8B", "Qwen2.5-0.5B", "Mixtral-8x7B", "DeepSeek-V2-Lite"]),
       st.sampled_from(["hf", "vllm", "sglang", "trtllm", "llamacpp"]), st.integers(1, 64),
       st.integers(1, 8192), st.integers(1, 2048), st.sampled_from([1, 2, 4, 8]))
def test_speed_estimates_are_sound(name: str, engine: str, batch: int, prompt: int, output: int, tp: int) -> None:
    m = CAT.model(name)
    s = InferSetup(engine=engine, batch=batch, prompt_len=prompt, output_len=output, tp=tp)
    est = latency(m, GPU, s)
    assert 0 < est.low <= est.total <= est.high
    assert est.total == pytest.approx(sum(v for _, v in est.breakdown.parts))
    assert est.figures.ttft_s > 0 and est.figures.tpot_s > 0
    assert est.figures.bound in ("memory", "compute")
    bigger = replace(s, output_len=output + 100)  # more tokens to generate never take less time
    assert latency(m, GPU, bigger).total >= est.total



@pytest.mark.parametrize(("engine", "gpu", "runs"), [
    ("vllm", "V100", True), ("vllm", "P100", False), ("vllm", "MI300X", True), ("vllm", "TPU-v6e", True),
    ("sglang", "T4", True), ("sglang", "V100", False), ("trtllm", "A100-80GB", True), ("trtllm", "T4", False),
    ("trtllm", "MI300X", False), ("llamacpp", "TPU-v6e", False), ("hf", "Ascend-910B", True),
])
def test_each_engine_runs_only_where_its_docs_say(catalog: Catalog, engine: str, gpu: str, runs: bool) -> None:
    from gpuplan.estimate.job import check_inference

    s = InferSetup(engine=engine, weight_format="bf16" if engine != "llamacpp" else "gguf-q4_k_m")
    if runs:
        check_inference(catalog.model("Qwen2.5-0.5B"), catalog.gpu(gpu), s)
    else:
        with pytest.raises(InfeasibleError, match="does not run on") as info:
            check_inference(catalog.model("Qwen2.5-0.5B"), catalog.gpu(gpu), s)
        assert info.value.field == "--engine"


@pytest.mark.parametrize(("gpu", "ok"), [("V100", False), ("T4", False), ("A100-80GB", True), ("H100", True),
                                         ("MI300X", True)])
def test_fp8_weights_need_fp8_units_or_ampere(catalog: Catalog, gpu: str, ok: bool) -> None:
    from gpuplan.estimate.job import check_inference

    s = InferSetup(engine="vllm", weight_format="fp8")
    if ok:
        check_inference(catalog.model("Qwen2.5-0.5B"), catalog.gpu(gpu), s)
    else:
        with pytest.raises(InfeasibleError, match="FP8 weights"):
            check_inference(catalog.model("Qwen2.5-0.5B"), catalog.gpu(gpu), s)


def test_moe_decode_reads_only_the_experts_the_batch_reaches(catalog: Catalog) -> None:
    from gpuplan.estimate.infer_speed import decode_weight_bytes, expert_fraction_touched
    from gpuplan.estimate.quant import weight_format

    moe = catalog.model("Qwen3-30B-A3B")  # 128 experts, 8 per token
    assert expert_fraction_touched(moe, 1) == pytest.approx(8 / 128)
    assert expert_fraction_touched(moe, 2) == pytest.approx(1 - (120 / 128) ** 2)
    assert expert_fraction_touched(moe, 512) > 0.99
    assert expert_fraction_touched(catalog.model("Qwen3-32B"), 1) == 1.0
    s = InferSetup(engine="vllm", weight_format="bf16")
    fmt = weight_format("bf16")
    one, many = decode_weight_bytes(moe, fmt, s, 1), decode_weight_bytes(moe, fmt, s, 512)
    assert one < 0.25 * many  # ~3.3B active of 30.5B parameters
    # at batch 1 a 3B-active MoE decodes faster than a dense 32B model on the same GPU
    g = catalog.gpu("H100")
    assert speed(moe, g, s, 1).tpot_s < 0.5 * speed(catalog.model("Qwen3-32B"), g, s, 1).tpot_s


def test_zero3_gathers_a_frozen_base_every_micro_step() -> None:
    # FSDP shards LoRA's frozen 16-bit base too, so each micro-step all-gathers ~141 GB of Llama-3.1-70B weights
    # (twice: forward and backward) over the 16 GPUs' network, which the unsharded run does not pay
    from gpuplan import load_catalog
    from gpuplan.estimate.train_time import train_time
    from gpuplan.types import Parallelism, TrainSetup

    cat = load_catalog()
    m, g = cat.model("Llama-3.1-70B"), cat.gpu("H100")

    def comm(zero: int, method: str) -> float:
        s = TrainSetup(method=method, micro_batch=4, seq_len=2048, precision="bf16",
                       parallel=Parallelism(dp=16, zero=zero))
        return train_time(m, g, s, 2e8).breakdown.get("data_parallel_comm")

    assert comm(3, "lora") > 0 and comm(3, "lora") > 10 * comm(0, "lora")
    assert comm(3, "qlora") < comm(3, "lora")  # the NF4 base is about a quarter of the bytes


def test_a_time_says_which_catalog_specs_it_lacked() -> None:
    # a catalog row without a memory bandwidth (a user's own row, or one whose source was not found): the optimizer
    # step cannot be timed
    from dataclasses import replace

    from gpuplan import load_catalog
    from gpuplan.estimate.train_time import train_time
    from gpuplan.types import TrainSetup

    cat = load_catalog()
    m = cat.model("Llama-3.2-1B")
    unknown = replace(cat.gpu("RTX4500-Ada"), memory_bandwidth_bytes_per_s=None)
    names = {a.name for a in train_time(m, unknown, TrainSetup(method="full"), 1e8).assumptions}
    assert "memory bandwidth" in names
    names = {a.name for a in train_time(m, cat.gpu("H100"), TrainSetup(method="full"), 1e8).assumptions}
    assert not names & {"memory bandwidth", "16-bit tensor peak"}


def test_gradients_are_reduced_behind_one_micro_step_not_the_whole_step() -> None:
    # DDP / Megatron-Core turn gradient synchronisation off for every micro-batch but the last (no_sync), so with
    # 8 accumulation steps the reduction runs behind 1/8 of the step's compute; ZeRO-3 gathers and reduces in
    # every micro-step, behind all of it. Megatron-Core's interleaved schedule with p = 4 stages of v = 2 chunks
    # reduces a chunk's gradients during the cool-down: 2·(4 − 1) + (2 − 1)·4 = 10 chunk passes of 1/2 a
    # micro-step, 5 micro-steps + the last one = 6 of 32.
    from gpuplan.estimate.train_time import dp_overlap_window
    from gpuplan.types import Parallelism, TrainSetup

    def window(par: Parallelism, accum: int) -> float:
        return dp_overlap_window(TrainSetup(method="full", parallel=par, grad_accum=accum), 80.0)

    assert window(Parallelism(dp=8), 8) == pytest.approx(10.0)
    assert window(Parallelism(dp=8), 1) == pytest.approx(80.0)
    assert window(Parallelism(dp=8, zero=3), 8) == pytest.approx(80.0)
    assert window(Parallelism(dp=2, pp=4, vp=2), 32) == pytest.approx(80.0 * 6 / 32)
    assert window(Parallelism(dp=2, pp=4), 32) == pytest.approx(80.0 / 32)  # no chunks: the last backward only


def test_deepspeed_pipeline_engine_reduces_gradients_after_the_backward() -> None:
    # Pythia-70M (70,426,624 parameters, transformers numel) as GPT-NeoX trained it: 32 A100s over four nodes,
    # ZeRO-1, one 32 × 2048-token micro-batch per step. Reduced behind that backward (DDP, Megatron-Core) the
    # gradients cost nothing; DeepSpeed's PipelineEngine, which GPT-NeoX runs even with one stage, all-reduces them
    # after the backward (2 · 31/32 of 2 bytes a parameter) and ZeRO-1 then all-gathers the updated weights
    # (31/32 of 2 bytes): 70,426,624 × 2 × 3 × 31/32 = 409.4 MB a step over the network, none of it hidden.
    # Without ZeRO the all-gather goes: 70,426,624 × 2 × 2 × 31/32 = 272.9 MB.
    from gpuplan.estimate.calibration import fitted

    m, gpu = CAT.model("Pythia-70M"), CAT.gpu("A100")
    net = fitted().get("network_bytes_per_s_per_gpu")

    def exposed(after_backward: bool, zero: int) -> float:
        s = TrainSetup(method="full", micro_batch=32, seq_len=2048, framework="megatron", recompute="full",
                       parallel=Parallelism(dp=32, zero=zero), dp_after_backward=after_backward)
        parts = dict(train_time(m, gpu, s, 32 * 32 * 2048).breakdown.parts)  # one optimizer step
        return parts["data_parallel_comm"]

    assert exposed(False, 1) == 0.0
    assert exposed(True, 1) == pytest.approx(409.4e6 / net, rel=1e-3)
    assert exposed(True, 0) == pytest.approx(272.9e6 / net, rel=1e-3)
