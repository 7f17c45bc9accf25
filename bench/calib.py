"""Calibration rows → estimator cases.

Each :class:`Case` pairs one published measurement (converted to base units) with a function that returns
gpuplan's estimate of the same quantity for a given :class:`Calibration`. ``bench/fit.py`` fits the free
parameters on these cases; ``bench/accuracy.py`` reports the errors. Training and fine-tuning rows are mapped
by hand in ``bench/cases.yaml``; inference rows are mapped from their columns here.
"""

from __future__ import annotations

import csv
import fnmatch
import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import NormalDist
from typing import Any

import yaml

from gpuplan import load_catalog
from gpuplan.catalog.hfconfig import parse_config
from gpuplan.estimate.calibration import Calibration
from gpuplan.estimate.engines import TRTLLM_BENCH, VLLM_LLM_CLASS, release, trtllm_pytorch, with_engine_defaults
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.flops import forward_flops_per_token
from gpuplan.estimate.infer_speed import latency, throughput
from gpuplan.estimate.load import finite_run, gamma_length_quantile, uniform_run
from gpuplan.estimate.memory import gguf_weights_bytes, inference_memory, training_memory
from gpuplan.estimate.quant import weight_format
from gpuplan.estimate.train_time import train_time
from gpuplan.estimate.trtllm_bench import bench_limits, config_head_size, running_limits
from gpuplan.types import InferSetup, ModelSpec, Parallelism, TrainSetup
from gpuplan.units import DAY, GB, HOUR, GiB

HERE = Path(__file__).resolve().parent
CALIBRATION = HERE / "calibration"

# classes reported by the accuracy benchmark, with their goals: the median |error| of the leave-one-source-out
# predictions (each source predicted by a fit that never saw it), the number users meet on their own jobs
CLASSES = {
    "inference_memory": 0.04, "finetune_memory": 0.06, "pretrain_memory": 0.08,
    "pretrain_throughput": 0.12, "pretrain_throughput_moe": 0.12, "pretrain_gpu_hours": 0.12, "finetune_time": 0.20,
    "serving_throughput": 0.12, "ttft": 0.20, "tpot": 0.20, "decode_batch1": 0.10,
}
# the band (gpuplan/data/fitted/params.json) each class's residuals go into: what estimates show
BAND_OF = {"finetune_memory": "training_memory", "pretrain_memory": "training_memory",
           "pretrain_gpu_hours": "pretrain_throughput", "serving_throughput": "inference_throughput",
           "ttft": "inference_latency", "tpot": "inference_latency", "decode_batch1": "inference_latency"}
SPEED_CLASSES = ("serving_throughput", "ttft", "tpot", "decode_batch1")


@dataclass
class Case:
    id: str
    cls: str
    measured: float
    predict: Callable[[Calibration], float]
    source: str
    describe: str
    bound: str = ""  # "upper": measured is an upper bound, "lower": a lower bound
    group: str = ""  # source family, for leave-one-source-out
    assume: str = ""
    resolution: float = 0.0  # relative precision the value was published with (half a unit in the last digit)
    rate: bool = False  # measured is a rate (tokens/s: higher is faster), not a time or a size
    # fitted on: False where the mapping had to assume a condition that moves the estimate (a framework
    # default, an unstated memory counter) or the source marks the value approximate; such rows test the
    # assumption and are reported, but the parameters are fitted on rows whose conditions are stated
    fit: bool = True
    # the inputs behind the estimate, for tools that answer the same question (bench/peers.py): model_name,
    # model (ModelSpec), gpu (Gpu), setup (TrainSetup or InferSetup), and what was measured (measure / quantity)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Unmapped:
    id: str
    why: str


def _rows(name: str) -> dict[str, dict[str, str]]:
    path = CALIBRATION / name
    if not path.exists():
        return {}
    with path.open(encoding="utf-8") as f:
        return {r["id"]: r for r in csv.DictReader(f)}


def _model(cat: Any, name: str) -> ModelSpec:
    if name.startswith("bench/"):
        path = HERE / "models" / f"{name.split('/', 1)[1]}.json"
        return parse_config(json.loads(path.read_text()), path.stem)
    return cat.model(name)


def resolution(text: str) -> float:
    """Half a unit in the last published digit, relative to the value ('13.48' → 0.005 / 13.48)."""
    m = re.match(r"^\s*~?([0-9]*)\.?([0-9]*)", text or "")
    if not m or not (m.group(1) or m.group(2)):
        return 0.0
    value = float(f"{m.group(1) or 0}.{m.group(2) or 0}")
    return 0.5 * 10 ** -len(m.group(2)) / value if value else 0.0


# a source read through a copy ("llama.cpp Apple Silicon discussion #4167 (via gist)", "... (via Local AI Advisor
# notes)") is the source it copies: two copies of one table are one source group, so that leaving it out leaves both
_VIA_COPY = re.compile(r"\s*\(via [^)]*\)\s*$")

# every row of these files names its source; leave-one-source-out leaves that source out (inference_extra.csv's
# `ext-` rows were one catch-all group of 14 sources, so a fold left out the Qwen2.5 speed benchmark's first 25 rows
# with TGI's, AutoAWQ's and SGLang's, while its later rows formed a group of their own)
_GROUPED_PREFIXES = ("srv-", "lcp-", "ftm-", "trm-", "imm-", "b1-", "ext-")


def _group(row_id: str, row: dict[str, str] | None = None) -> str:
    """The source family a row belongs to, for leave-one-source-out: the row's own source_group where the file
    has one (newer files), else the family its id prefix names."""
    if row and row_id.startswith(_GROUPED_PREFIXES) and row.get("source_group"):
        return _VIA_COPY.sub("", row["source_group"]).strip()
    for prefix in ("llama2", "megatron", "nanogpt", "llmc", "tt-", "peft-mmqa", "torchtune-readme", "torchtune-opt",
                   "chatglm", "seed-agiclass", "qlora", "trt", "mlp", "mem", "ext"):
        if row_id.startswith(prefix):
            return prefix.rstrip("-")
    return row_id.split("-")[0]


# ---------------------------------------------------------------- training / fine-tuning



def _train_setup(spec: dict[str, Any], defaults: dict[str, Any]) -> TrainSetup:
    # pretraining concatenates documents into full-length sequences: the same shapes every step
    pretrain = {"lengths_vary": False} if str(spec.get("kind", "")).startswith("pretrain") else {}
    values = {**defaults, **pretrain, **(spec.get("setup") or {})}
    if values.get("lora_targets") == "qkv":
        values["lora_targets"] = "attention"
    par = Parallelism(**(spec.get("parallel") or {}))
    return TrainSetup(**values, parallel=par)


def _memory_value(row: dict[str, str]) -> float:
    unit = row["unit"].split()[0]
    value = float(row["value"])
    return value * {"GiB": GiB, "GB": GB, "MB": 1e6, "MiB": 2**20}[unit]


def _time_value(row: dict[str, str]) -> float:
    q = row["measured_quantity"]
    value = float(row["value"])
    if q.startswith("wall_days"):
        return value * DAY
    if q.startswith("wall_hours"):
        return value * HOUR
    if q == "gpu_hours":
        return value
    return value


def _megatron_tokens_per_s_per_gpu(m: ModelSpec, mfu: float, seq: int, peak: float, hfu: bool) -> float:
    """Narayanan et al. 2021 eq. (3): FLOPs per token 72·l·h²·(1 + s/6h + V/(12·l·h)) (96 and V/16lh when
    recomputation is counted)."""
    l_, h, v = m.n_layers, m.hidden, m.vocab
    per_token = (96 * l_ * h * h * (1 + seq / (6 * h) + v / (16 * l_ * h)) if hfu else
                 72 * l_ * h * h * (1 + seq / (6 * h) + v / (12 * l_ * h)))
    return mfu * peak / per_token


def training_cases(cat: Any) -> tuple[list[Case], list[Unmapped]]:
    doc = yaml.safe_load((HERE / "cases.yaml").read_text(encoding="utf-8"))
    rows = {**_rows("training_runs.csv"), **_rows("finetune_runs.csv")}
    defaults = doc["defaults"]["train"]
    cases: list[Case] = []
    for spec in doc["cases"]:
        row = rows.get(spec["id"])
        if row is None:
            raise SystemExit(f"bench/cases.yaml: no calibration row '{spec['id']}'")
        cases.append(_training_case(cat, spec, row, defaults))
    unmapped = [Unmapped(u["id"], u["why"]) for u in doc.get("unmapped", [])]
    covered = {c.id for c in cases}
    for rid in rows:
        if rid not in covered and not any(fnmatch.fnmatch(rid, u.id.replace("{", "[").replace("}", "]"))
                                          or _brace_match(rid, u.id) for u in unmapped):
            unmapped.append(Unmapped(rid, "not mapped (no case in bench/cases.yaml)"))
    return cases, unmapped


def _brace_match(rid: str, pattern: str) -> bool:
    m = re.search(r"\{([^}]*)\}", pattern)
    if not m:
        return False
    return any(fnmatch.fnmatch(rid, pattern[: m.start()] + alt + pattern[m.end():]) for alt in m.group(1).split(","))


def training_memory_predictor(model: ModelSpec, setup: TrainSetup, measure: str,
                              card_bytes: float | None = None) -> Callable[[Calibration], float]:
    """gpuplan's training memory as the row measured it: ``reserved`` (PyTorch's pool: no CUDA context),
    ``active`` (allocated: no context, no allocator slack), ``weights``, or the whole device. Where the card's memory
    is given (``card_bytes``), a reserved or device-wide reading stops at it (:func:`within_card`)."""
    def predict(cal: Calibration) -> float:
        est = training_memory(model, setup, cal, describe=False)  # the same numbers, without the sentences
        context = est.breakdown.get("overhead")
        floor = est.floor.value if est.floor is not None else est.total
        if measure == "reserved":
            card = card_bytes - context if card_bytes else None
            return within_card(est.total - context, floor - context, card)
        if measure == "active":
            return est.total - context - est.breakdown.get("allocator_slack")
        if measure == "weights":
            return est.breakdown.get("weights")
        return within_card(est.total, floor, card_bytes)

    return predict


def within_card(estimate: float, floor: float, card: float | None) -> float:
    """A peak reading of PyTorch's pool (or of the device) where the estimate's pool would outgrow the card: when
    cudaMalloc fails, the caching allocator frees its cached unused blocks and retries before it reports
    out-of-memory (gpuplan.estimate.memory.ALLOCATOR_GIVES_BACK), so the pool stops at what the card leaves it
    (``card``), though never below the tensors the step holds (``floor``: a run that read a peak fitted them)."""
    return estimate if card is None else min(estimate, max(card, floor))


def _training_case(cat: Any, spec: dict[str, Any], row: dict[str, str], defaults: dict[str, Any]) -> Case:
    model = _model(cat, spec["model"])
    gpu = cat.gpu(spec["gpu"])
    setup = _train_setup(spec, defaults)
    kind, measure = spec["kind"], spec["measure"]
    n = setup.parallel.n_gpus
    describe = f"{spec['model']} {setup.method} on {n}× {gpu.name} ({setup.parallel.describe()}), " \
               f"mb {setup.micro_batch}×{setup.seq_len}"
    common = dict(id=spec["id"], source=row["source"], describe=describe, group=_group(spec["id"]),
                  assume=spec.get("assume", ""), resolution=resolution(row["value"]))
    inputs = {"model_name": spec["model"], "model": model, "gpu": gpu, "setup": setup}
    if kind.endswith("_memory"):
        cls = "pretrain_memory" if kind.startswith("pretrain") else "finetune_memory"
        measured = _memory_value(row)
        bound = {"device_upper_bound": "upper", "device_lower_bound": "lower"}.get(measure, "")

        return Case(cls=cls, measured=measured, predict=training_memory_predictor(model, setup, measure), bound=bound,
                    meta={**inputs, "measure": measure}, **common)
    cls = ("finetune_time" if not kind.startswith("pretrain") else
           "pretrain_gpu_hours" if measure in ("gpu_hours", "seconds") else "pretrain_throughput")
    tokens = float(spec.get("tokens") or (spec.get("samples", 0) * spec.get("tokens_per_sample", 0)) or 1e9)
    if measure == "mfu":
        hfu = spec.get("mfu_convention") == "megatron-hfu"
        measured = _megatron_tokens_per_s_per_gpu(model, float(row["value"]), setup.seq_len,
                                                  gpu.half_flops_per_s, hfu)
        measure = "tokens_per_s_per_gpu"
    elif measure in ("tokens_per_s", "tokens_per_s_per_gpu"):
        measured = float(row["value"])
    else:
        measured = _time_value(row)

    def predict_time(cal: Calibration, m=model, g=gpu, s=setup, how=measure, t=tokens, n=n) -> float:
        est = train_time(m, g, s, t, cal)
        if how == "tokens_per_s":
            return est.rate.tokens_per_s
        if how == "tokens_per_s_per_gpu":
            return est.rate.tokens_per_s / n
        if how == "gpu_hours":
            return est.rate.gpu_hours
        return est.total

    return Case(cls=cls, measured=measured, predict=predict_time, rate=measure.startswith("tokens_per_s"),
                meta={**inputs, "measure": measure, "tokens": tokens}, **common)


# ---------------------------------------------------------------- inference

_MODEL_NAMES = {"Llama-3.1-70B": "Llama-3.1-70B", "Llama-3.1-8B": "Llama-3.1-8B", "Mixtral-8x7B": "Mixtral-8x7B",
                "Llama-3.1-405B": "Llama-3.1-405B", "Llama-2-70B": "Llama-2-70B", "Llama-2-7B": "Llama-2-7B",
                "Llama-3-8B": "Llama-3-8B", "Llama-3-70B": "Llama-3-70B"}


# Published rows that name a fine-tune or a renamed checkpoint of a preset's architecture.
_SAME_ARCH = {"LLaMA-arch": "Llama-2-7B", "Vicuna-7B": "Llama-2-7B",
              "Mistral-7B-Instruct": "Mistral-7B-v0.2"}


# Published rows that name a model in words. NeMo Megatron-Bridge's performance tables: its "Nemotron 3 Nano" page
# (NVIDIA-NeMo/Megatron-Bridge docs/models/nemotron/nemotron3-nano.md @32700b52fdc38053fc8869c72e504bdd54e73c88) trains
# HF_MODEL_ID=nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 (23 Mamba-2 and MoE layers, 6 attention layers); its
# "Nemotron 3 Super" page (docs/models/nemotron/nemotron3-super.md @19a7d6da2c19066911fe558092985ca00f66a7ce) converts
# nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16 ("12B active parameters and 120B parameters in total"); a public
# description of the Megatron-Bridge recipe megatron.bridge.recipes.nemotronh.nemotron_3_ultra (repository not
# identified) gives the HF path nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16, the only Nemotron 3 Ultra.
_LABELS = {"Nemotron 3 Nano": "Nemotron-3-Nano-30B-A3B", "Nemotron 3 Super": "Nemotron-3-Super-120B-A12B",
           "Nemotron 3 Ultra": "Nemotron-3-Ultra-550B-A55B"}


def _preset_for(cat: Any, label: str) -> str | None:
    if label.strip() in _LABELS:
        return _LABELS[label.strip()]
    head = re.split(r"[\s(]", label.strip())[0]
    if head in _SAME_ARCH:
        return _SAME_ARCH[head]
    if head in _MODEL_NAMES:
        return _MODEL_NAMES[head]
    from gpuplan.catalog.models import find_preset

    entry = find_preset(cat, head)
    return entry.name if entry else None


# MLX's quantized checkpoints as rows name them (mlx-community's n-bit conversions) → gpuplan's formats, for the
# speed rows (_precision) and the memory rows (_inference_memory_case) alike
_MLX_FORMATS = {"mlx 4-bit": "mlx-q4", "mlx 8-bit": "mlx-q8", "mlx 6-bit": "mlx-q6", "mlx 5-bit": "mlx-q5"}


def _precision(label: str) -> tuple[str, str] | None:
    p = label.lower()
    # a GGUF file of a quant type not listed here is not mapped (read as 16-bit, a Q4_1 file looked 3.4x too big)
    table: list[tuple[str, tuple[str, str] | None]] = [
        ("q4_k_m", ("gguf-q4_k_m", "fp16")), ("q4_k_s", ("gguf-q4_k_s", "fp16")), ("q4_0", ("gguf-q4_0", "fp16")),
        ("q4_1", ("gguf-q4_1", "fp16")), ("q5_0", ("gguf-q5_0", "fp16")), ("q5_1", ("gguf-q5_1", "fp16")),
        ("q5_k_m", ("gguf-q5_k_m", "fp16")), ("q5_k_s", ("gguf-q5_k_s", "fp16")), ("q6_k", ("gguf-q6_k", "fp16")),
        ("q8_0", ("gguf-q8_0", "fp16")), *((label, (fmt, "fp16")) for label, fmt in _MLX_FORMATS.items()),
        ("bf16 (gguf", ("bf16", "bf16")), ("f16 (gguf", ("fp16", "fp16")), ("gguf", None),
        ("awq", ("awq-int4", "fp16")), ("gptq-int8", ("gptq-int8", "fp16")), ("gptq", ("gptq-int4", "fp16")),
        ("bitsandbytes 4", ("bnb-nf4", "fp16")), ("mxfp4", ("mxfp4", "bf16")),
        ("nvfp4", ("nvfp4", "fp8")), ("fp4", ("nvfp4", "fp8")), ("fp8", ("fp8", "fp8")),
        ("w8a8", ("int8", "int8")),  # int8 weights and activations (MindIE's W8A8, SmoothQuant-style)
        ("bf16", ("bf16", "bf16")), ("fp16", ("fp16", "fp16")), ("f16", ("fp16", "fp16"))]
    for key, value in table:
        if key in p:
            return value
    return None


_ENGINES = {"tensorrt-llm": "trtllm", "vllm": "vllm", "sglang": "sglang", "llama.cpp": "llamacpp",
            "hf transformers": "hf", "transformers": "hf", "mindie": "mindie", "mlx": "mlx"}
_NOT_ENGINES = {"autoawq": "AutoAWQ's fused modules and pre-allocated cache are not an engine gpuplan models",
                "tgi": "TGI is not an engine gpuplan models"}


def _engine(label: str) -> str | None:
    low = label.lower()
    for key, value in _ENGINES.items():
        if low.startswith(key) or key in low:
            return value
    return None


# The KV cache dtype a server uses when the run does not set one: vLLM's and SGLang's --kv-cache-dtype defaults
# to "auto", the model's activation dtype, so FP8 weights keep a 16-bit cache (vLLM engine arguments,
# docs.vllm.ai/en/v0.8.1/serving/engine_args.html: "If 'auto', will use model data type"; SGLang ServerArgs
# kv_cache_dtype = "auto"). TensorRT-LLM's FP8 builds (trtllm-bench --quantization FP8) quantize the cache too.
_KV_AUTO = ("vllm", "sglang")
_KV_AUTO_NOTE = "16-bit KV cache (the engine's --kv-cache-dtype auto)"
_FP8_KV = re.compile(r"kv[- _]cache[- _]dtype[ :=']*fp8|fp8 kv[- ]cache", re.IGNORECASE)


def _kv_dtype(engine: str, prec: tuple[str, str], notes: str) -> str:
    """KV cache dtype of a speed row: FP8 where the run states it or the engine's FP8 build implies it, else the
    activations' 16-bit dtype."""
    half = "bf16" if prec[1] in ("bf16", "fp8") else "fp16"
    if prec[1] != "fp8":
        return half
    if engine in _KV_AUTO and not _FP8_KV.search(notes or ""):
        return half
    return "fp8"


def _int(text: str) -> int | None:
    m = re.match(r"^\s*~?(\d+)", text or "")
    return int(m.group(1)) if m else None


INFERENCE_FILES = ("inference_runs.csv", "inference_extra.csv", "inference_serving.csv", "inference_llamacpp.csv")


def inference_cases(cat: Any) -> tuple[list[Case], list[Unmapped]]:
    rows = {rid: row for name in INFERENCE_FILES for rid, row in _rows(name).items()}
    copies = _copied_blocks(rows)
    cases: list[Case] = []
    unmapped: list[Unmapped] = []
    with_tpot = {_run_key(r) for r in rows.values() if r["metric"] == "tpot_ms_median"}
    for rid, row in rows.items():
        case, why = (None, copies[rid]) if rid in copies else _inference_case(cat, row)
        if case:
            cases.append(case)
        else:
            unmapped.append(Unmapped(rid, why))
        if rid not in copies and _one_client_step(row, with_tpot):
            step = _one_client_decode_case(cat, row)
            if step:
                cases.append(step)
    return cases, unmapped


_BLOCK = ("source_group", "engine", "model", "precision", "tp", "pp", "isl", "osl", "batch_or_concurrency", "scenario",
          "request_rate_per_s")


_COPY_MARK = "Copied block:"


def _copied_blocks(rows: dict[str, dict[str, str]]) -> dict[str, str]:
    """Rows of one source measured on two GPUs under the same conditions whose every metric (three or more) is
    the same number to the last printed digit: two parts of different speed cannot both have produced them, so
    the source repeats one page's results on another and neither copy can be trusted. Row id → the reason.
    Also the rows whose notes begin with ``Copied block:`` — a block the curator found pasted from another page
    (another model's run, figures equal to the last digit) and traced to its original, which stays mapped."""
    blocks: dict[tuple[str, ...], dict[str, dict[str, tuple[str, str]]]] = {}
    for rid, row in rows.items():
        if row.get("scenario", "").strip() and row.get("gpu_spec_name", "").strip():
            key = tuple(row.get(k, "").strip() for k in _BLOCK)
            blocks.setdefault(key, {}).setdefault(row["gpu_spec_name"], {})[row["metric"]] = (row["value"], rid)
    # a copy the curator traced to its original (another model's run on another page) says so in its notes
    out = {rid: "copied block: " + row["notes"].split(_COPY_MARK, 1)[1].split(". ", 1)[0].strip()
           for rid, row in rows.items() if _COPY_MARK in row.get("notes", "")}
    for per_gpu in blocks.values():
        gpus = sorted(per_gpu)
        for i, a in enumerate(gpus):
            for b in gpus[i + 1:]:
                common = set(per_gpu[a]) & set(per_gpu[b])
                if len(common) >= 3 and all(per_gpu[a][k][0] == per_gpu[b][k][0] for k in common):
                    for this, other in ((a, b), (b, a)):
                        for metric in common:
                            out[per_gpu[this][metric][1]] = (
                                f"every metric of this run on {this} equals, to the last digit, the source's run on "
                                f"{other} under the same conditions ({per_gpu[other][metric][1]}): the source repeats "
                                "one GPU's results for another, so neither can be trusted")
    return out


def _stated(row: dict[str, str]) -> bool:
    """Whether the row's source states the conditions that matter (its confidence is neither low nor approx)."""
    return row.get("confidence", "").strip().lower() not in ("low", "approx")


def _build_unstated(engine: str, row: dict[str, str]) -> bool:
    """A llama.cpp speed row whose build is not stated: reported, not fitted on. Its kernels change speed by large
    factors between builds (PR #2959 "More optimizations on metal", M2 Max pp512 327.79 -> 433.35 t/s; on an Apple
    M5, pp512 of a 7B Q4_0 608 t/s with the Metal 4 tensor API of PR #16634 against 179 t/s for an 8B Q4_K_M in
    enescingoz/mac-llm-bench, whose result files record the version as 'unknown' (its README names 'build 8680
    (brew stable)' for the whole repository) and whose tg128 is 2.5x below PR #16634's too), so such a
    row would tie the fitted efficiencies to an unknown build. A row whose notes name the pull request whose branch
    it ran (ggerganov's tables in PR #4766) states its build."""
    version = row.get("engine_version", "").strip().lower()
    return engine == "llamacpp" and version in ("", "unknown", "not stated") and not _PR_BRANCH.search(row["notes"])


_PR_BRANCH = re.compile(r"\bin PR #\d+")

# A vLLM V0 speed row whose harness may have run multi-step scheduling (--num-scheduler-steps N, which spreads a
# step's host work over N decode steps and which gpuplan does not model) without saying so: reported, not fitted on.
# AMD's MAD harness passes num_scheduler_steps 10 to every V0 run from a revision later than the 2024 one that passed
# 1, and the ROCm blog's January 2025 latency table does not say which revision it ran; its batch runs stand 50 % (batch
# 1) to 8 % (batch 128) above gpuplan's single-step estimate, the excess shrinking as the host's share does.
_SCHEDULER_STEPS_UNSTATED = re.compile(r"scheduler steps not stated", re.I)

# llama.cpp backends gpuplan has no model of: it predicts llama.cpp from its CUDA kernels (Metal on Apple GPUs), while
# the Vulkan shaders, the HIP build on AMD GPUs (ROCm) and SYCL run other kernels at other efficiencies (the same
# Llama 2 7B Q4_0 on an RTX 4070 Ti SUPER: tg128 132.26 t/s on CUDA in discussion #15013, and the Vulkan table of
# discussion #10879 puts the slower RTX 4070 Ti at 110.53)
_OTHER_BACKEND = re.compile(r"\bbackend '?(vulkan|rocm|hip|sycl|opencl)\b", re.IGNORECASE)


def _unmodelled_backend(engine: str, row: dict[str, str]) -> str:
    """The llama.cpp backend a row states when gpuplan does not model it (its predictions use the CUDA kernels'
    fitted efficiencies), else "". Such rows are reported with that assumption named, not fitted on."""
    found = _OTHER_BACKEND.search(row["notes"]) if engine == "llamacpp" else None
    return found.group(1) if found else ""

# vLLM's V0 engine: vLLM 0.8.0 made the V1 engine (its own scheduler, persistent batch, piecewise CUDA graphs) the
# default (vllm-project/vllm PR #13726, release notes of v0.8.0, 2025-03-18), and later releases removed V0. A
# decode step of V0 spends more time outside the GPU kernels than one of V1 (the Qwen2.5 speed benchmark's vLLM
# 0.6.3 rows want about 140 µs per layer, GPUStack's and other vLLM >= 0.8 batch-1 rows about 60 µs). A row of
# V0 carries its release on its setup (InferSetup.engine_version), so it reads V0's own step overhead
# (layer_overhead_s_vllm_v0, gpuplan.estimate.engines.step_overhead_keys), and bench/fit.py fits that one
# parameter on V0's batch-1 rows alone: they no longer tie V1's overhead to an engine users no longer run. A row
# whose notes say it ran V1 on an older release (VLLM_USE_V1=1) is given no release, so it reads V1's values.
def _release_text(row: dict[str, str]) -> str:
    """The engine release a row's setup carries: its stated version, none where its notes switch an older vLLM
    to the V1 engine (then the current engine's values apply)."""
    if re.search(r"VLLM_USE_V1\s*=\s*1", row.get("notes", "")):
        return ""
    return row.get("engine_version", "").strip()


# TensorRT-LLM's offline benchmark configures its engine unlike trtllm-serve: it captures padded CUDA graphs up to
# the batch it runs, so none of its decode steps runs eager (gpuplan.estimate.engines.graph_batches). A row whose
# notes say it ran trtllm-bench carries that launcher on its setup; every other row ran the engine's server.
# vLLM's offline LLM class (vllm bench throughput, benchmarks/benchmark_throughput.py, or a script calling LLM(...))
# takes larger batch defaults than its API server (gpuplan.estimate.engines.with_engine_defaults).
_VLLM_OFFLINE = re.compile(r"vllm bench throughput|benchmark_throughput|\bLLM\(")


def _launcher(row: dict[str, str]) -> str:
    engine, notes = _engine(row["engine"]), row.get("notes", "")
    if engine == "trtllm" and "trtllm-bench" in notes:
        return TRTLLM_BENCH
    return VLLM_LLM_CLASS if engine == "vllm" and _VLLM_OFFLINE.search(notes) else ""


# A row that states the scheduler's limits keeps them: --max-num-seqs / max_num_seqs=, --max-num-batched-tokens, or
# the setting named without its dashes as a run's recorded configuration prints it (dstack's Llama-3.1-405B rows:
# "the CSV records chunked prefill on with max-num-batched-tokens 512 ..., max-num-seqs 512"; zhjunqin's
# "max_num_seqs 256"); SGLang's --chunked-prefill-size is its token budget.
# GPUStack's tuning sections print the section's serve command and then, inside each result
# block, the value that run used ("Variant comment inside the result block: '# --max-num-batched-tokens 4096'"):
# the variant wins.
def _stated_limit(row: dict[str, str], flag: str) -> int | None:
    notes = row.get("notes", "")
    pattern = rf"(?<![\w-])(?:--)?(?:{flag}|{flag.replace('-', '_')})(?:\s*=\s*|[ =]+)(\d+)"
    variant = re.search(r"Variant comment inside the result block: '#\s*" + pattern, notes)
    found = variant or re.search(pattern, notes)
    return int(found.group(1)) if found else None


# The memory share a row's server was started with: vLLM's --gpu-memory-utilization, SGLang's --mem-fraction-static
# (DataCrunch's SGLang rows state 0.78 and 0.8), either written with underscores as a recorded configuration prints it.
_STATED_SHARE = re.compile(r"(?<![\w-])(?:--)?(?:gpu[-_]memory[-_]utilization|mem[-_]fraction[-_]static)"
                           r"(?:\s*=\s*|[ =]+)(0?\.\d+|1(?:\.0+)?)(?![\d])")


def _stated_share(row: dict[str, str]) -> float | None:
    found = _STATED_SHARE.search(row.get("notes", ""))
    return float(found.group(1)) if found else None


def _with_limits(setup: InferSetup, row: dict[str, str], gpu: Any) -> InferSetup:
    """The row's setup with the limits and memory share it states, then its engine release's defaults on its GPU."""
    stated = replace(setup, max_num_seqs=_stated_limit(row, "max-num-seqs"), gpu_memory_utilization=_stated_share(row),
                     max_batched_tokens=(_stated_limit(row, "max-num-batched-tokens")
                                         or _stated_limit(row, "chunked-prefill-size")))
    return with_engine_defaults(stated, gpu)


# A server whose notes say it was started with CUDA graphs off runs every decode step op by op
# (gpuplan.estimate.engines.graph_batches): SGLang's --disable-cuda-graph (the DataCrunch DeepSeek-V3 runs),
# vLLM's --enforce-eager / enforce_eager=True. "enforce_eager=False" is the default and keeps the graphs.
_NO_CUDA_GRAPHS = re.compile(r"--disable-cuda-graph\b|--enforce-eager\b|enforce_eager\s*=\s*True")


# SGLang 0.4.1 also turns them off by itself for a DeepSeek-V3 checkpoint (DeepseekV3ForCausalLM with MLA on), whatever
# the server was told: ModelRunner.model_specific_adjustment sets ``server_args.disable_cuda_graph = True`` under a
# "FIXME(HandH1998)" (python/sglang/srt/model_executor/model_runner.py in the 0.4.1 wheel on PyPI). 0.4.0 has no such
# line, and 0.4.1.post1, post2, post3, 0.4.2.post4 and 0.4.3.post2 dropped it (their wheels read), so only a row that
# states 0.4.1 itself ran so: DataCrunch's single-node FP8 DeepSeek-V3 run (--enable-dp-attention, no
# --disable-cuda-graph) launched every decode step op by op like its BF16-labelled twin.
_SGLANG_041 = re.compile(r"^\s*v?0\.4\.1(?![.\d])")


def _cuda_graphs(row: dict[str, str], model: Any) -> bool:
    if _NO_CUDA_GRAPHS.search(row.get("notes", "")):
        return False
    sglang_041 = _engine(row["engine"]) == "sglang" and _SGLANG_041.match(row.get("engine_version", ""))
    return not (sglang_041 and model.model_type == "deepseek_v3" and model.is_mla)


# TensorRT-LLM's perf overview feeds trtllm-bench a fixed number of requests per length pair, all of one length
# (prepare_dataset.py token-norm-dist with stdev 0), queued at once: the "$num_requests" table of
# NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @258c7540c03517def55d9a5aadfa9288af474e1b (v0.17) and
# @00f37686aa854010d68bcbd0f4ab000221541ca6 (v1.0, which adds 1000/2000). A run whose batch cap exceeds its
# requests never reaches the steady state (Qwen3-235B on a B200 holds more sequences than the 3,000 requests of
# 128/2048), and its last wave runs part-empty: such rows are finite runs (gpuplan.estimate.load.uniform_run).
# The v0.14.0 overview (the `trt` rows, read from its copy at arthurrasmusson/TensorRT-LLM
# @e00d4e6564921307dd264b61fe1d46f116095e0e) states the same table for the nine pairs it runs, so its rows are too.
_PERF_OVERVIEW_REQUESTS = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500,
                           (2048, 128): 3000, (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000,
                           (500, 2000): 3000, (20000, 2000): 1000}
_PERF_OVERVIEW = re.compile(r"^TensorRT-LLM perf-overview v(0\.17|1\.0)$")
_PERF_OVERVIEW_V014 = re.compile(r"^TensorRT-LLM perf-overview \(v0\.14\.0\)$")
# The per-GPU revisions after v1.0 (NVIDIA/TensorRT-LLM docs/source/developer-guide/perf-overview.md
# @585c756579dc4d01f21fc13c2f604cdb461ac4f0 and the revision stating "As of release/1.2") run new length pairs, with
# their own "Number of Requests" table: 3,000 for 1024/1024, 1,500 for 8192/1024 and 1024/8192, 1,000 for 32768/1024
# and 1024/32768. The first of them also prints 1000/1000 columns, which its table leaves out: the 3,000 of the earlier
# table is taken for those.
_PERF_OVERVIEW_PER_GPU = re.compile(r"^TensorRT-LLM perf-overview (post-v1\.0|release/1\.2) \(per-GPU\)$")
_PERF_OVERVIEW_PER_GPU_REQUESTS = {(1024, 1024): 3000, (8192, 1024): 1500, (1024, 8192): 1500, (32768, 1024): 1000,
                                   (1024, 32768): 1000, (1000, 1000): 3000}


def _perf_overview_requests(row: dict[str, str], isl: int, osl: int) -> int | None:
    """The requests a perf-overview row's trtllm-bench run sent (None for any other row)."""
    if _PERF_OVERVIEW_PER_GPU.match(row.get("source_group", "").strip()):
        return _PERF_OVERVIEW_PER_GPU_REQUESTS.get((isl, osl))
    if not (_PERF_OVERVIEW.match(row.get("source_group", "").strip())
            or _PERF_OVERVIEW_V014.match(row.get("system", "").strip())):
        return None
    return _PERF_OVERVIEW_REQUESTS.get((isl, osl))


# TensorRT-LLM's perf overview runs MoE models with attention data parallelism and dense ones without it (its
# "For MoE models" command sets enable_attention_dp in the LLM API options; NVIDIA/TensorRT-LLM
# docs/source/performance/perf-overview.md @00f37686aa854010d68bcbd0f4ab000221541ca6, "Running the Benchmark").
# The doc prints the key indented under cuda_graph_config, whose model forbids unknown fields (StrictBaseModel,
# tensorrt_llm/llmapi/llm_args.py), so the runs can only have set it at the top level. A row whose notes say so for
# MoE models carries it on its setup when its model is one (gpuplan.estimate.infer_speed.host_step_seconds).
# An SGLang server started with --enable-dp-attention runs attention data-parallel over its tensor-parallel ranks,
# one scheduler and KV cache per rank (sgl-project/sglang docs/references/deepseek.md, "Data Parallelism Attention",
# PR #2787: each DP worker handles its own batches; ServerArgs sets dp_size = tp_size with the flag), whatever the
# model: the rows state it in their server command.
_ATTENTION_DP = re.compile(r"MoE models?:[^.;]*\benable_attention_dp\b")
_SGLANG_ATTENTION_DP = re.compile(r"--enable-dp-attention\b")


def _attention_dp(row: dict[str, str], model: Any) -> bool:
    notes = row.get("notes", "")
    return bool(model.is_moe and _ATTENTION_DP.search(notes)) or bool(_SGLANG_ATTENTION_DP.search(notes))


# TensorRT-LLM's attention-DP balancing as a run's llm_options state it ("attention_dp_config enable_balance true":
# the perf overviews' DeepSeek-R1 runs after v1.0; gpuplan.types.InferSetup.attention_dp_balance)
_ADP_BALANCE = re.compile(r"enable_balance[:= ]+true", re.I)


def _attention_dp_balance(row: dict[str, str]) -> bool:
    return bool(_ADP_BALANCE.search(row.get("notes", "")))


# A vLLM server started with --async-scheduling (the GPUStack performance lab's gpt-oss and other pages, vLLM 0.10
# and 0.11) schedules step n + 1 while the GPU runs step n, before 0.14 made that the default; --no-async-scheduling
# turns it off again (vLLM v0.14.0 release notes; gpuplan.estimate.engines.host_overlaps_step).
_ASYNC_SCHEDULING = re.compile(r"--(no-)?async-scheduling\b")


def _async_scheduling(row: dict[str, str]) -> bool | None:
    found = _ASYNC_SCHEDULING.search(row.get("notes", ""))
    return None if found is None else found.group(1) is None


# A vLLM server started with --max-model-len serves that context, not the model's: vLLM's V0 engine sizes an MLA
# model's prefill pass by it (max_num_batched_tokens = max(max_model_len, 2048), vllm/config.py @v0.7.3), so
# dstack's MI300X DeepSeek-R1 server (--max-model-len 32768) prefills a wave in passes of 10 prompts of 3,200 tokens
# where its H200 server, started without one, takes up to 51 (gpuplan.estimate.engines.token_budget).
_MAX_MODEL_LEN = re.compile(r"--max-model-len[ =]+(\d+)")


# A run that says whether the server chunked its prompts (vLLM ``--enable-chunked-prefill``, its ``=False`` form, or
# the setting as a run's configuration prints it, "enable_chunked_prefill False"; Mooncake's baseline rows say
# "chunked prefill off" or "with --enable-chunked-prefill"): only vLLM's V0 engine reads it
# (gpuplan.estimate.engines.v0_chunked_prefill); None where the row is silent (the release's default).
_CHUNKED_OFF = re.compile(r"--enable-chunked-prefill[= ]False|enable_chunked_prefill[= ]+False|"
                          r"--no-enable-chunked-prefill|chunked prefill off", re.I)
_CHUNKED_ON = re.compile(r"--enable-chunked-prefill(?![= ]*False)|enable_chunked_prefill[= ]+True|"
                         r"chunked prefill on", re.I)


def _chunked_prefill(row: dict[str, str]) -> bool | None:
    notes = row.get("notes", "")
    if _CHUNKED_OFF.search(notes):
        return False
    return True if _CHUNKED_ON.search(notes) else None


def _max_model_len(row: dict[str, str]) -> int | None:
    found = _MAX_MODEL_LEN.search(row.get("notes", ""))
    return int(found.group(1)) if found else None


# trtllm-bench, run on a dataset without --max_batch_size / --max_num_tokens (as the perf overviews ran it: "we
# left many options at their default settings", perf-overview.md @00f37686 and @258c7540), sizes its scheduler from
# the model, the GPUs and the dataset's lengths (gpuplan.estimate.trtllm_bench): a 1000/1000 run of Llama-3.1-8B
# FP8 on one H100 gets 640 sequences and 2,048 tokens a pass, not the 2,048 / 8,192 of engines.csv. The heuristic
# is read from revisions of tuning.py that the 0.17 engine flow and the 1.0 PyTorch flow both call; the 0.14 rows,
# whose build may still have read benchmark_config.yml's per-model table, keep the engine's defaults.
_BENCH_HEURISTIC_FROM = (0, 17, 0)


def _bench_limits(s: InferSetup, model: Any, gpu: Any) -> InferSetup:
    """The setup with the limits trtllm-bench picked for itself, for a row of a release that picks them so."""
    found = release(s.engine_version)
    if s.launcher != TRTLLM_BENCH or found is None or found < _BENCH_HEURISTIC_FROM:
        return s
    batch, tokens = bench_limits(model, gpu, s.weight_format, s.kv_dtype, s.tp, s.pp, s.prompt_len, s.output_len,
                                 pytorch=trtllm_pytorch(s), head_size=_config_head_size(model.name))
    seqs, budget = running_limits(batch, tokens, s.tp, s.pp, s.attention_dp)
    return replace(s, max_num_seqs=seqs, max_batched_tokens=budget)


@functools.cache
def _config_head_size(preset: str) -> int | None:
    """The head size trtllm-bench's heuristic reads from the preset's config.json
    (gpuplan.estimate.trtllm_bench.config_head_size), None for a model without a bundled config."""
    from gpuplan.catalog.models import find_preset

    entry = find_preset(load_catalog(), preset)
    if entry is None:
        return None
    return config_head_size(json.loads(Path(entry.path).read_text(encoding="utf-8")))


# "throughput_output_tok_s_per_gpu": a run's output tokens/s over all its GPUs divided by their number (TP x PP),
# trtllm-bench's "Per GPU Output Throughput" that the perf overviews after v1.0 report.
_SPEED_METRICS = {"throughput_output_tok_s_total", "throughput_output_tok_s_per_gpu", "decode_tok_s_batch1",
                  "prefill_tok_s", "generate_output_tok_s_batch1", "generate_output_tok_s_total", "prefill_latency_ms"}


# MLPerf Inference's llama2-70b benchmark: 24,576 OpenOrca samples of mixed lengths (mlcommons/inference
# language/llama2-70b/README.md, processorca.py --seqlen_limit=1024 --num_total_samples=24576). The summary log gives
# tokens/s and samples/s of the whole system and the samples the run sent (samples_per_query); the layout behind them
# is in the submitter's config (NVIDIA's closed/NVIDIA/configs/llama2-70b/<Scenario>/__init__.py: tensor_parallelism,
# pipeline_parallelism, gpu_batch_size per engine instance), which a row states in its tp, pp and
# batch_or_concurrency cells; the GPUs a system has beyond one instance's run further instances side by side.
# An Offline run is one query of all its samples at once, which the harness spreads over the instances: each runs a
# finite run of its share (gpuplan.estimate.load.finite_run) at the dataset's mean prompt and the run's mean output
# (tokens/s ÷ samples/s of the same log). The output lengths spread as the dataset's reference answers do: c² = 0.62
# over the 24,576 samples' tok_output_length (0.60 for tok_input_length, mean 222.3), read from the per-sample
# lengths of the MLCommons pickle in openshift-psap/performance-dashboard mlperf-data/summaries/llama2-70b-99.csv
# @7cd1065d1e2c53ee745cbda08e2a8f13a42c93bb; the engines stop at --max_output_len=1024 (NVIDIA's
# code/llama2-70b/tensorrt/builder.py, inference_results_v4.0 @920148447684d8a0db7c3c73076c9b73ac362751).
_MLPERF_OUTPUT_CV2 = 0.62
_MLPERF_MAX_OUTPUT = 1024
_MLPERF_SAMPLES = re.compile(r"samples_per_query (\d+)")
_MLPERF_ASSUMPTION = ("the run's samples split evenly over its engine instances, each a finite run of its share "
                      "sent at once; prompts at the dataset's mean, output lengths a gamma law of the run's mean "
                      "with the reference answers' c² = 0.62, capped at 1,024")
# MLPerf Server sends the samples as one Poisson stream at the scheduled rate, which the submitter's harness spreads
# over its engine instances; gpuplan's load model is one engine under one Poisson stream, and this file has no rate
# column, so the latency rows are not compared; the tokens/s and samples/s of a valid run are the scheduled rate
# (× the mean output), not a capacity
_MLPERF_SERVER_WHY = ("MLPerf Server: one Poisson stream at the scheduled rate spread by the submitter's harness over "
                      "its engine instances, which gpuplan's one-engine load model does not describe; its samples/s "
                      "and tokens/s are the scheduled rate, not a capacity")


def mlperf_output_lengths(n: int, mean: float, cv2: float, top: int) -> list[int]:
    """The output lengths of ``n`` samples whose lengths have mean ``mean`` and squared coefficient of variation
    ``cv2``: the quantiles of a gamma law of shape 1/c² (gpuplan.estimate.load.gamma_length_quantile), clipped to
    1 … ``top``, in the well-mixed order of :func:`mixed_quantiles`."""
    normal = NormalDist()
    return [min(top, max(1, round(gamma_length_quantile(mean, cv2, normal.inv_cdf(q))))) for q in mixed_quantiles(n)]


def _mlperf_case(cat: Any, row: dict[str, str]) -> tuple[Case | None, str]:
    """An MLPerf llama2-70b Offline row: its engine instances' finite runs at the layout the row states."""
    if row["scenario"].strip().lower() != "offline":
        return None, _MLPERF_SERVER_WHY
    if row["metric"] != "throughput_output_tok_s_total":
        return None, ("MLPerf Offline samples/s: the run of the same log's tokens/s row (samples/s = tokens/s ÷ "
                      "mean output tokens), compared once there")
    engine = _engine(row["engine"])
    if engine is None:
        return None, f"engine '{row['engine']}' is not one gpuplan models"
    tp, pp, batch = _int(row["tp"]), _int(row["pp"]) or 1, _int(row["batch_or_concurrency"])
    sent = _MLPERF_SAMPLES.search(row["notes"])
    if not (tp and batch and sent):
        return None, ("MLPerf: the submitter's tensor/pipeline layout, per-instance batch or samples_per_query is "
                      "not stated for this system (the summary log gives no layout)")
    instances, rest = divmod(_int(row["gpu_count"]) or 0, tp * pp)
    if instances < 1 or rest:
        return None, f"MLPerf: {row['gpu_count']} GPUs are not whole instances of TP{tp} × PP{pp}"
    (isl, _), (osl, _) = _length(row["isl"]), _length(row["osl"])
    if not (isl and osl):
        return None, "MLPerf: the dataset's mean prompt or the run's mean output is not stated"
    found = _speed_inputs(cat, row)
    if isinstance(found, str):
        return None, found
    preset, prec, gpu = found
    model, kv = cat.model(preset), _kv_dtype(engine, prec, row["notes"])
    setup = with_engine_defaults(InferSetup(engine=engine, weight_format=prec[0], kv_dtype=kv, batch=batch,
                                            prompt_len=isl, output_len=osl, tp=tp, pp=pp,
                                            engine_version=_release_text(row), max_num_seqs=batch), gpu)
    lengths = mlperf_output_lengths(int(sent.group(1)) // instances, osl, _MLPERF_OUTPUT_CV2, _MLPERF_MAX_OUTPUT)

    def pred(cal: Calibration, m=model, g=gpu, s=setup, o=lengths, k=instances) -> float:
        return k * finite_run(m, g, s, o, cal)

    describe = (f"{preset} {prec[0]} {engine} {instances}× TP{tp}" + (f" PP{pp}" if pp > 1 else "") +
                f" on {gpu.name}, {isl}/{osl} (means), MLPerf Offline, batch {batch} per instance")
    assume = "; ".join(a for a in ("FP8 KV cache with FP8 weights" if kv == "fp8" else "",
                                   "dataset lengths read as their means", _MLPERF_ASSUMPTION) if a)
    meta = {"engine": engine, "kind": "throughput", "model_name": preset, "model": model, "gpu": gpu,
            "setup": setup, "quantity": "max_batch_output_tokens_per_s", "per_gpu": False, "instances": instances}
    return Case(id=row["id"], cls="serving_throughput", measured=float(row["value"]), predict=pred,
                source=row["source"], describe=describe, group=_group(row["id"], row), assume=assume,
                resolution=resolution(row["value"]), rate=True, fit=False, meta=meta), ""


def _inference_case(cat: Any, row: dict[str, str]) -> tuple[Case | None, str]:
    metric = row["metric"]
    engine = _engine(row["engine"])
    if row["id"].startswith("mlp-"):
        return _mlperf_case(cat, row)
    if metric in ("min_gpu_memory_gb", "weights_size_gb", "peak_mem_gib", "peak_mem_gb"):
        return _inference_memory_case(cat, row)
    scenario = row["scenario"].strip().lower()
    if scenario in ("poisson", "concurrency"):
        return _load_case(cat, row)
    if scenario == "online":
        return None, "online serving at a request rate: the concurrency behind the latency is not stated"
    if metric not in _SPEED_METRICS:
        return None, f"metric '{metric}' is not an estimate gpuplan makes"
    for key, why in _NOT_ENGINES.items():
        if row["engine"].lower().startswith(key):
            return None, why
    if _SPECULATIVE.search(row["notes"]):
        return None, _SPECULATIVE_WHY
    if not (row["isl"].strip() and row["osl"].strip()):
        return None, "variable request lengths (ShareGPT) without a stated mean"
    if engine is None:
        return None, f"engine '{row['engine']}' is not one gpuplan models"
    found = _speed_inputs(cat, row)
    if isinstance(found, str):
        return None, found
    preset, prec, gpu = found
    tp = _int(row["tp"]) or 1
    (isl, means), (osl, _) = _length(row["isl"]), _length(row["osl"])
    if isl is None or osl is None:
        if not (_int(row["isl"]) is not None and _int(row["osl"]) is not None):
            return None, "request lengths neither fixed nor given as a mean"
        isl, osl = _int(row["isl"]) or 0, _int(row["osl"]) or 0
    batch = _int(row["batch_or_concurrency"]) or 1
    kv = _kv_dtype(engine, prec, row["notes"])
    model = cat.model(preset)
    setup = InferSetup(engine=engine, weight_format=prec[0], kv_dtype=kv, batch=batch, prompt_len=max(isl, 1),
                       output_len=max(osl, 1), tp=tp, pp=_int(row["pp"]) or 1,
                       engine_version=_release_text(row), launcher=_launcher(row),
                       cuda_graphs=_cuda_graphs(row, model), full_logits=_full_prompt_logits(engine, row),
                       attention_dp=_attention_dp(row, model), attention_dp_balance=_attention_dp_balance(row),
                       max_model_len=_max_model_len(row),
                       async_scheduling=_async_scheduling(row), chunked_prefill=_chunked_prefill(row))
    setup = _bench_limits(_with_limits(setup, row, gpu), model, gpu)
    value = float(row["value"])
    backend = _unmodelled_backend(engine, row)
    offline = "max-throughput" in row["batch_or_concurrency"] or "offline" in row["scenario"].lower()
    describe = f"{preset} {prec[0]} {engine} TP{tp} on {gpu.name}, {isl}/{osl}" + (
        " max batch" if offline else f" batch {batch}")
    # a dataset's mixed lengths break the fixed-length batch model (finite runs drain unevenly): such rows are
    # predicted from their mean lengths and reported, not fitted on; so is a row whose source leaves a condition
    # that matters unstated (confidence low or approx: the harness, mean or median, the release), as for every
    # other class
    common = dict(id=row["id"], source=row["source"], describe=describe, group=_group(row["id"], row),
                  assume="; ".join(a for a in ("FP8 KV cache with FP8 weights" if kv == "fp8" else
                                               _KV_AUTO_NOTE if prec[1] == "fp8" else "",
                                               "dataset lengths read as their means" if means else "",
                                               f"llama.cpp {backend} backend predicted as CUDA" if backend else "")
                                if a),
                  resolution=resolution(row["value"]),
                  fit=not means and not _build_unstated(engine, row) and not backend
                  and not _SCHEDULER_STEPS_UNSTATED.search(row["notes"]) and _stated(row))
    kind = ("throughput" if metric.startswith("throughput") or batch > 1 else
            "prefill" if metric.startswith(("ttft", "prefill")) else
            "generate" if metric.startswith("generate") and isl >= 1024 else "decode")
    common["meta"] = {"engine": engine, "kind": kind, "model_name": preset, "model": model, "gpu": gpu,
                      "setup": setup, "quantity": _speed_quantity(metric, offline),
                      "per_gpu": metric.endswith("per_gpu")}

    if metric.startswith("generate_output"):
        def pred_g(cal: Calibration, m=model, g=gpu, s=setup) -> float:
            return latency(m, g, s, cal).figures.output_tokens_per_s
        return Case(cls="serving_throughput" if batch > 1 else "decode_batch1", measured=value,
                    predict=pred_g, rate=True, **common), ""
    per_gpu_metric = metric.endswith("per_gpu")
    lengths = sharegpt_output_lengths(row, isl, osl) if means else None
    if metric.startswith("throughput_output") and offline and lengths:
        common["assume"] = "; ".join(a for a in (common["assume"], _SHAREGPT_ASSUMPTION) if a)

        def pred_n(cal: Calibration, m=model, g=gpu, s=setup, o=lengths, per_gpu=per_gpu_metric) -> float:
            rate = finite_run(m, g, s, o, cal)
            return rate / s.n_gpus if per_gpu else rate
        return Case(cls="serving_throughput", measured=value, predict=pred_n, rate=True, **common), ""
    sent = _perf_overview_requests(row, isl, osl) if not means else None
    if metric.startswith("throughput_output") and offline and sent:
        def pred_u(cal: Calibration, m=model, g=gpu, s=setup, n=sent, per_gpu=per_gpu_metric) -> float:
            rate = uniform_run(m, g, s, n, cal)
            return rate / s.n_gpus if per_gpu else rate
        return Case(cls="serving_throughput", measured=value, predict=pred_u, rate=True, **common), ""
    if metric.startswith("throughput_output") and offline:
        def pred(cal: Calibration, m=model, g=gpu, s=setup, per_gpu=per_gpu_metric) -> float:
            rate = throughput(m, g, s, cal).figures.output_tokens_per_s
            return rate / s.n_gpus if per_gpu else rate
        return Case(cls="serving_throughput", measured=value, predict=pred, rate=True, **common), ""
    if metric.startswith("throughput_output"):
        def pred_b(cal: Calibration, m=model, g=gpu, s=setup) -> float:
            return latency(m, g, s, cal).figures.output_tokens_per_s
        return Case(cls="serving_throughput", measured=value, predict=pred_b, rate=True, **common), ""
    if metric.startswith(("decode_tok_s", "tpot")):
        measured = 1.0 / value if metric.startswith("decode") else value / 1000.0

        def pred_t(cal: Calibration, m=model, g=gpu, s=setup) -> float:
            return latency(m, g, s, cal).figures.tpot_s
        return Case(cls="decode_batch1" if batch == 1 else "tpot", measured=measured, predict=pred_t,
                    **common), ""
    if metric.startswith(("ttft", "prefill")):
        measured = value / 1000.0 if metric.endswith("_ms") else isl / value

        def pred_f(cal: Calibration, m=model, g=gpu, s=setup) -> float:
            return latency(m, g, s, cal).figures.ttft_s
        return Case(cls="ttft", measured=measured, predict=pred_f, **common), ""
    return None, f"metric '{metric}' not mapped"


# vllm bench serve samples ShareGPT conversations whose prompt has at most 1,024 tokens and prompt + output at most
# 2,048, outputs of at least 4 (vllm-project/vllm vllm/benchmarks/datasets.py ``is_valid_sequence`` defaults)
_SHAREGPT_MAX_TOTAL, _SHAREGPT_MIN_LEN = 2048, 4
_SHAREGPT_ASSUMPTION = ("a finite run of the stated number of requests sent at once; output lengths exponential "
                        "about the stated mean (the maximum-entropy law for a known mean), capped at 2,048 − prompt")
_GOLDEN = (math.sqrt(5) - 1) / 2


def sharegpt_output_lengths(row: dict[str, str], prompt: int, mean: int) -> list[int] | None:
    """The output lengths of a finite ShareGPT run sent all at once ('1000 successful requests' in the notes), or
    None when the row does not say how many requests it sent or is not a ShareGPT run.

    The row gives only the mean output length, so the lengths are the quantiles of an exponential law of that
    mean (the maximum-entropy law of a positive length with a known mean; ShareGPT's output lengths fall off
    with a long tail, Kwon et al. 2023, vLLM paper, fig. 11a), clipped to vllm bench serve's sampling filter,
    taken in a well-mixed order (golden-ratio sequence) as the benchmark's shuffled sample would arrive."""
    sent = re.search(r"(\d[\d,]*)\s+successful\s+requests", row["notes"])
    if not sent or "sharegpt" not in (row["isl"] + row["osl"]).lower() or mean < 1:
        return None
    n = int(sent.group(1).replace(",", ""))
    top = max(_SHAREGPT_MIN_LEN, _SHAREGPT_MAX_TOTAL - prompt)
    return [min(top, max(_SHAREGPT_MIN_LEN, round(-mean * math.log(1.0 - q)))) for q in mixed_quantiles(n)]


def mixed_quantiles(n: int) -> list[float]:
    """The n quantiles (r + ½)/n, each once, in a well-mixed order (golden-ratio sequence) as a benchmark's shuffled
    sample would arrive: the k-th gets r, the rank of frac((k + ½)·φ) among the n."""
    order = sorted(range(n), key=lambda k: ((k + 0.5) * _GOLDEN) % 1.0)
    rank = {k: r for r, k in enumerate(order)}
    return [(rank[k] + 0.5) / n for k in range(n)]


# A closed loop of one client (bench_serving / vllm bench serve --max-concurrency 1) never has two requests in
# flight: every decode step it times is a batch-1 step, so its median TPOT (or median ITL, where the run prints no
# median TPOT) is a batch-1 decode measurement. Such a row is also mapped as a decode_batch1 case, predicted at its
# stated (or mean) prompt and output lengths like the other decode rows (decode at the mean context
# prompt + output / 2), and fitted on; the load row itself stays in the tpot class.
_ONE_CLIENT_METRICS = ("tpot_ms_median", "itl_ms_median")
ONE_CLIENT_SUFFIX = ":batch1"


def _run_key(row: dict[str, str]) -> tuple[str, ...]:
    """The run a row's metric belongs to: its source, engine, model, layout, lengths and load."""
    return tuple(row.get(k, "").strip() for k in ("source", "engine", "engine_version", "model", "precision",
                                                  "gpu_spec_name", "tp", "isl", "osl", "batch_or_concurrency",
                                                  "scenario", "notes"))


def _one_client_step(row: dict[str, str], with_tpot: set[tuple[str, ...]]) -> bool:
    """A closed-loop row of exactly one client whose metric is the median TPOT, or the median ITL of a run that
    printed no median TPOT (the same steps, counted once)."""
    if row.get("scenario", "").strip().lower() != "concurrency" or row.get("batch_or_concurrency", "").strip() != "1":
        return False
    metric = row["metric"]
    return metric == "tpot_ms_median" or (metric == "itl_ms_median" and _run_key(row) not in with_tpot)


def _one_client_decode_case(cat: Any, row: dict[str, str]) -> Case | None:
    """The batch-1 decode case of a one-client closed-loop row, or None where its load case could not be built
    either (unmapped there with the reason)."""
    load, _ = _load_case(cat, row)
    if load is None:
        return None
    setup = load.meta["setup"]
    setup = replace(setup, batch=1)
    model, gpu = load.meta["model"], load.meta["gpu"]

    def pred(cal: Calibration, m=model, g=gpu, s=setup) -> float:
        return latency(m, g, s, cal).figures.tpot_s

    assume = "; ".join(a for a in (load.assume, "one closed-loop client: its median step is a batch-1 decode step")
                       if a)
    common = {"assume": assume, "fit": True}
    meta = {**load.meta, "kind": "decode", "setup": setup, "quantity": "tpot_s", "clients": 1}
    return Case(id=row["id"] + ONE_CLIENT_SUFFIX, cls="decode_batch1", measured=load.measured, predict=pred,
                source=load.source, describe=load.describe.replace(f": {row['metric']}", ": batch-1 decode step"),
                group=load.group, resolution=load.resolution, meta=meta, **common)


_LOAD_METRICS = {
    "ttft_ms_mean": ("ttft", "ttft_mean_s"), "ttft_ms_median": ("ttft", "ttft_p50_s"),
    "ttft_ms_p99": ("ttft", "ttft_p99_s"), "tpot_ms_mean": ("tpot", "tpot_mean_s"),
    "tpot_ms_median": ("tpot", "tpot_median_s"), "tpot_ms_p99": ("tpot", "tpot_p99_s"),
    "itl_ms_mean": ("tpot", "tpot_mean_s"), "itl_ms_median": ("tpot", "itl_median_s"),
    "throughput_output_tok_s_total": ("serving_throughput", "output_tokens_per_s"),
    "request_throughput_req_s": ("serving_throughput", "served_per_s"),
    "e2el_ms_mean": ("ttft", "e2el"), "e2el_ms_median": ("ttft", "e2el"),
}


# A server run with speculative decoding (SGLang --speculative-algorithm EAGLE/EAGLE3, vLLM --speculative-config
# with MTP or a draft model, TensorRT-LLM speculative_config) verifies several draft tokens per target step and
# emits as many as it accepts, so its TPOT is the step time divided by the accepted length, which the row does
# not state; docs/estimators.md lists speculative decoding among what gpuplan does not model.
_SPECULATIVE = re.compile(r"--speculative[-_]|speculative_config", re.IGNORECASE)
_SPECULATIVE_WHY = ("speculative decoding (draft tokens verified per step; its acceptance length is not stated) is "
                    "not modelled")

# vLLM's multi-step scheduling (--num-scheduler-steps N, from 0.6.0, V0 engine only) runs N decode steps per schedule:
# a request arriving meanwhile waits for the group to finish and the client receives tokens in bursts of N, which
# gpuplan's one-step-per-schedule load model does not describe (dstack's 8x MI300X Llama-3.1-405B runs at 16 and 32
# req/s with 15 steps: mean TPOT 1.0-1.6 s against a 0.22 s median ITL). Such a row under load is listed unmapped.
_MULTI_STEP = re.compile(r"--num-scheduler-steps?[ =](\d+)")


def _multi_step(notes: str) -> int:
    return max((int(n) for n in _MULTI_STEP.findall(notes or "")), default=1)


def _length(text: str) -> tuple[int | None, bool]:
    """Tokens of a request length cell, and whether it is a dataset's mean ('ShareGPT (mean 230)')."""
    fixed = re.match(r"^\s*(\d+)\s*$", text or "")
    if fixed:
        return int(fixed.group(1)), False
    mean = re.search(r"mean\D{0,3}(\d+)", text or "")
    return (int(mean.group(1)), True) if mean else (None, False)


_RANDOM_UP_TO = re.compile(r"^\s*random\s*<=\s*(\d+)", re.IGNORECASE)
_RANGE_RATIO = re.compile(r"range[-_ ]ratio[^0-9]{0,3}(\d+(?:\.\d+)?)", re.IGNORECASE)


_PROMPTS_CACHED = re.compile(r"\bprompts already cached\b", re.IGNORECASE)


def cached_prompt_tokens(prompt_len: int, block_tokens: int, lengths_vary: bool) -> tuple[int, float]:
    """Prompt tokens a vLLM V1 server computes for a prompt whose every full KV block is already in its prefix
    cache, and the squared coefficient of variation of that count over the run's prompts.

    The cache hits whole blocks and never the prompt's last token, whose logits the first output token needs
    (vllm/v1/core/kv_cache_manager.py ``get_computed_blocks``: the hit is capped at the prompt length − 1 and
    block-aligned, so a prompt that fills its last block recomputes the whole block; vllm-project/vllm
    @003df2961dd8830c317a61f9745ccd557da9fa06, and v0.8's pop of the last block hash, the same count): a prompt
    of L tokens in blocks of b computes ((L − 1) mod b) + 1 of them. Prompts whose lengths vary (a dataset's
    mean) leave every remainder equally likely: (b + 1)/2 tokens on average, uniform over 1 … b (c² =
    (b − 1)/(3(b + 1)))."""
    if not lengths_vary:
        return (prompt_len - 1) % block_tokens + 1, 0.0
    return math.ceil((block_tokens + 1) / 2), (block_tokens - 1) / (3 * (block_tokens + 1))


def prompt_length_cv2(row: dict[str, str]) -> float:
    """Squared coefficient of variation of the prompt lengths of a row whose prompts vary (its ``isl`` a mean).

    A 'random <= L' cell is sglang.bench_serving's random dataset, whose prompt lengths are drawn uniformly from
    the integers max(⌊r·L⌋, 1) … L, r the ``--random-range-ratio`` the notes state (0 when they state none:
    ``sample_random_requests``, python/sglang/bench_serving.py @50a613687fe1ffc6f1bb630c684a24c428a54a74), so their
    c² is that uniform law's, ((b − a + 1)² − 1)/12 over ((a + b)/2)²: about 1/3 for r = 0. Any other dataset
    (ShareGPT) varies about as much as an exponential: c² = 1."""
    top = _RANDOM_UP_TO.match(row["isl"])
    if not top:
        return 1.0
    b = int(top.group(1))
    ratio = _RANGE_RATIO.search(row["notes"])
    a = max(int(b * float(ratio.group(1))), 1) if ratio else 1
    return ((b - a + 1) ** 2 - 1) / 12 / ((a + b) / 2) ** 2


def _load_case(cat: Any, row: dict[str, str]) -> tuple[Case | None, str]:
    """A row measured under load: Poisson arrivals at a rate, or N closed-loop clients (gpuplan.estimate.load)."""
    from gpuplan.estimate.load import at_concurrency, at_rate

    metric, scenario = row["metric"], row["scenario"].strip().lower()
    if metric not in _LOAD_METRICS:
        return None, f"metric '{metric}' under load is not an estimate gpuplan makes"
    if metric.startswith("e2el"):
        return None, "end-to-end latency is TTFT + output × TPOT, already compared through those rows"
    if _SPECULATIVE.search(row["notes"]):
        return None, _SPECULATIVE_WHY
    steps = _multi_step(row["notes"])
    if steps > 1:
        return None, (f"vLLM multi-step scheduling ({steps} decode steps per scheduler call) is not modelled: under "
                      "load a new request waits for the running group and tokens arrive in bursts")
    engine = _engine(row["engine"])
    if engine is None:
        return None, f"engine '{row['engine']}' is not one gpuplan models"
    isl, isl_mean = _length(row["isl"])
    osl, osl_mean = _length(row["osl"])
    if not (isl and osl):
        return None, "request lengths neither fixed nor given as a mean"
    rate = _float(row.get("request_rate_per_s", ""))
    clients = _int(row["batch_or_concurrency"])
    if scenario == "poisson" and not rate:
        return None, "Poisson arrivals without a stated rate"
    if scenario == "concurrency" and not clients:
        return None, "closed loop without a stated number of clients"
    seen = re.search(r"measured mean concurrency[^=]*=\s*(\d+(?:\.\d+)?)", row["notes"])
    if scenario == "concurrency" and clients and seen and float(seen.group(1)) > 1.05 * clients:
        # bench_serving never runs more requests at once than --max-concurrency: the row's load is not the stated one
        return None, (f"the source's measured mean concurrency ({float(seen.group(1)):g}) exceeds its stated maximum "
                      f"concurrency ({clients}): the load behind the row is not the one it states")
    found = _speed_inputs(cat, row)
    if isinstance(found, str):
        return None, found
    preset, prec, gpu = found
    tp = _int(row["tp"]) or 1
    kv = _kv_dtype(engine, prec, row["notes"])
    model = cat.model(preset)
    setup = InferSetup(engine=engine, weight_format=prec[0], kv_dtype=kv, prompt_len=isl, output_len=osl, tp=tp,
                       pp=_int(row["pp"]) or 1, engine_version=_release_text(row), launcher=_launcher(row),
                       cuda_graphs=_cuda_graphs(row, model), attention_dp=_attention_dp(row, model),
                       attention_dp_balance=_attention_dp_balance(row),
                       max_model_len=_max_model_len(row), async_scheduling=_async_scheduling(row),
                       chunked_prefill=_chunked_prefill(row))
    setup = _with_limits(setup, row, gpu)
    cls, field_name = _LOAD_METRICS[metric]
    value = float(row["value"])
    measured = value / 1000.0 if "_ms_" in metric else value
    cv2 = prompt_length_cv2(row) if isl_mean else 0.0
    cached = ""
    if _PROMPTS_CACHED.search(row["notes"]):  # an earlier run on the same server left every prompt's blocks cached
        computed, cv2 = cached_prompt_tokens(isl, get_engine(engine).kv_block_tokens, isl_mean)
        setup = replace(setup, prompt_len=computed)
        cached = (f"prompts found in the prefix cache from an earlier run: {computed} of {isl} prompt tokens "
                  "computed (the uncached tail of the last KV block), as the planner's --prefix-hit does")
    load = f"{rate:g} req/s" if scenario == "poisson" else f"{clients} clients"
    means = " (means)" if isl_mean or osl_mean else ""
    describe = f"{preset} {prec[0]} {engine} TP{tp} on {gpu.name}, {isl}/{osl}{means} at {load}: {metric}"

    lockstep = not (isl_mean or osl_mean)  # fixed lengths: closed-loop clients stay in step (load._waves)
    # a finite run: "500 requests", or bench_serving's --num-prompts as "600 prompts" (one request per prompt)
    sent = re.search(r"(\d[\d,]*)\s+(?:successful\s+)?(?:requests|prompts)\b", row["notes"])
    n_requests = int(sent.group(1).replace(",", "")) if sent else None
    if scenario == "concurrency" and clients and n_requests and n_requests < clients:
        # bench_serving sends each of its requests once: a run of fewer requests than --max-concurrency never has
        # more in flight than it sent (Vultr's 400 requests at 512 and 1,024 clients), whatever the engine admits
        clients = n_requests

    def pred(cal: Calibration, m=model, g=gpu, s=setup, r=rate, n=clients, f=field_name, c=cv2) -> float:
        ls = (at_rate(m, g, s, r, cal, c, n_requests) if scenario == "poisson" else
              at_concurrency(m, g, s, n or 1, cal, lockstep=lockstep, length_cv2=c))
        return float(getattr(ls, f))

    lengths = f"dataset lengths read as their means, prompt-length c² = {cv2:.2g}" if isl_mean or osl_mean else ""
    assume = "; ".join(a for a in (lengths, cached, _KV_AUTO_NOTE if prec[1] == "fp8" and kv != "fp8" else "")
                       if a)
    meta = {"engine": engine, "kind": "load", "model_name": preset, "model": model, "gpu": gpu, "setup": setup,
            "quantity": field_name, "per_gpu": False, "rate": rate, "clients": clients}
    return Case(id=row["id"], cls=cls, measured=measured, predict=pred, source=row["source"], describe=describe,
                group=_group(row["id"], row), assume=assume, resolution=resolution(row["value"]),
                rate=cls == "serving_throughput", meta=meta, fit=_stated(row)), ""


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None


# a row whose chip name the catalog could resolve only by guessing (an H100 without its form factor, a Jetson
# module without its size, a processor series) says why in its notes; that sentence is the row's unmapped reason
_GPU_LEFT_UNMAPPED = re.compile(r"GPU not mapped: [^.]*(?:\.\d[^.]*)*\.")


def _speed_inputs(cat: Any, row: dict[str, str]) -> tuple[str, tuple[str, str], Any] | str:
    """A speed row's preset, (weight format, activation dtype) and catalog GPU, or why it cannot be mapped."""
    preset = _preset_for(cat, row["model"])
    if preset is None:
        return f"model '{row['model']}' is not a preset"
    prec = _precision(row["precision"])
    if prec is None:
        return f"precision '{row['precision']}' not mapped"
    left = _GPU_LEFT_UNMAPPED.search(row["notes"]) if not row.get("gpu_spec_name", "").strip() else None
    if left:
        return left.group(0)
    try:
        gpu = cat.gpu(row.get("gpu_spec_name") or row["gpu"])
    except Exception:
        return f"GPU '{row.get('gpu_spec_name') or row['gpu']}' is not in the catalog"
    if not gpu.memory_bandwidth_bytes_per_s:
        return f"memory bandwidth of {gpu.name} is not in the catalog"
    return preset, prec, gpu


def _speed_quantity(metric: str, offline: bool) -> str:
    """What a speed row measured, in the names of gpuplan's latency()/throughput() answers."""
    if metric.startswith("throughput_output") and offline:
        return "max_batch_output_tokens_per_s"
    if metric.startswith(("generate_output", "throughput_output")):
        return "output_tokens_per_s"
    return "tpot_s" if metric.startswith(("decode_tok_s", "tpot")) else "ttft_s"


# transformers' generate() kept only the last prompt position's logits from 4.45 (GenerationMixin passes
# num_logits_to_keep=1 to the models that accept it); a stated release before it ran lm_head over every prompt
# position and cast the logits to fp32 (Qwen2ForCausalLM.forward at v4.38.2), which the Qwen2 speed benchmark's
# long prompts show (Qwen2-7B at 30,720 tokens: 42.62 GiB under 4.38.2, 19.97 GiB for Qwen2.5-7B under 4.46.0).
_LAST_LOGITS_ONLY = (4, 45)


def _full_prompt_logits(engine: str, row: dict[str, str]) -> bool:
    found = re.match(r"\s*(\d+)\.(\d+)", row.get("engine_version", ""))
    return engine == "hf" and found is not None and (int(found[1]), int(found[2])) < _LAST_LOGITS_ONLY


# The parts of an inference-memory estimate that a process's resident set on unified memory leaves out: buffers
# only the GPU writes (llama.cpp's Metal compute buffer; MLX's activations, logits and workspace). Resident size
# counts the pages the CPU has touched: the weights it read from the file, the KV cache ggml clears with a CPU
# memset, its own heap. john-rocky/apple-silicon-llm-bench @93ef5877 samples Mach resident_size every 100 ms: its
# llama.cpp runs at n_ctx 4,096 peak 8-11 MiB above the reading taken right after loading, before any graph ran,
# and its readings are weights + KV cache + 117-131 MiB; two models' KV caches differ by 80 MiB and their readings by
# 94 MiB, while their compute buffers (254 and 298 MiB) go the other way.
GPU_WRITTEN_PARTS = ("compute_buffer", "activations", "logits", "workspace")
# llama.cpp gained Flash Attention in PR #5021 (ggml-org/llama.cpp, merged 2024-04-30) behind -fa, and made it the
# default ('auto') only in 2025 (issue #27086 calls `-fa auto` the default): a row uses it when it says so
_LLAMACPP_FLASH_ATTENTION = re.compile(r"-fa (?:1|on)\b|flash attention on")


# GGUF publishers that choose each tensor's type themselves instead of taking llama.cpp's recipe for the file type
# the name gives: unsloth's "Dynamic 2.0" GGUFs upcast the layers it finds sensitive, and on 2026-03-05 every
# Qwen3.5 GGUF it publishes was requantized with its own algorithm and imatrix; its study there names ssm_out and
# attn_* as the tensors to leave at higher precision (unsloth.ai/docs/models/qwen3.5/gguf-benchmarks, "Mar 5
# Update" and section 1). gpuplan's per-tensor
# rule (gguf_weights_bytes) cannot know those choices, so a row of such a file that states the file's size is
# predicted with that size in place of the rule's.
_OWN_TENSOR_TYPES = ("unsloth/",)
# the size mac-llm-bench records for a GGUF: os.path.getsize / 1073741824, so GiB although it is labelled GB
# (enescingoz/mac-llm-bench lib/collect_results.sh @332f933349ee2a00d186bdb31af360584e082857, file_size_gb)
_RECORDED_FILE_SIZE = re.compile(r"file (\d+(?:\.\d+)?) GB as recorded")


def _own_types_file_bytes(row: dict[str, str]) -> float | None:
    """The stated size of a GGUF whose publisher picks its own tensor types (``_OWN_TENSOR_TYPES``), else None."""
    size = _RECORDED_FILE_SIZE.search(row["precision"])
    if size is None or not row["model"].lower().startswith(_OWN_TENSOR_TYPES):
        return None
    return float(size.group(1)) * GiB


def _mlx_vlm_gemma3_head(row: dict[str, str], preset: str, model: Any) -> bool:
    """Whether an MLX row runs a multimodal Gemma 3 checkpoint that stores its output layer apart from the token
    table. mlx-vlm converted those (Gemma3ForConditionalGeneration, the 4B, 12B and 27B; the 1B is text-only and
    converts with mlx-lm): its Gemma 3 ``LanguageModel.sanitize`` tests for the bare key "lm_head.weight", which the
    prefixed checkpoint never has, so it always copies ``language_model.model.embed_tokens.weight`` into
    ``language_model.lm_head.weight`` and the converter quantizes and saves both (Blaizzy/mlx-vlm
    mlx_vlm/models/gemma3/language.py @777188a0, the day-one Gemma 3 support, unchanged through @3d5cbb9d). mlx-lm
    then finds the key and keeps the head untied (gemma3_text.Model.sanitize, ml-explore/mlx-lm @v0.31.2), so the
    loaded model holds two 4-bit vocabulary-by-hidden matrices."""
    return _engine(row["engine"]) == "mlx" and preset.startswith("Gemma-3-") and bool(model.vision_tower)


# The released Qwen2-72B-Instruct GPTQ and AWQ checkpoints pad the MLP width from 29,568 to 29,696 with zero channels,
# so that 29,696 / 128 = 232 quantization groups split over 2, 4 or 8 tensor-parallel ranks (29,568 / 128 = 231 does
# not): three more 8,192 x 128 blocks per layer, stored quantized. Sources: QwenLM/Qwen2 issue #774 (2024-07-15: the
# official quantized 72B's config.json reads intermediate_size 29696 where the 16-bit model's reads 29568), issue
# #578 (the zero-padding script, pad_size 128, "this size is Qwen2-72B only") and issue #698 (2024-06-24: the hub's
# Qwen2-72B-Instruct-AWQ already ran at tensor parallel 4)
PADDED_QUANTIZED_FFN = {"Qwen2-72B": 29696}


# The Instruct checkpoints' max_position_embeddings, where it differs from the base preset's: transformers releases
# before 4.45 sized every layer's rotary tables by it (gpuplan.estimate.memory.rotary_tables_bytes). Qwen2-7B-Instruct
# reads 32,768 where Qwen/Qwen2-7B reads 131,072 (a printout of its Qwen2Config: Retruth/deontic @a77cf87a
# nlp_models/qwen2/README.md, '"_name_or_path": "Qwen/Qwen2-7B-Instruct"'); Qwen2-0.5B-Instruct reads 32,768 where
# Qwen/Qwen2-0.5B reads 131,072 (the hub file as copied with its '"_name_or_path": "Qwen/Qwen2-0.5B-Instruct"' in
# huggingface.co/qgallouedec/online-dpo-qwen2-2 config.json @2112d987 and hsiehpinghan/Qwen2-0.5B-Instruct
# config.json @5d18c64d; at 131,072 the 0.5B rows of the Qwen2 speed benchmark came out 0.55 GiB above the measured
# peak at every quantization, the 0.6 GiB more the tables would take); the 57B-A14B Instruct config was not found in a
# citable copy, so its rows keep the base preset's value (131,072: the larger table)
INSTRUCT_MAX_POSITIONS = {"Qwen2-7B": 32768, "Qwen2-0.5B": 32768}


def _released_instruct_positions(row: dict[str, str], preset: str) -> int | None:
    """The max_position_embeddings of the released Instruct checkpoint a row ran, where it differs from the preset's."""
    released = f"qwen/{preset.lower()}-instruct" in row["notes"].lower()
    return INSTRUCT_MAX_POSITIONS.get(preset) if released else None


def _released_quantized_ffn(row: dict[str, str], preset: str, fmt: str) -> int | None:
    """The MLP width of the released quantized checkpoint a row ran, where it differs from the 16-bit preset's."""
    released = f"qwen/{preset.lower()}-instruct-" in row["notes"].lower()
    quantized = fmt.startswith(("gptq", "awq"))
    return PADDED_QUANTIZED_FFN.get(preset) if released and quantized else None


_BNB_RELEASE = re.compile(r"bitsandbytes (\d+\.\d+(?:\.\d+)?)\b")


def _quantization_conditions(notes: str) -> dict[str, Any]:
    """What a row's (lower-cased) notes state about how its weights were quantized: the output layer quantized
    with the linear layers (Lit-GPT), the bitsandbytes release that ran, int8 layers quantized when built and again
    at load (Lit-GPT's InferenceLinear8bitLt); InferSetup's defaults where they say nothing."""
    bnb = _BNB_RELEASE.search(notes.replace("bitsandbytes>=", "bitsandbytes >= "))
    return {"quantized_head": "output layer quantized" in notes, "quant_release": bnb.group(1) if bnb else "",
            "quantized_at_build": "quantized when built and again at load" in notes}


def _inference_memory_case(cat: Any, row: dict[str, str]) -> tuple[Case | None, str]:
    label = row["model"]
    preset = _preset_for(cat, label)
    if "INT4-QE" in label:  # THUDM/chatglm-6b-int4-qe: the embedding table is int4 too, where gpuplan keeps it 16-bit
        return None, f"model '{label}' quantizes its embedding table to int4, which gpuplan's int4 formats do not"
    if preset is None:
        return None, f"model '{label}' is not a preset"
    prec = row["precision"].lower()
    mlx = next((f for name, f in _MLX_FORMATS.items() if name in prec), None)
    fmt = ("gptq-int8" if "gptq" in prec and "int8" in prec else "gptq-int4" if "gptq" in prec
           else "awq-int4" if "awq" in prec
           else "bnb-int8" if "bitsandbytes" in prec and ("8-bit" in prec or "int8" in prec)
           else "bnb-nf4-dq" if "bitsandbytes" in prec and "double" in prec
           else "bnb-nf4" if "bitsandbytes" in prec
           else "int8-wo" if "int8" in prec else "int4-wo" if "int4" in prec else "gguf-q4_0" if "q4_0" in prec
           else "gguf-q4_1" if "q4_1" in prec else "gguf-q5_0" if "q5_0" in prec else "gguf-q5_1" if "q5_1" in prec
           else "gguf-q4_k_s" if "q4_k_s" in prec else "gguf-q5_k_s" if "q5_k_s" in prec
           else "gguf-q4_k_m" if "q4_k_m" in prec else "gguf-q5_k_m" if "q5_k_m" in prec
           else "gguf-q6_k" if "q6_k" in prec else "gguf-q8_0" if "q8_0" in prec
           else mlx if mlx
           else "fp8" if "fp8" in prec else "bf16" if "bf16" in prec
           else "fp16" if "f16" in prec or "fp16" in prec else None)
    if fmt is None:
        return None, f"precision '{row['precision']}' not mapped"
    model = cat.model(preset)
    padded_ffn = _released_quantized_ffn(row, preset, fmt)
    if padded_ffn:
        model = replace(model, ffn_hidden=padded_ffn)
    positions = _released_instruct_positions(row, preset)
    if positions:
        model = replace(model, max_positions=positions)
    # Lit-GPT's GPT holds its output layer apart from the token table (lit_gpt/model.py: lm_head = nn.Linear), so a
    # model that ties them is loaded with two matrices; and its quantization() swaps every torch.nn.Linear, the
    # output layer too, for the quantized class while the model is built (lit_gpt/utils.py), which the quantized
    # rows' notes state and _quantization_conditions reads. A quantized Lit-GPT row is reported, not fitted: the
    # bitsandbytes release it ran is dated from the commits, not stated (Lightning-AI/litgpt @03f8197)
    litgpt = row["engine"].lower().startswith("lit-gpt")
    separate_head = _mlx_vlm_gemma3_head(row, preset, model)
    if (litgpt or separate_head) and model.tied_embeddings:
        model = replace(model, tied_embeddings=False)
    metric = row["metric"]
    unit = row["unit"].split()[0] if row["unit"] else "GB"
    measured = float(row["value"]) * {"GB": GB, "GiB": GiB, "MB": 1e6}.get(unit, GB)
    try:
        gpu = cat.gpu(row.get("gpu_spec_name") or "A100-80GB") if (row.get("gpu_spec_name") or "").strip() \
            else cat.gpu("A100-80GB")
    except Exception:
        return None, f"GPU '{row.get('gpu_spec_name')}' is not in the catalog"
    if measured > gpu.memory_bytes:
        return None, "more memory than one GPU holds: split over GPUs (device_map) whose count is not stated"
    isl, osl, batch = _int(row["isl"]), _int(row["osl"]), _int(row["batch_or_concurrency"]) or 1
    engine = _engine(row["engine"]) or "hf"
    if row["engine"].lower().startswith("autoawq"):
        return None, "AutoAWQ's fused modules pre-allocate a KV cache for max_seq_len: not an engine gpuplan models"
    same_benchmark = ("optimum" in row["source"].lower() or "overview-quantization" in row["source"].lower())
    if same_benchmark and batch > 1:
        return None, ("transformers before 4.42 (huggingface/transformers PR #30536) kept the previous step's KV "
                      "cache alive while building the next one (two caches at the peak); these rows state no "
                      "transformers release to model it from")
    notes = row["notes"].lower()
    setup = InferSetup(engine=engine, weight_format=fmt, batch=batch, prompt_len=isl or 512,
                       output_len=osl or 512, full_logits=_full_prompt_logits(engine, row),
                       engine_version=_release_text(row), **_quantization_conditions(notes))
    n_ctx = re.search(r"n_ctx (\d+)", notes) if engine == "llamacpp" else None
    if engine == "llamacpp":  # its KV cache and graph are allocated for n_ctx; Flash Attention only when asked for
        setup = replace(setup, flash_attention=bool(_LLAMACPP_FLASH_ATTENTION.search(notes)))
        if n_ctx:
            setup = replace(setup, prompt_len=int(n_ctx.group(1)), output_len=0)
    weights_only = metric == "weights_size_gb"
    process_rss = "resident set size" in notes
    torch_counted = metric.startswith("peak_mem") and "nvml" not in notes and "non-pytorch" not in notes \
        and not process_rss

    # the stated file replaces the rule's estimate of it (one device: no layer or tensor split to share it out)
    file_bytes = _own_types_file_bytes(row) if engine == "llamacpp" and fmt.startswith("gguf") \
        and setup.tp == setup.pp == 1 else None

    def pred(cal: Calibration, m=model, s=setup, w=weights_only, t=torch_counted, f=file_bytes,
             r=process_rss and gpu.shares_system_memory) -> float:
        est = inference_memory(m, gpu, s, cal)
        shift = 0.0 if f is None else f - gguf_weights_bytes(m, weight_format(s.weight_format))
        if w:
            return est.breakdown.get("weights") + shift
        gpu_only = sum(est.breakdown.get(k) for k in GPU_WRITTEN_PARTS) if r else 0.0
        return est.total + shift - (est.breakdown.get("overhead") if t else 0.0) - gpu_only

    tokens = f"n_ctx {setup.prompt_len}" if setup.output_len == 0 else f"{setup.prompt_len}+{setup.output_len} tokens"
    describe = f"{preset} {fmt} {engine}, " + ("weights only" if weights_only else f"batch {batch}, {tokens}")
    assume = "weights: the GGUF's stated size (its publisher picks its own tensor types)" if file_bytes else \
        "output layer stored apart from the token table (mlx-vlm's Gemma 3 conversion)" \
        if separate_head else \
        "Lit-GPT's output layer quantized too (its notes: the bitsandbytes release, int8 quantized at load)" \
        if litgpt and fmt != "bf16" \
        else "'minimum GPU memory' read as a short chat (1,024 tokens of context)" if not (isl or osl or n_ctx) else (
        "process resident set on unified memory, read as device memory" if process_rss else
        "the engine's own buffer accounting (no CUDA context)" if torch_counted and engine == "llamacpp" else
        "PyTorch max allocated" if torch_counted else "device memory")
    meta = {"engine": engine, "model_name": preset, "model": model, "gpu": gpu, "setup": setup,
            "measure": "weights" if weights_only else "active" if torch_counted else "device"}
    # a source that states none of the run's conditions (confidence low) is reported, not fitted on. A process's
    # resident set on unified memory is fitted on, less GPU_WRITTEN_PARTS: it counts the host buffers, which share
    # that memory and are modelled (the token table llama.cpp keeps on the host)
    return Case(id=row["id"], cls="inference_memory", measured=measured, predict=pred, source=row["source"],
                describe=describe, group=_group(row["id"], row), assume=assume, meta=meta,
                resolution=resolution(row["value"]),
                fit=_stated(row) and not (litgpt and fmt != "bf16")), ""


def all_cases() -> tuple[list[Case], list[Unmapped]]:
    from calib_rows import finetune_more_cases, training_more_cases

    cat = load_catalog()
    tc, tu = training_cases(cat)
    ic, iu = inference_cases(cat)
    pc, pu = training_more_cases(cat)
    fc, fu = finetune_more_cases(cat)
    return tc + ic + pc + fc, tu + iu + pu + fu


def error_of(case: Case, predicted: float) -> float:
    """predicted / measured − 1 (negative: under-predicted); 0 within the precision the value was published
    with, and when a bound row's bound is respected."""
    if predicted != predicted:
        return math.nan
    err = predicted / case.measured - 1
    if abs(err) <= case.resolution:
        return 0.0
    if (case.bound == "upper" and predicted <= case.measured) or (case.bound == "lower" and predicted >= case.measured):
        return 0.0
    return err


def ratio(case: Case, cal: Calibration) -> float:
    """measured / predicted (1.0 is perfect; > 1 means gpuplan under-predicts)."""
    pred = case.predict(cal)
    if not pred or not math.isfinite(pred):
        return math.nan
    return case.measured / pred


def with_replaced(cal: Calibration, values: dict[str, float]) -> Calibration:
    return replace(cal, values={**cal.values, **values})


__all__ = ["CLASSES", "Case", "Unmapped", "all_cases", "error_of", "forward_flops_per_token", "ratio"]
