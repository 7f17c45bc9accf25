"""The memos that make plans fast answer as the plain computation does (issue 10, part 5).

A memo keyed by less than its answer depends on would hand one configuration another's figures. So each answer
is read with the memo full of other configurations' entries, then made again with the memo emptied, and the two
must be equal; the arithmetic that replaces a loop is checked against the loop.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from gpuplan.catalog import Catalog
from gpuplan.errors import InfeasibleError
from gpuplan.estimate import ep, infer_speed, links, memory, train_time
from gpuplan.estimate import job as job_module
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.job import estimate_inference, half_format, inference_setup, training_setup
from gpuplan.estimate.memory import inference_memory
from gpuplan.memo import IdentityMemo
from gpuplan.plan.enumeration import PlanMemo
from gpuplan.types import Job, ModelSpec, Parallelism

if TYPE_CHECKING:
    from gpuplan.plan.planner import Constraints

SERVE = Job(task="serve", rps=2, prompt_len=1500, output_len=250)


def _warm_then_fresh(answers: list[Callable[[], object]], memo: IdentityMemo[Any] | dict[Any, Any]) -> None:
    """Every answer read with all the others' entries in ``memo`` equals the one made with ``memo`` empty."""
    memo.clear()
    warm = [answer() for answer in answers]
    warm_again = [answer() for answer in answers]  # now each one is read off the memo
    fresh = []
    for answer in answers:
        memo.clear()
        fresh.append(answer())
    assert warm_again == warm == fresh
    assert len({repr(a) for a in warm}) > 1  # the cases differ, so a mixed-up key would have shown


def test_moe_layers_counted_by_arithmetic_are_the_layers_the_loop_counts(catalog: Catalog) -> None:
    base = catalog.model("Mixtral-8x7B")
    specs = [catalog.model(name) for name in ("DeepSeek-V3", "Qwen1.5-MoE-A2.7B", "Llama-4-Maverick-17B-128E",
                                               "gpt-oss-20b", "Mixtral-8x7B") if name in catalog.models]
    specs += [dataclasses.replace(base, n_layers=n, n_dense_layers=d, moe_every=k)
              for n in range(1, 13) for d in range(0, 14) for k in range(1, 5)]
    assert len(specs) > 600
    for m in specs:  # layer i is MoE when it is past the dense ones and (i + 1) is a multiple of moe_every
        want = sum(1 for i in range(m.n_dense_layers, m.n_layers) if (i + 1) % m.moe_every == 0)
        assert m.n_moe_layers == want, (m.name, m.n_layers, m.n_dense_layers, m.moe_every)


def test_decode_steps_read_off_the_memo_equal_those_made_afresh(catalog: Catalog) -> None:
    cal = fitted()
    answers: list[Callable[[], object]] = []
    for name in ("Qwen2.5-7B", "DeepSeek-V2-Lite", "Mixtral-8x7B"):
        m = catalog.model(name)
        half = dataclasses.replace(m, n_layers=m.n_layers // 2)  # an equal-looking spec of another model
        for gpu_name in ("H100", "A100", "L4"):
            gpu = catalog.gpu(gpu_name)
            for tp, engine, fmt, adapters in ((1, "vllm", "bf16", 0), (2, "sglang", "fp8", 0),
                                              (1, "vllm", "awq-int4", 4), (8, "trtllm", "bf16", 0)):
                s = inference_setup(SERVE, tp, engine, fmt, lora_adapters=adapters, lora_rank=16 if adapters else 0)
                for spec in (m, half):
                    for batch, context in ((1.0, 1500.0), (37.5, 1625.0)):
                        answers.append(lambda spec=spec, gpu=gpu, s=s, b=batch, c=context:
                                       infer_speed.decode_step_seconds(spec, gpu, s, b, c, cal))
    _warm_then_fresh(answers, infer_speed._terms)


def test_prefills_read_off_the_memo_equal_those_made_afresh(catalog: Catalog) -> None:
    """The prefill shares the decode step's memo of per-configuration terms: a key missing the prompt length (the
    attention's context), the engine (its pass size) or the format (llama.cpp's dequantization) would show."""
    cal = fitted()
    answers: list[Callable[[], object]] = []
    for name in ("Qwen2.5-7B", "Mixtral-8x7B"):
        m = catalog.model(name)
        for gpu_name in ("H100", "RTX4090"):
            gpu = catalog.gpu(gpu_name)
            for tp, engine, fmt, prompt in ((1, "vllm", "bf16", 1500), (1, "vllm", "bf16", 300),
                                            (2, "sglang", "fp8", 1500), (1, "llamacpp", "gguf-q4_k_m", 1500)):
                s = inference_setup(dataclasses.replace(SERVE, prompt_len=prompt), tp, engine, fmt)
                for tokens in (prompt, 40 * prompt):
                    answers.append(lambda m=m, gpu=gpu, s=s, t=tokens: infer_speed.prefill_seconds(m, gpu, s, t, cal))
    _warm_then_fresh(answers, infer_speed._terms)


def test_serving_batch_searches_read_off_the_memo_equal_those_made_afresh(catalog: Catalog) -> None:
    """A serving estimate's batch and speed, kept per configuration, answer for jobs that differ only in their
    targets, their batch or the headroom as made afresh."""
    cal = fitted()
    answers: list[Callable[[], object]] = []
    jobs = [SERVE, dataclasses.replace(SERVE, tpot_s=0.02), dataclasses.replace(SERVE, ttft_s=0.15),
            dataclasses.replace(SERVE, batch=8), dataclasses.replace(SERVE, rps=40)]
    for name, gpu_name in (("Qwen2.5-7B", "H100"), ("Qwen2.5-7B", "L4"), ("DeepSeek-V2-Lite", "A100")):
        m, gpu = catalog.model(name), catalog.gpu(gpu_name)
        for job in jobs:
            s = inference_setup(job, 1, "vllm", "bf16")
            for headroom in (None, 0.3):
                answers.append(lambda m=m, gpu=gpu, job=job, s=s, h=headroom:
                               estimate_inference(m, gpu, job, s, cal, h, describe=False))
    _warm_then_fresh(answers, job_module._searched)


def test_activation_bytes_per_token_read_off_the_memo_equal_those_made_afresh(catalog: Catalog) -> None:
    """Kept per model and the setup fields it reads: setups that differ in each of those fields (and in the layout
    and micro-batch, which it does not read) each get their own figure."""
    base = dataclasses.replace(training_setup(Job(task="finetune", method="lora", samples=1000,
                                                  tokens_per_sample=1024, seq_len=1024), Parallelism(), 2),
                               lora_dropout=0.0)
    variants = [base, dataclasses.replace(base, micro_batch=8, parallel=Parallelism(tp=2, dp=2)),
                dataclasses.replace(base, framework="torchtune"), dataclasses.replace(base, framework="megatron"),
                dataclasses.replace(base, precision="fp32"), dataclasses.replace(base, method="full"),
                dataclasses.replace(base, method="qlora"), dataclasses.replace(base, base_quant="bnb-nf4-dq"),
                dataclasses.replace(base, lora_dropout=0.05), dataclasses.replace(base, lora_targets="qv"),
                dataclasses.replace(base, lora_targets="mlp"), dataclasses.replace(base, flash_attention=False),
                dataclasses.replace(base, seq_len=4096)]
    models = [catalog.model(name) for name in ("Llama-2-7B", "Qwen2.5-7B", "Mixtral-8x7B", "Gemma-2-9B")]
    answers: list[Callable[[], object]] = [lambda m=m, s=s: memory.activation_bytes_per_token(m, s)
                                           for m in models for s in variants]
    _warm_then_fresh(answers, memory._per_token)
    for m in models:  # and each is the plain computation's
        for s in variants:
            assert memory.activation_bytes_per_token(m, s) == memory._activation_bytes_per_token(m, s)


def test_training_parameter_terms_read_off_the_memo_equal_those_made_afresh(catalog: Catalog) -> None:
    """Kept per model and the setup fields they read: setups that differ in each of those fields (and in the
    micro-batch and recomputation, which they do not read) each get their own counts and bytes per parameter."""
    base = training_setup(Job(task="finetune", method="lora", samples=1000, tokens_per_sample=1024, seq_len=1024),
                          Parallelism(dp=4, zero=3), 2)
    variants = [base, dataclasses.replace(base, micro_batch=8, recompute="full"),
                dataclasses.replace(base, parallel=Parallelism(dp=4, zero=1)),
                dataclasses.replace(base, parallel=Parallelism(tp=2, dp=2)), dataclasses.replace(base, method="full"),
                dataclasses.replace(base, method="ptuning"), dataclasses.replace(base, method="freeze"),
                dataclasses.replace(base, precision="fp32"), dataclasses.replace(base, parallel=Parallelism(dp=4)),
                dataclasses.replace(base, parallel=Parallelism(dp=4), framework="deepspeed"),
                dataclasses.replace(base, optimizer="sgd"), dataclasses.replace(base, lora_rank=64),
                dataclasses.replace(base, lora_targets="qv"), dataclasses.replace(base, train_embeddings=True),
                dataclasses.replace(base, method="ptuning", prefix_len=16),
                dataclasses.replace(base, method="freeze", trainable_layers=8)]
    models = [catalog.model(name) for name in ("Llama-2-7B", "Mixtral-8x7B")]
    answers: list[Callable[[], object]] = [lambda m=m, s=s: memory.parameter_terms(m, s)
                                           for m in models for s in variants]
    _warm_then_fresh(answers, memory._parameters)


def test_step_flop_terms_read_off_the_memo_equal_those_made_afresh(catalog: Catalog) -> None:
    """Kept per model and the setup fields they read: setups that differ in each of those fields (and in the
    layout and micro-batch, which they do not read) each get their own FLOPs and shares."""
    base = training_setup(Job(task="finetune", method="lora", samples=1000, tokens_per_sample=1024, seq_len=1024),
                          Parallelism(), 2)
    variants = [base, dataclasses.replace(base, micro_batch=8, parallel=Parallelism(tp=2, dp=2)),
                dataclasses.replace(base, method="full"), dataclasses.replace(base, method="ptuning"),
                dataclasses.replace(base, method="freeze"), dataclasses.replace(base, recompute="full"),
                dataclasses.replace(base, seq_len=4096), dataclasses.replace(base, precision="fp8-mixed"),
                dataclasses.replace(base, lora_rank=64), dataclasses.replace(base, lora_targets="qv"),
                dataclasses.replace(base, train_embeddings=True), dataclasses.replace(base, method="ptuning",
                                                                                       prefix_len=16),
                dataclasses.replace(base, method="freeze", trainable_layers=8)]
    models = [catalog.model(name) for name in ("Llama-2-7B", "Mixtral-8x7B", "Gemma-2-9B")]
    answers: list[Callable[[], object]] = [lambda m=m, s=s: train_time._flop_terms(m, s)
                                           for m in models for s in variants]
    _warm_then_fresh(answers, train_time._flops)
    assert len({train_time._flop_terms(models[0], s) for s in variants}) == len(variants) - 1  # all but the layout


@pytest.mark.parametrize(("name", "job"), [
    ("Llama-2-7B", Job(task="pretrain", tokens=1e12, seq_len=4096)),
    ("Llama-2-7B", Job(task="finetune", method="full", samples=1000, tokens_per_sample=2048, seq_len=2048,
                       framework="litgpt")),
    ("Llama-2-7B", Job(task="finetune", method="full", samples=1000, tokens_per_sample=2048, seq_len=2048,
                       framework="deepspeed")),
    ("Llama-2-7B", Job(task="pretrain", tokens=1e11, seq_len=4096, framework="megatron")),
    ("Mixtral-8x7B", Job(task="pretrain", tokens=1e11, seq_len=4096)),
    ("Qwen2.5-7B", Job(task="finetune", method="qlora", samples=1000, tokens_per_sample=1024, seq_len=1024,
                       framework="torchtune")),
    ("ChatGLM2-6B", Job(task="finetune", method="lora", samples=1000, tokens_per_sample=512, seq_len=512)),
])
def test_memory_and_step_work_made_with_another_micro_batchs_equal_those_made_afresh(catalog: Catalog, name: str,
                                                                                     job: Job) -> None:
    """A training search works out a layout's resident states once (``memory.training_states``) and sizes each
    micro-batch with them, and takes a step's terms that the micro-batch does not change from the first one it
    timed (``step_work(..., like)``): for every layout of 1 to 16 GPUs, both recomputations, micro-batches 1 to 8
    and one or several micro-batches a step, the memory sized with the states of micro-batch 1 without
    accumulation (and without recomputation, where the stack lets both be tried) equals the memory sized from the
    setup alone, and so does the step work made like micro-batch 1's of the same recomputation.
    LitGPT keeps whole gradients while it accumulates under FSDP (``fsdp_no_sync_accumulation``), so its states
    must tell the two apart."""
    m, cal = catalog.model(name), fitted()
    job = job.for_model(m)
    accumulation_changed, compared, layouts = False, 0, PlanMemo()
    for n in (1, 8, 16):
        for par in layouts.layouts(m, n, job):
            states = None
            for recompute in ((None,) if job.framework else ("none", "full")):
                try:
                    first = training_setup(job, par, 1, recompute)
                except InfeasibleError:
                    continue
                first = dataclasses.replace(first, grad_accum=1)
                states = states or memory.training_states(m, first, cal)  # the layout's first recomputation's
                like = train_time.step_work(m, first, cal)
                for mb in (1, 2, 4, 8):
                    for accum in (1, 2, 16):
                        s = dataclasses.replace(first, micro_batch=mb, grad_accum=accum)
                        shared = memory.training_memory_terms(m, s, cal, states)
                        assert shared == memory.training_memory_terms(m, s, cal), (par, recompute, mb, accum)
                        assert train_time.step_work(m, s, cal, like) == train_time.step_work(m, s, cal)
                        compared += 1
                grads = [memory.training_memory_terms(m, dataclasses.replace(first, grad_accum=a), cal).trained[2]
                         for a in (1, 2)]
                accumulation_changed |= grads[0] != grads[1]
    assert compared >= 36  # 12 micro-batch and accumulation pairs for each of 3 layouts or more
    if job.framework == "litgpt":
        assert accumulation_changed


@pytest.mark.parametrize(("name", "job"), [
    ("Llama-2-7B", Job(task="pretrain", tokens=1e12, seq_len=4096)),
    ("Llama-2-7B", Job(task="pretrain", tokens=1e12, seq_len=4096, framework="torchtitan")),
    ("Qwen2.5-7B", Job(task="finetune", method="qlora", samples=1000, tokens_per_sample=1024, seq_len=1024,
                       framework="llama-factory")),
    ("ChatGLM2-6B", Job(task="finetune", method="lora", samples=1000, tokens_per_sample=512, seq_len=512)),
])
def test_the_searchs_setups_are_those_training_setup_makes(catalog: Catalog, name: str, job: Job) -> None:
    """The plan's memo makes each setup as a copy of one made once per recomputation and 16-bit format
    (``job.setup_with``, ``TrainSetup.resized``, which skips ``__init__``): every one equals ``training_setup``'s,
    field by field with the same types (a method given as the string "full" would compare equal to the enum) and
    the same hash, or it refuses as that does — on a GPU with BF16 (H100) and one without (V100: FP16), for every
    layout of 1 to 64 GPUs and every micro-batch."""
    m = catalog.model(name)
    job = job.for_model(m)
    memo, compared = PlanMemo(), 0
    for gpu in (catalog.gpus["H100"], catalog.gpus["V100"]):
        for n in (1, 8, 64):
            for par in memo.layouts(m, n, job):
                for recompute in ((None,) if job.framework else ("none", "full")):
                    for mb in (8, 4, 2, 1):
                        found = memo.found(m, job, par, mb, recompute, gpu, half_format(gpu))
                        try:
                            want = training_setup(job, par, mb, recompute, gpu=gpu)
                        except InfeasibleError as err:
                            assert isinstance(found, InfeasibleError) and found.message == err.message
                            continue
                        assert not isinstance(found, InfeasibleError) and found.setup == want
                        assert hash(found.setup) == hash(want)
                        assert [type(getattr(found.setup, f.name)) for f in dataclasses.fields(want)] == [
                            type(getattr(want, f.name)) for f in dataclasses.fields(want)]
                        compared += 1
    assert compared > 0


@pytest.mark.parametrize(("name", "job"), [
    ("Llama-2-7B", Job(task="pretrain", tokens=1e12, seq_len=4096)),
    ("Mixtral-8x7B", Job(task="pretrain", tokens=1e11, seq_len=4096)),
    ("ChatGLM2-6B", Job(task="finetune", method="full", samples=10_000, tokens_per_sample=2048, seq_len=2048)),
])
def test_a_runs_first_parts_never_exceed_its_time(catalog: Catalog, name: str, job: Job) -> None:
    """The training search stops timing a setup whose first parts (``step_lead``), or those with the model-parallel
    sends and the pipeline bubble (``StepLead.bound``), already reach the fastest found: that is exact only if they
    never add up to more than the run's seconds, and ``step_time`` given them is the same as without. Checked on
    every GPU type, counts from 1 to 512 and every layout (pipelines from 64 GPUs), with FP8 as well."""
    m, cal = catalog.model(name), fitted()
    job = job.for_model(m)
    checked = 0
    for gpu in catalog.gpus.values():
        if not gpu.memory_bandwidth_bytes_per_s or not gpu.half_flops_per_s:
            continue
        for n in (1, 8, 512):
            for par in PlanMemo().layouts(m, n, job):
                try:
                    s = training_setup(job, par, 1, "full", gpu=gpu)
                except InfeasibleError:
                    continue
                for setup in (s, dataclasses.replace(s, precision="fp8-mixed")):
                    w = train_time.step_work(m, setup, cal)
                    lead = train_time.step_lead(m, gpu, setup, job.train_tokens, cal, w)
                    whole = train_time.step_time(m, gpu, setup, job.train_tokens, cal, w)
                    assert train_time.step_time(m, gpu, setup, job.train_tokens, cal, w, lead) == whole
                    assert lead.floor <= lead.bound(m, gpu, setup, cal, w) <= whole.seconds
                    # the search's shortcuts: the GPU-free terms made once per setup, the sends bound and timed
                    lw = train_time.lead_work(setup, job.train_tokens, w)
                    assert train_time.step_lead(m, gpu, setup, job.train_tokens, cal, w, lw) == lead
                    comm = lead.comm(m, gpu, setup, cal, w)
                    assert lead.bound(m, gpu, setup, cal, w, comm) == lead.bound(m, gpu, setup, cal, w)
                    assert train_time.step_time(m, gpu, setup, job.train_tokens, cal, w, lead, comm) == whole
                    assert lead.floor == pytest.approx(sum(v for _, v in whole.parts[:3]), rel=1e-15)
                    checked += 1
    assert checked > 300


def test_links_and_rank_models_read_off_their_memos_equal_those_made_afresh(catalog: Catalog) -> None:
    cal = fitted()
    made: list[Callable[[], object]] = [lambda g=g, n=n: links.links(g, cal, n)
                                        for g in catalog.gpus.values() for n in (1, 2, 8, 16)]
    _warm_then_fresh(made, links._links)
    moe = [catalog.model(name) for name in ("DeepSeek-V3", "Mixtral-8x7B")]
    ranks: list[Callable[[], object]] = [lambda m=m, r=r: ep.rank_model(m, r) for m in moe for r in (2, 4, 8)]
    _warm_then_fresh(ranks, ep._ranks)


def test_fit_only_inference_memory_read_off_the_memo_equals_that_made_afresh(catalog: Catalog) -> None:
    cal = fitted()
    answers: list[Callable[[], object]] = []
    for name in ("Qwen2.5-7B", "DeepSeek-V2-Lite"):
        m = catalog.model(name)
        for spec in (m, dataclasses.replace(m, n_layers=m.n_layers // 2)):
            for gpu in (catalog.gpu("H100"), catalog.gpu("L4")):
                for tp, engine, batch in ((1, "vllm", 1), (1, "vllm", 48), (2, "sglang", 48), (1, "trtllm", 7)):
                    s = dataclasses.replace(inference_setup(SERVE, tp, engine, "bf16"), batch=batch)
                    answers.append(lambda spec=spec, gpu=gpu, s=s: inference_memory(spec, gpu, s, cal, describe=False))
    _warm_then_fresh(answers, memory._fit_only)


def test_a_fit_only_inference_memory_is_the_described_one_less_its_words(catalog: Catalog) -> None:
    """describe=False leaves out the assumptions and the longest-context search, nothing else."""
    cal = fitted()
    for name, gpu_name, tp, batch in (("Qwen2.5-7B", "H100", 1, 64), ("DeepSeek-V2-Lite", "A100", 2, 8),
                                      ("Gemma-2-9B", "L4", 1, 3), ("Llama-2-70B", "RTX4090", 1, 1)):
        s = dataclasses.replace(inference_setup(SERVE, tp, "vllm", "bf16"), batch=batch)
        m, gpu = catalog.model(name), catalog.gpu(gpu_name)
        full, lean = inference_memory(m, gpu, s, cal), inference_memory(m, gpu, s, cal, describe=False)
        assert lean.breakdown == full.breakdown and lean.band == full.band and not lean.assumptions
        assert full.capacity is not None and full.capacity.max_context_tokens is not None
        assert lean.capacity == dataclasses.replace(full.capacity, max_context_tokens=None)
        assert "max_context_tokens" in full.as_dict("total_bytes")
        assert "max_context_tokens" not in lean.as_dict("total_bytes")


def test_a_plans_training_setups_are_made_once_and_keep_each_gpus_16_bit_format(catalog: Catalog) -> None:
    """The memo serves a V100 (no BF16) its FP16 setup though an H100 asked first, and repeats the refusal of a
    layout whose ranks exceed the global batch as often as it is asked."""
    m = catalog.model("Llama-2-7B")
    job = Job(task="pretrain", tokens=1e10, seq_len=4096).for_model(m)
    memo = PlanMemo()
    par = Parallelism(dp=8, zero=3)
    for gpu_name in ("H100", "V100", "H100", "T4", "A100"):
        gpu = catalog.gpu(gpu_name)
        got = memo.entry(job, par, 2, "none", gpu, half_format(gpu)).setup
        assert got == training_setup(job, par, 2, "none", gpu=gpu)
        assert got.precision == ("fp16-mixed" if gpu_name in ("V100", "T4") else "bf16-mixed")
    assert memo.entry(job, par, 2, "none", catalog.gpu("A100"), "bf16") is memo.entry(
        job, par, 2, "none", catalog.gpu("H100"), "bf16")  # one entry for every BF16 GPU: sized once
    wide = Parallelism(dp=2048, zero=3)  # 2048 ranks × 8 sequences > 1024 sequences of 4096 tokens (4M tokens)
    for _ in range(3):
        with pytest.raises(InfeasibleError, match="exceed the global batch") as info:
            memo.entry(job, wide, 8, "none", catalog.gpu("H100"), "bf16")
        assert info.value.field == "--global-batch"
        kept = memo.entries[(wide, 8, "none", "bf16")]
        assert info.value is not kept and kept.__traceback__ is None  # see test_a_plan_leaves_no_reference_cycles


@pytest.mark.parametrize(("name", "job"), [
    ("ChatGLM2-6B", Job(task="finetune", method="lora", samples=10_000, tokens_per_sample=1088, seq_len=1088)),
    ("Llama-2-7B", Job(task="pretrain", tokens=1e12, seq_len=4096)),
    ("Qwen2.5-7B", Job(task="serve", rps=5, prompt_len=1000, output_len=300))], ids=["finetune", "pretrain", "serve"])
def test_a_plan_leaves_no_reference_cycles(catalog: Catalog, name: str, job: Job) -> None:
    """What a plan worked out is freed when it returns, without the garbage collector: a memo that kept an error's
    traceback (whose frames hold the memo) kept every estimate of the plan alive until the collector ran."""
    from gpuplan.plan.planner import Constraints, plan

    m = catalog.model(name)
    plan(catalog, m, job, Constraints())  # the catalog's own caches filled first
    gc.collect()
    gc.disable()
    try:
        plan(catalog, m, job, Constraints())
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_candidates_made_by_their_slots_equal_those_the_dataclass_makes(catalog: Catalog) -> None:
    """The pricing stage sets a candidate's slots itself (pricing.Pricer.price): every field must be set, to what
    ``Candidate(...)`` would hold, on spot and on-demand offers alike (a spot run's seconds carry its overhead)."""
    from gpuplan.plan.candidates import Candidate, offer_candidates
    from gpuplan.plan.costing import rental_cost

    m = catalog.model("Qwen2.5-7B")
    e = estimate_inference(m, catalog.gpu("H100"), SERVE, inference_setup(SERVE, 1, "vllm", "bf16"), fitted())
    offers = [o for o in catalog.offers if o.gpu == "H100"][:40]
    assert {o.pricing for o in offers} >= {"spot", "on-demand"}
    costs = [rental_cost(catalog, o, 7200.0, "USD") for o in offers]
    made = offer_candidates(e, 7200.0, costs, offers)
    want = [Candidate(e, 7200.0 + c.spot_overhead_seconds, c, o.provider, o)
            for o, c in zip(offers, costs, strict=True)]
    assert made == want
    assert [x.seconds for x, o in zip(made, offers, strict=True) if o.pricing == "spot"] == [7920.0] * sum(
        o.pricing == "spot" for o in offers)  # 7200 s + the 10 % spot overhead
    assert all(x.platform is None and x.calendar_seconds == 0.0 and x.notes == () for x in made)


@pytest.mark.parametrize("enabled", [True, False])
def test_pricing_leaves_the_garbage_collector_as_it_found_it(catalog: Catalog, enabled: bool) -> None:
    """The collector is held off while candidates are made, then back as it was: on, or still off when the
    caller had turned it off; and on again after an error inside."""
    from gpuplan.memo import collector_paused

    if not enabled:
        gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(ZeroDivisionError), collector_paused():
            _ = 1 / 0
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_replica_rates_read_off_the_memo_equal_those_made_afresh(catalog: Catalog) -> None:
    """A replica's largest rate within the targets, kept per configuration and targets: a key missing the targets,
    the setup's batch cap or the expert-parallel ranks would hand one configuration another's rate."""
    from gpuplan.plan.serving import Targets, _rates, replica_rate

    cal = fitted()
    answers: list[Callable[[], object]] = []
    for name, gpu_name in (("Qwen2.5-7B", "H100"), ("Qwen2.5-7B", "L4"), ("DeepSeek-V2-Lite", "A100")):
        m, gpu = catalog.model(name), catalog.gpu(gpu_name)
        for cap in (32, 256):
            s = dataclasses.replace(inference_setup(SERVE, 1, "vllm", "bf16"), max_num_seqs=cap)
            for targets in (Targets(ttft_p99_s=2.0, tpot_p99_s=0.05), Targets(ttft_p99_s=0.5, tpot_p99_s=0.03)):
                answers.append(lambda m=m, gpu=gpu, s=s, t=targets: replica_rate(m, gpu, s, t, cal))
    m = catalog.model("DeepSeek-V2-Lite")
    s = inference_setup(SERVE, 1, "vllm", "bf16")
    answers += [lambda r=r: replica_rate(m, catalog.gpu("H100"), s, Targets(ttft_p99_s=2.0), cal, r) for r in (1, 2)]
    _warm_then_fresh(answers, _rates)


def test_fleet_mixes_read_off_the_memo_equal_those_solved_afresh() -> None:
    """The mix kept per problem answers as a fresh solve: a key missing the demand, a pool's cost, units or
    domains, the failures or the budget would show (the solve's own seconds aside)."""
    from gpuplan.plan.serving import Pool, _mixes, solve_mix

    def pools(cost_b: float, cap: int | None) -> list[Pool]:  # config 0 in zones a and b, config 1 in zone a
        return [Pool(0, 1.0, 1.0, frozenset({"zone:a"})), Pool(0, 1.1, 1.0, frozenset({"zone:b"}), cap),
                Pool(1, cost_b, 2.0, frozenset({"zone:a"}))]

    answers: list[Callable[[], object]] = []
    for demand in ([25.0], [40.0]):
        for cost_b, cap in ((1.5, None), (3.0, None), (3.0, 1)):
            for failures in ([frozenset()], [frozenset(), frozenset({"zone:a"})]):
                for budget in (None, 4.5):
                    answers.append(lambda d=demand, c=cost_b, k=cap, f=failures, b=budget: (
                        lambda mix: mix and dataclasses.replace(mix, seconds=0.0))(
                        solve_mix([[10.0], [20.0]], d, pools(c, k), f, b)))
    _warm_then_fresh(answers, _mixes)


class _Both:
    """Two memos emptied together."""

    def __init__(self, *memos: IdentityMemo[Any]) -> None:
        self.memos = memos

    def clear(self) -> None:
        for memo in self.memos:
            memo.clear()


def _plan_answer(catalog: Catalog, m: ModelSpec, job: Job, c: Constraints) -> Callable[[], object]:
    """A plan of ``m`` for ``job`` under constraints ``c``, as what a user sees of it: the ranked and Pareto rows,
    the counts and the alternatives."""
    from gpuplan.plan.planner import plan

    def one() -> object:
        r = plan(catalog, m, job, c)
        return ([(x.label(), x.cost.total, x.time_s, x.estimate.setup) for x in (*r.ranked, *r.pareto)],
                r.considered, r.fitting_configs, r.nothing_fits, r.alternatives)
    return one


def test_plans_of_one_job_under_other_constraints_share_setups_and_answer_as_afresh(catalog: Catalog) -> None:
    """The training setups one plan sized (``PlanMemo.shared``) and its answers per GPU type and count, with the
    refusals counted (``enumeration._kept_training``), serve the next plan of the same model and job: each plan,
    read after the others filled the memos, equals the plan made with them emptied."""
    from gpuplan.plan import enumeration
    from gpuplan.plan.planner import Constraints

    m = catalog.model("Llama-2-7B")
    job = Job(task="pretrain", tokens=1e11, seq_len=4096)
    constraints = (Constraints(), Constraints(market="cn", currency="CNY"), Constraints(gpus=("H100", "A100")),
                   Constraints(objective="time", max_gpus=64), Constraints(headroom=0.2),
                   Constraints(gpus=("H100",), max_gpus=1))  # the last: nothing fits, the refusals counted

    both = _Both(enumeration._shared_memos, enumeration._training_answers)
    _warm_then_fresh([_plan_answer(catalog, m, job, c) for c in constraints], both)  # type: ignore[arg-type]
    both.clear()
    for c in constraints[:3]:  # plans that fit, with the same headroom (no suggestion plans another job)
        _plan_answer(catalog, m, job, c)()
    assert len(enumeration._shared_memos) == 1  # one model, job, calibration and headroom


@pytest.mark.parametrize("job", [Job(task="infer", requests=100_000, prompt_len=1000, output_len=300), SERVE],
                         ids=["infer", "serve"])
def test_inference_plans_read_off_the_estimate_memo_equal_those_made_afresh(catalog: Catalog, job: Job) -> None:
    """best_inference's estimates are kept by model, GPU, calibration, job, TP, engine, format and headroom: plans
    under other engines, formats, markets and headrooms read after one another equal the plans made afresh."""
    from gpuplan.plan import enumeration
    from gpuplan.plan.planner import Constraints

    m = catalog.model("Qwen2.5-7B")
    constraints = (Constraints(), Constraints(engine="sglang"), Constraints(quant="awq-int4"),
                   Constraints(market="cn", currency="CNY"), Constraints(headroom=0.3, max_gpus=2))

    _warm_then_fresh([_plan_answer(catalog, m, job, c) for c in constraints], enumeration._inference_estimates)


def test_offered_counts_read_off_the_memo_equal_those_made_afresh(catalog: Catalog) -> None:
    from gpuplan.plan import pricing
    from gpuplan.plan.candidates import Constraints

    sets = [pricing.usable_offers(catalog, c, None, serving) for c in (Constraints(), Constraints(market="cn"))
            for serving in (False, True)]
    counts = [(1, 2, 4, 8), (1, 2, 4, 8, 16, 32, 64)]
    answers: list[Callable[[], object]] = [
        lambda o=o, g=g, n=n, s=s: pricing.offered_counts(o, g, n, s)
        for o, s in zip(sets, (False, True, False, True), strict=True) for g in ("MI300X", "H100", "RTX4090")
        for n in counts]
    _warm_then_fresh(answers, pricing._offered_counts)
    # MI300X is sold only as 8-GPU instances (the bundled offers), and only outside the cn market: training takes
    # whole instances (8, and 16+ as several), a serving replica may take a share of one (1, 2 or 4 of its 8)
    training, serving = sets[0], sets[1]
    assert pricing.offered_counts(training, "MI300X", counts[1], False) == {8, 16, 32, 64}
    assert pricing.offered_counts(serving, "MI300X", counts[1], True) == {1, 2, 4, 8, 16, 32, 64}
    assert pricing.offered_counts(sets[3], "MI300X", counts[1], True) == frozenset()


def test_offered_counts_ask_once_for_all_multinode_counts_and_agree_with_offered(catalog: Catalog) -> None:
    """offered_counts asks :func:`pricing.offered` once for every count beyond 8 GPUs (8-GPU instances, n/8 of
    them); for every GPU of the catalog, market and serving or not, the counts are those offered() finds one by
    one."""
    from gpuplan.plan import pricing
    from gpuplan.plan.candidates import Constraints

    counts = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
    multinode = 0
    for c in (Constraints(), Constraints(market="cn")):
        for serving in (False, True):
            offers = pricing.usable_offers(catalog, c, None, serving)
            for gpu in catalog.gpus:
                want = {n for n in counts if pricing.offered(offers, gpu, n, serving)}
                assert pricing.offered_counts(offers, gpu, counts, serving) == want
                multinode += 2048 in want
    assert multinode  # the shortcut answered for some GPU


def test_setups_and_batched_setups_read_off_their_memos_equal_those_made_afresh() -> None:
    from gpuplan.plan import enumeration

    jobs = [SERVE, Job(task="infer", requests=1000, prompt_len=500, output_len=100)]
    setups: list[Callable[[], object]] = [
        lambda j=j, tp=tp, e=e, f=f: enumeration._inference_setup(j, tp, e, f)
        for j in jobs for tp in (1, 2, 8) for e in ("vllm", "sglang", "trtllm") for f in ("bf16", "fp8")]
    _warm_then_fresh(setups, enumeration._setups)
    # TensorRT-LLM with FP8 weights keeps an FP8 KV cache (inference_setup's default); the others a 16-bit one
    assert enumeration._inference_setup(SERVE, 1, "trtllm", "fp8").kv_dtype == "fp8"
    assert enumeration._inference_setup(SERVE, 1, "vllm", "fp8").kv_dtype == "bf16"
    s = enumeration._inference_setup(SERVE, 2, "vllm", "bf16")
    batches: list[Callable[[], object]] = [lambda b=b: infer_speed.batched(s, b) for b in (1, 2, 7, 256)]
    _warm_then_fresh(batches, infer_speed._batched)
    assert infer_speed.batched(s, 7).batch == 7 and infer_speed.batched(s, 7).tp == 2
    assert infer_speed.batched(s, 7) is infer_speed.batched(s, 7)  # one object: memos keyed by it compare no fields


def test_a_speed_with_another_ttft_is_the_dataclass_replacement() -> None:
    sp = infer_speed.Speed(0.2, 0.03, 16, 480.0, 1.5, "memory", fitted().band("inference_latency"))
    assert sp.with_ttft(0.25) == dataclasses.replace(sp, ttft_s=0.25)
    assert {f.name for f in dataclasses.fields(sp)} == {"ttft_s", "tpot_s", "batch", "output_tokens_per_s",
                                                         "requests_per_s", "bound", "band"}  # a new one: copy it too
