"""Calibration rows mapped from their columns (bench/calib_rows.py, bench/calib.py): shapes rebuilt from a row
match the count the source publishes, unstated conditions take the framework's default and are not fitted on,
and the fit caps how much one source weighs."""

from __future__ import annotations

import csv
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from calib import (  # noqa: E402
    Case,
    _inference_case,
    _inference_memory_case,
    _stated_limit,
    _with_limits,
    mlperf_output_lengths,
    prompt_length_cv2,
    sharegpt_output_lengths,
    training_memory_predictor,
)
from calib import _precision as _speed_precision  # noqa: E402
from calib_rows import _finetune_case, _int, _mpt_benchmark, _precision, _pretrain_case  # noqa: E402
from fit import FIT_ROWS_PER_SOURCE, fit_rows  # noqa: E402

from gpuplan.catalog import Catalog, load_catalog  # noqa: E402
from gpuplan.catalog.hfconfig import parse_config  # noqa: E402
from gpuplan.estimate.calibration import Calibration, fitted  # noqa: E402
from gpuplan.estimate.engines import release, token_budget, vllm_v0  # noqa: E402
from gpuplan.estimate.infer_speed import max_batch, throughput  # noqa: E402
from gpuplan.estimate.load import at_rate, finite_run, uniform_run  # noqa: E402
from gpuplan.estimate.memory import inference_memory, training_memory  # noqa: E402
from gpuplan.estimate.params import count_params  # noqa: E402
from gpuplan.estimate.train_time import attention_kernel  # noqa: E402
from gpuplan.types import InferSetup  # noqa: E402


def _rows(name: str) -> list[dict[str, str]]:
    with (BENCH / "calibration" / name).open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def cases(calibration_cases: tuple[list[Case], list[Any]]) -> list[Case]:
    return calibration_cases[0]


def test_mpt_benchmark_shapes_count_what_llm_foundry_publishes() -> None:
    # llm-foundry's benchmark table prints NumParams for every configuration (it grows with the sequence
    # length: learned positions); the rebuilt shape must count exactly that, biases included
    rows = [r for r in _rows("training_more.csv") if r["source_group"] == "llm-foundry-mpt-bench"]
    assert len(rows) > 400
    for r in rows:
        spec = _mpt_benchmark(r, _int(r["seq_len"]) or 0)
        assert spec is not None and count_params(spec).total == int(r["n_params"]), r["id"]


def test_an_mpt_config_with_biases_is_read_not_refused() -> None:
    base = {"model_type": "mpt", "d_model": 512, "n_heads": 8, "n_layers": 4, "vocab_size": 1000,
            "max_seq_len": 256, "expansion_ratio": 4}
    plain = count_params(parse_config(base, "mpt")).total
    biased = count_params(parse_config({**base, "no_bias": False}, "mpt")).total
    # per layer: q,k,v (3h) + out (h) + up (4h) + down (h) biases and two LayerNorm biases (2h); + the final norm
    assert biased - plain == (11 * 4 + 1) * 512


def test_an_unstated_condition_takes_the_framework_default_and_is_not_fitted_on(catalog: Catalog) -> None:
    mapped = ((r, _finetune_case(catalog, r)[0]) for r in _rows("finetune_more.csv")
              if r["grad_checkpointing"] in ("yes", "no"))
    row, stated = next((r, c) for r, c in mapped if c is not None and c.fit)
    unstated, _ = _finetune_case(catalog, {**row, "grad_checkpointing": "unstated"})
    assert unstated is not None and not stated.assume
    assert not unstated.fit and "default" in unstated.assume


def test_an_hf_qlora_row_that_leaves_checkpointing_unstated_runs_peft_kbit_default(catalog: Catalog) -> None:
    # Google's OpenLLaMA-7B report (HF + PEFT, batch 2): QLoRA grows 6.94 -> 7.57 GB from 256 to 512 tokens, LoRA
    # 20.5 -> 28.2 GB; only checkpointed layers grow that little (PEFT's prepare_model_for_kbit_training turns
    # checkpointing on for a quantized base), so the QLoRA rows map to full recomputation, the LoRA rows to none
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}

    def mapped(key: str) -> Case:
        case, why = _finetune_case(catalog, rows[f"ftm-vertex-openllama7b-{key}"])
        assert case is not None, why
        return case

    short, long, lora = mapped("qlora-seq256"), mapped("qlora-seq512"), mapped("lora-seq256")
    assert short.meta["setup"].recompute == "full" and "quantized base" in short.assume
    assert lora.meta["setup"].recompute == "none"
    rise = long.predict(fitted()) - short.predict(fitted())
    assert 0.3e9 < rise < 2 * (long.measured - short.measured)  # measured: 0.63 GB


def test_a_fit_counts_at_most_forty_rows_of_one_source_per_class(cases: list[Case]) -> None:
    used = fit_rows(cases)
    per: dict[tuple[str, str], int] = {}
    for c in used:
        per[(c.group, c.cls)] = per.get((c.group, c.cls), 0) + 1
        assert c.fit
    assert max(per.values()) == FIT_ROWS_PER_SOURCE
    # a source that publishes many times the cap (GPUStack: 327 mapped rows without its speculative-decoding runs)
    assert sum(1 for c in cases if c.group == "GPUStack performance lab") > 5 * FIT_ROWS_PER_SOURCE


def test_every_new_row_names_its_source_group(cases: list[Case]) -> None:
    for c in cases:
        if c.id.startswith(("srv-", "lcp-", "ftm-", "trm-", "imm-", "b1-")):
            assert c.group and not c.group.startswith(("srv", "lcp", "ftm", "trm", "imm")), c.id


def test_two_copies_of_one_table_are_one_source_group(cases: list[Case]) -> None:
    # discussion #4167's Apple table, read through a gist (lcp-0720..) and through a third party's notes (lcp-3001..):
    # a fold that leaves the table out must leave out both copies
    groups = {c.group for c in cases if c.id in ("lcp-0721", "lcp-3016")}
    assert groups == {"llama.cpp Apple Silicon discussion #4167"}
    # the scoreboards of different backends stay apart
    assert len({c.group for c in cases if "scoreboard" in c.group}) == 3


def test_fsdp_layouts_shard_as_their_zero_stage() -> None:
    from calib_rows import _fsdp_stage, _workers

    assert _fsdp_stage("FSDP FULL_SHARD (accelerate config)") == 3  # weights, gradients and states sharded
    assert _fsdp_stage("FSDP (config devices=2; LitGPT FSDPStrategy)") == 3  # FULL_SHARD is the default
    assert _fsdp_stage("FSDP SHARD_GRAD_OP") == 2
    assert _fsdp_stage("FSDP NO_SHARD") == 0
    assert _fsdp_stage("single-device (config devices=1)") == 0
    assert _workers("FSDP (config devices=2; LitGPT FSDPStrategy); table says 4xA10G", 4) == 2
    assert _workers("DeepSpeed ZeRO-3", 8) == 8


def test_a_rig_without_its_nvlink_bridge_and_with_narrow_pcie_lanes_is_mapped_as_it_ran(catalog: Catalog) -> None:
    # Answer.AI's dual-3090 rig: "two 3090s (without NVLink) ... and an older motherboard", "slow PCI lanes"
    # (benchmarks_03_2024.md). The catalog's RTX 3090 has a 2-way bridge; this machine did not. Its no-shard (DDP)
    # run sends only the LoRA gradients over that link and maps; its full-shard runs gather the whole base over it
    # every micro-step, at a lane width the source does not give, and are listed with that reason
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}
    ddp, why = _finetune_case(catalog, rows["ftm-answerai-llama2-7b-lora-ddp-b4-ctx2048-time"])
    assert ddp is not None, why
    assert ddp.meta["gpu"].name == "RTX3090" and not ddp.meta["gpu"].has_fast_interconnect
    assert catalog.gpu("RTX3090").has_fast_interconnect  # the catalog's part keeps its bridge
    fsdp, why = _finetune_case(catalog, rows["ftm-answerai-llama2-7b-lora-fsdp-b1-ctx512-time"])
    assert fsdp is None and "width not stated" in why
    memory, why = _finetune_case(catalog, rows["ftm-answerai-llama2-7b-lora-fsdp-b1-ctx512-mem"])
    assert memory is not None, why  # the link does not change what the card holds


def test_a_finetune_row_runs_the_tp_pp_layout_it_names(catalog: Catalog) -> None:
    # Megatron-Bridge 26.06 LoRA, Llama-3-70B on 8 H100: "TP 2, PP 4, CP 1, VP 20" leaves one data-parallel rank;
    # read as 8-way data parallelism, each GPU would hold the whole model and run a quarter of the step's tokens
    from calib_rows import _finetune_parallel

    row = next(r for r in _rows("finetune_more.csv") if r["id"] == "ftm-mb2606-llama3-70b-lora-h100-fp8-8gpu-tokgpu")
    case, why = _finetune_case(catalog, row)
    assert case is not None, why
    par = case.meta["setup"].parallel
    assert (par.tp, par.pp, par.dp, par.vp, par.n_gpus) == (2, 4, 1, 20, 8)
    assert _finetune_parallel("TP 2, FSDP2 over DP 4, sequence parallel off", 8, 3).sequence_parallel is False
    # XTuner's sequence parallelism (ms-swift's runs XTuner's) splits each sequence over its group: no TP degree
    ulysses = _finetune_parallel("DDP + sequence parallel size 2", 4, 0)
    assert (ulysses.tp, ulysses.cp, ulysses.dp) == (1, 2, 2)
    with pytest.raises(ValueError):
        _finetune_parallel("TP 4, PP 4", 8, 0)


def test_mlperf_lora_throughput_maps_and_its_time_to_train_does_not(catalog: Catalog) -> None:
    # MLPerf Training v4.0, NVIDIA's llama2_70b_lora on 8 DGX H100 (config_DGXH100_8x8x1xtp4pp1cp2.sh): TP 4 × CP 2
    # leaves 8 data-parallel ranks; samples are GovReport packed to 8,192 tokens, so 12.54 samples/s is 102,758
    # tokens/s. Its time to train holds the evaluations between blocks (14 % of it), which gpuplan does not time
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}
    case, why = _finetune_case(catalog, rows["ftm-mlperf40-llama2-70b-lora-eos-n8-thr"])
    assert case is not None, why
    setup = case.meta["setup"]
    assert (setup.parallel.tp, setup.parallel.cp, setup.parallel.dp) == (4, 2, 8)
    assert (setup.lora_rank, setup.lora_targets, setup.seq_len) == (16, "attention", 8192)
    assert setup.recompute.value == "none"
    assert case.measured == pytest.approx(12.5437 * 8192)
    ttt, why = _finetune_case(catalog, rows["ftm-mlperf40-llama2-70b-lora-eos-n8-ttt"])
    assert ttt is None and "evaluations" in why


def test_a_reading_below_the_model_states_alone_is_not_mapped(catalog: Catalog) -> None:
    # LitGPT's config hub lists 16.51 GB for a full fine-tune of Llama-3.2-3B on one A10G with bf16-true AdamW:
    # 3,212,749,824 parameters × (2 weights + 2 gradients + 2 × 2 Adam states) bytes = 25.70 GB, more than the
    # reading and more than the card: the run cannot have used that config
    row = next(r for r in _rows("finetune_more.csv") if r["id"] == "ftm-litgpt-hub-llama-3-2-3b-full-yaml-1xa10g-mem")
    case, why = _finetune_case(catalog, row)
    assert case is None
    assert "25.70 GB" in why and "16.51 GB" in why


def test_a_reading_the_notes_call_the_whole_card_is_not_mapped_as_a_peak(catalog: Catalog) -> None:
    # GLM-4's fine-tune README reads 80,935 MiB on each of 8 A100-SXM4-80GB for its ZeRO-3 SFT, 98.8 % of the card's
    # 81,920 MiB, and its notes say so in their own words ("essentially the whole 80GB card"): the pool filled the
    # card. The same reading with the words left out stays a peak to predict
    row = next(r for r in _rows("finetune_more.csv") if r["id"] == "ftm-glm4-9b-chat-sft-zero3-8xa100-mem")
    case, why = _finetune_case(catalog, row)
    assert case is None and "card's whole memory" in why
    plain, _ = _finetune_case(catalog, {**row, "notes": "SFT (Zero3 method), 8 GPUs."})
    assert plain is not None and plain.cls == "finetune_memory"


@pytest.mark.parametrize(("engine", "notes", "expected"), [
    ("vllm", "vllm serve ... --tensor-parallel-size 8", "bf16"),  # --kv-cache-dtype auto: the model's dtype
    ("sglang", "sglang.launch_server --tp 8", "bf16"),
    ("sglang", "launch_server --tp 8 --kv-cache-dtype fp8_e5m2", "fp8"),  # stated
    ("vllm", "FP8 KV cache", "fp8"),
    ("trtllm", "trtllm-bench build --quantization FP8", "fp8"),  # TensorRT-LLM's FP8 build quantizes the cache
])
def test_fp8_weights_keep_a_16_bit_kv_cache_unless_the_run_sets_fp8(engine: str, notes: str, expected: str) -> None:
    from calib import _kv_dtype

    assert _kv_dtype(engine, ("fp8", "fp8"), notes) == expected
    assert _kv_dtype(engine, ("fp16", "fp16"), notes) == "fp16"


def test_a_closed_loop_row_whose_measured_concurrency_exceeds_its_cap_is_not_mapped(
        calibration_cases: tuple[list[Case], list[Any]]) -> None:
    # bench_serving never holds more requests in flight than --max-concurrency; a row that reports a mean
    # concurrency of 111 at a stated maximum of 4 did not run the load it states (dstack's TensorRT-LLM rows)
    cases, unmapped = calibration_cases
    why = {u.id: u.why for u in unmapped}
    odd = [rid for rid, r in ((r["id"], r) for r in _rows("inference_serving.csv"))
           if r["scenario"] == "concurrency" and "mean concurrency column = 111.1" in r["notes"]
           and r["metric"] in ("ttft_ms_mean", "tpot_ms_mean", "request_throughput_req_s")]
    assert odd and all("exceeds its stated maximum concurrency" in why[rid] for rid in odd)
    assert not {c.id for c in cases} & set(odd)


@pytest.mark.parametrize(("notes", "seqs", "tokens"), [
    ("vllm serve m --max-num-seqs 128 --max-num-batched-tokens 4096", 128, 4096),  # the serve command
    ("LLM(model=m, max_num_seqs=64)", 64, None),  # the LLM class's keyword
    # a run's recorded configuration names the settings without dashes (dstack's Llama-3.1-405B CSV)
    ("the CSV records chunked prefill on with max-num-batched-tokens 512 (...), max-num-seqs 512", 512, 512),
    ("tensor_parallel_size 1, max_num_seqs 256, gpu_memory_utilization 0.9", 256, None),  # zhjunqin
    ("max-seq-len-to-capture 8192, --max-model-len 91680", None, None),  # other settings are not limits
])
def test_a_row_keeps_the_scheduler_limits_it_states(notes: str, seqs: int | None, tokens: int | None) -> None:
    row = {"notes": notes}
    assert (_stated_limit(row, "max-num-seqs"), _stated_limit(row, "max-num-batched-tokens")) == (seqs, tokens)


def test_an_sglang_row_keeps_the_chunk_it_states() -> None:
    """SGLang's ``--chunked-prefill-size`` is the prompt budget its server was started with: the row's setup keeps
    it rather than the release's default for the GPU."""
    gpu = load_catalog().gpu("H200")
    row = {"notes": "python -m sglang.launch_server --tp 8 --chunked-prefill-size 4096"}
    s = _with_limits(InferSetup(engine="sglang", engine_version="0.5.3", tp=8), row, gpu)
    assert s.max_batched_tokens == 4096
    assert _with_limits(InferSetup(engine="sglang", engine_version="0.5.3", tp=8), {"notes": ""}, gpu) \
        .max_batched_tokens == 8192


def test_dstacks_405b_server_runs_its_recorded_token_budget(cases: list[Case]) -> None:
    # vLLM 0.6.3 turned chunked prefill on with 512 tokens per pass for its 91,680-token context: with that budget
    # the overloaded server (16 req/s sent, about 10 served) never runs a step longer than a 512-token pass, where
    # the 8,192-token default let prompt work stretch every decode step to twice its length
    case = next(c for c in cases if c.id == "srv-5968")  # median TPOT at 16 req/s: 112 ms measured
    s = case.meta["setup"]
    assert (s.max_batched_tokens, s.max_num_seqs) == (512, 512)
    assert case.predict(fitted()) < 1.6 * case.measured


def test_a_vllm_server_started_with_max_model_len_serves_that_context(cases: list[Case]) -> None:
    # dstack's MI300X vLLM server ran with --max-model-len 32768, its H200 one without: the first serves 32,768
    # tokens (V0 sizes an MLA model's prefill pass by it), the second DeepSeek-R1's own context
    setups = {c.id: c.meta["setup"] for c in cases if c.meta.get("kind") == "load"}
    assert setups["srv-4875"].max_model_len == 32768  # 8x MI300X, 4 clients, median TTFT
    assert setups["srv-5127"].max_model_len is None  # 8x H200, 4 clients, median TTFT


def test_sglang_servers_started_with_dp_attention_map_to_attention_data_parallelism(cases: list[Case]) -> None:
    # dstack's DeepSeek-R1 runs: the 8x H200 SGLang server was started with --tp 8 --enable-dp-attention, the
    # 8x MI300X SGLang and vLLM servers without it; the 128-client median TTFT rows of each
    setups = {c.id: c.meta["setup"] for c in cases if c.id in ("srv-4889", "srv-5043", "srv-4805")}
    assert setups["srv-4889"].attention_dp is True  # SGLang 0.4.3.post2, 8x H200
    assert setups["srv-5043"].attention_dp is False  # SGLang 0.4.2.post4, 8x MI300X
    assert setups["srv-4805"].attention_dp is False  # vLLM 0.7.3, 8x MI300X


def test_vllm_servers_started_with_async_scheduling_map_to_it(cases: list[Case]) -> None:
    # GPUStack's gpt-oss-20b page on one H100 (vLLM 0.11.0) runs the same offline ShareGPT benchmark with
    # `vllm serve openai/gpt-oss-20b` and with `... --async-scheduling`: the second overlaps its scheduling with
    # the GPU, the first takes its release's default (synchronous before 0.14)
    setups = {c.id: c.meta["setup"] for c in cases if c.id in ("srv-2964", "srv-3000")}
    assert setups["srv-2964"].async_scheduling is None  # 7,817 output tokens/s
    assert setups["srv-3000"].async_scheduling is True  # 9,064 output tokens/s


def test_one_gpus_results_repeated_for_another_are_not_mapped() -> None:
    # two parts of different speed cannot print the same numbers to the last digit in every metric of a run:
    # such a block (GPUStack's GLM-4.5-Air pages for A100 and H100) is a copy, and neither side is mapped
    from calib import _copied_blocks

    def row(rid: str, gpu: str, metric: str, value: str) -> dict[str, str]:
        return {"id": rid, "source_group": "lab", "engine": "vLLM", "model": "m", "scenario": "offline", "isl": "128",
                "osl": "4", "gpu_spec_name": gpu, "metric": metric, "value": value}

    metrics = ("ttft_ms_mean", "tpot_ms_mean", "throughput_output_tok_s_total")
    copied = {f"a{i}": row(f"a{i}", "A100-80GB", k, "1.5") for i, k in enumerate(metrics)}
    copied |= {f"h{i}": row(f"h{i}", "H100", k, "1.5") for i, k in enumerate(metrics)}
    assert set(_copied_blocks(copied)) == set(copied)
    distinct = {**copied, "h0": row("h0", "H100", metrics[0], "0.9")}
    assert _copied_blocks(distinct) == {}


def test_gpustack_blocks_pasted_from_another_page_are_not_mapped_and_their_originals_are(
        calibration_cases: tuple[list[Case], list[Any]]) -> None:
    # GPUStack's Qwen3-8B Ascend 910B page prints, under 'Other Benchmark Cases', the Qwen3-30B-A3B page's MindIE
    # block to the last digit (random 32K input: 32.71 output tok/s on both) while its own conclusion table gives
    # other totals (very long prompt 7835.01 against the block's 10830.52): the copy is listed unmapped, the
    # 30B-A3B original stays answered
    cases, unmapped = calibration_cases
    why = {u.id: u.why for u in unmapped}
    answered = {c.id for c in cases}
    assert why["srv-4440"].startswith("copied block:") and "qwen3-30b-a3b/910b.md" in why["srv-4440"]
    assert "srv-3924" in answered


def test_gpustack_mindie_qwen3_30b_a3b_runs_on_the_two_npus_gpustack_gives_it(
        calibration_cases: tuple[list[Case], list[Any]]) -> None:
    # GPUStack's MindIE selector needs 3 GiB + 56.9 GiB of BF16 weights + 0.75 GiB KV + 2.3 GiB of buffers = 63.0 GiB,
    # above 0.8 × 64 GiB = 51.2 GiB of one 910B, so the page's 'single NPU' run took two: the rows are answered on
    # TP2, and their 4-client TTFT is a finite time (it was an infinite prediction on one NPU)
    cases, _ = calibration_cases
    by_id = {c.id: c for c in cases}
    assert by_id["srv-3840"].meta["setup"].tp == 2
    ttft = by_id["srv-3974"]
    assert ttft.meta["setup"].tp == 2 and 0 < ttft.predict(fitted()) < 10.0


def test_a_packed_run_that_counts_samples_before_packing_is_not_mapped(catalog: Catalog) -> None:
    # ms-swift's lora+packing+lazytokenize run reports 78,237 samples in 10,179 s; lora+packing on the same data
    # reports 7,900 packed samples in 10,049 s: lazy tokenization counts the raw samples, so samples × 2,048 would
    # be ten times the tokens trained on
    row = next(r for r in _rows("finetune_more.csv")
               if r["id"] == "ftm-swift-exp-qwen-7b-chat-lora-plus-packing-plus-lazytokenize-time")
    case, why = _finetune_case(catalog, row)
    assert case is None
    assert "before packing" in why
    packed = next(r for r in _rows("finetune_more.csv")
                  if r["id"] == "ftm-swift-exp-qwen-7b-chat-lora-plus-packing-time")
    assert _finetune_case(catalog, packed)[0] is not None


def test_a_packer_that_keeps_each_buffers_remainder_still_varies_the_length(catalog: Catalog) -> None:
    # ms-swift's ConstantLengthDataset (May 2024) yields the tail of every packed buffer as a shorter sequence: the
    # run reserves the pool of a run whose lengths vary, more than one packed to whole chunks only
    row = next(r for r in _rows("finetune_more.csv") if r["id"] == "ftm-swift-exp-qwen-7b-chat-lora-plus-packing-mem")
    assert "remainder kept" in row["packing"]
    case, why = _finetune_case(catalog, row)
    assert case is not None, why
    whole, _ = _finetune_case(catalog, {**row, "packing": "yes"})
    assert whole is not None
    assert case.meta["setup"].lengths_vary and not whole.meta["setup"].lengths_vary
    cal = fitted()
    assert case.predict(cal) > 1.1 * whole.predict(cal)  # the same step's transient tensors, pooled once more
    time_row = next(r for r in _rows("finetune_more.csv")
                    if r["id"] == "ftm-swift-exp-qwen-7b-chat-lora-plus-packing-time")
    assert _finetune_case(catalog, time_row)[0] is not None  # still packed: samples × max_length tokens


@pytest.mark.parametrize(("text", "expected"), [
    # FSDP2's mixed-precision policy computes in bf16 and only reduces gradients in fp32: not an fp32 run
    ("bf16 (FSDP2 mixed precision, param bf16 / reduce fp32 defaults)", "bf16-mixed"),
    ("float8 tensorwise linears (torchao) + bf16", "fp8-mixed"),  # torchao's float8 linears are FP8 matmuls
    ("fp32", "fp32"),
    ("amp_bf16 (FSDP mixed_precision DEFAULT)", "bf16-mixed"),
])
def test_a_row_runs_at_the_lowest_compute_precision_it_names(text: str, expected: str) -> None:
    assert _precision(text) == expected


@pytest.mark.parametrize(("row", "reading_gb"), [
    ("ftm-qwen1-1-8b-lora-1gpu-len256-mem", 6.7),
    ("ftm-qwen1-7b-lora-1gpu-len256-mem", 20.1),
    ("ftm-qwen1-14b-lora-1gpu-len256-mem", 34.6),
    ("ftm-qwen1-14b-lora-emb-1gpu-len256-mem", 51.2),
])
def test_short_sequence_device_readings_hold_at_every_model_size(cases: list[Case], row: str,
                                                                  reading_gb: float) -> None:
    # QwenLM/Qwen README @2df8e8ac ('Profiling of Memory and Speed', 256 tokens, one A100-80GB): at 256 tokens the
    # activations are small, so the reading is the resident tensors and what the allocator holds around them (with
    # finetune.py's rank-64 adapters counted, 1.1 GiB above the tensors at 1.8B, 2.8 GiB at 14B, the CUDA context
    # included); a fixed overhead alone read Qwen-14B 10 % and its LoRA (emb) run 12 % under, a "fits" that would
    # not. These rows are not fitted on.
    case = next(c for c in cases if c.id == row)
    assert not case.meta.get("fit_on", True)
    assert case.measured == pytest.approx(reading_gb * 1e9)
    from gpuplan.estimate.calibration import fitted
    assert case.predict(fitted()) >= 0.92 * case.measured


def test_a_qwen_profiling_row_runs_the_lora_of_the_script_it_names(catalog: Catalog) -> None:
    # QwenLM/Qwen finetune.py LoraArguments (@b5fad3d5, the commit that added the profiling table, to @2df8e8ac):
    # lora_r 64, lora_dropout 0.05, which no finetune/*.sh overrides; the row's rank cell names that default
    # ("unstated (finetune.py default 64)") and was read as gpuplan's rank 8 until 2026-12-06
    row = next(r for r in _rows("finetune_more.csv") if r["id"] == "ftm-qwen1-7b-q-lora-1gpu-len256-mem")
    case, why = _finetune_case(catalog, row)
    assert case is not None, why
    setup = case.meta["setup"]
    assert setup.lora_rank == 64 and setup.lora_dropout == 0.05
    # an eighth of the rank holds an eighth of the adapters: the states ZeRO-2 keeps for them (fp16 weights and
    # gradients, fp32 master, gradients and Adam moments, 20 bytes a parameter) are 2.7 GB at rank 64
    rank8, _ = _finetune_case(catalog, {**row, "lora_rank": "8"})
    assert rank8 is not None
    cal = fitted()
    assert case.predict(cal) - rank8.predict(cal) > 0.8 * 20 * 143_130_624 * 7 / 8


@pytest.mark.parametrize(("label", "expected"), [
    ("GPTQ-Int8 (AutoGPTQ)", "gptq-int8"),  # Qwen v1 README: the Int8 checkpoints are GPTQ 8-bit, not 4-bit
    ("GPTQ-Int4 (AutoGPTQ)", "gptq-int4"),
    ("bitsandbytes 8-bit LLM.int8 (llm.int8)", "bnb-int8"),  # Lit-GPT --quantize llm.int8
    ("bitsandbytes 4-bit NF4 double-quant (qlora.nf4-dq)", "bnb-nf4-dq"),
    ("bitsandbytes 4-bit NF4 (qlora.nf4)", "bnb-nf4"),
    ("FP16", "fp16"),  # was refused as an unknown precision
])
def test_an_inference_memory_row_is_sized_in_the_format_its_label_names(catalog: Catalog, label: str,
                                                                        expected: str) -> None:
    row = next(r for r in _rows("inference_extra.csv") if r["id"] == "imm-0004")  # Qwen-7B-Chat, 1+2048 tokens
    case, why = _inference_memory_case(catalog, {**row, "precision": label})
    assert case is not None, why
    assert case.meta["setup"].weight_format == expected


@pytest.mark.parametrize("row_id", ["imm-0076", "imm-0077"])  # Qwen2-72B-Instruct GPTQ-Int4 and AWQ, 1+2048 tokens
def test_the_released_qwen2_72b_quantized_checkpoints_are_sized_with_their_padded_mlp(catalog: Catalog,
                                                                                     row_id: str) -> None:
    # the released checkpoints pad the MLP from 29,568 to 29,696 channels: 3 matrices x 80 layers x 8,192 x 128
    # more weights, 251,658,240 at 4 + 20/128 bits = 130,744,320 bytes more than the 16-bit model's shape gives
    row = next(r for r in _rows("inference_extra.csv") if r["id"] == row_id)
    released, _ = _inference_memory_case(catalog, row)
    own, _ = _inference_memory_case(catalog, {**row, "notes": "a 72B quantized by its user"})
    assert released is not None and own is not None
    assert released.meta["model"].ffn_hidden == 29696 and own.meta["model"].ffn_hidden == 29568
    weights = [inference_memory(c.meta["model"], c.meta["gpu"], c.meta["setup"]).breakdown.get("weights")
               for c in (released, own)]
    assert weights[0] - weights[1] == pytest.approx(130_744_320, rel=2e-3)
    bf16, _ = _inference_memory_case(catalog, {**row, "precision": "BF16"})
    assert bf16 is not None and bf16.meta["model"].ffn_hidden == 29568  # only the quantized releases are padded


def test_a_transformers_release_before_4_45_holds_every_prompt_logit(catalog: Catalog) -> None:
    # the Qwen2 speed benchmark ran transformers 4.38.2: Qwen2-7B with a 30,720-token prompt read 42.62 GiB, where
    # Qwen2.5-7B under 4.46.0 read 19.97; the difference is the prompt's logits (30,720 x 152,064, 16-bit and fp32)
    row = next(r for r in _rows("inference_extra.csv") if r["id"] == "imm-0068")
    old, _ = _inference_memory_case(catalog, row)
    new, _ = _inference_memory_case(catalog, {**row, "engine_version": "4.46.0"})
    assert old is not None and new is not None
    assert old.meta["setup"].full_logits and not new.meta["setup"].full_logits
    cal = fitted()
    assert old.predict(cal) - new.predict(cal) > 20 * 2**30
    assert abs(old.predict(cal) / old.measured - 1) < 0.15 < abs(new.predict(cal) / new.measured - 1)


def test_a_row_that_states_none_of_its_conditions_is_reported_not_fitted(cases: list[Case]) -> None:
    # Baichuan2's README prints one 'GPU Mem' per precision without prompt, length, GPU or counter
    baichuan = [c for c in cases if c.group == "Baichuan2 README"]
    assert baichuan and not any(c.fit for c in baichuan)
    assert all(c.fit for c in cases if c.group == "Qwen v1 README (A100 80GB)")


def test_a_pretraining_reading_is_compared_with_the_counter_it_names(catalog: Catalog) -> None:
    # ATorch prints torch.cuda.max_memory_allocated: no allocator slack, so less than the same run read as reserved
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-atorch-l2-7b-fsdp8-mem")
    allocated, _ = _pretrain_case(catalog, row)
    unnamed = row["notes"].replace("max_memory_allocated", "a counter not named")
    reserved, _ = _pretrain_case(catalog, {**row, "notes": unnamed})
    device, _ = _pretrain_case(catalog, {**row, "notes": unnamed + " counter: device memory"})
    assert allocated is not None and reserved is not None and device is not None
    from gpuplan.estimate.calibration import fitted
    cal = fitted()
    assert allocated.meta["measure"] == "active" and reserved.meta["measure"] == "reserved"
    assert allocated.predict(cal) < reserved.predict(cal) < device.predict(cal)


def test_atorch_rows_carry_the_model_code_and_loop_their_notes_state(catalog: Catalog) -> None:
    # ATorch turns amp_native into FSDP MixedPrecision(bf16) when FSDP is present (model_context.py @70df7d5a2), so
    # the rows are the bf16 FSDP gpuplan models and are fitted on; transformers 4.31.0 returns the keys and values
    # (use_cache) and the example's loop keeps `outputs` into the next forward. The four readings (30.4 to
    # 38.7 GiB max allocated) are then predicted within 3 % (+1.8 to +2.3 % with the committed fit), where they were
    # 49 to 62 % under without either
    for dp in (8, 16, 32, 64):
        row = next(r for r in _rows("training_more.csv") if r["id"] == f"trm-atorch-l2-7b-fsdp{dp}-mem")
        case, _ = _pretrain_case(catalog, row)
        assert case is not None and case.fit
        setup = case.meta["setup"]
        assert setup.returns_kv_cache and setup.keeps_previous_outputs and setup.transformers_version == "4.31.0"
        from gpuplan.estimate.calibration import fitted
        assert abs(case.predict(fitted()) / case.measured - 1) < 0.03


def test_atorch_tflops_read_back_as_tokens_per_second(catalog: Catalog) -> None:
    # ATorch's README prints 181.85 TFLOPs per GPU for Llama-2-7B FSDP on 8 A100s; its example_utils counts
    # 4 x 32 x (8·4096² + 4·4096·4096 + 6·4096·11008) + 3 x 2·4096·32000 = 61,184,409,600 FLOPs per token with
    # gradient checkpointing (hand-computed), so 181.85e12 / 61,184,409,600 = 2972.2 tokens/s per GPU
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-atorch-l2-7b-fsdp8-tok")
    case, _ = _pretrain_case(catalog, row)
    assert case is not None and case.cls == "pretrain_throughput"
    assert abs(case.measured - 2972.2) < 0.1
    # ATorch runs FSDP with a bf16 MixedPrecision policy (model_context.py @70df7d5a2): bf16 all-gathers, as
    # gpuplan's time model has them, so the row is fitted on like its memory row
    assert case.fit and "all-gather" not in case.assume


def test_nvfp4_pretraining_is_read_as_fp4_and_mxfp4_is_listed(catalog: Catalog) -> None:
    # Megatron-Bridge's NVFP4 rows ran their GEMMs at the FP4 rate (Transformer Engine's NVFP4 recipe): gpuplan's
    # fp4-mixed, never bf16 (read as bf16 they were compared with a quarter of the peak they used, the reading that
    # made GB300 runs look 61-65 % under-predicted); MXFP4 is another recipe gpuplan has no rate for
    nvfp4 = "trm-mb-2606-gb300-llama31405b-nvfp4-256-g1536-p-tokgpu"
    row = next(r for r in _rows("training_more.csv") if r["id"] == nvfp4)
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert case.meta["setup"].precision == "fp4-mixed"
    mxfp4, why = _pretrain_case(catalog, {**row, "precision": "MXFP4"})
    assert mxfp4 is None and "MXFP4" in why
    mxfp8, why = _pretrain_case(catalog, {**row, "precision": "MXFP8"})
    assert mxfp8 is not None, why
    assert mxfp8.meta["setup"].precision == "fp8-mixed"


@pytest.mark.parametrize(("label", "expected"), [
    ("Q4_K_M (GGUF, file 4.58 GB as recorded)", "gguf-q4_k_m"), ("Q8_0 (GGUF)", "gguf-q8_0"),
    ("Q6_K (GGUF)", "gguf-q6_k"), ("Q4_0 (GGUF)", "gguf-q4_0"),
])
def test_a_gguf_row_is_sized_in_its_k_quant(catalog: Catalog, label: str, expected: str) -> None:
    row = next(r for r in _rows("inference_llamacpp.csv") if r["id"] == "lcp-0326")
    case, why = _inference_memory_case(catalog, {**row, "precision": label})
    assert case is not None, why
    assert case.meta["setup"].weight_format == expected
    # llama.cpp's own log states n_ctx 512: its KV cache and graph are sized for 512 tokens, not prompt + output
    assert case.meta["setup"].context_len == 512 and not case.meta["setup"].flash_attention


@pytest.mark.parametrize(("label", "expected"), [
    ("Q4_1 (GGUF, 3.95 GiB)", ("gguf-q4_1", "fp16")), ("F16 (GGUF, 12.55 GiB)", ("fp16", "fp16")),
    ("BF16 (GGUF)", ("bf16", "bf16")), ("Q6_K (GGUF)", ("gguf-q6_k", "fp16")),
    ("Q4_K_S (GGUF)", ("gguf-q4_k_s", "fp16")), ("Q5_0 (GGUF)", ("gguf-q5_0", "fp16")),
    # a GGUF quant type gpuplan has no format for is not mapped: read as 16-bit, PR #2917's M2 Ultra Q4_1 row
    # (83.63 t/s) looked 1.4 TB/s, above the part's 800 GB/s
    ("IQ2_XXS (GGUF)", None),
])
def test_a_gguf_speed_row_is_read_in_its_quant_type(label: str, expected: tuple[str, str] | None) -> None:
    assert _speed_precision(label) == expected


def test_a_llamacpp_speed_row_of_an_unstated_build_is_reported_not_fitted(catalog: Catalog) -> None:
    rows = {r["id"]: r for r in _rows("inference_llamacpp.csv") + _rows("inference_extra.csv")}
    # mac-llm-bench records its llama.cpp version as 'unknown'; PR #2917's table names the master it ran, and
    # ggerganov's RTX 4090 table (ext-0109) the PR #4766 branch it ran, in its notes
    unknown, stated, branch = (_inference_case(catalog, rows[i])[0] for i in ("lcp-0551", "lcp-0710", "ext-0109"))
    assert unknown is not None and stated is not None and branch is not None
    assert not unknown.fit and stated.fit and branch.fit


def test_a_llamacpp_row_of_a_backend_gpuplan_does_not_model_is_reported_not_fitted(catalog: Catalog) -> None:
    rows = {r["id"]: r for r in _rows("inference_llamacpp.csv")}
    # the CUDA scoreboard's RTX 4080 row (discussion #15013) and the Vulkan scoreboard's RTX 4070 Ti (#10879) and
    # ROCm scoreboard's RX 7900 XTX (#15021): all state their build, only the CUDA one runs kernels gpuplan models
    cuda, vulkan, rocm = (_inference_case(catalog, rows[i])[0] for i in ("lcp-0793", "lcp-0951", "lcp-0927"))
    assert cuda is not None and vulkan is not None and rocm is not None
    assert cuda.fit and not vulkan.fit and not rocm.fit
    assert "Vulkan backend predicted as CUDA" in vulkan.assume and "ROCm" in rocm.assume and not cuda.assume


def test_a_scoreboard_chip_the_catalog_could_only_guess_stays_unmapped_with_its_reason(catalog: Catalog) -> None:
    rows = {r["id"]: r for r in _rows("inference_llamacpp.csv")}
    # discussion #15013's 'H100 80 GB' (SXM or PCIe: 3.35 or 2.0 TB/s) and 'Jetson AGX Orin' prefill (32 or 64 GB
    # module: different GPUs) rows; the Jetson's decode row maps (both modules read 204.8 GB/s), as does the
    # RTX 3090 Ti the catalog now holds
    h100, jetson_prefill = (_inference_case(catalog, rows[i]) for i in ("lcp-0774", "lcp-0846"))
    assert h100[0] is None and "form factor" in h100[1]
    assert jetson_prefill[0] is None and "32 GB or 64 GB" in jetson_prefill[1]
    jetson_decode, ti = (_inference_case(catalog, rows[i])[0] for i in ("lcp-0847", "lcp-0787"))
    assert jetson_decode is not None and jetson_decode.meta["gpu"].name == "Jetson-AGX-Orin-64GB"
    assert ti is not None and ti.meta["gpu"].name == "RTX3090Ti"


def test_mac_llm_bench_rows_say_which_sitting_ran_them(catalog: Catalog) -> None:
    # Each mac-llm-bench result file records when it was written (lib/collect_results.sh @5e91948); on the M5 that
    # time tells its sittings apart: Llama-3.1-8B (04-06 14:30) decodes at 49 GB/s and prefills at the ALU rate,
    # Gemma-4-31B (04-06 17:52, a build new enough to load Gemma 4) at 101 GB/s and above the ALU peak. Neither
    # sitting states its build, so neither is fitted on, though the second agrees with gpuplan's ALU floor.
    rows = [r for r in _rows("inference_llamacpp.csv") if r["source_group"] == "enescingoz/mac-llm-bench"]
    stamps = {r["id"]: r["notes"].split("Result file written ")[1][:20] for r in rows}
    assert len(stamps) == len(rows) >= 369
    assert all(stamps[r["id"]].startswith(r["date"] + "T") for r in rows)
    assert stamps["lcp-0551"] < "2026-04-06T16:59" < stamps["lcp-0542"] < "2026-04-07"
    by_id = {r["id"]: r for r in rows}
    first, second = (_inference_case(catalog, by_id[i])[0] for i in ("lcp-0551", "lcp-0542"))
    assert first is not None and second is not None
    assert not first.fit and not second.fit


def test_mac_llm_bench_mlx_decode_runs_after_its_512_token_prompt(catalog: Catalog) -> None:
    # run_mlx_benchmark (enescingoz/mac-llm-bench lib/run_bench_mlx.sh @5e91948) runs mlx_lm.benchmark for pp 128,
    # 256 and 512 and writes tg128 on every pass, so the tg128 it keeps was generated after a 512-token prompt, its
    # KV cache read at every step; llama-bench's tg128 (the same machines' GGUF rows) starts from an empty context
    rows = [r for r in _rows("inference_llamacpp.csv") if "mac-llm-bench" in r["source_group"]
            and r["metric"] == "decode_tok_s_batch1"]
    mapped: dict[str, list[int]] = {r["engine"]: [] for r in rows}
    for r in rows:
        case = _inference_case(catalog, r)[0]
        if case is not None:
            mapped[r["engine"]].append(case.meta["setup"].prompt_len)
    assert len(mapped["MLX"]) >= 27 and set(mapped["MLX"]) == {512}
    assert len(mapped["llama.cpp"]) >= 79 and set(mapped["llama.cpp"]) == {1}
    # a 0.6B model's 512 cached tokens (28 layers x 8 KV heads x 128 x K and V in 16 bits, 59 MB) weigh about a
    # sixth of its 4-bit weights: reading them makes each step measurably slower
    one = next(r for r in rows if r["engine"] == "MLX" and r["model"] == "Qwen3-0.6B")
    case = _inference_case(catalog, one)[0]
    empty = _inference_case(catalog, {**one, "isl": "0"})[0]
    assert case is not None and empty is not None
    assert case.predict(fitted()) > 1.05 * empty.predict(fitted())


def test_llm_foundry_rows_run_the_attention_kernel_their_notes_name(catalog: Catalog) -> None:
    # llm-foundry's submit scripts ran attn_impl=triton (flash-attn 1.0.7) until late 2023, attn_impl=flash
    # (flash-attn 2.4.2) after: FlashAttention 1's Triton port, then FlashAttention-2
    rows = {r["id"]: r for r in _rows("training_more.csv")}
    kernels = {}
    for row_id in ("trm-mpt-h10080gb-bf16-7b-4096-8-hfu", "trm-mpt-h10080gb-bf16-70b-2048-512-ls-tokgpu"):
        case, why = _pretrain_case(catalog, {**rows[row_id], "metric": "tokens_per_s_per_gpu", "value": "1"})
        assert case is not None, why
        kernels[row_id] = attention_kernel(case.meta["setup"])  # stated, else the stack's
    assert kernels == {"trm-mpt-h10080gb-bf16-7b-4096-8-hfu": "flash1",
                       "trm-mpt-h10080gb-bf16-70b-2048-512-ls-tokgpu": "flash2"}


def test_float8_rowwise_throughput_is_reported_not_fitted(catalog: Catalog) -> None:
    # in the same torchtitan table float8 rowwise ran slower than bf16 (3708 vs 4378 tok/s/GPU): bound by its
    # scaling kernels, not the FP8 rate gpuplan models
    rows = {r["id"]: r for r in _rows("training_more.csv")}
    rowwise, _ = _pretrain_case(catalog, rows["trm-tt-31-8b-h100-64-float8-rowwise-vanillatp-tokgpu"])
    tensorwise, _ = _pretrain_case(catalog, rows["trm-tt-31-8b-h100-64-float8-tensorwise-vanillatp-tokgpu"])
    assert rowwise is not None and tensorwise is not None
    assert not rowwise.fit and "rowwise" in rowwise.assume
    assert tensorwise.fit


def test_a_time_row_counts_the_optimizer_steps_the_run_made(cases: list[Case]) -> None:
    # PEFT MetaMathQA: 20,000 samples in batches of 4 are 5,000 optimizer steps, whatever the longest bucket
    from gpuplan.estimate.calibration import fitted
    from gpuplan.estimate.train_time import train_time

    case = next(c for c in cases if c.id == "peft-mmqa-full-finetuning-llama-3.2-3b-lr_0.00001-time")
    est = train_time(case.meta["model"], case.meta["gpu"], case.meta["setup"], case.meta["tokens"], fitted())
    assert est.rate.steps == pytest.approx(20_000 / 4, rel=0.002)


def test_a_model_cards_wall_time_is_compared_as_the_runs_seconds(catalog: Catalog) -> None:
    # Falcon-40B's card: 384 A100 40GB, TP 8 × PP 4 × DP 12, "took two months" for 1,000B tokens: 60 days of
    # wall clock, compared with the estimate's run time; the card's approximate wording keeps it out of the fit
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-falcon-40b-wall")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert case.cls == "pretrain_gpu_hours" and case.measured == 60 * 86400
    assert case.meta["tokens"] == 1.0e12 and not case.fit
    par = case.meta["setup"].parallel
    assert (par.tp, par.pp, par.dp) == (8, 4, 12)
    assert case.meta["setup"].grad_accum == 1152 // 12  # batch 1152 sequences, micro-batch 1 per replica


def test_a_run_whose_layout_the_mapping_assumed_is_reported_not_fitted(catalog: Catalog) -> None:
    # the LLaMA paper states GPU-hours, tokens and sequence length but no parallel degrees; the row names the
    # layout taken and says so
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-llama1-65b-gpuh")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert not case.fit and "layout" in case.assume
    stated, _ = _pretrain_case(catalog, {**row, "notes": row["notes"].replace("layout assumed", "layout")})
    assert stated is not None and stated.fit



def test_pythia_rows_run_the_retrained_suites_flash_attention_1_reported_not_fitted(catalog: Catalog) -> None:
    # the paper's GPU-hours are those of the retrained suite (uniform 2M-token batches: 1,024 sequences for
    # Pythia-160M too, which the 2022 suite trained at 4M), whose changelog says it used Flash Attention: before
    # FlashAttention-2's July 2023 release, so FlashAttention 1. The configs as first published name no kernel, so
    # the notes say it is assumed and the rows are reported, not fitted, as a row with an assumed layout is
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-pythia-160m-gpuh")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert case.cls == "pretrain_gpu_hours" and case.measured == 1030  # GPU-hours, Table 5
    assert case.meta["setup"].flash_attention and case.meta["setup"].attention_kernel == "flash1"
    assert not case.fit and "attention kernel" in case.assume
    stated, _ = _pretrain_case(catalog, {**row, "notes": row["notes"].replace("Attention kernel assumed", "Kernel")})
    assert stated is not None and stated.fit


@pytest.mark.parametrize(("row_id", "flash"), [
    ("trm-bloom-176b-gpuh", False),  # "no (2022, Megatron fused softmax)": the fused softmax still writes the scores
    ("trm-llama1-7b-gpuh", True),  # "no (xformers memory-efficient causal attention)": never writes them either
    ("trm-falcon-7b-wall", True),  # "yes"
    ("trm-glm130b-bsz4224-tokgpu", True),  # "unstated": the fused kernel, as before
])
def test_a_pretraining_row_runs_standard_attention_only_where_its_column_says_no_fused_kernel(
        catalog: Catalog, row_id: str, flash: bool) -> None:
    row = next(r for r in _rows("training_more.csv") if r["id"] == row_id)
    case, why = _pretrain_case(catalog, {**row, "metric": "tokens_per_s_per_gpu", "value": "1"})
    assert case is not None, why
    assert case.meta["setup"].flash_attention is flash


def test_a_gpt_neox_run_with_a_pipe_parallel_size_reduces_after_the_backward(catalog: Catalog) -> None:
    # GPT-NeoX wraps its model in DeepSpeed's PipelineEngine for any pipe-parallel-size >= 1 (Pythia's configs set
    # 1), whose data-parallel reduction runs after the backward; at 0 it trains a plain sequential model, and a
    # Megatron-LM row's notes naming the same setting say nothing about that engine
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-pythia-1b-gpuh")
    found = {}
    for label, changed in (("neox 1", row), ("neox 0", {**row, "notes": row["notes"].replace(
            "pipe-parallel-size 1", "pipe-parallel-size 0")}), ("megatron", {**row, "framework": "Megatron-LM"})):
        case, why = _pretrain_case(catalog, changed)
        assert case is not None, why
        found[label] = case.meta["setup"].dp_after_backward
    assert found == {"neox 1": True, "neox 0": False, "megatron": False}



def test_starcoders_megatron_reduces_its_gradients_after_the_backward(catalog: Catalog) -> None:
    # the bigcode Megatron-LM fork that trained StarCoderBase (@4d0af09c, train_step) reduce-scatters the gradients
    # after forward_backward_func returns and gathers the weights after the optimizer step, as its notes say: that
    # communication is not hidden, so the run takes longer than with the same layout's overlapped reduction
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-starcoderbase-gpuh")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert case.meta["setup"].dp_after_backward
    silent, _ = _pretrain_case(catalog, {**row, "notes": row["notes"].replace("reduce-scattered after", "reduced")})
    assert silent is not None and not silent.meta["setup"].dp_after_backward
    assert case.predict(fitted()) > silent.predict(fitted())
def test_a_torchtitan_run_before_april_2025_keeps_its_loss_uncompiled(catalog: Catalog) -> None:
    # torchtitan issue #929 ran at 9a2f578 (2025-03-04), before bbb1b616e compiled the loss under training.compile
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-tt929-l3-8b-fsdp8-compile-mem")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    setup = case.meta["setup"]
    assert setup.compiled and setup.compiled_loss is False
    later, _ = _pretrain_case(catalog, {**row, "notes": "compiled at a later commit"})
    assert later is not None and later.meta["setup"].compiled_loss is None


def test_torchtitan_on_b200_in_august_2025_is_mapped_with_its_attention_recomputed(catalog: Catalog) -> None:
    # torchao's B200 table ran torchtitan 6fc499f6 (2025-08-14): cuDNN attention first on sm100, not on the per-op SAC
    # save list; the MI300X table of the same month ran flash attention (AOTriton), which the list keeps
    rows = {r["id"]: r for r in _rows("training_more.csv")}
    b200, why = _pretrain_case(catalog, rows["trm-torchao-l3-8b-b200-bf16-mem"])
    assert b200 is not None, why
    mi300x, why = _pretrain_case(catalog, rows["trm-torchao-l3-8b-mi300x-bf16-mem"])
    assert mi300x is not None, why
    assert b200.meta["setup"].attention_recomputed and not mi300x.meta["setup"].attention_recomputed
    assert b200.predict(fitted()) < mi300x.predict(fitted())  # measured 33.71 vs 39.09 GiB


def test_bloom_keeps_whole_activations_on_every_tensor_parallel_rank(catalog: Catalog) -> None:
    # BLOOM-176B ran TP 4 × PP 12 without sequence parallelism (its slurm script passes no --sequence-parallel and
    # BigScience's Megatron-DeepSpeed has none): the first stage's 12 in-flight micro-batches × 70/12 layers keep
    # whole checkpointed inputs, 70 × 2·2048 tokens × 14336 × 2 bytes = 8.22e9 bytes, not a quarter of that
    # (2.06e9): hand-computed, 6.17e9 bytes more per GPU before the stack's activation factor
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-bloom-176b-mem-gb")
    whole, why = _pretrain_case(catalog, row)
    assert whole is not None, why
    assert not whole.meta["setup"].parallel.sequence_parallel
    split, _ = _pretrain_case(catalog, {**row, "notes": "Megatron run, sequence parallelism not mentioned"})
    assert split is not None and split.meta["setup"].parallel.sequence_parallel
    cal = fitted()
    assert whole.predict(cal) - split.predict(cal) > 0.5 * 6.17e9


def test_a_torchtune_tutorial_run_keeps_the_loss_and_dropout_of_its_release(catalog: Catalog) -> None:
    # torchtune's LoRA tutorial ran at ff594c231 (2024-04-15): recipes/configs/llama2/7B_lora_single_device.yaml
    # takes torch.nn.CrossEntropyLoss over all logits and lora_llama2_7b defaults to lora_dropout 0.05, where the
    # framework's current defaults (frameworks.csv) are a chunked loss and no dropout
    row = next(r for r in _rows("finetune_more.csv") if r["id"] == "ftm-torchtune-tutorial-llama2-7b-lora-qv-r8-mem")
    case, why = _finetune_case(catalog, row)
    assert case is not None, why
    setup = case.meta["setup"]
    assert setup.chunked_loss is False and setup.lora_dropout == 0.05
    assert case.meta["measure"] == "reserved" and case.measured == 15.57e9  # torch_reserved, GB of 1e9 bytes
    today, _ = _finetune_case(catalog, {**row, "notes": "a current torchtune config"})
    assert today is not None and today.meta["setup"].chunked_loss is True and today.meta["setup"].lora_dropout == 0.0


@pytest.mark.parametrize(("row_id", "below"), [
    # ms-swift's requirements/framework.txt: transformers<4.37 in Jan 2024 (@306fa15a0), <4.41 in Apr 2024 (@c212b44f0)
    ("ftm-swift-lora-yi-6b-chat-lora-bf16-len8192-bs1-ga16-fa1-gc1-r8-default-mem", (4, 37, 0)),
    ("ftm-swift-exp-qwen1half-7b-chat-awq-qwen1half-7b-chat-awq-mem", (4, 41, 0)),
])
def test_an_ms_swift_row_runs_the_transformers_its_release_pinned(catalog: Catalog, row_id: str,
                                                                  below: tuple[int, int, int]) -> None:
    # both pins fall before transformers 4.46, whose loss kept the 16-bit logits: the loss of the release that ran
    # (12 bytes an entry) is counted, not the current one's 10
    row = next(r for r in _rows("finetune_more.csv") if r["id"] == row_id)
    case, why = _finetune_case(catalog, row)
    assert case is not None, why
    found = release(case.meta["setup"].transformers_version)
    assert found is not None and found < below
    unpinned = {**row, "framework_version": "ms-swift", "notes": row["notes"].replace("transformers 4.36.2", "it")}
    current, _ = _finetune_case(catalog, unpinned)
    assert current is not None and current.meta["setup"].transformers_version == ""
    cal = fitted()
    assert case.predict(cal) > current.predict(cal)


def test_a_stated_transformers_release_is_read_and_a_bound_is_not(catalog: Catalog) -> None:
    row = next(r for r in _rows("finetune_more.csv") if r["source_group"] == "universal-llm-trainer-gpu-test"
               and r["metric"].startswith("peak_mem"))
    case, why = _finetune_case(catalog, row)
    assert case is not None, why
    assert case.meta["setup"].transformers_version == "4.49.0"
    bound, _ = _finetune_case(catalog, {**row, "framework_version": "PEFT + TRL; transformers>4.44.2", "notes": ""})
    assert bound is not None and bound.meta["setup"].transformers_version == ""


def test_a_sharegpt_run_sent_at_once_is_read_as_that_many_requests_of_exponential_lengths() -> None:
    # GPUStack's DeepSeek-R1 H200 SGLang run: 1000 successful requests, 200,767 tokens generated (mean 201)
    row = {"isl": "ShareGPT (mean 219)", "osl": "ShareGPT (mean 201)",
           "notes": "Dataset ShareGPT_V3_unfiltered_cleaned_split: 1000 successful requests, total input 219171"}
    lengths = sharegpt_output_lengths(row, 219, 201)
    assert lengths is not None and len(lengths) == 1000
    # an exponential of mean 201 sampled at 1,000 quantiles: mean 201 (within rounding and the floor of 4),
    # median 201 × ln 2 = 139, the longest near 201 × ln 2000 = 1,528, all within vllm bench serve's filter
    assert sum(lengths) / 1000 == pytest.approx(201, rel=0.02)
    assert sorted(lengths)[500] == pytest.approx(139, abs=2)
    assert max(lengths) == pytest.approx(1528, rel=0.02) and max(lengths) <= 2048 - 219
    assert min(lengths) >= 4
    # a row that does not say how many requests it sent, or is not a ShareGPT run, keeps the steady-state model
    assert sharegpt_output_lengths({**row, "notes": "all requests at once"}, 219, 201) is None
    assert sharegpt_output_lengths({**row, "isl": "random (mean 219)", "osl": "random (mean 201)"}, 219, 201) is None


def test_an_mlperf_offline_row_runs_the_layout_and_lengths_its_notes_state(catalog: Catalog) -> None:
    # mlp-0001, NVIDIA's DGX H100 in MLPerf Inference v4.0: its config class H100_SXM_80GB_TP2x4 runs TP2 engines
    # (4 on the 8 GPUs) of gpu_batch_size 896; the log sent 200,640 samples (50,160 per engine); the dataset's mean
    # prompt is 222 tokens and the run's mean output 21,805.8 / 74.699 = 292
    row = next(r for r in _rows("inference_runs.csv") if r["id"] == "mlp-0001")
    case, why = _inference_case(catalog, row)
    assert case is not None, why
    s = case.meta["setup"]
    assert (s.tp, s.pp, s.max_num_seqs, s.prompt_len, s.output_len, s.kv_dtype) == (2, 1, 896, 222, 292, "fp8")
    assert case.meta["instances"] == 4 and not case.fit  # dataset means: reported, not fitted on
    one = finite_run(case.meta["model"], case.meta["gpu"], s, mlperf_output_lengths(50_160, 292, 0.62, 1024))
    assert case.predict(fitted()) == pytest.approx(4 * one)
    # the same system's samples/s is the same run, and a row whose layout cells say nothing stays unmapped
    twin = next(r for r in _rows("inference_runs.csv") if r["id"] == "mlp-0002")
    assert _inference_case(catalog, twin)[0] is None
    bare, why = _inference_case(catalog, {**row, "tp": "not in summary log", "batch_or_concurrency": "engine-chosen"})
    assert bare is None and "layout" in why


def test_mlperf_output_lengths_keep_the_runs_mean_and_the_datasets_spread() -> None:
    # a gamma law of mean 292 and c² = 0.62 (shape 1.61): Wilson & Hilferty's median 292 × (1 − 0.62/9)³ = 235.7;
    # the cube keeps the mean to 292 × (1 − (0.62/9)³) = 291.9, and few samples pass the 1,024-token cap
    lengths = mlperf_output_lengths(20_000, 292, 0.62, 1024)
    mean = sum(lengths) / len(lengths)
    variance = sum((x - mean) ** 2 for x in lengths) / len(lengths)
    assert mean == pytest.approx(292, rel=0.01)
    assert variance / mean**2 == pytest.approx(0.62, abs=0.05)
    assert sorted(lengths)[10_000] == pytest.approx(236, abs=2)
    assert min(lengths) >= 1 and max(lengths) == 1024


def test_a_random_dataset_varies_its_prompts_as_a_uniform_law_not_as_sharegpt() -> None:
    # sglang.bench_serving's random dataset draws each prompt length uniformly from max(⌊r·L⌋, 1) … L. kvcached's
    # runs (L = 1913, the default r = 0): mean 957, variance (1913² − 1)/12 = 304,964, so c² = 304,964 / 957² = 0.333;
    # with r = 0.5 the lengths span 956 … 1913: variance (958² − 1)/12 = 76,480, mean 1434.5, c² = 0.0372.
    # ShareGPT keeps the exponential's c² = 1
    kvcached = {"isl": "random <=1913 (mean 971)", "notes": "the tool's default --random-range-ratio 0.0, so"}
    assert prompt_length_cv2(kvcached) == pytest.approx(0.3330, abs=1e-4)
    narrow = {**kvcached, "notes": "--random-range-ratio 0.5"}
    assert prompt_length_cv2(narrow) == pytest.approx(0.0372, abs=1e-4)
    assert prompt_length_cv2({"isl": "ShareGPT (mean 213)", "notes": ""}) == 1.0


def test_a_random_dataset_runs_median_prompt_is_near_its_mean(cases: list[Case]) -> None:
    # the mapped load case carries the uniform law's c² (its median prompt, read as a gamma of c² = 1/3, is
    # 0.89 × the 971-token mean, near the uniform's own median, where ShareGPT's c² = 1 would give 0.70 × 971)
    case = {c.id: c for c in cases}["srv-5951"]  # kvcached, 16 req/s, median TTFT
    assert "c² = 0.33" in case.assume


def test_a_run_that_states_its_prompt_count_is_a_finite_run(cases: list[Case]) -> None:
    # DataCrunch's DeepSeek-V3 FP8 TP8 run sent "600 prompts" (bench_serving --num-prompts) at 2 req/s: past its
    # capacity an endless stream's queue never ends, but 600 requests' does, so the median TTFT is finite
    rows = {c.id: c for c in cases}
    two, eight = rows["srv-1185"].predict(fitted()), rows["srv-1195"].predict(fitted())
    assert math.isfinite(two) and math.isfinite(eight)


def test_the_same_run_at_four_times_the_rate_waits_longer(cases: list[Case]) -> None:
    # DataCrunch's DeepSeek-V3 FP8 TP8 run at 1 and 4 req/s (the 2 and 8 req/s runs are both past the capacity
    # gpuplan gives this eager SGLang 0.4.1 server, where the running batch absorbs the backlog of either)
    rows = {c.id: c for c in cases}
    assert rows["srv-1190"].predict(fitted()) > rows["srv-1180"].predict(fitted())


def test_a_v014_perf_overview_row_is_the_finite_run_its_doc_lists(cases: list[Case]) -> None:
    # trt-0319: TensorRT-LLM 0.14 perf overview, Llama-3.1-70B FP8 on one H200, 128/4096; the doc's $num_requests
    # table sends 1,500 requests of that pair, so the run is 16 waves of the cache's sequences and its last wave of
    # 1,500 - 15 x 98 = 30 runs its 4,096 steps part-empty: 2 to 3 % below the endless stream's rate
    case = {c.id: c for c in cases}["trt-0319"]
    m, g, s, cal = case.meta["model"], case.meta["gpu"], case.meta["setup"], fitted()
    assert max_batch(m, g, s, cal) < 1500 < 16 * max_batch(m, g, s, cal)
    assert case.predict(cal) == pytest.approx(uniform_run(m, g, s, 1500, cal))
    assert case.predict(cal) < 0.99 * throughput(m, g, s, cal).figures.output_tokens_per_s


def test_gpustack_sharegpt_runs_are_predicted_as_finite_runs(cases: list[Case]) -> None:
    rows = {c.id: c for c in cases}
    case = rows["srv-1272"]  # DeepSeek-R1 SGLang TP8 H200, 1000 ShareGPT requests at once
    assert "finite run" in case.assume


def test_deepseek_v3_pretraining_gpu_hours_run_in_the_reports_layout(catalog: Catalog) -> None:
    # DeepSeek-V3 report (arXiv:2412.19437): 2,048 H800, PP 16 × EP 64 over 8 nodes × ZeRO-1 DP, no TP (sec. 3.2);
    # 14.8T tokens of 4,096, batch 15,360 sequences (sec. 4.2); 2.664M GPU-hours of pre-training (README)
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-dsv3-pretrain-gpuh")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert case.cls == "pretrain_gpu_hours" and case.measured == 2_664_000 and case.meta["tokens"] == 14.8e12
    setup = case.meta["setup"]
    par = setup.parallel
    assert (par.tp, par.pp, par.dp, par.ep, par.zero) == (1, 16, 128, 64, 1)  # 2,048 / 16 stages = 128 replicas
    assert setup.grad_accum == 15_360 // 128 and setup.precision == "fp8-mixed"
    # an MoE run is reported, not fitted on, as the MoE throughput rows are (its all-to-alls are overlapped)
    assert not case.fit


def test_the_llama_3_1_405b_card_runs_in_the_papers_16k_gpu_layout(catalog: Catalog) -> None:
    # Llama 3 paper (arXiv:2407.21783) Table 4: 16,384 H100 as TP 8 × CP 1 × PP 16 × DP 128, 8,192-token
    # sequences, 16M tokens a batch (2,048 sequences: 16 micro-batches of 1 per replica); 15.6T tokens (sec. 3.4)
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-llamacard-llama-31-405b-gpuh")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    par = case.meta["setup"].parallel
    assert (par.tp, par.cp, par.pp, par.dp) == (8, 1, 16, 128)
    assert case.meta["setup"].grad_accum == 16 and case.meta["tokens"] == 15.6e12
    assert not case.fit  # the card's GPU-hours also hold the long-context stage: approximate


def test_a_megatron_bridge_row_runs_the_interleaved_schedule_its_table_states(catalog: Catalog) -> None:
    # Megatron-Bridge 26.04.01, Llama-3-70B on 64 H100: PP 8, VP 5 (the table's columns, quoted in the notes);
    # a PP 1 row's "VP n/a" is no interleaving
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-mb-260401-h100-llama370b-fp8-64-g256-p-tokgpu")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert (case.meta["setup"].parallel.pp, case.meta["setup"].parallel.vp) == (8, 5)
    flat_id = "trm-mb-260401-gb200-llama370b-fp8-64-g256-p-tokgpu"
    flat = next(r for r in _rows("training_more.csv") if r["id"] == flat_id)
    case, why = _pretrain_case(catalog, flat)
    assert case is not None, why
    assert case.meta["setup"].parallel.vp == 1


def test_megatron_cores_mixtral_figure_reads_back_through_megatrons_flop_count(catalog: Catalog) -> None:
    # Megatron-Core's MoE README: 438 TFLOPS per H100 (MCore v0.8) on 64 GPUs, TP 1 EP 8 PP 4 VP 8, MBS 1, GBS 256.
    # Megatron's num_floating_point_operations for Mixtral 8x7B at 4096 tokens, by hand:
    # 12·32·4096²·[(1 + 8/32 + 4096/4096)·1 + 3.5·2·1.5 + 32000/(2·32·4096)] = 82,927,681,536 FLOPs per token
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-mcore08-mixtral8x7b-64-g256-tokgpu")
    case, why = _pretrain_case(catalog, row)
    assert case is not None, why
    assert case.cls == "pretrain_throughput_moe" and case.group == "megatron-core-moe-readme"
    assert case.measured == pytest.approx(438e12 / 82_927_681_536, abs=0.05)
    par = case.meta["setup"].parallel
    assert (par.tp, par.ep, par.pp, par.vp, par.dp) == (1, 8, 4, 8, 16)
    assert case.meta["setup"].grad_accum == 256 // 16


def test_nemo_automodel_rows_run_the_pytorch_native_stack_with_the_expert_layout_they_state(catalog: Catalog) -> None:
    # NeMo AutoModel's performance summary: DeepSeek V3 on 256 H100, PP 4 VP 8 EP 64, FSDP 64, MBS 1, LBS 8, GA 1,
    # GBS 512: 8.18 s a step, 512·4096 / (8.18·256) = 1,001.4 tok/s/GPU, printed 1,002. Its FSDP2 stack is
    # torchtitan's kind, not the Megatron-Core one the "NeMo" in its name would pick
    rows = {r["id"]: r for r in _rows("training_more.csv")}
    case, why = _pretrain_case(catalog, rows["trm-automodel-dsv3-256-tokgpu"])
    assert case is not None, why
    assert case.cls == "pretrain_throughput_moe" and case.group == "nemo-automodel-perf"
    assert case.meta["setup"].framework == "torchtitan" and case.measured == 1002
    par = case.meta["setup"].parallel
    assert (par.tp, par.pp, par.vp, par.ep, par.dp, par.zero) == (1, 4, 8, 64, 64, 3)
    assert case.meta["setup"].grad_accum == 512 // 64  # 8 micro-batches of 1 per replica
    # gpt-oss-120b: the table prints EP "-" and its config at that commit is another layout: no EP, unmapped
    case, why = _pretrain_case(catalog, rows["trm-automodel-gptoss120b-64-tokgpu"])
    assert case is None and "expert-parallel degree" in why


def test_nemo_automodel_rows_run_the_attention_kernel_their_backend_names(catalog: Catalog) -> None:
    # AutoModel's MoE benchmark configs set backend attn "te" (Transformer Engine's DotProductAttention, which on
    # Hopper picks cuDNN's fused attention) or "flex" (gpt-oss: FlexAttention, no family gpuplan models): the first
    # runs the cuDNN family even though the rest of the step is timed as torchtitan's, the second the stack's
    rows = {r["id"]: r for r in _rows("training_more.csv")}
    kernels = {}
    for row_id in ("trm-automodel-qwen3-30b-8-tokgpu", "trm-automodel-gptoss20b-8-tokgpu"):
        case, why = _pretrain_case(catalog, rows[row_id])
        assert case is not None, why
        assert case.meta["setup"].framework == "torchtitan" and case.meta["setup"].recompute == "full"
        kernels[row_id] = attention_kernel(case.meta["setup"])
    assert kernels == {"trm-automodel-qwen3-30b-8-tokgpu": "cudnn", "trm-automodel-gptoss20b-8-tokgpu": "flash2"}


def test_a_fine_tune_whose_framework_names_torch_compile_is_timed_compiled(catalog: Catalog) -> None:
    # AutoModel's Llama-3.3-70B LoRA benchmark on 8 H100 (TP 2 × FSDP 4) set enable_compile: every decoder layer
    # runs under torch.compile, the loss outside it; the same row read without the compile runs eager and slower
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}
    row = rows["ftm-automodel-llama3-70b-lora-8gpu-tokgpu"]
    compiled, why = _finetune_case(catalog, row)
    assert compiled is not None, why
    eager, _ = _finetune_case(catalog, {**row, "framework": "NeMo AutoModel (PyTorch backend, FSDP2)"})
    assert eager is not None
    assert compiled.meta["setup"].compiled and not eager.meta["setup"].compiled
    assert compiled.meta["setup"].compiled_loss is False  # "loss uncompiled" in the notes
    assert compiled.meta["setup"].recompute == "full"  # self_attn and mlp checkpointed: every matmul again
    cal = fitted()
    assert compiled.predict(cal) > eager.predict(cal)  # tokens/s: the compiled step is faster
    # the one-GPU rows ran no compile
    one, _ = _finetune_case(catalog, rows["ftm-automodel-llama3-8b-lora-1gpu-tokgpu"])
    assert one is not None and not one.meta["setup"].compiled


def test_one_client_closed_loop_median_tpot_is_also_a_batch1_decode_row(catalog: Catalog) -> None:
    from calib import ONE_CLIENT_SUFFIX, _one_client_decode_case, _one_client_step, _run_key

    # GPUStack's Qwen3-8B H100 page, vLLM v0.11.0 at --max-concurrency 1: median TPOT 7.22 ms over ShareGPT
    # requests of mean 233 prompt / 221 output tokens; one client never has two decodes in flight
    rows = {r["id"]: r for r in _rows("inference_serving.csv")}
    one, itl = rows["srv-4710"], rows["srv-4713"]
    assert (one["batch_or_concurrency"], one["metric"], one["value"]) == ("1", "tpot_ms_median", "7.22")
    with_tpot = {_run_key(one)}
    assert _one_client_step(one, with_tpot)
    # the same run's median ITL counts the same steps: mapped only where the run printed no median TPOT
    assert not _one_client_step(itl, with_tpot) and _one_client_step(itl, set())
    # two clients batch two decodes: not a batch-1 step
    assert not _one_client_step({**one, "batch_or_concurrency": "2"}, set())
    case = _one_client_decode_case(catalog, one)
    assert case is not None and case.cls == "decode_batch1" and case.id == "srv-4710" + ONE_CLIENT_SUFFIX
    assert case.measured == pytest.approx(0.00722)
    setup = case.meta["setup"]
    assert (setup.batch, setup.prompt_len, setup.output_len) == (1, 233, 221) and case.fit



@pytest.mark.parametrize(("prompt_len", "lengths_vary", "computed"), [
    (33, False, 1),  # two full blocks cached, the 33rd token computed
    (40, False, 8),  # the 8 tokens past the second block
    (32, False, 16),  # the last token may not come from the cache, and hits are whole blocks: the 2nd block again
    (213, True, 9),  # a dataset's mean: every remainder alike, (16 + 1) / 2 = 8.5 tokens, rounded up
])
def test_cached_prompt_computes_only_the_tail_of_its_last_block(prompt_len: int, lengths_vary: bool,
                                                                 computed: int) -> None:
    from calib import cached_prompt_tokens

    tokens, cv2 = cached_prompt_tokens(prompt_len, 16, lengths_vary)
    assert tokens == computed
    # fixed lengths compute the same tail every time; varying ones 1 ... 16 tokens: (16² - 1)/12 / 8.5² = 0.29
    assert cv2 == (pytest.approx(0.294, abs=1e-3) if lengths_vary else 0.0)


def test_runs_that_reuse_an_earlier_runs_prompts_prefill_only_the_uncached_tail(catalog: Catalog) -> None:
    from calib import _load_case

    # surajssd llm-k8s: the same 200 ShareGPT prompts at 1, then 4 req/s on one vLLM 0.8.3 server with
    # --enable-prefix-caching; the measured mean TTFT fell from 65.3 to 50.3 ms although the load rose
    rows = {r["id"]: r for r in _rows("inference_serving.csv")}
    first, second = rows["srv-5772"], rows["srv-5784"]
    assert "prompts already cached" not in first["notes"].lower()
    cold, _ = _load_case(catalog, first)
    warm, _ = _load_case(catalog, second)
    assert cold is not None and warm is not None
    assert (cold.meta["setup"].prompt_len, warm.meta["setup"].prompt_len) == (213, 9)
    cal = fitted()
    # a 9-token pass reads the same weights as a 213-token prefill but does a twenty-fourth of its FLOPs: at four
    # times the load, the warm run's first tokens still come sooner, as measured
    assert warm.predict(cal) < cold.predict(cal)
    assert cold.measured > warm.measured

@pytest.mark.parametrize(("version", "notes", "v0"), [
    ("0.6.3", "", True),  # the Qwen2.5 speed benchmark's vLLM (V0: before 0.8.0, PR #13726)
    ("v0.7.3", "", True),
    ("0.7.3.dev138+g21f6ca217 (rocm/vllm-dev:vllm-ds3-staging-0217)", "", True),  # dstack's ROCm build
    ("0.6.3", "VLLM_USE_V1=1 set", False),  # V1 switched on by hand before it was the default
    ("v0.11.0", "", False),  # GPUStack's performance lab
    ("0.8.0", "", False),  # the release that made V1 the default
    ("", "", False),  # unstated: the current engine
])
def test_a_row_of_vllm_before_0_8_runs_the_v0_engine(version: str, notes: str, v0: bool) -> None:
    from calib import _release_text

    row = {"engine_version": version, "notes": notes}
    assert vllm_v0(InferSetup(engine="vllm", engine_version=_release_text(row))) is v0
    assert not vllm_v0(InferSetup(engine="sglang", engine_version=_release_text(row)))


def test_a_vllm_v0_batch1_row_is_fitted_on_the_v0_step_overhead(catalog: Catalog) -> None:
    rows = {r["id"]: r for r in _rows("inference_extra.csv")}
    # ext-0017: vLLM 0.6.3, Qwen2.5-7B on an A100, batch 1; b1-0007: vLLM 0.23.0, Llama-3.1-8B on an A100, batch 1
    old, new = (_inference_case(catalog, rows[i])[0] for i in ("ext-0017", "b1-0007"))
    assert old is not None and new is not None and old.cls == new.cls == "decode_batch1"
    # b1-0007's figure is rounded ("about 75 tokens/sec", confidence approx): reported, not fitted on
    assert old.fit and not new.fit
    assert vllm_v0(old.meta["setup"]) and not vllm_v0(new.meta["setup"])
    # the V0 row reads V0's step overhead where a calibration holds one, V1's otherwise
    cal = fitted()
    with_v0 = Calibration(values={**cal.values, "layer_overhead_s_vllm_v0": 1e-3})
    assert old.predict(with_v0) > old.predict(cal)
    assert new.predict(with_v0) == new.predict(cal)


def test_a_one_user_run_that_prints_only_a_median_itl_maps_that_itl(catalog: Catalog) -> None:
    from calib import _one_client_decode_case, _one_client_step

    # silybench-data's Qwen3-8B BF16 run on one H100 (vLLM 0.30.0), workload chat-128-128 at 1 user: median ITL
    # 6.826 ms at a fixed 128-token prompt and 128-token output; the run has no median TPOT row
    row = {r["id"]: r for r in _rows("inference_extra.csv")}["b1-0008"]
    assert (row["metric"], row["isl"], row["osl"], row["value"]) == ("itl_ms_median", "128", "128", "6.826")
    assert _one_client_step(row, set())
    case = _one_client_decode_case(catalog, row)
    assert case is not None and case.cls == "decode_batch1" and case.measured == pytest.approx(0.006826)
    assert (case.meta["setup"].prompt_len, case.meta["setup"].output_len) == (128, 128)


@pytest.mark.parametrize(("engine", "notes", "launcher"), [
    # TensorRT-LLM perf-overview v1.0: trtllm-bench, which captures padded CUDA graphs up to its batch
    ("TensorRT-LLM", "trtllm-bench throughput --backend pytorch", "trtllm-bench"),
    # GPUStack's performance lab: trtllm-serve with its defaults
    ("TensorRT-LLM", "serving command: `trtllm-serve Qwen/Qwen3-14B`", ""),
    ("vLLM", "trtllm-bench named in passing", ""),  # only TensorRT-LLM rows read the launcher
])
def test_a_trtllm_bench_row_carries_its_launcher(engine: str, notes: str, launcher: str) -> None:
    from calib import _launcher

    assert _launcher({"engine": engine, "notes": notes}) == launcher


def test_a_torchtune_qlora_row_on_torchao_0_1_quantizes_whole_matrices_on_load(catalog: Catalog) -> None:
    # torchtune @0914d5cf pins torchao==0.1 (pyproject.toml), whose NF4Tensor quantizes a whole matrix at once;
    # torchao 0.2 (pytorch/ao #196) chunks it, and a row that names no release keeps the current behaviour
    row = next(r for r in _rows("finetune_more.csv") if r["id"] == "ftm-torchtune-tutorial-llama2-7b-qlora-mem")
    case, _ = _finetune_case(catalog, row)
    assert case is not None and case.meta["setup"].nf4_whole_matrix
    for text in ("NF4 (torchao 0.2 NF4Tensor)", "NF4 (torchao NF4Tensor, double-quantized scales)"):
        later, _ = _finetune_case(catalog, {**row, "quant_base": text})
        assert later is not None and not later.meta["setup"].nf4_whole_matrix


def test_swift_bitsandbytes_rows_keep_the_unquantized_modules_in_fp16(catalog: Catalog) -> None:
    # ms-swift @306fa15a0 loads Qwen (v1) with torch_dtype None, so transformers stores the bitsandbytes model's
    # embedding, norms and lm_head in fp16 while the run trains in bf16; its GPTQ rows load fp16 checkpoints and
    # train in fp16, and a quant_base that says nothing of the other modules keeps the compute dtype
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}
    stem = "ftm-swift-quantization-qwen-7b-chat-lora-{}-len2048-bs1-ga16-fa1-gc1-r8-default-mem"
    bnb, _ = _finetune_case(catalog, rows[stem.format("int4-bnb")])
    gptq, _ = _finetune_case(catalog, rows[stem.format("int4-gptq")])
    assert bnb is not None and bnb.meta["setup"].base_fp16
    assert gptq is not None and not gptq.meta["setup"].base_fp16
    plain, _ = _finetune_case(catalog, {**rows[stem.format("int4-bnb")], "quant_base": "bnb nf4, double quant"})
    assert plain is not None and not plain.meta["setup"].base_fp16


def test_a_stated_bitsandbytes_before_0_43_dequantizes_through_fp16(catalog: Catalog) -> None:
    # ms-swift's January 2024 environment names bitsandbytes 0.41.3.post2, whose Params4bit.cuda quantizes a
    # .half() copy: the NF4 state records fp16 and every dequantized matrix gets a bf16 copy beside it, 2 bytes more
    # a weight of the largest matrix: Qwen-7B's MLP projection, 4096 × 11008, as the hf stack lays out the layer
    # (Q, K and V apart, data/stacks.csv fused_qkv no; Qwen v1's own fused c_attn, 4096 × 12288, is not modelled)
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}
    row = rows["ftm-swift-quantization-qwen-7b-chat-lora-int4-bnb-len2048-bs1-ga16-fa1-gc1-r8-default-mem"]
    old, _ = _finetune_case(catalog, row)
    assert old is not None and old.meta["setup"].nf4_stats_fp16 is True
    notes = row["notes"].replace("bitsandbytes 0.41.3.post2", "bitsandbytes {}")
    for unstated in ({**row, "notes": notes.format("(release not given)")}, {**row, "notes": notes.format("0.43.0")}):
        today, _ = _finetune_case(catalog, unstated)
        assert today is not None and today.meta["setup"].nf4_stats_fp16 is None
    cal = fitted()
    assert old.predict(cal) - today.predict(cal) == pytest.approx(4096 * 11008 * 2)


def test_a_reserved_reading_stops_at_the_card(catalog: Catalog) -> None:
    # ms-swift's Qwen-72B-Chat LoRA on two A100-80GB (device_map split, 2,048 tokens): the cards read 73.71 and
    # 78.54 GiB reserved. gpuplan's pool for the busier card, fragmentation share included, is larger than the
    # card, which PyTorch's allocator cannot reach: it frees its cache and retries first. So the reading is predicted
    # at the card less the CUDA context, and never below the tensors the step holds
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}
    case, why = _finetune_case(catalog, rows[
        "ftm-swift-quantization-qwen-72b-chat-lora-bf16-len2048-bs1-ga16-fa1-gc1-r8-default-mem"])
    assert case is not None, why
    cal = fitted()
    m, s = case.meta["model"], case.meta["setup"]
    est = training_memory(m, s, cal, describe=False)
    context = est.breakdown.get("overhead")
    unbounded = training_memory_predictor(m, s, "reserved")(cal)
    card = 81_920 * 2**20  # A100-80GB as the driver shows it
    assert unbounded > card
    assert case.predict(cal) == pytest.approx(card - context)
    assert case.measured <= case.predict(cal) < 1.01 * case.measured
    # a run far below the card (Qwen-7B LoRA at 512 tokens, 18.01 GiB) is predicted as before
    small, _ = _finetune_case(catalog, rows[
        "ftm-swift-lora-qwen-7b-chat-lora-bf16-len512-bs1-ga16-fa1-gc1-r8-default-mem"])
    assert small is not None
    sm, ss = small.meta["model"], small.meta["setup"]
    assert small.predict(cal) == training_memory_predictor(sm, ss, "reserved")(cal)
    # a tiny card does not take the prediction below the step's own tensors
    floor = est.floor
    assert floor is not None
    bounded = training_memory_predictor(m, s, "reserved", card_bytes=10 * 2**30)(cal)
    assert bounded == pytest.approx(floor.value - context)


def test_rows_run_with_cuda_graphs_off_map_to_eager_steps(cases: list[Case]) -> None:
    # DataCrunch's DeepSeek-V3 runs launched SGLang with --disable-cuda-graph (srv-1181: 1 req/s, TP8, median TPOT
    # 209 ms, four times the graphed estimate), the Qwen2.5 speed benchmark's Qwen2.5-32B row ran vLLM with
    # enforce_eager=True (ext-0022); DataCrunch's Llama 3.3 70B run (srv-1062: --enable-torch-compile, graphs on)
    # and the Qwen2.5-14B row (ext-0021: enforce_eager=False) kept the graphs
    by_id = {c.id: c for c in cases}
    assert by_id["srv-1181"].meta["setup"].cuda_graphs is False
    assert by_id["ext-0022"].meta["setup"].cuda_graphs is False
    assert by_id["srv-1062"].meta["setup"].cuda_graphs is True
    assert by_id["ext-0021"].meta["setup"].cuda_graphs is True
    # at the row's 1 req/s the eager steps (DeepSeek-V3's 61 MLA/MoE layers at transformers' fitted per-layer host
    # time) bring the median TPOT to the 209 ms measured (222 ms with the fit of 2026-12-07, the host time following
    # transformers' rows), where the graphed estimate is 68 % short of it
    case = by_id["srv-1181"]
    m, g, eager = case.meta["model"], case.meta["gpu"], case.meta["setup"]
    slow = at_rate(m, g, eager, 1.0, fitted()).tpot_median_s
    fast = at_rate(m, g, replace(eager, cuda_graphs=True), 1.0, fitted()).tpot_median_s
    assert fast < 0.35 * case.measured
    assert 0.75 * case.measured < slow < 1.25 * case.measured


def test_sglang_041_runs_deepseek_v3_without_cuda_graphs_whatever_its_flags(cases: list[Case]) -> None:
    # SGLang 0.4.1's ModelRunner turns CUDA graphs off for DeepseekV3ForCausalLM (model_specific_adjustment, "FIXME"),
    # so DataCrunch's single-node FP8 DeepSeek-V3 run (srv-1201: --enable-dp-attention, no --disable-cuda-graph,
    # 1 req/s, median TPOT 144 ms) stepped op by op; dstack's DeepSeek-R1 server on 0.4.3.post2, whose wheel has no
    # such line, and DataCrunch's Llama 3.3 70B server kept their graphs
    by_id = {c.id: c for c in cases}
    assert by_id["srv-1201"].meta["setup"].cuda_graphs is False
    assert by_id["srv-4891"].meta["setup"].cuda_graphs is True
    assert by_id["srv-1062"].meta["setup"].cuda_graphs is True
    # graphed, the estimate is under half the measured median TPOT; eager, within a factor of 1.6 of it (1.55 with
    # the fit of 2026-12-07: the same eager step as srv-1181's, 222 ms, where this run measured 144 ms)
    case = by_id["srv-1201"]
    m, g, eager = case.meta["model"], case.meta["gpu"], case.meta["setup"]
    slow = at_rate(m, g, eager, 1.0, fitted(), n_requests=300).tpot_median_s
    fast = at_rate(m, g, replace(eager, cuda_graphs=True), 1.0, fitted(), n_requests=300).tpot_median_s
    assert fast < 0.5 * case.measured
    assert case.measured / 1.6 < slow < 1.6 * case.measured


def test_a_multi_step_vllm_run_under_load_is_listed_unmapped(catalog: Catalog) -> None:
    # dstack's Llama-3.1-405B FP8 table at 16 req/s: the 8x MI300X server ran --num-scheduler-step 15 (its mean TPOT
    # 1,569 ms against a 418 ms median), the 8x H100 server one step per schedule; only the latter is a case
    rows = {r["id"]: r for r in _rows("inference_serving.csv")}
    multi, single = rows["srv-5989"], rows["srv-5968"]
    assert (multi["gpu_spec_name"], single["gpu_spec_name"]) == ("MI300X", "H100")
    case, why = _inference_case(catalog, multi)
    assert case is None and "multi-step scheduling (15 decode steps" in why
    case, why = _inference_case(catalog, single)
    assert case is not None and case.cls == "tpot", why


def test_a_gguf_whose_publisher_picks_its_own_tensor_types_is_sized_as_its_stated_file(catalog: Catalog) -> None:
    # unsloth requantized its Qwen3.5 GGUFs with its own per-tensor choices (unsloth.ai/docs/models/qwen3.5/
    # gguf-benchmarks, Mar 5 update): its Qwen3.5-35B-A3B Q4_K_M is 20.50 GiB where llama.cpp's Q4_K_M recipe
    # gives 19.70 GiB, so the row is predicted with the file it names; bartowski's files keep the recipe
    from gpuplan.estimate.memory import gguf_weights_bytes
    from gpuplan.estimate.quant import weight_format
    from gpuplan.units import GiB

    row = next(r for r in _rows("inference_llamacpp.csv") if r["id"] == "lcp-0498")
    unsloth, _ = _inference_memory_case(catalog, row)
    recipe_row, _ = _inference_memory_case(catalog, {**row, "model": "bartowski/Qwen_Qwen3.5-35B-A3B-GGUF"})
    assert unsloth is not None and recipe_row is not None
    recipe = gguf_weights_bytes(catalog.model("Qwen3.5-35B-A3B"), weight_format("gguf-q4_k_m"))
    cal = fitted()
    # the same model, machine and run: the two predictions differ by the file against the recipe, nothing else
    assert unsloth.predict(cal) - recipe_row.predict(cal) == pytest.approx(20.50 * GiB - recipe, rel=1e-6)
    assert "stated size" in unsloth.assume and "stated size" not in recipe_row.assume


def test_an_mlx_gemma3_multimodal_checkpoint_holds_its_output_layer_apart(catalog: Catalog) -> None:
    # mlx-vlm's Gemma 3 conversion copies the token table into lm_head and quantizes both, and mlx-lm keeps the
    # stored head: Gemma-3-4B at 4 bits and 64-weight groups carries 262,208 x 2,560 x 4.5 / 8 = 0.35 GiB more
    # than a tied model (mac-llm-bench, M5: 3.150 GB read, which the tied count under-predicts by 9 %). The
    # text-only 1B converts with mlx-lm and stays tied; a GGUF of the same model is llama.cpp's, not mlx-vlm's
    from gpuplan.estimate.memory import inference_memory
    from gpuplan.units import GiB

    def case(row_id: str) -> Case:
        row = next(r for r in _rows("inference_llamacpp.csv") if r["id"] == row_id)
        made, why = _inference_memory_case(catalog, row)
        assert made is not None, why
        return made

    cal = fitted()
    four_b, one_b, gguf = case("lcp-0702"), case("lcp-0696"), case("lcp-0420")
    assert not four_b.meta["model"].tied_embeddings and "apart from the token table" in four_b.assume
    tied = inference_memory(replace(four_b.meta["model"], tied_embeddings=True), four_b.meta["gpu"],
                            four_b.meta["setup"], cal)
    held_apart = inference_memory(four_b.meta["model"], four_b.meta["gpu"], four_b.meta["setup"], cal)
    assert 0.34 * GiB < held_apart.total - tied.total < 0.36 * GiB
    # held apart, the 4B's estimate comes within 5 % of what it used (3.134 against 3.150 GB with the fit of
    # 2026-12-07, 3.243 once the fitted workspace rose from 0.42 to 0.53 GiB with the MLX peak-memory rows of the
    # same day), where the tied count falls 12 % short
    assert abs(four_b.predict(cal) / four_b.measured - 1) < 0.05
    assert one_b.meta["model"].tied_embeddings and gguf.meta["model"].tied_embeddings


def test_mac_llm_bench_mlx_memory_rows_run_at_most_512_plus_128_tokens() -> None:
    # lib/run_bench_mlx.sh (enescingoz/mac-llm-bench @5e91948) skips pp512 with tg256, so the highest peak it
    # keeps is of a 512-token prompt and 128 generated tokens, not 512 + 256
    rows = [r for r in _rows("inference_llamacpp.csv")
            if r["engine"] == "MLX" and r["scenario"] == "memory" and r["source_group"] == "enescingoz/mac-llm-bench"]
    assert rows and all((r["isl"], r["osl"]) == ("512", "128") for r in rows)


def test_a_megatron_bridge_moe_row_runs_the_dispatcher_its_releases_recipe_sets(catalog: Catalog) -> None:
    # Megatron-Bridge 26.04.01: Qwen3-30B-A3B on 16 H100 (EP 16, two HGX nodes) ran the HybridEP flex dispatcher,
    # gpt-oss-120b on 64 H100 the alltoall one (scripts/performance/configs/*/..._workload_base_configs.py at r0.4.0,
    # quoted in the rows' notes)
    rows = {r["id"]: r for r in _rows("training_more.csv")}
    hybrid, why = _pretrain_case(catalog, rows["trm-mb-260401-h100-qwen330ba3b-fp8-16-g1024-p-tokgpu"])
    assert hybrid is not None, why
    assert hybrid.meta["setup"].ep_dispatcher == "deepep"
    alltoall, why = _pretrain_case(catalog, rows["trm-mb-260401-h100-gptoss120b-bf16-64-g1280-p-tokgpu"])
    assert alltoall is not None, why
    assert alltoall.meta["setup"].ep_dispatcher == "alltoall"
    # HybridEP sends a token across the node boundary once (to the other node's GPU of the same index, which
    # forwards it), where alltoall sends one copy per expert there: of Qwen3-30B-A3B's 8 experts, 4 on average sit on
    # the other node, so the network bytes fall about 4x; they are the larger part of this step, which speeds up by
    # a fifth to a half
    read_as_alltoall = _pretrain_case(catalog, {**rows["trm-mb-260401-h100-qwen330ba3b-fp8-16-g1024-p-tokgpu"],
                                                "notes": "EP 16"})[0]
    assert read_as_alltoall is not None
    cal = fitted()
    assert 1.2 < hybrid.predict(cal) / read_as_alltoall.predict(cal) < 1.5


@pytest.mark.parametrize(("notes", "chunked"), [
    # Mooncake's vLLM 0.6.2 baseline, both variants of its table
    ("one NVIDIA A10 24GB, chunked prefill off (vLLM 0.6.2 default below 32K context); the other", False),
    ("one NVIDIA A10 24GB, with --enable-chunked-prefill; the other server flags", True),
    # zhjunqin's recorded engine arguments, dstack's serve command and its recorded CSV
    ("gpu_memory_utilization 0.9, enforce_eager False, enable_chunked_prefill False, enable_prefix", False),
    ("--max-seq-len-to-capture 16384 --enable-chunked-prefill=False --num-scheduler-step 15", False),
    ("the CSV records chunked prefill on with max-num-batched-tokens 512", True),
    ("vLLM OpenAI server, default flags", None),  # silent: the release's default
])
def test_a_row_says_whether_its_server_chunked_prompts(notes: str, chunked: bool | None) -> None:
    from calib import _chunked_prefill

    assert _chunked_prefill({"notes": notes}) is chunked


def test_the_mooncake_baseline_rows_map_chunked_prefill_as_their_table_rows_say(cases: list[Case]) -> None:
    # 'Non-disaggregated' ran V0's default (whole prompts in prompt-only steps); 'Non-disaggregated with
    # `--enable-chunked-prefill`' chunked them in 512-token passes mixed with the running decodes
    by_id = {c.id: c for c in cases}
    plain, chunked = by_id["srv-5844"].meta["setup"], by_id["srv-5854"].meta["setup"]
    assert (plain.chunked_prefill, chunked.chunked_prefill) == (False, True)
    model = by_id["srv-5844"].meta["model"]
    assert token_budget(model, chunked) == 512 and token_budget(model, plain) >= plain.prompt_len


def test_a_run_total_that_counts_the_whole_project_is_not_mapped(catalog: Catalog) -> None:
    # GLM-130B's 58 days for 400B tokens hold what its own training log records besides training: node failures,
    # restarts from earlier steps, abolished data mixes and days recopying the corpus. Its notes say so ("Scope:
    # the whole project"): the row is listed unmapped, while the log's speed test stays a throughput to predict and
    # the same days without that sentence would be mapped
    rows = {r["id"]: r for r in _rows("training_more.csv") if r["source_group"] == "glm-130b-training-log"}
    wall = rows["trm-glm130b-wall"]
    case, why = _pretrain_case(catalog, wall)
    assert case is None and "whole project" in why
    run_only, _ = _pretrain_case(catalog, {**wall, "notes": wall["notes"].split(" Scope:")[0]})
    assert run_only is not None and run_only.cls == "pretrain_gpu_hours"
    speed, _ = _pretrain_case(catalog, rows["trm-glm130b-bsz4224-tokgpu"])
    assert speed is not None and speed.cls == "pretrain_throughput"


def test_llama_31_405b_runs_the_interleaved_schedule_its_paper_names(catalog: Catalog) -> None:
    # Dubey et al. 2024 sec. 3.3.2: an interleaved schedule with V stages per pipeline rank (V unstated), bubble
    # (PP-1)/(V*M). With PP 16 and 16 micro-batches per step one chunk per stage idles each GPU 15/16 of a step's
    # compute; two chunks halve that, so the card's 30.84M GPU-hours are predicted lower than the one-chunk reading,
    # and the row (its V assumed) is reported, not fitted
    row = next(r for r in _rows("training_more.csv") if r["id"] == "trm-llamacard-llama-31-405b-gpuh")
    case, _ = _pretrain_case(catalog, row)
    one_chunk, _ = _pretrain_case(catalog, {**row, "notes": row["notes"].replace("VP 2", "one chunk")})
    assert case is not None and one_chunk is not None and not case.fit
    assert case.meta["setup"].parallel.vp == 2 and one_chunk.meta["setup"].parallel.vp == 1
    cal = fitted()
    assert case.predict(cal) < 0.85 * one_chunk.predict(cal)


@pytest.mark.parametrize(("row_id", "depths", "why"), [
    ("trm-mb-2511-b200-deepseekv3wmtp-fp8mx-256-g2048-p-tokgpu", 1, "label 'DeepSeekV3 (w/ MTP)'"),
    ("trm-mb-2511-gb300-deepseekv3womtp-bf16-256-g4096-p-tokgpu", 0, "label 'DeepSeekV3 (w/o MTP)'"),
    ("trm-mb-2608-gb300-nemotron3super-mxfp8-64-g512-p-tokgpu", 2, "nemotron_3_super recipe: mtp_num_layers = 2"),
    ("trm-dsv3-pretrain-gpuh", 1, "DeepSeek-V3 report sec. 4.2: MTP depth D = 1"),
])
def test_pretraining_rows_train_the_mtp_depths_their_recipes_set(catalog: Catalog, row_id: str, depths: int,
                                                                 why: str) -> None:
    row = next(r for r in _rows("training_more.csv") if r["id"] == row_id)
    case, _ = _pretrain_case(catalog, row)
    assert case is not None and case.meta["setup"].mtp_layers == depths


def test_mtp_depths_lower_the_predicted_throughput(catalog: Catalog) -> None:
    # the same run with its MTP module costs about 4% more FLOPs per token (260.4 vs 249.7 GFLOP, Megatron's count)
    from gpuplan.estimate.calibration import fitted
    row = next(r for r in _rows("training_more.csv")
               if r["id"] == "trm-mb-2511-b200-deepseekv3wmtp-fp8mx-256-g2048-p-tokgpu")
    with_mtp, _ = _pretrain_case(catalog, row)
    without, _ = _pretrain_case(catalog, {**row, "notes": row["notes"].replace("(w/ MTP)", "(w/o MTP)")})
    assert with_mtp is not None and without is not None
    ratio = with_mtp.predict(fitted()) / without.predict(fitted())
    assert 0.93 < ratio < 0.99


def test_lit_gpt_quantized_rows_state_how_their_weights_were_quantized(catalog: Catalog) -> None:
    # the Lit-GPT quantize tutorial's rows (Falcon-7B on an A100 40GB, Lightning-AI/litgpt @03f8197): every Linear is
    # quantized, the output layer too; its NF4 rows ran bitsandbytes 0.40; its LLM.int8 layers are quantized when
    # built and again at load. The tutorial's bf16 row states none of it
    rows = {r["id"]: r for r in _rows("inference_extra.csv")}
    nf4, _ = _inference_memory_case(catalog, rows["imm-0018"])
    int8, _ = _inference_memory_case(catalog, rows["imm-0020"])
    bf16, _ = _inference_memory_case(catalog, rows["imm-0017"])
    assert nf4 is not None and int8 is not None and bf16 is not None
    s = nf4.meta["setup"]
    assert s.quantized_head and s.quant_release == "0.40" and not s.quantized_at_build
    s = int8.meta["setup"]
    assert s.quantized_head and s.quantized_at_build and s.quant_release == ""
    s = bf16.meta["setup"]
    assert not (s.quantized_head or s.quantized_at_build or s.quant_release)
    # 8.71 GB read: the int8 weights (output layer included) and the output layer's re-quantization at load
    assert int8.predict(fitted()) == pytest.approx(int8.measured, rel=0.01)


def test_xtuner_long_sequence_rows_split_each_sequence_over_the_sequence_parallel_group(catalog: Catalog) -> None:
    # XTuner's speed table, Llama-2-70B at 128k tokens on 32 A100s with sequence_parallel_size 8: a GPU computes an
    # eighth of each sequence and 4 groups run in data parallel; the ZeRO stage is unstated, and ZeRO-2 (XTuner's
    # documented launch) would leave every GPU the whole 16-bit weights, 138 GB: above 80 GiB, so ZeRO-3
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}
    case, why = _finetune_case(catalog, rows["ftm-xtuner-llama-2-70b-32gpu-128k-tgs"])
    assert case is not None, why
    setup = case.meta["setup"]
    assert (setup.parallel.cp, setup.parallel.dp, setup.parallel.zero) == (8, 4, 3)
    assert setup.recompute == "full" and not setup.lengths_vary  # XTuner's checkpointing and packing
    assert not case.fit and "ZeRO stage unstated" in case.assume
    # 7B on 8 GPUs at 8k: ZeRO-2 fits, so the documented stage stays
    small, why = _finetune_case(catalog, rows["ftm-xtuner-llama-2-7b-8gpu-8k-tgs"])
    assert small is not None, why
    assert small.meta["setup"].parallel.zero == 2 and "documented launch" in small.assume
    # the table's 1M row names 8 GPUs beside a config of sequence_parallel_size 16: refused, not bent to fit
    with pytest.raises(ValueError, match="sequence-parallel groups of 16"):
        _finetune_case(catalog, rows["ftm-xtuner-llama-2-7b-8gpu-1m-tgs"])


def test_an_ms_swift_row_that_left_the_tuner_at_its_default_trains_lora() -> None:
    # swift sft's --sft_type defaults to 'lora' at v2.0.0 through v2.1.0; a row that does not state its release
    # keeps its label, which names no method gpuplan models
    from calib_rows import _method

    row = next(r for r in _rows("finetune_more.csv") if r["id"] == "ftm-swift-sp-chatglm3-6b-32k-2gpu-sp1-itps")
    assert "tuner not stated" in row["method"] and _method(row) == "lora"
    assert _method({**row, "framework_version": "ms-swift (release not stated)"}) is None


def test_a_lit_gpt_memory_row_is_sized_at_the_longest_sample_it_trains_first(catalog: Catalog) -> None:
    # lit-gpt @8641822 puts the longest Alpaca sample into the first micro-batch and pads to it; the rows' dataset
    # column gives that length per tokenizer (1304 Llama 2, 1044 phi-1.5, 1034 StableLM)
    rows = {r["id"]: r for r in _rows("finetune_more.csv")}
    stem = "ftm-litgpt-rt-finetune_"
    for name, seq, mb in (("adapter_v2-llama-2-7b-bnb-nf4-mb1", 1304, 1), ("lora-microsoft-phi-1-5-none-mb4", 1044, 4),
                          ("adapter-stablelm-base-alpha-3b-none-mb1", 1034, 1)):
        case, why = _finetune_case(catalog, rows[f"{stem}{name}-1gpu-mem"])
        assert case is not None, why
        assert (case.meta["setup"].seq_len, case.meta["setup"].micro_batch) == (seq, mb)
    assert case.meta["setup"].method == "adapter"
    # the time rows need the tokens per sample, which the table does not give
    assert _finetune_case(catalog, rows[f"{stem}adapter-llama-2-7b-none-mb1-1gpu-time"])[0] is None
    # on several GPUs the model is built before FSDP shards it, in a Lightning release the row does not state
    case, why = _finetune_case(catalog, rows[f"{stem}lora-llama-2-7b-none-mb1-2gpu-mem"])
    assert case is None and "Lightning release" in why


def test_v0_batch_rows_whose_scheduler_steps_are_unstated_are_reported_not_fitted(cases: list[Case]) -> None:
    # the ROCm blog's vLLM V0 latency table (MI300X) does not say whether its harness ran multi-step scheduling;
    # its throughput table, run with the settings of MAD's config, does
    rocm = [c for c in cases if c.group.startswith("ROCm blog: Best practices")]
    batch = [c for c in rocm if c.meta.get("quantity") != "max_batch_output_tokens_per_s"]
    offline = [c for c in rocm if c.meta.get("quantity") == "max_batch_output_tokens_per_s"]
    assert len(batch) == 32 and len(offline) == 8
    assert not any(c.fit for c in batch) and all(c.fit for c in offline)


def test_a_speed_row_whose_source_leaves_a_condition_unstated_is_reported_not_fitted(cases: list[Case]) -> None:
    # the vLLM blog's Intel Arc Pro B60 table states neither the client nor whether its TTFT is a mean or a median
    # (confidence low): predicted and reported, as every other class's low-confidence rows are, but not fitted on
    row = next(c for c in cases if c.id == "srv-5681")
    assert row.cls == "ttft" and not row.fit
    # a TTFT row under load whose source states its conditions still fits (GPUStack's vLLM run at 4 clients)
    assert next(c for c in cases if c.id == "srv-1382").fit
