"""Serving under load (queueing on top of the per-iteration roofline), framework defaults, and the parts and
formats added for machines people own (Apple silicon, MXFP4 checkpoints)."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace

import pytest
from conftest import run_cli

from gpuplan.catalog import Catalog
from gpuplan.errors import InputError
from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.engines import graph_batches, release, token_budget
from gpuplan.estimate.frameworks import framework, frameworks
from gpuplan.estimate.infer_speed import decode_step_seconds, latency, max_batch, prefill_seconds, speed
from gpuplan.estimate.job import training_setup
from gpuplan.estimate.load import (
    _overload_waits,
    _prefill_decodes,
    _running_counts,
    at_concurrency,
    at_rate,
    capacity,
    finite_run,
    median_prompt_tokens,
    poisson_quantile,
    request_seconds,
    seen_batch,
    uniform_run,
)
from gpuplan.estimate.memory import inference_memory
from gpuplan.requests import estimate_config, make_job
from gpuplan.types import FRAMEWORKS, InferSetup, Parallelism

SETUP = InferSetup(engine="vllm", prompt_len=1000, output_len=300)


@pytest.fixture
def llama8b_h100(catalog: Catalog):  # type: ignore[no-untyped-def]
    return catalog.model("Llama-3.1-8B"), catalog.gpu("H100")


# ---------------------------------------------------------------- load


def test_latency_grows_with_the_arrival_rate_and_saturates_past_capacity(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    m, g = llama8b_h100
    limit = capacity(m, g, SETUP)
    low, mid = at_rate(m, g, SETUP, 0.1 * limit), at_rate(m, g, SETUP, 0.8 * limit)
    assert low.ttft_mean_s < mid.ttft_mean_s and low.tpot_mean_s < mid.tpot_mean_s
    assert low.ttft_p99_s >= low.ttft_p50_s and mid.tpot_p99_s >= mid.tpot_mean_s
    over = at_rate(m, g, SETUP, 1.5 * limit)
    assert over.saturated and math.isinf(over.ttft_mean_s)
    # overloaded, the engine runs flat out: decode steps are the slowest but finite; the queue takes the excess
    assert mid.tpot_mean_s <= over.tpot_mean_s < math.inf
    assert over.output_tokens_per_s == pytest.approx(limit * SETUP.output_len)


@pytest.mark.parametrize(("mean", "p", "k", "why"), [
    (0.0, 0.99, 0, "no arrivals"),
    (0.5, 0.50, 0, "P(K = 0) = e^-0.5 = 0.61"),
    (1.0, 0.50, 1, "P(K <= 0) = 0.37, P(K <= 1) = 0.74"),
    (1.0, 0.99, 4, "P(K <= 3) = 0.981, P(K <= 4) = 0.996"),
    (10.0, 0.99, 18, "P(K <= 17) = 0.986, P(K <= 18) = 0.993"),
    (10_000.0, 0.99, 10_233, "normal approximation: 10,000 + 2.326 x 100, less the half of the continuity"),
])
def test_poisson_quantile_matches_hand_computed_tails(mean: float, p: float, k: int, why: str) -> None:
    assert poisson_quantile(mean, p) == k, why


def test_short_answers_spread_their_tpot_by_the_prompts_they_happen_to_see(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # a six-token answer has five gaps: one 1,000-token prefill of another request adds a fifth of that prefill
    # to its TPOT, none leaves it a plain step; how many it sees is the luck of Poisson arrivals
    m, g = llama8b_h100
    short = replace(SETUP, output_len=6)
    state = at_rate(m, g, short, 0.3 * capacity(m, g, short))
    step = at_rate(m, g, short, 1e-6).tpot_mean_s  # no other arrivals: the decode step alone
    assert state.tpot_median_s < state.tpot_mean_s < state.tpot_p99_s
    assert state.tpot_p99_s >= step + prefill_seconds(m, g, short, 1000.0, fitted()) / 5
    # a long answer sees many prompts, whose count varies little relative to its mean: a narrower spread
    long = replace(SETUP, output_len=1000)
    steady = at_rate(m, g, long, 0.3 * capacity(m, g, long))
    assert steady.tpot_p99_s / steady.tpot_mean_s < state.tpot_p99_s / state.tpot_mean_s


@pytest.mark.parametrize(("cv2", "median", "why"), [
    (0.0, 1000.0, "one prompt length: the median is the length"),
    (1.0, 1000.0 * math.log(2), "exponential lengths: the median is ln 2 of the mean"),
])
def test_the_median_prompt_of_a_skewed_dataset_lies_below_its_mean(cv2: float, median: float, why: str) -> None:
    assert median_prompt_tokens(1000.0, cv2) == pytest.approx(median, rel=0.02), why


def test_median_ttft_of_dataset_prompts_at_light_load_is_the_median_prompts_prefill(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # at 0.1 req/s nothing queues: half of the requests wait for less than the prefill of the median prompt (about
    # 0.7 of the mean for ShareGPT-like lengths), so the median TTFT falls below that of one fixed length by the
    # prefill of about 300 of its 1000 tokens, while the mean TTFT (the mean prompt's prefill) stays
    m, g = llama8b_h100
    fixed, varied = at_rate(m, g, SETUP, 0.1), at_rate(m, g, SETUP, 0.1, length_cv2=1.0)
    cal = fitted()
    saved = prefill_seconds(m, g, SETUP, 1000, cal) - prefill_seconds(m, g, SETUP, 700, cal)
    assert fixed.ttft_p50_s - varied.ttft_p50_s == pytest.approx(saved, rel=0.1)
    assert varied.ttft_p50_s < varied.ttft_mean_s
    assert varied.ttft_mean_s == pytest.approx(fixed.ttft_mean_s, rel=0.01)
    # one closed-loop client sending dataset prompts: nothing else queues, so the same prefill is saved
    alone, alone_varied = at_concurrency(m, g, SETUP, 1), at_concurrency(m, g, SETUP, 1, length_cv2=1.0)
    assert alone.ttft_p50_s - alone_varied.ttft_p50_s == pytest.approx(saved, rel=0.1)


def test_a_request_that_finds_no_other_decoding_waits_for_no_iteration_and_carries_no_decodes(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # one closed-loop client: its own decode never overlaps its next prompt, so its first token comes after the
    # prefill and the request's fixed cost alone; a nearly idle open stream (0.01 req/s: about 0.04 sequences
    # decoding) gets within a few per cent of that, and a busy one (5 req/s: about 11 decoding) waits for the
    # iteration under way and carries the running decodes on top
    m, g = llama8b_h100
    cal = fitted()
    alone = prefill_seconds(m, g, SETUP, SETUP.prompt_len, cal) + request_seconds(SETUP, g, cal)
    assert at_concurrency(m, g, SETUP, 1).ttft_mean_s == pytest.approx(alone, rel=1e-6)
    idle = at_rate(m, g, SETUP, 0.01)
    assert idle.batch < 0.1 and idle.ttft_mean_s == pytest.approx(alone, rel=0.05)
    step = decode_step_seconds(m, g, SETUP, 1.0, SETUP.prompt_len + SETUP.output_len / 2, cal)[0]
    busy = at_rate(m, g, SETUP, 5.0)
    assert busy.batch > 5 and busy.ttft_mean_s > alone + step


def test_decodes_riding_a_prompts_pass_add_their_rows_not_a_second_read_of_the_weights(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # Sarathi (Agrawal et al. 2023, sec. 3): vLLM runs the running decodes in the same forward pass as a new prompt,
    # so the weights that pass streams serve them too. Llama-3.1-8B on an H100: a 200-token prompt's pass streams
    # 16 GB of weights (about 5 ms at 3.35 TB/s) for 200 × 16 GFLOP; 20 decodes add 10 % more rows and their KV
    # reads (20 × 300 tokens × 128 KiB = 0.79 GB, a quarter of a millisecond at full bandwidth), where a decode
    # step of its own would read all 16 GB again.
    m, g = llama8b_h100
    cal = fitted()
    s = InferSetup(engine="vllm", prompt_len=200, output_len=200)
    prefill = prefill_seconds(m, g, s, 200, cal)
    step = decode_step_seconds(m, g, s, 20.0, 300, cal)[0]
    added = _prefill_decodes(m, g, s, 20.0, cal)
    assert 0 < added < 0.1 * prefill + 4 * 0.79e9 / 3.35e12  # the rows' share of the pass, KV reads at >= 25 %
    assert added < step / 3
    # SGLang runs a prefill batch without the running decodes (enable_mixed_chunk off by default): they are not
    # rows of the prompt's pass, and the prompt is still charged their whole step
    sglang = replace(s, engine="sglang")
    assert _prefill_decodes(m, g, sglang, 20.0, cal) > 3 * added


def test_a_setup_that_holds_no_sequence_is_refused_under_load_not_given_an_infinite_ttft(catalog: Catalog) -> None:
    # Llama-3.1-70B in BF16 is 141 GB of weights: one 80 GB H100 holds no sequence, so neither N clients nor an
    # arrival rate has a state; the estimate says what to change instead of answering TTFT = inf (issue 9)
    m, g = catalog.model("Llama-3.1-70B"), catalog.gpu("H100")
    for ask in (lambda: at_concurrency(m, g, SETUP, 4), lambda: at_rate(m, g, SETUP, 1.0)):
        with pytest.raises(InputError, match="does not fit on 1× H100"):
            ask()


def test_steady_state_obeys_littles_law(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # sequences in decode = arrival rate × time each spends decoding (O iterations of TPOT)
    m, g = llama8b_h100
    s = at_rate(m, g, SETUP, 5.0)
    assert s.batch == pytest.approx(5.0 * SETUP.output_len * s.tpot_mean_s, rel=1e-3)
    assert s.output_tokens_per_s == pytest.approx(5.0 * 300)


def test_one_closed_loop_client_sees_batch_one_speed(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    m, g = llama8b_h100
    one = at_concurrency(m, g, SETUP, 1)
    alone = latency(m, g, SETUP)
    assert one.tpot_mean_s == pytest.approx(alone.figures.tpot_s, rel=0.02)
    assert one.batch == pytest.approx(1.0, abs=0.05)


def test_a_per_request_frontend_cost_adds_to_every_first_token_but_not_to_the_steps(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # GPUStack's performance lab (docs/performance-lab/qwen3-8b/h100-latency.md @47277d79): one client, vLLM v0.11.0,
    # Qwen3-8B on one H100, median TTFT 60.4 ms where SGLang on the same page and prompts took 27 ms, while vLLM's
    # median TPOT there matches its batch-1 step: a cost per request, outside the forward passes. One lockstep client
    # makes it exact: its first token comes after the prefill plus that cost, its steps are unchanged, and its
    # cycle, so its request rate, grows by the cost.
    m, g = llama8b_h100
    fixed = 0.030
    base, cal = fitted().with_values(request_overhead_s_vllm=0.0), fitted().with_values(request_overhead_s_vllm=fixed)
    before = at_concurrency(m, g, SETUP, 1, base, lockstep=True)
    after = at_concurrency(m, g, SETUP, 1, cal, lockstep=True)
    assert after.ttft_mean_s - before.ttft_mean_s == pytest.approx(fixed, rel=1e-9)
    assert after.ttft_p99_s - before.ttft_p99_s == pytest.approx(fixed, rel=1e-9)
    assert after.tpot_mean_s == before.tpot_mean_s
    assert 1 / after.rate_per_s - 1 / before.rate_per_s == pytest.approx(fixed, rel=1e-9)
    # clients that drift apart (dataset lengths): the cost adds to the service, less a trace of queueing that a
    # longer cycle relieves
    loose = at_concurrency(m, g, SETUP, 1, cal).ttft_mean_s - at_concurrency(m, g, SETUP, 1, base).ttft_mean_s
    assert 0.95 * fixed < loose <= fixed * (1 + 1e-9)
    # an open stream's requests pay it too
    assert at_rate(m, g, SETUP, 1.0, cal).ttft_mean_s > at_rate(m, g, SETUP, 1.0, base).ttft_mean_s + 0.9 * fixed


def test_the_request_cost_is_the_engines_own_or_its_backends_prior_and_none_without_a_fit(catalog: Catalog) -> None:
    fit = fitted()
    unfitted = ("request_overhead_s_sglang", "request_overhead_s_vllm_ascend")
    cal = Calibration({k: v for k, v in fit.values.items() if k not in unfitted}, fit.bands,
                      fit.fitted_on).with_values(request_overhead_s_vllm=0.02)
    nvidia, ascend = catalog.gpu("H100"), catalog.gpu("Ascend-910B")
    assert request_seconds(SETUP, nvidia, cal) == 0.02
    assert request_seconds(SETUP, ascend, cal) == 0.02  # vllm-ascend follows vLLM's API server until fitted apart
    # fitted apart (its own rows), vllm-ascend's cost is its own, whatever vLLM's is
    apart = cal.with_values(request_overhead_s_vllm_ascend=0.1)
    assert request_seconds(SETUP, ascend, apart) == 0.1 and request_seconds(SETUP, nvidia, apart) == 0.02
    assert request_seconds(replace(SETUP, engine="sglang"), nvidia, cal) == 0.0


def test_a_vllm_v0_server_pays_its_own_generations_request_cost_and_v1_s_until_one_is_fitted(catalog: Catalog) -> None:
    # vLLM before 0.8 takes a request to its first token along another path (the engine in the API server's loop, or
    # one engine process over ZMQ) than V1's API server and engine core: a V0 value, where fitted, is V0's alone
    nvidia, ascend = catalog.gpu("H100"), catalog.gpu("Ascend-910B")
    v0, v1 = replace(SETUP, engine_version="0.6.2"), replace(SETUP, engine_version="0.8.3")
    cal = Calibration(values={"request_overhead_s_vllm": 0.03, "request_overhead_s_vllm_ascend": 0.1})
    assert request_seconds(v0, nvidia, cal) == 0.03  # no V0 value: V1's stands in
    both = cal.with_values(request_overhead_s_vllm_v0=0.005)
    assert request_seconds(v0, nvidia, both) == 0.005
    assert request_seconds(v1, nvidia, both) == request_seconds(SETUP, nvidia, both) == 0.03  # plans run V1
    assert request_seconds(v0, ascend, both) == 0.1  # vllm-ascend's own worker: not the CUDA servers' V0 value
    assert request_seconds(replace(v0, engine="sglang"), nvidia, both) == 0.0  # SGLang 0.6.2 is not vLLM V0


def test_clients_beyond_the_engine_cap_wait_for_a_slot(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    m, g = llama8b_h100
    at_cap, beyond = at_concurrency(m, g, SETUP, 256), at_concurrency(m, g, SETUP, 1024)
    assert beyond.output_tokens_per_s == pytest.approx(at_cap.output_tokens_per_s, rel=0.01)
    # 768 clients more, served at the same rate: each waits about 768 / rate longer for its first token
    assert beyond.ttft_mean_s - at_cap.ttft_mean_s == pytest.approx(768 / at_cap.rate_per_s, rel=0.05)


# ---------------------------------------------------------------- frameworks


def test_every_framework_row_names_a_stack_gpuplan_models_and_a_source() -> None:
    for fw in frameworks().values():
        assert fw.stack in FRAMEWORKS and fw.source.strip(), fw.framework


def test_llama_factory_checkpoints_gradients_unless_told_otherwise(catalog: Catalog) -> None:
    job = make_job("finetune", method="lora", samples=1000, tokens_per_sample=1024, framework="LLaMA-Factory")
    assert job.framework == "llama-factory"
    setup = training_setup(job, Parallelism(), 1)
    assert setup.recompute == framework("llama-factory").recompute == "full"
    assert training_setup(job, Parallelism(), 1, "none").recompute == "none"  # an explicit choice wins


def test_qlora_under_hf_peft_checkpoints_gradients_where_lora_does_not(catalog: Catalog) -> None:
    # peft.prepare_model_for_kbit_training(use_gradient_checkpointing=True), which HF QLoRA scripts call on a
    # quantized base, enables gradient checkpointing; the Trainer alone (16-bit LoRA) leaves it off
    qlora = make_job("finetune", method="qlora", samples=1000, tokens_per_sample=1024, framework="hf")
    lora = make_job("finetune", method="lora", samples=1000, tokens_per_sample=1024, framework="hf")
    assert training_setup(qlora, Parallelism(), 1).recompute == "full"
    assert training_setup(lora, Parallelism(), 1).recompute == "none"
    assert training_setup(qlora, Parallelism(), 1, "none").recompute == "none"  # an explicit choice wins


def test_the_framework_line_of_a_qlora_estimate_names_the_checkpointing_it_ran(catalog: Catalog) -> None:
    # the estimate's "framework" assumption describes the defaults the setup took: checkpointing on for a quantized
    # base under HF Trainer + PEFT, off for a 16-bit LoRA, not the Trainer's bare default for both
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("A100-80GB")

    def framework_line(method: str) -> str:
        job = make_job("finetune", method=method, samples=1000, tokens_per_sample=1024, framework="hf")
        found = estimate_config(m, g, job, micro_batch=1, framework="hf")
        return next(a.value for a in found.memory.assumptions if a.name == "framework")

    assert "gradient checkpointing on" in framework_line("qlora")
    assert "no activation recomputation" in framework_line("lora")


def test_framework_default_lowers_the_memory_estimate(catalog: Catalog) -> None:
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("A100-80GB")
    job = make_job("finetune", method="lora", samples=1000, tokens_per_sample=2048)
    plain = estimate_config(m, g, job, micro_batch=4)
    factory = estimate_config(m, g, job, micro_batch=4, framework="llama-factory")
    assert factory.memory.breakdown.get("activations") < 0.5 * plain.memory.breakdown.get("activations")
    assert any(a.name == "framework" and "LLaMA-Factory" in a.value for a in factory.memory.assumptions)


def test_a_full_fine_tune_in_ms_swift_keeps_bf16_states_where_llama_factory_upcasts(catalog: Catalog) -> None:
    # ms-swift's benchmark ran a full fine-tune of Qwen-7B on one A100-80GB (73.4 GiB); LLaMA-Factory upcasts
    # trainable parameters to fp32 (16 bytes per parameter with Adam), which cannot fit 7.7 B parameters there
    m, g = catalog.model("Qwen-7B"), catalog.gpu("A100-80GB")
    job = make_job("finetune", method="full", samples=1000, tokens_per_sample=2048)
    swift = estimate_config(m, g, job, micro_batch=1, framework="swift")
    factory = estimate_config(m, g, job, micro_batch=1, framework="llama-factory")
    assert swift.memory.total < swift.capacity_bytes < factory.memory.total
    assert any(a.name == "framework" and "pure bf16" in a.value for a in swift.memory.assumptions)
    assert not any("pure bf16" in a.value for a in factory.memory.assumptions)


def test_xtuner_checkpoints_and_packs_where_the_hf_trainer_does_neither(catalog: Catalog) -> None:
    # XTuner's SupervisedFinetune turns gradient checkpointing on and its configs pack samples to max_length
    # (InternLM/xtuner @43ef6ab9): the same LoRA job keeps fewer activations and one sequence length every step
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("A100-80GB")
    job = make_job("finetune", method="lora", samples=1000, tokens_per_sample=2048, framework="XTuner")
    assert job.framework == "xtuner"
    setup = training_setup(job, Parallelism(), 1)
    assert (setup.recompute, setup.lengths_vary, setup.lora_dropout) == ("full", False, 0.1)
    xtuner = estimate_config(m, g, job, micro_batch=1, framework="xtuner")
    hf = estimate_config(m, g, make_job("finetune", method="lora", samples=1000, tokens_per_sample=2048),
                         micro_batch=1, framework="hf")
    assert xtuner.memory.breakdown.get("activations") < 0.5 * hf.memory.breakdown.get("activations")
    line = next(a.value for a in xtuner.memory.assumptions if a.name == "framework")
    assert "XTuner" in line and "gradient checkpointing on" in line and "packed sequences" in line


def test_framework_is_refused_for_inference_and_unknown_names_are_named(catalog: Catalog) -> None:
    with pytest.raises(InputError, match="--framework applies to training"):
        make_job("infer", requests=10, framework="trl")
    with pytest.raises(InputError) as info:
        make_job("finetune", samples=10, tokens_per_sample=10, framework="llamafactorx")
    assert info.value.field == "--framework" and "llama-factory" in info.value.fix


def test_plan_cli_takes_a_framework() -> None:
    out = run_cli("plan", "finetune", "Qwen2.5-7B", "--method", "lora", "--samples", "2k", "--tokens-per-sample",
                  "1024", "--framework", "llama-factory", "--top", "1", "--json")
    data = json.loads(out.stdout)
    assert data["pick"]["estimate"]["setup"]["recompute"] == "full"
    assert "xtuner" in run_cli("plan", "finetune", "--help").stdout


def test_plan_cli_runs_xtuner_with_its_checkpointing_and_packing() -> None:
    out = run_cli("plan", "finetune", "Qwen2.5-7B", "--method", "qlora", "--samples", "2k", "--tokens-per-sample",
                  "1024", "--framework", "xtuner", "--top", "1", "--json")
    setup = json.loads(out.stdout)["pick"]["estimate"]["setup"]
    assert setup["recompute"] == "full" and setup["lengths_vary"] is False


# ---------------------------------------------------------------- parts and formats


def test_llama_cpp_prefill_on_geforce_runs_at_the_fp16_accumulate_rate(catalog: Catalog) -> None:
    # llama.cpp's cuBLAS GEMMs accumulate in FP16; GeForce parts run FP32 accumulation (what PyTorch and vLLM
    # use) at half that rate, datacenter parts of the same chip run both at full rate (Ada whitepaper: RTX 4090
    # 330.3 TFLOPS FP16 accumulate, 165.2 FP32 accumulate)
    from gpuplan.estimate.engines import engine
    from gpuplan.estimate.infer_speed import compute_peak
    from gpuplan.estimate.quant import weight_format

    fp16 = weight_format("fp16")
    geforce, datacenter = catalog.gpu("RTX4090"), catalog.gpu("L40S")
    assert compute_peak(geforce, fp16, engine("llamacpp"))[0] == pytest.approx(330.3e12, rel=0.01)
    assert compute_peak(geforce, fp16, engine("vllm"))[0] == pytest.approx(165.2e12, rel=0.01)
    assert compute_peak(datacenter, fp16, engine("llamacpp"))[0] == compute_peak(datacenter, fp16, engine("vllm"))[0]


def test_gpt_oss_120b_in_its_mxfp4_checkpoint_fits_one_80gb_gpu(catalog: Catalog) -> None:
    # openai/gpt-oss README: "gpt-oss-120b ... fits into a single 80GB GPU (like NVIDIA H100)"
    m, g = catalog.model("gpt-oss-120b"), catalog.gpu("H100")
    mem = inference_memory(m, g, InferSetup(engine="vllm", weight_format="mxfp4", prompt_len=1024, output_len=256))
    assert 55 * 2**30 < mem.breakdown.get("weights") < 66 * 2**30
    assert mem.total < g.memory_bytes


def test_apple_silicon_decodes_at_its_unified_memory_bandwidth(catalog: Catalog) -> None:
    # batch-1 decode is memory-bound: the M2 Ultra (800 GB/s) decodes faster than the M2 Max (400 GB/s), but
    # by less than the bandwidth ratio, since the per-step kernel-launch overhead does not shrink with it
    m = catalog.model("Llama-3.1-8B")
    s = InferSetup(engine="llamacpp", weight_format="gguf-q4_k_m", prompt_len=512, output_len=128)
    ultra, max_ = (latency(m, catalog.gpu(n), s).figures.tpot_s for n in ("M2-Ultra", "M2-Max"))
    assert 1.3 < max_ / ultra < 2.0
    assert catalog.gpu("M2-Max").memory_bytes < 96 * 1e9  # the GPU's default share of unified memory


def test_binned_m2_max_decodes_as_the_full_chip_but_prefills_slower(catalog: Catalog) -> None:
    # the 30-core M2 Max keeps the 38-core part's 400 GB/s (notebookcheck) with 30 of its 38 GPU cores: batch-1
    # decode of Q8_0 (no dequantizing ALU floor) streams the weights at the same rate, a 2,048-token prefill
    # (compute-bound) takes about 38/30 as long; Q4_K_M's decode, held by the K-quant kernels' ALU floor, slows by
    # at most the cores' ratio
    m = catalog.model("Llama-3.1-8B")
    s = InferSetup(engine="llamacpp", weight_format="gguf-q8_0", prompt_len=2048, output_len=128)
    full, binned = (latency(m, catalog.gpu(n), s).figures for n in ("M2-Max", "M2-Max-30C"))
    assert binned.tpot_s == pytest.approx(full.tpot_s, rel=1e-9)
    assert 1.15 < binned.ttft_s / full.ttft_s <= 38 / 30 + 1e-9
    k = replace(s, weight_format="gguf-q4_k_m")
    full, binned = (latency(m, catalog.gpu(n), k).figures for n in ("M2-Max", "M2-Max-30C"))
    assert full.tpot_s <= binned.tpot_s <= full.tpot_s * 38 / 30 + 1e-12


def test_seven_core_m1_decodes_as_the_eight_core_part_but_prefills_an_eighth_slower(catalog: Catalog) -> None:
    # the base MacBook Air's M1 keeps the 8-core part's 68.25 GB/s with 7 of its 8 GPU cores (896 of 1,024 ALUs at
    # the same 1,278 MHz, hmc-tech): Q8_0's batch-1 decode streams the weights at the same rate, a 2,048-token
    # prefill (compute-bound) takes at most 8/7 as long, and Q4_K_M's decode, where the K-quant kernels' ALU
    # floor holds it, slows by at most the cores' ratio
    m = catalog.model("Llama-3.1-8B")
    s = InferSetup(engine="llamacpp", weight_format="gguf-q8_0", prompt_len=2048, output_len=128)
    full, binned = (latency(m, catalog.gpu(n), s).figures for n in ("M1", "M1-7C"))
    assert binned.tpot_s == pytest.approx(full.tpot_s, rel=1e-9)
    assert 1.08 < binned.ttft_s / full.ttft_s <= 8 / 7 + 0.01
    k = replace(s, weight_format="gguf-q4_k_m")
    full, binned = (latency(m, catalog.gpu(n), k).figures for n in ("M1", "M1-7C"))
    assert full.tpot_s <= binned.tpot_s <= full.tpot_s * (8 / 7 + 0.01)



@pytest.mark.parametrize(("engine", "version", "uses"), [
    ("mlx", "", True),  # plans run the current release
    ("mlx", "0.30.0", True),  # ml-explore/mlx PR #2772, first tagged v0.30.0
    ("mlx", "0.29.3", False),
    ("llamacpp", "", True),  # current builds set the Metal 4 language version of the probe (PR #27461, b10734)
    ("llamacpp", "b10734", True),
    ("llamacpp", "b8680", False),  # the probe may fail silently before it (llama.cpp issue #27473)
    ("llamacpp", "unknown", False),
    ("llamacpp", "PR #16634 branch 'metal : initial Metal4 tensor API support' (2025-10-25)", True),
    ("vllm", "", False),
])
def test_metal_tensor_operations_follow_the_engine_release(engine: str, version: str, uses: bool) -> None:
    from gpuplan.estimate.engines import metal_tensor_gemm

    assert metal_tensor_gemm(InferSetup(engine=engine, engine_version=version)) is uses


def test_m5_matrix_rate_matches_apples_four_times_the_m4(catalog: Catalog) -> None:
    # Apple's M5 announcement: over 4x the M4's peak GPU compute for AI; the catalog's rate is derived from a
    # measured 1,024 FP16 FLOPs per core per cycle (tzakharko's A19 microbenchmarks), not from that claim
    m5, m4 = catalog.gpu("M5"), catalog.gpu("M4")
    assert m5.matrix_fp16_flops_per_s == pytest.approx(4 * m4.fp32_flops_per_s, rel=0.05)
    assert m4.matrix_fp16_flops_per_s is None


def test_mlx_prefills_on_the_m5_neural_accelerators_from_0_30(catalog: Catalog) -> None:
    # MLX 0.30 runs its quantized GEMMs and attention on the M5's matrix units, four times the ALU rate (17.8
    # against 4.45 TFLOPS): a 2,048-token prefill of an 8B 4-bit model, compute-bound, takes well under half as long
    # as with MLX 0.29 (the step overheads do not shrink, so not a full quarter); the M4 has no such units, and
    # batch-1 decode streams the same weights either way
    m, m5, m4 = catalog.model("Llama-3.1-8B"), catalog.gpu("M5"), catalog.gpu("M4")
    s = InferSetup(engine="mlx", weight_format="mlx-q4", prompt_len=2048, output_len=128)
    old = replace(s, engine_version="0.29.3")
    new_m5, old_m5 = (latency(m, m5, x).figures for x in (s, old))
    assert 0.249 < new_m5.ttft_s / old_m5.ttft_s < 0.4
    assert new_m5.tpot_s == pytest.approx(old_m5.tpot_s, rel=0.02)
    assert latency(m, m4, s).figures.ttft_s == pytest.approx(latency(m, m4, old).figures.ttft_s, rel=1e-9)


def test_llamacpp_prefills_on_the_m5_matrix_units_only_with_the_tensor_api(catalog: Catalog) -> None:
    # a llama.cpp build of unknown provenance runs the ALU kernels (as fast as an M5 without matrix units); a build
    # with the tensor API on prefills a Q4_K_M model several times faster
    m, m5 = catalog.model("Llama-3.1-8B"), catalog.gpu("M5")
    alu_only = replace(m5, matrix_fp16_flops_per_s=None)
    s = InferSetup(engine="llamacpp", weight_format="gguf-q4_k_m", prompt_len=2048, output_len=128,
                   engine_version="unknown")
    assert latency(m, m5, s).figures.ttft_s == pytest.approx(latency(m, alu_only, s).figures.ttft_s, rel=1e-9)
    tensor = replace(s, engine_version="b10734")
    assert latency(m, m5, tensor).figures.ttft_s < 0.5 * latency(m, m5, s).figures.ttft_s


# ---------------------------------------------------------------- fits: the held-out band, not a fixed 5 %


def test_fits_means_the_upper_end_of_the_held_out_band_fits(catalog: Catalog) -> None:
    from gpuplan.estimate.calibration import fitted

    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("A100-80GB")
    e = estimate_config(m, g, make_job("finetune", method="lora", samples=100, tokens_per_sample=1024))
    # training: the floor (no allocator cache) raised by the held-out band of allocated peaks, at least 5 %
    high = fitted().held_out_bands["training_memory_allocated"][1]
    assert e.memory.floor is not None
    assert e.margin == pytest.approx(max(0.05, high - 1))
    assert e.needed_bytes == pytest.approx(e.memory.floor.value * (1 + e.margin))
    assert e.as_dict()["headroom"] == pytest.approx(e.margin)


def test_the_framework_option_help_names_every_framework_in_the_data() -> None:
    import re

    from gpuplan.options import option

    help_text = option("framework").help_for("plan finetune")
    listed = set(re.findall(r"[a-z0-9][a-z0-9.-]*", help_text.split(":", 1)[1].split("(")[0])) - {"or"}
    assert listed == set(frameworks()), "keep --framework's help in step with gpuplan/data/frameworks.csv"


def test_lora_that_trains_embeddings_pays_for_a_trained_copy_of_both_tables(catalog: Catalog) -> None:
    # Qwen (v1) README, 7B at 256 tokens on one A100: LoRA 20.1 GB, "LoRA (emb)" (embedding and output layer
    # trained too) 33.7 GB: +13.6 GB for 2 × 151,936 × 4,096 = 1.24 B parameters, ~11 bytes each
    m, g = catalog.model("Qwen-7B"), catalog.gpu("A100-80GB")
    job = make_job("finetune", method="lora", samples=1000, tokens_per_sample=256)
    plain = estimate_config(m, g, job, micro_batch=1, grad_accum=8)  # the README's batch 1, accumulation 8
    emb = estimate_config(m, g, make_job("finetune", method="lora", samples=1000, tokens_per_sample=256,
                                         train_embeddings=True), micro_batch=1, grad_accum=8)
    extra = emb.memory.total - plain.memory.total
    # bf16 copy + bf16 gradients + Adam states in bf16: 8 bytes each, under the measured ~11 (states in fp32?)
    assert 0.7 * 13.6e9 < extra < 1.3 * 13.6e9
    assert emb.memory.trained.trainable_params - plain.memory.trained.trainable_params == 2 * 151_936 * 4_096
    assert emb.seconds > plain.seconds  # the output layer's weight gradient and the larger optimizer step
    with pytest.raises(InputError, match="--train-embeddings"):
        make_job("finetune", method="full", samples=1000, tokens_per_sample=256, train_embeddings=True)


def test_one_slot_makes_n_closed_loop_clients_queue_for_n_minus_one_service_times(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # a closed system with one server and think time 0: each request waits while the N − 1 others are served, so
    # TTFT(N) = TTFT(1) + (N − 1) · S with S = one request's whole service (its TTFT plus O decode steps)
    m, g = llama8b_h100
    one_slot = replace(SETUP, max_num_seqs=1)
    alone = at_concurrency(m, g, one_slot, 1)
    service = alone.ttft_mean_s + SETUP.output_len * alone.tpot_mean_s
    five = at_concurrency(m, g, one_slot, 5)
    assert five.ttft_mean_s == pytest.approx(alone.ttft_mean_s + 4 * service, rel=1e-3)
    assert five.rate_per_s == pytest.approx(1 / service, rel=1e-3)  # the response-time law: R = N / X


def test_ttft_grows_with_the_number_of_clients_and_p99_is_never_below_p50(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    m, g = llama8b_h100
    states = [at_concurrency(m, g, SETUP, n) for n in (1, 4, 16, 64, 256, 512)]
    assert all(a.ttft_mean_s <= b.ttft_mean_s for a, b in itertools.pairwise(states))
    assert all(s.ttft_p99_s >= s.ttft_p50_s and s.tpot_p99_s >= s.tpot_mean_s for s in states)


def test_capacity_is_the_rate_at_which_the_full_engine_just_keeps_up(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    m, g = llama8b_h100
    limit = capacity(m, g, SETUP)
    below, above = at_rate(m, g, SETUP, 0.999 * limit), at_rate(m, g, SETUP, 1.001 * limit)
    assert not below.saturated and above.saturated
    # just below it the running batch all but fills the engine's sequence cap (256 for vLLM): 248 with the fitted
    # parameters of 2026-12-05, 243 with those of 2026-12-07, short of the cap by the requests still in prefill
    assert 0.9 * 256 < below.batch <= 256


def test_a_short_prompt_is_never_faster_than_reading_the_weights_it_reaches(catalog: Catalog) -> None:
    from gpuplan.estimate.calibration import fitted
    from gpuplan.estimate.infer_speed import decode_weight_bytes, prefill_seconds
    from gpuplan.estimate.quant import weight_format

    cal = fitted()
    m, g = catalog.model("Mixtral-8x7B"), catalog.gpu("H100")
    s = InferSetup(engine="vllm", weight_format="fp8", prompt_len=64, output_len=1)
    # 64 tokens, each routed to 2 of 8 experts, reach all experts but a share (6/8)^64 ≈ 1e-8: the whole model
    stream = decode_weight_bytes(m, weight_format("fp8"), s, 64) / (g.memory_bandwidth_bytes_per_s *
                                                                   cal.get("eta_memory_vllm"))
    assert stream > 40e9 / g.memory_bandwidth_bytes_per_s  # about 46 GB of FP8 weights
    assert prefill_seconds(m, g, s, 64, cal) >= stream
    # a long prompt is bound by its FLOPs instead: twice the tokens, about twice the time
    long = replace(s, prompt_len=8192)
    ratio = prefill_seconds(m, g, long, 16384, cal) / prefill_seconds(m, g, long, 8192, cal)
    assert 1.9 < ratio < 2.1


def test_clients_in_lockstep_queue_behind_each_others_prompts(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # n clients sending requests of one length start together and stay together: each wave's n prompts arrive at
    # once, so a prompt waits for those ahead of it — TTFT grows about linearly with n (the mean about half the
    # wave's prefill), far above what free-running clients of the same count see
    from gpuplan.estimate.calibration import fitted
    from gpuplan.estimate.infer_speed import prefill_seconds

    m, g = llama8b_h100
    waves = [at_concurrency(m, g, SETUP, n, lockstep=True) for n in (1, 8, 64)]
    free = at_concurrency(m, g, SETUP, 64)
    one_prompt = prefill_seconds(m, g, SETUP, SETUP.prompt_len, fitted())
    # alone, a client's prompt finds the engine idle: its TTFT is its own prefill, plus the engine's fixed cost per
    # request (its API server's, load.request_seconds)
    assert waves[0].ttft_mean_s == pytest.approx(one_prompt + request_seconds(SETUP, g, fitted()), rel=1e-6)
    assert all(a.ttft_mean_s < b.ttft_mean_s for a, b in itertools.pairwise(waves))
    assert waves[2].ttft_mean_s > 32 * one_prompt * 0.8 and waves[2].ttft_mean_s > free.ttft_mean_s
    assert all(w.ttft_p99_s >= w.ttft_p50_s and w.tpot_p99_s >= w.tpot_mean_s for w in waves)
    # the first of a wave to get its token waits while the others are prefilled: TPOT above a bare decode step
    assert waves[2].tpot_mean_s > latency(m, g, replace(SETUP, batch=64)).figures.tpot_s


def test_the_median_gap_between_tokens_of_a_wave_is_a_bare_decode_step(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # in a lockstep wave a request waits for the rest of its wave's prompts in one gap; every other gap of its 300
    # tokens is one decode step of the 64 sequences, so bench_serving's median ITL is that step (the batch-64
    # latency answer), below the mean TPOT, which carries the wait
    m, g = llama8b_h100
    wave = at_concurrency(m, g, SETUP, 64, lockstep=True)
    step = latency(m, g, replace(SETUP, batch=64)).figures.tpot_s
    assert wave.itl_median_s == pytest.approx(step, rel=1e-9)
    assert wave.itl_median_s < wave.tpot_mean_s
    # the requests' own TPOTs: the median one (the 32nd prompt of 64) waits less than the p99 one (the first)
    assert wave.itl_median_s < wave.tpot_median_s < wave.tpot_p99_s


def test_at_a_light_rate_the_median_gap_is_an_iteration_without_a_prompt(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # the mean TPOT spreads the prompts' share ρ of the GPU over every iteration, t_decode / (1 − ρ); at a tenth
    # of the capacity few iterations carry a prompt, so the median gap is t_decode itself: mean × (1 − ρ)
    m, g = llama8b_h100
    light = at_rate(m, g, SETUP, 0.1 * capacity(m, g, SETUP))
    assert light.itl_median_s == pytest.approx(light.tpot_mean_s * (1 - light.prefill_share), rel=1e-9)
    # a lone closed-loop client has no one else's prompt in its iterations: both are the batch-1 step
    one = at_concurrency(m, g, SETUP, 1)
    assert one.itl_median_s == pytest.approx(one.tpot_mean_s, rel=1e-9)


def test_when_most_iterations_carry_a_prompt_the_median_gap_is_one_of_those(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # 2000-token prompts with 10-token answers at 90 % of capacity: about 9 sequences decode, each for 10
    # iterations, while a prompt arrives about every iteration (q = rate × 1 chunk × t ≈ 0.9), so the typical
    # gap carries a 2000-token prefill and is longer than the mean, in which a tenth of the gaps are bare steps
    m, g = llama8b_h100
    s = replace(SETUP, prompt_len=2000, output_len=10)
    busy = at_rate(m, g, s, 0.9 * capacity(m, g, s))
    assert busy.itl_median_s > busy.tpot_mean_s


def test_past_capacity_the_median_gap_is_still_a_step_of_the_full_batch(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # overloaded, the engine runs its whole cap and admits prompts at the rate it serves them; with 100-token prompts
    # and 2,000-token answers a prompt comes once every ~8 iterations of the full batch (q ≈ cap / O ≈ 0.13), so the
    # median gap bench_serving prints is a decode-only step, as at a light load, shorter than the mean TPOT that
    # spreads the prompt work over every gap; a 2,000-token answer sees a few hundred prompts, so the median
    # request's own TPOT is about that mean
    m, g = llama8b_h100
    s = replace(SETUP, prompt_len=100, output_len=2000)
    limit = capacity(m, g, s)
    over = at_rate(m, g, s, 3 * limit, n_requests=3000)
    full, _ = decode_step_seconds(m, g, s, over.batch, s.prompt_len + s.output_len / 2, fitted())
    assert over.saturated and over.batch == max_batch(m, g, s, fitted())
    assert over.itl_median_s == pytest.approx(full, rel=1e-9)
    assert over.itl_median_s < over.tpot_mean_s
    assert over.tpot_median_s == pytest.approx(over.tpot_mean_s, rel=0.01)


def test_a_finite_run_past_capacity_waits_longer_the_more_it_sends_and_the_faster(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # a benchmark that sends N requests faster than the engine serves them ends with a finite queue: the later
    # requests wait for the earlier ones, so TTFT grows with N and with the rate, p99 above p50
    m, g = llama8b_h100
    limit = capacity(m, g, SETUP)
    few, many = at_rate(m, g, SETUP, 2 * limit, n_requests=100), at_rate(m, g, SETUP, 2 * limit, n_requests=1000)
    faster = at_rate(m, g, SETUP, 4 * limit, n_requests=1000)
    assert few.saturated and math.isfinite(few.ttft_mean_s)
    assert few.ttft_mean_s < many.ttft_mean_s < faster.ttft_mean_s
    assert many.ttft_p50_s <= many.ttft_p99_s
    assert math.isinf(at_rate(m, g, SETUP, 2 * limit).ttft_mean_s)  # an endless stream: the queue never ends


def test_an_overloaded_run_queues_only_what_the_running_batch_cannot_hold() -> None:
    # 1000 requests at 16 req/s to an engine that serves 10 req/s and runs up to 256 sequences: the backlog grows at
    # 6 req/s and fills the running batch after 256 / 6 = 42.7 s, by which time 682.7 requests have arrived and been
    # admitted at once; each later one waits (k − 682.7) × (1/10 − 1/16) = (k − 682.7) × 37.5 ms. By hand: the
    # median request (k = 500) waits none, p99 (k = 990) 307.3 × 37.5 ms = 11.5 s, the mean 316.3 × 317.3 / 2 / 1000
    # × 37.5 ms = 1.88 s — where a queue in front of the engine alone would give 999 / 2 × 37.5 ms = 18.7 s
    # (the last, k = 999, waits 316.3 × 37.5 ms = 11.9 s)
    mean, p50, p99, last = _overload_waits(1000, 16.0, 10.0, 256)
    assert p50 == 0.0
    assert p99 == pytest.approx(11.525, rel=1e-3)
    assert mean == pytest.approx(1.882, rel=1e-3)
    assert last == pytest.approx(11.862, rel=1e-3)
    assert _overload_waits(1000, 16.0, 10.0, 512) == (0.0, 0.0, 0.0, 0.0)  # 1365 would fit before any wait
    assert _overload_waits(1000, 16.0, 10.0, 0)[0] == pytest.approx(999 / 2 * 0.0375)  # no batch: Newell's queue


def test_the_median_request_of_a_run_past_capacity_waits_half_the_run_s_lag() -> None:
    # with no room to absorb the backlog, 1000 requests sent at 16 req/s to an engine that drains 10 req/s: the
    # i-th is served at i/10 s and arrives at i/16 s, so it waits i × 37.5 ms; the median one (i = 500) 18.75 s,
    # the last 999 × 37.5 ms = 37.5 s
    _, p50, _, last = _overload_waits(1000, 16.0, 10.0, 0)
    assert p50 == pytest.approx(18.75)
    assert last == pytest.approx(37.46, rel=1e-3)


def test_a_finite_run_never_holds_more_than_it_sent_nor_more_than_have_arrived() -> None:
    # 200 requests at 16 req/s arrive over 12.5 s. If each stays 25 s in the engine, all 200 are in flight when the
    # last arrives: the batch ramps 0 → 200 over 12.5 s, holds until 25 s, then drains; a request sees on average
    # ∫B² / ∫B = 200 × (1 − 12.5 / 75) = 166.7, the last one (arriving as the drain starts) 200 × (1 − 12.5/50) = 150
    assert seen_batch(16.0, 25.0, 200) == pytest.approx(166.67, rel=1e-3)
    assert seen_batch(16.0, 25.0, 200, last=True) == pytest.approx(150.0)
    # a 5 s stay: Little's 16 × 5 = 80 in flight, less the ramp and the drain: 80 × (1 − 5/37.5) = 69.3; the last
    # request sees the batch empty out under it, 40 on average
    assert seen_batch(16.0, 5.0, 200) == pytest.approx(69.33, rel=1e-3)
    assert seen_batch(16.0, 5.0, 200, last=True) == pytest.approx(40.0)
    # however long a request stays, a run never holds more than it sent; a long run approaches Little's law
    assert seen_batch(16.0, 1e6, 200) < 200
    assert seen_batch(16.0, 5.0, 10**6) == pytest.approx(80.0, rel=1e-4)


def test_an_overloaded_run_that_fits_in_the_running_batch_waits_only_for_its_service(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # a short burst above capacity is admitted into the batch as it arrives (the cost shows in TPOT), so no request
    # waits for a slot and TTFT stays that of a prompt served among the running decodes; a long one overflows the
    # batch and its later requests wait for slots
    m, g = llama8b_h100
    limit = capacity(m, g, SETUP)
    cap = max_batch(m, g, SETUP, fitted())
    short = at_rate(m, g, SETUP, 1.5 * limit, n_requests=cap)
    long = at_rate(m, g, SETUP, 1.5 * limit, n_requests=20 * cap)
    assert short.saturated and short.batch < cap and short.ttft_p99_s < 1.0
    assert long.ttft_p99_s > long.ttft_mean_s > short.ttft_mean_s


def test_a_run_of_fewer_requests_than_the_cap_past_capacity_runs_no_more_than_it_sent(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # 100 requests at three times the capacity: the engine could hold its whole cap, but the run never has more
    # than 100 in flight, so its steps are those of at most 100 sequences — shorter than the full engine's that an
    # endless stream at that rate runs — and its requests are admitted as they arrive
    m, g = llama8b_h100
    limit = capacity(m, g, SETUP)
    burst, endless = at_rate(m, g, SETUP, 3 * limit, n_requests=100), at_rate(m, g, SETUP, 3 * limit)
    assert burst.saturated and burst.batch <= 100 < endless.batch
    assert burst.tpot_mean_s < endless.tpot_mean_s
    assert math.isfinite(burst.ttft_mean_s) and burst.ttft_p99_s < 1.0
    # it reports its 100 requests over the arrivals and the last one's drain, no faster than the engine serves
    assert burst.served_per_s <= limit


def test_a_finite_run_below_capacity_reports_its_tokens_over_a_duration_with_the_last_drain(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # bench_serving divides the tokens by the time from the first send to the last answer: 10 requests at 1 req/s
    # (Llama-3.1-8B, 1000 in / 300 out on an H100, far below its ~12 req/s capacity) arrive over ~10 s and the last
    # one then takes ~0.1 s + 299 steps of ~7 ms ≈ 2.3 s, so ~3000 tokens in ~12.3 s ≈ 244 tok/s, not 1 × 300;
    # the longer the run, the smaller the drain's share
    m, g = llama8b_h100
    steady = at_rate(m, g, SETUP, 1.0)
    short, long = at_rate(m, g, SETUP, 1.0, n_requests=10), at_rate(m, g, SETUP, 1.0, n_requests=1000)
    assert steady.output_tokens_per_s == pytest.approx(300)
    assert 230 < short.output_tokens_per_s < 260
    assert short.output_tokens_per_s < long.output_tokens_per_s < steady.output_tokens_per_s
    assert long.output_tokens_per_s > 0.99 * steady.output_tokens_per_s
    assert short.served_per_s == pytest.approx(short.output_tokens_per_s / SETUP.output_len)
    # a 10-request run holds fewer in flight than the steady state (it ramps up and drains), at about its latencies
    assert short.batch < steady.batch
    assert short.ttft_mean_s == pytest.approx(steady.ttft_mean_s, rel=0.01)


def test_an_overloaded_engine_finishes_requests_at_its_capacity_not_at_the_arrival_rate(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    m, g = llama8b_h100
    limit = capacity(m, g, SETUP)
    flooded = at_rate(m, g, SETUP, 2 * limit)
    assert flooded.rate_per_s == pytest.approx(2 * limit)
    assert flooded.served_per_s == pytest.approx(limit)


def test_prompt_work_stretches_a_decode_step_at_most_to_one_pass_over_the_token_budget(catalog: Catalog) -> None:
    # short outputs at a high rate leave prompts most of the GPU, but chunked prefill caps every iteration at
    # max_batched_tokens, so a token never waits longer than one pass over that budget
    from gpuplan.estimate.calibration import fitted
    from gpuplan.estimate.engines import engine
    from gpuplan.estimate.infer_speed import prefill_seconds

    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("H100")
    s = replace(SETUP, prompt_len=2000, output_len=16)
    budget = prefill_seconds(m, g, s, float(engine("vllm").max_batched_tokens or 0), fitted())
    for rate in (0.5, 0.9, 1.5):
        state = at_rate(m, g, s, rate * capacity(m, g, s))
        assert state.tpot_mean_s <= budget * 1.0001


# ---------------------------------------------------------------- finite offline runs


@pytest.mark.parametrize(("lengths", "slots", "expected"), [
    # three slots, all admitted at once: 3 running for 1 step, then 2 for 1, then the longest alone for 1
    ([3, 1, 2], 3, [(3, 1), (2, 1), (1, 1)]),
    # two slots, four requests of 5, 1, 1, 1 tokens: slot A runs the 5 (steps 0-5); slot B runs the three 1s in
    # turn (steps 0-3); then A runs alone for steps 3-5
    ([5, 1, 1, 1], 2, [(2, 3), (1, 2)]),
    # equal lengths in two waves of two: the batch stays full for 4 steps, no drain
    ([2, 2, 2, 2], 2, [(2, 4)]),
])
def test_a_finite_run_keeps_its_slots_busy_until_the_queue_is_empty_then_drains(
        lengths: list[int], slots: int, expected: list[tuple[int, int]]) -> None:
    assert _running_counts(lengths, slots) == expected


def test_a_finite_run_of_one_full_wave_of_equal_requests_is_the_steady_state_wave(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # N = cap requests of one length: one prefill of N prompts, then O steps at batch N — speed()'s wave
    m, g = llama8b_h100
    cap = max_batch(m, g, SETUP, fitted())
    wave = speed(m, g, SETUP, cap)
    assert finite_run(m, g, SETUP, [SETUP.output_len] * cap) == pytest.approx(wave.output_tokens_per_s, rel=1e-9)


def test_a_run_whose_lengths_vary_drains_and_makes_fewer_tokens_per_second(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # 100 requests, 100 tokens in all but one of 2,000 and the rest 81 each (mean 100): the long one decodes
    # alone for 1,919 steps after the others end, each step a batch-1 step, so the run lasts
    # prefill + 81 × t(100) + 1,919 × t(1); against 100 equal requests, prefill + 100 × t(100)
    m, g = llama8b_h100
    cal = fitted()
    ctx = SETUP.prompt_len + 10_019 / 100 / 2  # decode at the prompt plus half the mean output
    t1, t100 = (decode_step_seconds(m, g, SETUP, b, ctx, cal)[0] for b in (1.0, 100.0))
    prefill = prefill_seconds(m, g, SETUP, 100.0 * SETUP.prompt_len, cal)
    mixed = [2000] + [81] * 99
    assert sum(mixed) == 10_019
    expected = 10_019 / (prefill + 81 * t100 + 1919 * t1)
    assert finite_run(m, g, SETUP, mixed, cal) == pytest.approx(expected, rel=1e-9)
    assert finite_run(m, g, SETUP, mixed, cal) < 0.5 * finite_run(m, g, SETUP, [100] * 100, cal)



@pytest.mark.parametrize("n", [1, 7, 1_000, 2_500, 7_001])
def test_a_run_of_equal_requests_without_walking_them_is_the_walked_run(llama8b_h100, n: int) -> None:  # type: ignore[no-untyped-def]
    # uniform_run's waves (full ones, then the remainder alone) against the request-by-request walk
    m, g = llama8b_h100
    cal = fitted()
    assert uniform_run(m, g, SETUP, n, cal) == pytest.approx(finite_run(m, g, SETUP, [SETUP.output_len] * n, cal),
                                                              rel=1e-12)


def test_a_run_of_fewer_requests_than_slots_or_a_part_empty_last_wave_makes_fewer_tokens_per_second(
        llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    m, g = llama8b_h100
    cal = fitted()
    cap = max_batch(m, g, SETUP, cal)
    steady = speed(m, g, SETUP, cap).output_tokens_per_s
    assert uniform_run(m, g, SETUP, cap // 4, cal) < 0.9 * steady  # the batch never fills
    assert uniform_run(m, g, SETUP, cap + 1, cal) < uniform_run(m, g, SETUP, 2 * cap, cal)  # one request alone
    assert uniform_run(m, g, SETUP, 50 * cap, cal) == pytest.approx(steady, rel=0.02)


# ---------------------------------------------------------------- engine releases (vLLM V0 against V1)


@pytest.mark.parametrize(("text", "expected"), [
    ("0.7.3.dev138+g21f6ca217 (rocm/vllm-dev:vllm-ds3-staging-0217)", (0, 7, 3)),  # dstack's MI300X build
    ("v0.8", (0, 8, 0)),
    ("lmsysorg/sglang:dev docker image, Dec 2024", None),  # a docker tag states no release
    ("", None),
])
def test_an_engine_release_is_read_from_the_version_text(text: str, expected: tuple[int, int, int] | None) -> None:
    assert release(text) == expected


def test_vllm_v0_prefills_a_wave_of_mla_prompts_in_one_pass(catalog: Catalog) -> None:
    # vllm/config.py @v0.7.3 (VllmConfig.__post_init__): "MLA is enabled; forcing chunked prefill and prefix
    # caching to be disabled", max_num_batched_tokens = max(max_model_len, 2048). Four clients of 3,000-token
    # prompts send 12,000 tokens at once: V1's 8,192-token passes return the first two prompts (6,000 tokens)
    # after the first pass and the other two after the second; V0 takes all four in one pass, so every prompt's
    # first token comes when that pass ends.
    m, g = catalog.model("DeepSeek-V2-Lite"), catalog.gpu("H100")
    v1 = InferSetup(engine="vllm", prompt_len=3000, output_len=200)
    v0 = replace(v1, engine_version="0.7.3")
    assert token_budget(m, v1) == 8192 and token_budget(m, v0) == 163840  # the model's 163,840-token context
    assert token_budget(catalog.model("Llama-3.1-8B"), v0) == 8192  # not MLA: V0 kept chunked prefill
    old, new = at_concurrency(m, g, v0, 4, lockstep=True), at_concurrency(m, g, v1, 4, lockstep=True)
    assert old.ttft_p50_s == old.ttft_p99_s
    assert new.ttft_p50_s < new.ttft_p99_s and old.ttft_p50_s > new.ttft_p50_s


def test_a_v0_server_started_with_max_model_len_prefills_mla_prompts_in_passes_of_that_length(
        catalog: Catalog) -> None:
    # the same rule with the server's --max-model-len 32768 in place of the model's context (dstack's MI300X
    # DeepSeek-R1 server): 16 clients of 3,200-token prompts send 51,200 tokens; passes of 32,768 take 10 prompts,
    # then the other 6, so 10 of 16 first tokens come after the first pass and the median one with them, while
    # without the flag one pass takes all 16. The last prompt waits for all 51,200 tokens either way.
    m, g = catalog.model("DeepSeek-V2-Lite"), catalog.gpu("H100")
    served = InferSetup(engine="vllm", prompt_len=3200, output_len=200, engine_version="0.7.3")
    capped = replace(served, max_model_len=32768)
    assert token_budget(m, capped) == 32768
    assert token_budget(m, replace(served, max_model_len=1024)) == 2048  # never below V0's 2,048-token floor
    one, two = at_concurrency(m, g, served, 16, lockstep=True), at_concurrency(m, g, capped, 16, lockstep=True)
    assert one.ttft_p50_s == one.ttft_p99_s
    assert two.ttft_p50_s < 0.8 * two.ttft_p99_s  # the first pass holds 32,000 of the wave's 51,200 tokens
    assert two.ttft_p99_s == pytest.approx(one.ttft_p99_s, rel=0.1)
    assert replace(served, max_model_len=32768).with_batch(8).max_model_len == 32768


def test_a_v0_server_says_whether_it_chunks_and_its_budget_follows(catalog: Catalog) -> None:
    # vLLM V0 with --enable-chunked-prefill takes 512 prompt tokens a pass (V0 docs "Performance and Tuning");
    # without it, max(max_model_len, 2048) (vllm/config.py SchedulerConfig). A V0 run that does not say keeps
    # engines.csv's budget; V1 always chunks, so the flag changes nothing there.
    m = catalog.model("Llama-3.1-8B")
    v0 = InferSetup(engine="vllm", prompt_len=1000, output_len=100, engine_version="0.6.2", max_model_len=10000)
    assert token_budget(m, v0) == 8192
    assert token_budget(m, replace(v0, chunked_prefill=True)) == 512
    assert token_budget(m, replace(v0, chunked_prefill=False)) == 10000
    assert token_budget(m, replace(v0, chunked_prefill=False, max_model_len=1024)) == 2048
    v1 = replace(v0, engine_version="0.8.3")
    assert token_budget(m, replace(v1, chunked_prefill=False)) == token_budget(m, v1)
    assert replace(v0, chunked_prefill=False).with_batch(8).chunked_prefill is False


def test_a_v0_prompt_step_without_chunking_carries_no_decodes(catalog: Catalog) -> None:
    # vllm/core/scheduler.py _schedule_default: "Don't schedule decodes if prefills are scheduled". A prompt that
    # arrives while others decode neither carries their decode step in its own prefill step nor waits out an
    # iteration stretched by other prompts (those are the queue the Pollaczek-Khinchine wait counts): only the
    # decode step under way. Same budget (8,192) both ways, so the prefill and TPOT are the same.
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("A10")
    mixed = InferSetup(engine="vllm", prompt_len=1000, output_len=100, engine_version="0.6.2", max_model_len=8192)
    alone = replace(mixed, chunked_prefill=False)
    assert token_budget(m, alone) == token_budget(m, mixed) == 8192
    busy_mixed, busy_alone = at_rate(m, g, mixed, 1.0), at_rate(m, g, alone, 1.0)
    assert busy_alone.tpot_mean_s == pytest.approx(busy_mixed.tpot_mean_s)
    assert busy_alone.batch > 3  # others are decoding when most prompts arrive
    step = decode_step_seconds(m, g, alone, busy_alone.batch, 1050, fitted())[0]
    saved = busy_mixed.ttft_mean_s - busy_alone.ttft_mean_s
    # the rows the mixed prompt step carries for the running decodes (a share of a step: the weights are read once
    # for the pass) and half the prompt work a stretched iteration holds, less than a whole decode step on top
    assert 0 < saved < step + busy_mixed.tpot_mean_s / 2
    # a lone request finds nothing decoding: the two schedulers give the same first token
    quiet_mixed, quiet_alone = at_rate(m, g, mixed, 0.001), at_rate(m, g, alone, 0.001)
    assert quiet_alone.ttft_mean_s == pytest.approx(quiet_mixed.ttft_mean_s, rel=0.01)


def test_vllm_v0_steps_pay_their_own_overhead_once_fitted(catalog: Catalog) -> None:
    # the V0 engine's per-layer step overhead (layer_overhead_s_vllm_v0) is its own parameter; until a fit
    # holds it, V1's stands in. SGLang has no such split.
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("H100")
    v1 = InferSetup(engine="vllm", prompt_len=1000, output_len=100)
    v0 = replace(v1, engine_version="0.6.3")
    fit = fitted()
    # (the host time per running sequence, each generation's own and added differently, set apart)
    cal = Calibration({k: v for k, v in fit.values.items() if k != "layer_overhead_s_vllm_v0"}, fit.bands,
                      fit.fitted_on).with_values(host_seq_s_vllm=0.0, host_seq_s_vllm_v0=0.0)
    assert latency(m, g, v0, cal).figures.tpot_s == latency(m, g, v1, cal).figures.tpot_s
    # the fitted V0 overhead (the Qwen2.5 benchmark's vLLM 0.6.3 rows want about 140 µs per layer) is above V1's
    assert latency(m, g, v0, fit).figures.tpot_s > latency(m, g, v1, fit).figures.tpot_s
    slower = cal.with_values(layer_overhead_s_vllm_v0=cal.get("layer_overhead_s_vllm") + 100e-6)
    assert latency(m, g, v0, slower).figures.tpot_s > latency(m, g, v1, slower).figures.tpot_s
    sglang = replace(v1, engine="sglang")
    assert (latency(m, g, replace(sglang, engine_version="0.4.3"), slower).figures.tpot_s
            == latency(m, g, sglang, slower).figures.tpot_s)


def test_trtllm_serve_replays_cuda_graphs_for_its_default_batch_sizes_only() -> None:
    # TensorRT-LLM 1.x tensorrt_llm/llmapi/llm_args.py: CudaGraphConfig(max_batch_size=0 -> 128, enable_padding=False)
    # -> _generate_cuda_graph_batch_sizes(128, False) = list(range(1, 32)) + [32, 64, 128] (the powers of two from
    # 2**8 start above 128); trtllm-bench pads graphs up to its own batch, and a 0.x release ran a TensorRT engine
    serve = InferSetup(engine="trtllm")
    assert graph_batches(serve) == frozenset([*range(1, 33), 64, 128])
    assert graph_batches(replace(serve, engine_version="v1.2.0rc1")) == graph_batches(serve)
    assert graph_batches(replace(serve, launcher="trtllm-bench")) is None
    assert graph_batches(replace(serve, engine_version="0.17")) is None
    # dstack's build of 0.17 that ran the PyTorch backend under trtllm-serve says so in its version text
    assert graph_batches(replace(serve, engine_version="0.17.post1.dev (PyTorch backend trtllm-serve)")) is not None
    assert graph_batches(InferSetup(engine="vllm", engine_version="0.6.3")) is None  # V0: every batch it runs


def test_an_eager_trtllm_step_lasts_the_longer_of_host_and_gpu(catalog: Catalog) -> None:
    # Qwen3-32B: 64 dense GQA layers, so a step launched op by op at 1 ms of host time per layer takes 64 ms of host
    # time. The overlap scheduler runs it beside the GPU's work: on an H100 the bf16 decode of 136 sequences
    # (about 65 GB of weights at ~3 TB/s, ~25 ms) waits on the host, so the step is the host's 64 ms; 128
    # sequences replay a captured graph and stay at the GPU's time; on an A100 at 0.2 ms per layer (12.8 ms of host
    # time) the GPU's longer step hides the host entirely. GPUStack's trtllm-serve 1.2.0rc1 rows show the same:
    # Qwen3-32B at ~136 running sequences, median ITL 47.9 ms on H100 against 54.8 ms on A100.
    m, h100, a100 = catalog.model("Qwen3-32B"), catalog.gpu("H100"), catalog.gpu("A100-80GB")
    serve = InferSetup(engine="trtllm", prompt_len=217, output_len=202)
    bench = replace(serve, launcher="trtllm-bench")
    cal = fitted().with_values(layer_overhead_s_trtllm_eager=1e-3)
    gpu_step = decode_step_seconds(m, h100, bench, 136, 318, cal)[0]
    assert gpu_step < 0.064
    # ... plus the PyTorch backend's fitted host time per running sequence (overlap scheduler: same host thread)
    per_seq = cal.values["host_seq_s_trtllm_pytorch"]
    assert decode_step_seconds(m, h100, serve, 136, 318, cal)[0] == pytest.approx(0.064 + 136 * per_seq)
    graphed = decode_step_seconds(m, h100, bench, 128, 318, cal)[0]
    assert decode_step_seconds(m, h100, serve, 128, 318, cal)[0] == graphed
    # a pass carrying prompt tokens is never a graph: 100 prompt tokens take the host's 64 ms
    assert prefill_seconds(m, h100, serve, 100, cal) == pytest.approx(0.064)
    light = fitted().with_values(layer_overhead_s_trtllm_eager=0.2e-3)
    assert decode_step_seconds(m, a100, serve, 136, 318, light)[0] == decode_step_seconds(m, a100, bench, 136, 318,
                                                                                          light)[0]


def test_trtllm_bench_graphs_every_decode_batch_but_launches_prompt_passes_op_by_op(catalog: Catalog) -> None:
    # trtllm-bench pads CUDA graphs up to its batch, yet the PyTorch backend's graphs hold decode-only batches
    # (tensorrt_llm/llmapi/llm_args.py CudaGraphConfig), so a pass carrying prompt tokens still launches Qwen3-32B's
    # 64 layers op by op: at 1 ms per layer, 100 prompt tokens take the host's 64 ms on an H100 (their GPU work,
    # one read of ~65 GB of bf16 weights at ~3 TB/s, is about 21 ms). The 0.17 TensorRT engine ran in the C++
    # executor: no such host time, the GPU's time stands.
    m, h100 = catalog.model("Qwen3-32B"), catalog.gpu("H100")
    bench = InferSetup(engine="trtllm", launcher="trtllm-bench", prompt_len=100, output_len=100)
    cal = fitted().with_values(layer_overhead_s_trtllm_eager=1e-3)
    assert prefill_seconds(m, h100, bench, 100, cal) == pytest.approx(0.064)
    built = replace(bench, engine_version="0.17")
    assert prefill_seconds(m, h100, built, 100, cal) < 0.03
    # its decode steps replay a graph at every batch: the GPU's time, under the host's 64 ms
    assert decode_step_seconds(m, h100, bench, 136, 150, cal)[0] < 0.064


def test_a_server_started_without_cuda_graphs_runs_every_decode_step_op_by_op(catalog: Catalog) -> None:
    # SGLang --disable-cuda-graph (model_runner.py init_cuda_graphs builds no CudaGraphRunner) and vLLM
    # --enforce-eager replay no graph at any batch. Qwen3-32B has 64 dense GQA layers: at 2 ms of host time per
    # layer every decode step of 136 sequences on an H100 takes the host's 128 ms, and batch 1 — graphed by
    # default — too; with graphs on, SGLang's steps stay at the GPU's time (its fitted per-layer overhead is tens
    # of µs), well below the host's 128 ms.
    m, g = catalog.model("Qwen3-32B"), catalog.gpu("H100")
    graphed = InferSetup(engine="sglang", prompt_len=217, output_len=202)
    eager = replace(graphed, cuda_graphs=False)
    assert max(graph_batches(graphed) or ()) >= 136 and graph_batches(eager) == frozenset()
    assert graph_batches(replace(InferSetup(engine="trtllm"), cuda_graphs=False)) == frozenset()
    cal = fitted().with_values(layer_overhead_s_sglang_eager=2e-3)
    for batch in (1, 136):
        assert decode_step_seconds(m, g, eager, batch, 318, cal)[0] == pytest.approx(0.128)
        assert decode_step_seconds(m, g, graphed, batch, 318, cal)[0] < 0.1
    # with_batch (the batch searches' copy) keeps the flag
    assert eager.with_batch(8).cuda_graphs is False


def test_eager_trtllm_steps_borrow_transformers_overhead_until_fitted(catalog: Catalog) -> None:
    # without a fitted layer_overhead_s_trtllm_eager, transformers' eager per-layer overhead stands in: at 1 ms per
    # layer, Qwen3-32B's 64 layers give an H100 step of 136 sequences 64 ms (the GPU's share is ~25 ms, above)
    m, g = catalog.model("Qwen3-32B"), catalog.gpu("H100")
    base = fitted()
    cal = Calibration({k: v for k, v in base.values.items() if k != "layer_overhead_s_trtllm_eager"}
                      ).with_values(layer_overhead_s_hf=1e-3)
    per_seq = base.values["host_seq_s_trtllm_pytorch"]  # and the fitted host time of each running sequence
    assert decode_step_seconds(m, g, InferSetup(engine="trtllm"), 136, 318, cal)[0] == pytest.approx(
        0.064 + 136 * per_seq)


def test_closed_loop_with_long_prompts_keeps_its_throughput_as_clients_grow(llama8b_h100) -> None:  # type: ignore[no-untyped-def]
    # n clients each send when their last answer ends, so they send n / (TTFT + O x TPOT) requests a second; with
    # 5,000-token prompts most of the GPU goes to prompts, and more clients can only queue, never serve less
    m, g = llama8b_h100
    s = replace(SETUP, prompt_len=5000, output_len=500)
    states = [at_concurrency(m, g, s, n, length_cv2=1.0) for n in (5, 25, 50, 100, 200)]
    for n, state in zip((5, 25, 50, 100, 200), states, strict=True):
        cycle = state.ttft_mean_s + s.output_len * state.tpot_mean_s
        assert state.rate_per_s * cycle == pytest.approx(n, rel=0.02)  # Little's law over the n clients
    served = [st.output_tokens_per_s for st in states]
    assert served == sorted(served)
