"""One job on one configuration (``gpuplan.requests.estimate_config``, what ``gpuplan estimate`` runs): the
verdict agrees with the engine's own capacity, a chosen batch fits at that batch, and options that do not
apply to the task are refused rather than ignored."""

from __future__ import annotations

import pytest

from gpuplan.catalog import Catalog
from gpuplan.errors import InputError
from gpuplan.requests import estimate_config, estimate_options, make_job


def test_vllm_without_room_for_one_sequence_does_not_fit(catalog: Catalog) -> None:
    # 70B in FP8 (~66 GiB of weights) on an 80 GB H100: vLLM reserves 90 % of the GPU, and what the weights and
    # buffers leave of it cannot hold one 4,352-token sequence's KV cache (320 KiB per token), so vLLM would
    # refuse to start although the workload's own total is under 80 GB
    m, g = catalog.model("Llama-3.1-70B"), catalog.gpu("H100")
    e = estimate_config(m, g, make_job("infer", prompt=4096, output=256, quant="fp8"))
    assert e.memory.capacity.max_concurrent_seqs == 0
    assert e.needed_bytes <= e.capacity_bytes  # the sum alone would have said "fits"
    assert not e.fits and e.shortfall_bytes > 0
    roomy = estimate_config(m, g, make_job("infer", prompt=1024, output=256, quant="fp8"))
    assert roomy.fits and roomy.memory.capacity.max_concurrent_seqs >= 1


@pytest.mark.parametrize("engine", ["hf", "vllm", "sglang"])
def test_batch_inference_picks_a_batch_that_fits_at_that_batch(catalog: Catalog, engine: str) -> None:
    # transformers runs the whole batch's prefill at once: the batch-1 KV capacity overstates what fits
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("L4" if engine == "sglang" else "H100")
    e = estimate_config(m, g, make_job("infer", requests=100_000), engine=engine)
    assert e.fits
    assert 1 < e.setup.batch <= e.memory.capacity.max_concurrent_seqs
    bigger = estimate_config(m, g, make_job("infer", requests=100_000, batch=e.setup.batch + 1), engine=engine)
    assert engine != "hf" or not bigger.fits  # for hf it is the largest that fits (vLLM/SGLang: the engine cap)


def test_longest_context_stops_at_the_model_positions(catalog: Catalog) -> None:
    m = catalog.model("Mistral-7B-v0.2")
    e = estimate_config(m, catalog.gpu("H100"), make_job("infer", prompt=16000, output=256))
    assert e.memory.capacity.max_context_tokens == m.max_positions


def test_serving_at_a_given_concurrency(catalog: Catalog) -> None:
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("H100")
    assert estimate_config(m, g, make_job("serve", batch=32)).speed.batch == 32  # type: ignore[union-attr]
    assert estimate_config(m, g, make_job("serve")).speed.batch > 32  # type: ignore[union-attr]


@pytest.mark.parametrize(("task", "job_kw", "config_kw", "field"), [
    ("infer", {}, {"zero": 3}, "--zero"),
    ("infer", {}, {"recompute": "full"}, "--recompute"),
    ("infer", {"samples": 1000, "tokens_per_sample": 512}, {}, "--samples"),
    ("infer", {"method": "lora"}, {}, "--method"),
    ("serve", {"requests": 10}, {}, "--requests"),
    ("finetune", {"prompt": 2048, "samples": 1000, "tokens_per_sample": 512}, {}, "--prompt"),
    ("finetune", {"samples": 1000, "tokens_per_sample": 512}, {"engine": "sglang"}, "--engine"),
    ("finetune", {"samples": 1000, "tokens_per_sample": 512}, {"kv_dtype": "fp8"}, "--kv-dtype"),
    ("finetune", {"samples": 1000, "tokens_per_sample": 512, "tokens": 1e9}, {}, "--tokens"),
    ("finetune", {"method": "qlora", "quant": "int8"}, {}, "--quant"),
    ("finetune", {"method": "full", "quant": "awq-int4"}, {}, "--quant"),
    ("finetune", {"method": "full", "lora_rank": 8}, {}, "--lora-rank"),
    ("finetune", {"method": "lora"}, {"prefix_len": 64}, "--prefix-len"),
    ("finetune", {"method": "lora"}, {"mtp_layers": 1}, "--mtp-layers"),  # MTP trains a block: full training only
    ("infer", {}, {"mtp_layers": 1}, "--mtp-layers"),
    ("finetune", {"method": "lora"}, {"zero": 3}, "--zero"),  # ZeRO on one GPU has nothing to shard over
    ("pretrain", {"method": "lora", "tokens": 1e9}, {}, "--method"),
    ("infer", {}, {"kv_dtype": "int2"}, "--kv-dtype"),
    ("finetune", {"method": "lora"}, {"engine": "banana"}, "--engine"),
])
def test_options_that_do_not_apply_are_refused(catalog: Catalog, task: str, job_kw: dict, config_kw: dict,
                                                field: str) -> None:
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("H100")
    with pytest.raises(InputError) as err:
        estimate_config(m, g, make_job(task, **job_kw), **config_kw)
    assert err.value.field == field
    assert err.value.fix


def test_ttft_and_tpot_carry_their_band(catalog: Catalog) -> None:
    e = estimate_config(catalog.model("Llama-3.1-8B"), catalog.gpu("H100"), make_job("infer"))
    sp = e.as_dict()["speed"]
    assert sp["band"]["class"] == "inference_latency"
    assert sp["ttft_low_seconds"] < sp["ttft_seconds"] < sp["ttft_high_seconds"]
    assert sp["tpot_low_seconds"] < sp["tpot_seconds"] < sp["tpot_high_seconds"]


@pytest.mark.parametrize(("quant", "engine", "kv_dtype", "pp", "field"), [
    ("bnb-nf4", "trtllm", "bf16", 1, "--quant"),  # TensorRT-LLM has no bitsandbytes kernels
    ("int8-wo", "llamacpp", "bf16", 1, "--quant"),  # llama.cpp loads GGUF files
    (None, "hf", "fp8", 1, "--kv-dtype"),  # transformers keeps the KV cache in the model dtype
    (None, "vllm", "bf16", 64, "--pp"),  # more stages than Llama-3.1-8B's 32 layers
])
def test_engine_and_format_combinations_that_do_not_run(catalog: Catalog, quant: str | None, engine: str,
                                                        kv_dtype: str, pp: int, field: str) -> None:
    with pytest.raises(InputError) as err:
        estimate_config(catalog.model("Llama-3.1-8B"), catalog.gpu("H100"), make_job("infer", quant=quant),
                        engine=engine, kv_dtype=kv_dtype, pp=pp)
    assert err.value.field == field


def test_counts_written_with_a_unit_are_whole(catalog: Catalog) -> None:
    from gpuplan.units import parse_count

    # 2.01 × 1000 is 2009.9999… in floating point: still the whole count 2010
    assert make_job("finetune", samples=parse_count("2.01k", "--samples"), tokens_per_sample=512).samples == 2010
    assert make_job("infer", requests=parse_count("1.015M", "--requests")).requests == 1_015_000


def test_a_chosen_sequence_length_fits_the_model(catalog: Catalog) -> None:
    # GPT-2 has 1,024 positions: the default 2,048-token sequence is cut to it; a given one is refused
    m, g = catalog.model("GPT-2-124M"), catalog.gpu("H100")
    e = estimate_config(m, g, make_job("pretrain", tokens=1e9))
    assert e.setup.seq_len == 1024
    with pytest.raises(InputError) as err:
        estimate_config(m, g, make_job("pretrain", tokens=1e9, seq_len=2048))
    assert err.value.field == "--seq-len"


def test_serving_at_a_batch_that_does_not_fit_keeps_that_batch(catalog: Catalog) -> None:
    e = estimate_config(catalog.model("Llama-3.1-70B"), catalog.gpu("H100"), make_job("serve", batch=64))
    assert not e.fits
    assert e.setup.batch == 64 and e.speed is not None and e.speed.batch == 64


def test_planned_layouts_never_use_zero_on_one_data_parallel_rank(catalog: Catalog) -> None:
    from gpuplan.plan.enumeration import training_layouts

    job = make_job("pretrain", tokens=1.4e12)
    layouts = training_layouts(catalog.model("LLaMA-65B"), 64, job)
    assert any(p.pp > 1 and p.dp == 1 for p in layouts)
    assert all(p.zero == 0 for p in layouts if p.dp == 1)


def test_serving_concurrency_fits_at_that_concurrency(catalog: Catalog) -> None:
    # transformers' prefill activations and logits grow with the batch: the batch-1 KV capacity overstates it
    e = estimate_config(catalog.model("Llama-3.1-8B"), catalog.gpu("A10"), make_job("serve"), engine="hf")
    assert e.fits and e.replicas >= 1


def test_shortfall_counts_what_exceeds_the_engine_share(catalog: Catalog) -> None:
    # Qwen2.5-72B at TP2 on 40 GB A100s with SGLang: the weights alone (~68 GiB per GPU) exceed the reserved share
    # (~36 GiB), so the shortfall is the KV cache plus that excess, not the KV cache alone (on 80 GB H100s the two
    # were within a fitted buffer of each other)
    e = estimate_config(catalog.model("Qwen2.5-72B"), catalog.gpu("A100"), make_job("infer"), tp=2, engine="sglang")
    budget = e.memory.capacity.kv_budget_bytes
    kv = e.memory.breakdown.get("kv_cache")
    assert not e.fits and budget < 0
    assert e.shortfall_bytes >= kv - budget > kv  # more than the KV cache alone
    assert e.as_dict()["memory_shortfall_bytes"] == pytest.approx(e.shortfall_bytes)


def test_tasks_and_methods_are_enums_that_read_their_text_and_refuse_others() -> None:
    import json

    from gpuplan.errors import InputError
    from gpuplan.types import Job, Method, Task

    job = Job(task="finetune", method="qlora", samples=10, tokens_per_sample=10)
    assert job.task is Task.FINETUNE and job.method is Method.QLORA
    assert job.is_training and job.method.adapters and job.method.low_rank
    assert not Method.PTUNING.low_rank and Method.PTUNING.adapters and not Method.FULL.adapters
    assert json.dumps({"task": job.task}) == '{"task": "finetune"}'  # JSON values are the text, unchanged
    with pytest.raises(InputError, match="--task: 'train' is not one of: finetune, pretrain, infer, serve"):
        Job(task="train")
    with pytest.raises(InputError, match="--method"):
        Job(task="finetune", method="badam")


@pytest.mark.parametrize(("task", "kw", "field"), [
    ("pretrain", {"samples": 1000, "tokens_per_sample": 0.4}, "--tokens-per-sample"),
    ("finetune", {"samples": 10, "tokens_per_sample": 1e-300}, "--tokens-per-sample"),
    ("finetune", {"tokens": 0.5}, "--tokens"),
])
def test_less_than_one_token_is_refused_naming_the_field(task: str, kw: dict, field: str) -> None:
    # a fractional sample length once became a 0-token sequence, and a plan divided by it (a 500 over HTTP)
    with pytest.raises(InputError) as err:
        make_job(task, **kw)
    assert err.value.field == field and "less than one token" in err.value.message


def test_mtp_layers_add_a_block_and_a_head_per_depth_and_say_so(catalog: Catalog) -> None:
    # Llama-2-7B, seq 4096, one MTP depth: one more layer (202 M weights) + the 2h->h projection (34 M) + the head
    # (131 M) is 367 M weights on 6.6 G, with one more layer's attention: about 5.5 % more FLOPs per token
    m, g = catalog.model("Llama-2-7B"), catalog.gpu("H100")
    job = make_job("pretrain", tokens=1e9, seq_len=4096)
    base = estimate_config(m, g, job, n_gpus=8)
    mtp = estimate_config(m, g, job, n_gpus=8, mtp_layers=1)
    flops = [next(a.value for a in e.time.assumptions if a.name == "FLOPs per token") for e in (base, mtp)]
    ratio = float(flops[1].split()[0]) / float(flops[0].split()[0])
    assert 1.04 < ratio < 1.07
    assert mtp.time.total > base.time.total
    assert any(a.name == "multi-token prediction" for a in mtp.time.assumptions)
    assert not any(a.name == "multi-token prediction" for a in base.time.assumptions)
    assert estimate_options(mtp)["--mtp-layers"] == 1 and "--mtp-layers" not in estimate_options(base)
