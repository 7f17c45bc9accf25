"""Training and fine-tuning rows whose conditions are columns (``training_more.csv``, ``finetune_more.csv``) →
estimator cases, without a hand-written mapping per row.

What a row does not state is taken from the framework's defaults (``gpuplan/data/frameworks.csv``): a
LLaMA-Factory run that does not mention gradient checkpointing ran with it on, because that is LLaMA-Factory's
default. A row that lacks what an estimate needs (the tokens it trained on, the sequence length, the model)
is listed as unmapped with the reason.
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from calib import Case, Unmapped, _group, _memory_value, _preset_for, _stated, resolution, training_memory_predictor

from gpuplan.errors import GpuplanError
from gpuplan.estimate.calibration import Calibration
from gpuplan.estimate.frameworks import Framework, framework, zero_buckets
from gpuplan.estimate.memory import state_bytes
from gpuplan.estimate.moe_train import check_expert_layout
from gpuplan.estimate.params import count_params
from gpuplan.estimate.train_time import train_time
from gpuplan.types import RECOMPUTE_MODULES, ModelSpec, Parallelism, TrainSetup
from gpuplan.units import DAY

# Fine-tuning memory rows from these files are predicted and reported but not fitted on. Their sources disagree
# with each other by ±30 % at conditions the rows state alike (a 2024 ms-swift benchmark reads 30-50 % above
# what PEFT's 2026 runs and LitGPT's tables give for the same shapes), through what they do not state: library
# versions (logits upcast to fp32, adapter dtypes), dataset lengths under dynamic padding, allocator settings.
# Fitted on, the 0.9 quantile of the memory fit follows the highest of them and lifts every estimate (PEFT's
# own runs came out +140 %; the fit pushes the activation factors to their bounds to absorb what is not
# activations). The memory parameters stay fitted on the hand-mapped rows of bench/cases.yaml; the rows of these
# files with stated conditions widen the error bands, which is what plans' "fits" margin comes from.
FIT_MEMORY = False

HERE = Path(__file__).resolve().parent
CALIBRATION = HERE / "calibration"

# how sources name their framework → gpuplan's framework table (data/frameworks.csv)
_FRAMEWORKS = (("llm.c", "llmc"), ("llama-factory", "llama-factory"), ("llamafactory", "llama-factory"),
               ("unsloth", "unsloth"), ("litgpt", "litgpt"), ("axolotl", "axolotl"), ("trl", "trl"), ("swift", "swift"),
               ("torchtune", "torchtune"), ("torchtitan", "torchtitan"),
               ("llm-foundry", "llm-foundry"), ("composer", "llm-foundry"), ("megatron", "megatron"),
               # NeMo AutoModel's PyTorch backend (FSDP2 over DTensor, expert parallel, Transformer Engine
               # kernels; NVIDIA-NeMo/Automodel docs/performance-summary.mdx) is the PyTorch-native stack
               # torchtitan is, not NeMo's Megatron-Core one: matched before "nemo"
               ("automodel", "torchtitan"),
               ("nemo", "megatron"),
               # DeepSeek's in-house HAI-LLM (DeepSeek-V3 report, sec. 3.2: hand-written kernels, DualPipe, FP8
               # GEMMs): timed as the hand-optimised class, as Meta's own stack is for the Llama rows
               ("hai-llm", "megatron"),
               # Meta's own Llama 3 stack (Dubey et al. 2024, sec. 3.3.2: 4D parallelism, its own kernels), timed
               # as the hand-optimised class, as bench/cases.yaml times the Llama 2 runs
               ("meta custom training", "megatron"),
               ("glm-4 finetune", "glm4"), ("glm-4", "glm4"), ("chatglm", "chatglm"),
               ("qwen finetune.py", "qwen"), ("xtuner", "xtuner"),
               ("hf trainer", "hf"), ("seq2seqtrainer", "hf"), ("peft", "hf"), ("transformers", "hf"),
               # Amazon SageMaker's model parallelism library (SMP), which trained BloombergGPT with ZeRO stage 3
               # sharding (Wu et al. 2023, arXiv:2303.17564, sec. 3.4): timed as DeepSpeed's ZeRO stack
               ("sagemaker model parallelism", "deepspeed"),
               ("deepspeed", "deepspeed"))


def framework_of(label: str) -> Framework | None:
    low = label.lower()
    for key, name in _FRAMEWORKS:
        if key in low:
            try:
                return framework(name)
            except GpuplanError:
                return None
    return None


def _rows(name: str) -> list[dict[str, str]]:
    path = CALIBRATION / name
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _int(text: str) -> int | None:
    m = re.match(r"^\s*~?(\d+)\s*$", (text or "").replace(",", ""))
    return int(m.group(1)) if m else None


def _int_or_default(text: str) -> int | None:
    """A count the cell states, or the script default it names where the run left the option at it ("unstated
    (finetune.py default 64)": Qwen (v1) finetune.py ``LoraArguments.lora_r``, which the README's profiling runs did
    not override)."""
    named = re.search(r"\bdefault\s+(\d+)\s*\)?\s*$", text or "")
    return _int(text) or (int(named.group(1)) if named else None)


def _float(text: str) -> float | None:
    try:
        return float((text or "").replace(",", ""))
    except ValueError:
        return None


# NVFP4 training (Transformer Engine's NVFP4BlockScaling under Megatron-Core) is gpuplan's fp4-mixed; MXFP4 (or an
# FP4 recipe not named) is another recipe, with another scale block and GEMM kernels, that gpuplan has no rate for:
# read as bf16 the row would be compared with a quarter of the peak it used
_FP4_TRAINING = re.compile(r"\b(mx)?fp4\b")
_FP4_TRAINING_WHY = "FP4 training other than NVFP4 (MXFP4 GEMMs) is not a training precision gpuplan models"


def _precision(text: str) -> str:
    """The training precision a row's text states. FP32 only where no lower compute precision is named: "bf16
    mixed precision, reduce fp32" computes in bf16 (FSDP2's MixedPrecisionPolicy: param_dtype bf16,
    reduce_dtype fp32), torchao's "float8" linears are FP8 matmuls, and NVFP4 is Transformer Engine's NVFP4 recipe."""
    low = text.lower()
    if "nvfp4" in low:
        return "fp4-mixed"
    if "fp8" in low or "float8" in low:
        return "fp8-mixed"
    if "true" in low or "pure" in low or "no amp" in low:
        return "bf16" if "bf16" in low or "bfloat16" in low else "fp16-mixed"
    if "fp16" in low or ("float16" in low and "bfloat16" not in low):
        return "fp16-mixed"
    if ("fp32" in low or "float32" in low) and not re.search(r"bf16|bfloat16", low):
        return "fp32"
    return "bf16-mixed"


def _recompute(text: str, fw: Framework | None, quantized_base: bool = False) -> tuple[str, str]:
    """Activation recomputation the row ran with, and what the mapping assumed (unstated: the framework's default
    for the row's base, ``Framework.recompute_for``)."""
    low = (text or "").strip().lower()
    if (low.startswith("yes") and "selective" in low) or low == "selective":
        return "selective", ""
    if low.startswith("yes"):
        return "full", ""
    if low.startswith("no"):
        return "none", ""
    if fw is not None:
        default = fw.recompute_for(quantized_base)
        base = " for a quantized base" if default != fw.recompute else ""
        return default, f"gradient checkpointing unstated: {fw.name}'s default{base} ({default})"
    return "none", "gradient checkpointing unstated and no framework default: none"


# a machine whose cards the catalog lists with an NVLink bridge but which ran without one ("2x RTX 3090 24GB (no
# NVLink)"): a bridge is an accessory, fitted or not (data/gpus.csv interconnect "NVLink 3 bridge (2 GPUs)")
_NO_BRIDGE = re.compile(r"\b(?:no|without)\s+(?:an?\s+)?(?:nvlink|bridge)", re.IGNORECASE)


def _gpu_and_framework(cat: Any, row: dict[str, str]) -> tuple[Any, Framework] | str:
    """The row's catalog GPU and framework, or why the row cannot be mapped. A row whose machine had no NVLink
    bridge gets its GPU without the catalog's bridge: its collectives ran over PCIe."""
    try:
        gpu = cat.gpu(row["gpu_spec_name"])
    except GpuplanError:
        return f"GPU '{row['gpu_spec_name']}' is not in the catalog"
    if "bridge" in gpu.interconnect.lower() and _NO_BRIDGE.search(row["gpu"]):
        gpu = replace(gpu, interconnect="none", interconnect_bytes_per_s=None)
    fw = framework_of(row["framework"])
    if fw is None:
        return f"framework '{row['framework'][:60]}' is not one gpuplan models"
    return gpu, fw


def _model(cat: Any, row: dict[str, str]) -> ModelSpec | None:
    preset = _preset_for(cat, re.sub(r"\s*\(.*", "", row["model"]))
    if preset:
        return cat.model(preset)
    return None


def _mpt_benchmark(row: dict[str, str], seq_len: int) -> ModelSpec | None:
    """llm-foundry's benchmark MPT shapes (scripts/train/yamls/pretrain/mpt-*.yaml): GELU MLP 4·d wide, no
    biases, LayerNorm without bias, tied embeddings, learned positions when ALiBi is off (as the notes say)."""
    if "mpt" not in row["model"].lower():
        return None
    hidden, layers, heads, vocab = (_int(row[k]) for k in ("hidden", "n_layers", "n_heads", "vocab"))
    if not (hidden and layers and heads and vocab):
        return None
    learned = "learned position" in row["notes"].lower()
    spec = ModelSpec(name=row["model"], model_type="mpt", n_layers=layers, hidden=hidden, n_heads=heads,
                     n_kv_heads=heads, head_dim=hidden // heads, ffn_hidden=_int(row["ffn_hidden"]) or 4 * hidden,
                     vocab=vocab, gated_mlp=False, tied_embeddings=True, max_positions=seq_len,
                     positional="learned" if learned else "alibi", learned_positions=seq_len if learned else 0)
    # the benchmark yamls keep MPT's default biases (no_bias false): biased linears and LayerNorms, which is
    # what the row's published parameter count (NumParams) says — 11 hidden-sized vectors per layer more
    biased = replace(spec, qkv_bias=True, out_bias=True, mlp_bias=True, norm_bias=True)
    return biased if _int(row["n_params"]) == count_params(biased).total else spec


# ---------------------------------------------------------------- pretraining


def training_more_cases(cat: Any) -> tuple[list[Case], list[Unmapped]]:
    cases: list[Case] = []
    unmapped: list[Unmapped] = []
    for row in _rows("training_more.csv"):
        case, why = _pretrain_case(cat, row)
        if case:
            cases.append(case)
        else:
            unmapped.append(Unmapped(row["id"], why))
    return cases, unmapped


# Transformer Engine's attention named in a row's flash_attention column ("TE attention", "TE DotProductAttention":
# NeMo AutoModel's backend attn "te"): DotProductAttention prefers FusedAttention (cuDNN) over FlashAttention on
# compute capability 9.0 and newer (NVIDIA/TransformerEngine transformer_engine/pytorch/attention/
# dot_product_attention/utils.py @a0b36d0cd3b7f77991a6e1e2aa75c10d668848e9, get_attention_backend), the family
# data/stacks.csv gives Megatron-Core, whatever stack times the rest of the step
_TE_ATTENTION = re.compile(r"\bTE (?:attention|DotProductAttention)\b|transformer engine attention", re.IGNORECASE)


def _attention_kernel(notes: str, column: str = "") -> str:
    """The attention kernel a row states: llm-foundry's attn_impl "triton" with flash-attn 1.x installed (its submit
    scripts until late 2023) runs FlashAttention 1's Triton port, as the notes say; Transformer Engine's attention
    named in the ``flash_attention`` column runs cuDNN's fused attention (``_TE_ATTENTION``); otherwise none, and
    the setup runs its stack's (gpuplan.estimate.train_time.attention_kernel)."""
    low = notes.lower()
    if "attn_impl=triton" in low or re.search(r"flash-attn 1\.", low):
        return "flash1"
    return "cudnn" if _TE_ATTENTION.search(column) else ""


# a memory-efficient kernel a row's flash_attention column names beside its "no" (no FlashAttention, but xformers'
# memory-efficient attention, which like it never writes the score matrix: LLaMA-1)
_FUSED_NOT_FLASH = re.compile(r"memory-efficient|xformers", re.IGNORECASE)


def _flash_attention(column: str) -> bool:
    """``TrainSetup.flash_attention`` of a pretraining row: False where the ``flash_attention`` column says "no"
    and names no fused memory-efficient kernel (``_FUSED_NOT_FLASH``): standard attention, as Megatron's fused
    softmax still is ("no (2022, Megatron fused softmax)": it reads and writes the whole score matrix); an unstated
    or a "yes" column keeps the fused kernel."""
    low = column.strip().lower()
    return not (low == "no" or low.startswith("no ")) or bool(_FUSED_NOT_FLASH.search(low))


# a row whose notes say its gradients were reduced after the backward, not behind it (Megatron-LM's distributed
# optimizer before --overlap-grad-reduce: TrainSetup.dp_after_backward)
_REDUCED_AFTER_BACKWARD = re.compile(r"\bgradients reduce(?:d|-scattered) after the backward\b", re.IGNORECASE)


def _reduced_after_backward(row: dict[str, str]) -> bool:
    """``TrainSetup.dp_after_backward`` of a pretraining row: GPT-NeoX's pipeline engine, or the notes say so."""
    return _deepspeed_pipe_engine(row) or bool(_REDUCED_AFTER_BACKWARD.search(row["notes"]))


def _deepspeed_pipe_engine(row: dict[str, str]) -> bool:
    """Whether a GPT-NeoX run ran under DeepSpeed's PipelineEngine: GPT-NeoX builds its model as a DeepSpeed
    PipelineModule whenever its config's pipe-parallel-size is 1 or more, and as a plain sequential model only at 0
    (EleutherAI/gpt-neox v1.0 @71df4d5017f9f4919566a11454fe3a507ffdc632, megatron/neox_arguments/arguments.py:
    is_pipe_parallel = pipe_parallel_size >= 1; megatron/training.py train_step_pipe), so one stage still reduces
    its gradients after the backward (TrainSetup.dp_after_backward)."""
    if "gpt-neox" not in row["framework"].lower():
        return False
    stages = re.search(r"pipe-parallel-size\s*:?\s*(\d+)", row["notes"])
    return bool(stages and int(stages.group(1)) >= 1)


_PRETRAIN_METRICS = ("tokens_per_s_per_gpu", "tokens_per_s_total", "gpu_hours", "wall_days", "peak_mem_gib",
                     "peak_mem_gb")
# a whole run's length, as GPU-hours or as the wall-clock days of its stated GPU count
_RUN_METRICS = ("gpu_hours", "wall_days")


def _expert_parallel(notes: str) -> int | None:
    """The expert-parallel degree a row's notes state ("EP 32", Megatron-Bridge's performance tables), or None."""
    found = re.search(r"\bEP\s*=?\s*(\d+)\b", notes)
    return int(found.group(1)) if found else None


# DeepEP / HybridEP kernels, which a row names in its framework or notes ("dispatcher DeepEP", "TE + DeepEP"), send a
# token once per destination GPU and node (gpuplan.estimate.moe_train.link_shares); the stack's default otherwise
# (Megatron-Core's alltoall dispatcher)
_DEEPEP = re.compile(r"\b(?:deep|hybrid)-?ep\b", re.IGNORECASE)


# DeepSeek's DualPipe schedule, which a row names in its framework or notes, runs the all-to-alls and pipeline sends
# behind compute (TrainSetup.dualpipe; gpuplan.estimate.train_time.behind_compute)
_DUALPIPE = re.compile(r"\bDualPipe\b", re.IGNORECASE)


# Megatron-Core's EP communication overlap, which a row's notes state from its recipe ("EP communication overlap
# (overlap_moe_expert_parallel_comm) on", Megatron-Bridge's moe_a2a_overlap) or its table's label ("+1f1b overlap",
# Megatron-MoE-ModelZoo; the MoE README's "1F1B A2A Overlap"): TrainSetup.ep_overlap
# a recipe that runs the experts through Transformer Engine's fused grouped MLP (TrainSetup.fused_grouped_mlp)
_FUSED_GROUPED_MLP = re.compile(r"\bfused grouped MLP on\b", re.IGNORECASE)
_EP_OVERLAP = re.compile(r"\boverlap_moe_expert_parallel_comm\)\s+on\b|\+1f1b overlap\b", re.IGNORECASE)


# A reading the notes call the card's whole memory ("80 = full card", "essentially the whole 80GB card"): the caching
# allocator grows its pool until the card is full and frees its cache only when an allocation fails (pytorch/pytorch
# c10/cuda/CUDACachingAllocator.cpp: a failed cudaMalloc releases the cached blocks and retries), so such a
# reading says the run fit on the card, not what it needed at its peak
_CARD_FILLED = re.compile(r"\b(?:full|whole)\s+(?:\d+\s*GB\s+)?card\b", re.IGNORECASE)
# Megatron-Core's selective recomputation by module, which a row states from its recipe ("recompute_modules
# mla_up_proj, mlp (...)", "recompute_modules empty") or in its column ("yes (selective: layernorm, moe_act)"):
# TrainSetup.recompute_modules; names outside RECOMPUTE_MODULES are not read
_RECOMPUTE_MODULES = re.compile(r"\brecompute_modules (empty|[a-z_]+(?:, [a-z_]+)*)")
_SELECTIVE_MODULES = re.compile(r"\bselective: ([a-z_]+(?:, [a-z_]+)*)")


def _recompute_modules(row: dict[str, str]) -> tuple[str, ...] | None:
    """The modules a row's selective recomputation reruns, () where its recipe names none, None where unstated."""
    found = _RECOMPUTE_MODULES.search(row["notes"]) or _SELECTIVE_MODULES.search(row["grad_checkpointing"])
    if not found:
        return None
    names = () if found.group(1) == "empty" else tuple(found.group(1).split(", "))
    return names if all(n in RECOMPUTE_MODULES for n in names) else None


# Multi-token prediction depths (TrainSetup.mtp_layers) the runs trained with. Megatron-Bridge's recipes set
# ``cfg.model.mtp_num_layers = 1`` for DeepSeek-V3 (NVIDIA-NeMo/Megatron-Bridge
# src/megatron/bridge/recipes/deepseek/deepseek_v3.py @8301abfc0d, 0fbfe7d3e9, 3743c703d1, 5cb3444c43, f83545d981,
# the rows' recipe commits; a default of 1 @0465189601951c14ad592bd8eefbb673929e25bc) and 2 for Nemotron 3 Super
# (recipes/nemotronh/nemotron_3_super.py at the same commits, recipes/nemotronh/h100/nemotron_3_super.py
# @6124fbe38a68eea9c4f4be3aa5e084bd5d461d98, which the 26.08 perf recipes build on) and Ultra
# (recipes/nemotronh/h100/nemotron_3_ultra.py @6124fbe38a); the 25.11 table's "w/o MTP" label runs none. The
# tables' model TFLOP/s over tokens/s agree: 260 GFLOP/token for DeepSeek-V3 with MTP, 249.7 without. DeepSeek's
# own run trained one MTP module (DeepSeek-V3 Technical Report, arXiv:2412.19437, sec. 4.2: MTP depth D = 1).
_MTP_DEPTHS = (("w/o MTP", 0), ("DeepSeekV3", 1), ("Nemotron_3_Super", 2), ("Nemotron_3_Ultra", 2))


def _mtp_layers(row: dict[str, str]) -> int:
    """The MTP depths of a pretraining row: its Megatron-Bridge table label's recipe, or DeepSeek's own run."""
    if row.get("source_group") == "deepseek-v3":
        return 1
    if row.get("source_group") != "nvidia-megatron-bridge-perf":
        return 0
    label = re.search(r'model label "+([^"]+)"', row["notes"])
    return next((n for key, n in _MTP_DEPTHS if label and key in label.group(1)), 0)


def _ep_dispatcher(row: dict[str, str]) -> str:
    """``TrainSetup.ep_dispatcher`` of a pretraining row: "deepep" where its framework or notes name the kernels."""
    return "deepep" if _DEEPEP.search(row["framework"] + " " + row["notes"]) else "alltoall"


# A run whose notes say it had no sequence parallelism keeps every TP rank's activations whole (the layer inputs a
# full recomputation keeps, too): Megatron-LM takes it only with --sequence-parallel (Korthikanti et al. 2022), and
# BigScience's Megatron-DeepSpeed fork, which trained BLOOM, has no such option. gpuplan's default divides them by TP.
_NO_SEQUENCE_PARALLEL = re.compile(r"\bno sequence parallelism\b", re.IGNORECASE)


def _virtual_stages(notes: str, pp: int) -> int:
    """The model chunks per pipeline stage a row's notes state ("VP 8", Megatron's interleaved schedule; "VP n/a"
    or none: plain 1F1B, 1). Only with PP: Megatron-Bridge's tables print a VP beside PP 1 too."""
    found = re.search(r"\bVP\s*=?\s*(\d+)\b", notes)
    return int(found.group(1)) if found and pp > 1 else 1


# a footnote of Megatron-Bridge's performance tables on a figure the release got wrong ("Performance regression in
# GPT-OSS 120B pre-training is a known issue (cudnn-frontend issue 256); to be resolved in next container", 26.06.01)
_KNOWN_REGRESSION = re.compile(r"performance regression[^\"]*known issue", re.IGNORECASE)
# a whole-run figure whose source counts the project's calendar time, not one run's training: the notes say "Scope:
# the whole project" where the source itself records the time that trained nothing (GLM-130B's training log: node
# failures, restarts from earlier steps, abandoned data mixes, days spent recopying the corpus). gpuplan's run time
# is the steps' time only, and no stated figure says how much of the total that was
_WHOLE_PROJECT = re.compile(r"\bScope: the whole project\b", re.IGNORECASE)


# a transformers model called in training with its config's use_cache on and transformers' own gradient checkpointing
# off returns every layer's keys and values (TrainSetup.returns_kv_cache); a loop that binds the outputs at the top
# of the loop holds the previous step's until the next forward returns (TrainSetup.keeps_previous_outputs)
_USE_CACHE_ON = re.compile(r"\buse_cache on\b", re.IGNORECASE)
_OUTPUTS_HELD = re.compile(r"\boutputs held until the next forward\b", re.IGNORECASE)
# a per-op selective recomputation that reran the attention op rather than keeping its output (torchtitan on B200
# between 2025-05-14 and 2025-12-01: gpuplan.estimate.memory.ATTENTION_RECOMPUTED); the notes say "attention recomputed"
_ATTENTION_RECOMPUTED = re.compile(r"\battention recomputed\b", re.IGNORECASE)


def _pretrain_case(cat: Any, row: dict[str, str]) -> tuple[Case | None, str]:
    metric = row["metric"]
    if metric in ("mfu", "hfu", "tflops_per_gpu"):
        return None, f"{metric} restates a throughput through the source's own FLOP count; its tokens/s is compared"
    if _KNOWN_REGRESSION.search(row["notes"]):
        return None, ("the source's footnote calls this figure a known performance regression, to be fixed in its "
                      "next release: it measures a bug, not the stack")
    if metric not in _PRETRAIN_METRICS:
        return None, f"metric '{metric}' is not an estimate gpuplan makes"
    if metric in _RUN_METRICS and _WHOLE_PROJECT.search(row["notes"]):
        return None, ("the published total counts the whole project's time (outages, restarts from earlier steps, "
                      "abandoned runs), of which the training steps are an unstated part")
    seq = _int(row["seq_len"])
    n = _int(row["gpu_count"])
    if not seq or not n:
        return None, "sequence length or GPU count not stated"
    model = _model(cat, row) or _mpt_benchmark(row, seq)
    if model is None:
        return None, f"model '{row['model']}' is not a preset and its shape is not in the row"
    found = _gpu_and_framework(cat, row)
    if isinstance(found, str):
        return None, found
    gpu, fw = found
    tp, pp, cp = (_int(row[k]) or 1 for k in ("tp", "pp", "cp"))
    if n % (tp * pp * cp):
        return None, f"{n} GPUs do not split into TP {tp} × PP {pp} × CP {cp}"
    dp = n // (tp * pp * cp)
    ep = _expert_parallel(row["notes"])
    if model.is_moe and ep is None:
        return None, "MoE pretraining without the expert-parallel degree (EP) the run used"
    par = Parallelism(tp=tp, pp=pp, dp=dp, cp=cp, ep=ep or 1, vp=_virtual_stages(row["notes"], pp),
                      sequence_parallel=not _NO_SEQUENCE_PARALLEL.search(row["notes"]))
    try:
        check_expert_layout(model, par)
    except GpuplanError as err:
        return None, err.message
    mb = _int(row["micro_batch"]) or 1
    gb = _int(row["global_batch"])
    accum = max(1, round(gb / (mb * dp))) if gb else 1
    zero = _int(row["zero_stage"])
    zero = zero if zero is not None else (3 if fw.stack in ("torchtitan",) else 1 if dp > 1 else 0)
    if _FP4_TRAINING.search(row["precision"].lower()):
        return None, _FP4_TRAINING_WHY
    recompute, assumed = _recompute(row["grad_checkpointing"], fw)
    modules = _recompute_modules(row)
    if modules is not None:  # selective with no module recomputes nothing
        recompute, assumed = ("selective" if modules else "none"), ""
    # an unstated recomputation moves memory a lot but throughput little (≤ 1/3 more FLOPs, which the
    # utilisation fit absorbs either way): throughput rows are fitted on unless the source marks them approximate
    stated = _stated(row) and (not assumed or
                                                                           not metric.startswith("peak_mem"))
    # FSDP without a MixedPrecision policy (autocast over fp32 flat parameters) all-gathers each layer and
    # reduce-scatters its gradient in fp32 and keeps an fp32 residual stream; gpuplan's memory and time models
    # all-gather in 16-bit (half the bytes; the time errs fast as the all-gathers leave the node): such rows are
    # reported, not fitted on
    if "autocast over fp32" in row["precision"].lower():
        stated = False
        assumed = "; ".join(a for a in (assumed, "fp32 FSDP all-gather under autocast is not modelled") if a)
    # torchao's float8 rowwise recipe (a scale per row, CUTLASS rowwise GEMMs) ran slower than bf16 in the same
    # torchtitan table (Llama 3 8B: 3708 vs 4378 tok/s/GPU): its scaling kernels, not the FP8 rate, bound the step,
    # and gpuplan's FP8 model (matmuls at the FP8 peak) does not describe them: reported, not fitted on
    if not metric.startswith("peak_mem") and "rowwise" in row["precision"].lower():
        stated = False
        assumed = "; ".join(a for a in (assumed, "float8 rowwise scaling kernels are not modelled") if a)
    # a run whose source names its GPUs but not how they were split (model cards): the row carries the layout the
    # mapping took, its notes say "layout assumed", and it is reported, not fitted on
    if "layout assumed" in row["notes"].lower():
        stated = False
        assumed = "; ".join(a for a in (assumed, "parallel layout not stated: the row's notes give the one taken") if a)
    # ... and so is a run whose attention kernel is not known (the Pythia suite's 2022 runs: the configs name flash
    # attention only in versions published after them), which moves a small model's step a great deal
    if "attention kernel assumed" in row["notes"].lower():
        stated = False
        assumed = "; ".join(a for a in (assumed, "attention kernel not stated: the row's notes give the one taken")
                            if a)
    setup = TrainSetup(method="full", micro_batch=mb, seq_len=seq, grad_accum=accum, lengths_vary=False,
                       flash_attention=_flash_attention(row["flash_attention"]),
                       attention_kernel=_attention_kernel(row["notes"], row["flash_attention"]),
                       precision=_precision(row["precision"]), recompute=recompute, framework=fw.stack,
                       compiled="compile" in row["framework"].lower() or fw.compiled,
                       compiled_loss=False if "loss uncompiled" in row["notes"].lower() else None,
                       dp_after_backward=_reduced_after_backward(row),
                       ep_dispatcher=_ep_dispatcher(row), mtp_layers=_mtp_layers(row),
                       dualpipe=bool(_DUALPIPE.search(row["framework"] + " " + row["notes"])),
                       ep_overlap=bool(_EP_OVERLAP.search(row["notes"])),
                       fused_grouped_mlp=bool(_FUSED_GROUPED_MLP.search(row["notes"])), recompute_modules=modules or (),
                       attention_recomputed=bool(_ATTENTION_RECOMPUTED.search(row["notes"])),
                       transformers_version=_transformers_version(row),
                       returns_kv_cache=bool(_USE_CACHE_ON.search(row["notes"])),
                       keeps_previous_outputs=True if _OUTPUTS_HELD.search(row["notes"]) else None,
                       parallel=replace(par, zero=min(zero, 3) if dp > 1 else 0))
    describe = f"{model.name} pretrain on {n}× {gpu.name} ({setup.parallel.describe()}), mb {mb}×{seq}"
    common: dict[str, Any] = dict(id=row["id"], source=row["source"], describe=describe, group=_group(row["id"], row),
                                  assume=assumed, resolution=resolution(row["value"]), fit=stated)
    meta = {"model_name": model.name, "model": model, "gpu": gpu, "setup": setup}
    if metric.startswith("peak_mem"):
        measured = float(row["value"]) * (2**30 if metric.endswith("gib") else 1e9)
        # PyTorch's max allocated counts no allocator slack, a device-wide reading (cudaMemGetInfo, nvidia-smi)
        # adds the CUDA context; the other rows report max reserved (torchtitan's and Megatron's loggers) or do
        # not say
        how = ("active" if "max_memory_allocated" in row["notes"] else
               "device" if "counter: device memory" in row["notes"] else "reserved")
        return Case(cls="pretrain_memory", measured=measured,
                    predict=training_memory_predictor(model, setup, how), meta={**meta, "measure": how},
                    **common), ""
    tokens = 1e9
    if metric in _RUN_METRICS:
        tokens_text = re.search(r"([\d.]+)\s*([TB])\s*tokens", row["notes"])
        if not tokens_text:
            return None, "GPU-hours without the training tokens"
        tokens = float(tokens_text.group(1)) * (1e12 if tokens_text.group(2) == "T" else 1e9)
    measured = float(row["value"]) * DAY if metric == "wall_days" else \
        float(row["value"]) / (n if metric == "tokens_per_s_total" else 1)

    def pred_time(cal: Calibration, m: ModelSpec = model, s: TrainSetup = setup, t: float = tokens,
                  how: str = metric, g: Any = gpu, k: int = n) -> float:
        est = train_time(m, g, s, t, cal)
        if how == "gpu_hours":
            return float(est.rate.gpu_hours)
        return float(est.total) if how == "wall_days" else float(est.rate.tokens_per_s) / k

    run = metric in _RUN_METRICS
    measure = {"gpu_hours": "gpu_hours", "wall_days": "seconds"}.get(metric, "tokens_per_s_per_gpu")
    # mixture-of-experts rows are their own class: reported with their own error band, and fitted on only for the
    # per-expert GEMM launch cost (bench/fit.py "moe training time"; docs/estimators.md)
    cls = "pretrain_gpu_hours" if run else "pretrain_throughput_moe" if model.is_moe else "pretrain_throughput"
    # a mixture-of-experts run's GPU-hours (DeepSeek-V3's) are reported in the run class but not fitted on, for
    # the same reason (its DualPipe schedule, which hides the all-to-alls, is mapped: TrainSetup.dualpipe)
    if model.is_moe and run:
        common["fit"] = False
    return Case(cls=cls, measured=measured, predict=pred_time, rate=not run,
                meta={**meta, "measure": measure, "tokens": tokens}, **common), ""


# ---------------------------------------------------------------- fine-tuning

_METHODS = {"full": "full", "lora": "lora", "qlora": "qlora", "dora": "dora", "galore": "galore", "ptuning": "ptuning",
            "freeze": "freeze", "other (lisa)": "lisa",
            # LitGPT's finetune_adapter and finetune_adapter_v2 (the 4-bit base is in the row's quant_base column)
            "other (llama-adapter v1, adaption-prompt/prefix style)": "adapter",
            "other (llama-adapter v1, adaption-prompt/prefix style) on 4-bit base": "adapter",
            "other (llama-adapter v2)": "adapter-v2", "other (llama-adapter v2) on 4-bit base": "adapter-v2",
            "other (adalora)": "adalora"}

# ms-swift releases whose ``swift sft`` trains LoRA when no --sft_type is given: SftArguments.sft_type defaults to
# 'lora' in swift/llm/utils/argument.py at v2.0.0 (b8864068c1c09623becd7405c3530d0a1686e08c), v2.0.5
# (ba3e277b1d70f669f4f125b7f6cf66a7f20721cc), v2.1.0 (66d9cf4c0511312fbddd57c7f672aa70c154462c) and at
# 1fc148abb500880ed3d0b95b597e660c9a0b0300, the commit that published the benchmark's sequence-parallel table
_SWIFT_LORA_DEFAULT = re.compile(r"\bms-swift ~?2\.[01]\b")


# methods that train weights the base does not have, in the model's 16-bit dtype (types.Method.new_weights)
_NEW_WEIGHTS = ("lora", "qlora", "dora", "adalora", "ptuning", "adapter", "adapter-v2")


# PEFT's AdaLoraConfig.init_r default, which ms-swift leaves as it is: the benchmark's stated 26,838,912 trainable
# parameters for Qwen-7B (all linears) are 12 × (Σ(in + out) + one Λ entry per module) = 12 × 69,893 × 32 layers
_ADALORA_INIT_R = 12


def _method(row: dict[str, str]) -> str | None:
    """gpuplan's method for a row: the one its method column names, or, where the row says the tuner was left at
    its default, the default of the ms-swift release the row states (``_SWIFT_LORA_DEFAULT``)."""
    label = row["method"].strip().lower()
    if "tuner not stated" in label and _SWIFT_LORA_DEFAULT.search(row["framework_version"]):
        return "lora"
    return _METHODS.get(label)


# module names of the adapted linears, as sources write them (Llama, Qwen v1, Baichuan, GLM, GPT-2 styles)
_ATTENTION_MODULES = {"q", "k", "v", "o", "q_proj", "k_proj", "v_proj", "o_proj", "c_attn", "w_pack",
                      "query_key_value", "qkv_proj", "wqkv", "attention", "attn"}
_MLP_MODULES = {"gate_proj", "up_proj", "down_proj", "w1", "w2", "w3", "c_fc", "mlp", "dense_h_to_4h",
                "dense_4h_to_h", "fc1", "fc2", "gate_up_proj"}


def finetune_more_cases(cat: Any) -> tuple[list[Case], list[Unmapped]]:
    cases: list[Case] = []
    unmapped: list[Unmapped] = []
    for row in _rows("finetune_more.csv"):
        try:
            case, why = _finetune_case(cat, row)
        except (GpuplanError, ValueError, KeyError) as exc:
            case, why = None, f"conditions do not make a setup gpuplan runs ({exc})"
        if case:
            cases.append(case)
        else:
            unmapped.append(Unmapped(row["id"], why))
    return cases, unmapped


def _fsdp_stage(text: str) -> int:
    """The ZeRO stage an FSDP layout amounts to: FULL_SHARD (the default sharding strategy of PyTorch FSDP and
    of Lightning's FSDPStrategy, which LitGPT uses) shards weights, gradients and optimizer states like ZeRO-3;
    SHARD_GRAD_OP shards gradients and optimizer states like ZeRO-2; NO_SHARD is plain data parallelism
    (pytorch/pytorch torch/distributed/fsdp/api.py ShardingStrategy; Lightning-AI/pytorch-lightning
    src/lightning/fabric/strategies/fsdp.py, sharding_strategy default "FULL_SHARD"). 0 when no FSDP."""
    low = text.lower()
    if "fsdp" not in low or "no_shard" in low:
        return 0
    return 2 if "shard_grad_op" in low else 3


def _workers(text: str, n: int) -> int:
    """The GPUs that ran the job: the config's own device count where the row says the table's machine had more
    ("config devices=2" on a 4-GPU machine: the launcher starts only as many processes as the config asks)."""
    m = re.search(r"config devices\s*=\s*(\d+)", text)
    return min(n, int(m.group(1))) if m else n


def _finetune_parallel(text: str, n: int, zero: int) -> Parallelism:
    """Data parallel over ``n`` GPUs (ZeRO on one GPU only where the row says DeepSpeed ran it), or, for one
    process that splits the model's layers over its GPUs
    (transformers' device_map: naive model parallelism), a pipeline of ``n`` stages with one micro-batch, or
    the TP/PP/CP/VP degrees the row's layout names ("TP 2, PP 4, VP 20": Megatron's and NeMo AutoModel's
    fine-tuning tables), data parallel over the GPUs left; "sequence parallel off" where the config turns it off."""
    if n > 1 and re.search(r"device_map|model split", text.lower()):
        return Parallelism(pp=n)
    ulysses = _sequence_parallel(text, n)
    if ulysses > 1:
        return Parallelism(cp=ulysses, dp=n // ulysses, zero=zero)
    degrees = {k.lower(): int(v) for k, v in re.findall(r"\b(TP|PP|CP)\s*=?\s*(\d+)\b", text)}
    if degrees:
        tp, pp, cp = (degrees.get(k, 1) for k in ("tp", "pp", "cp"))
        if n % (tp * pp * cp):
            raise ValueError(f"{n} GPUs do not split into TP {tp} × PP {pp} × CP {cp}")
        sp = tp > 1 and not re.search(r"sequence parallel (?:off|false|no)\b", text.lower())
        return Parallelism(tp=tp, pp=pp, cp=cp, dp=n // (tp * pp * cp), zero=zero, vp=_virtual_stages(text, pp),
                           sequence_parallel=sp)
    # one GPU under DeepSpeed keeps its stage: nothing is sharded, but DeepSpeed's optimizer runs the step
    deepspeed = "deepspeed" in text.lower()
    return Parallelism(dp=n, zero=zero if n > 1 or deepspeed else 0)


def _sequence_parallel(text: str, n: int) -> int:
    """The sequence-parallel degree a row's layout names ("XTuner sequence parallel size 8"), else 1. XTuner's
    sequence parallelism (and ms-swift's, which runs XTuner's) splits every sequence over that many GPUs and
    exchanges the attention inputs by all-to-all, as DeepSpeed Ulysses does (InternLM/xtuner
    docs/zh_cn/acceleration/train_extreme_long_sequence.rst @43ef6ab9972fafd6a614effefcc579be7adc569c): a GPU
    computes its share of the tokens, which is what context parallelism (``Parallelism.cp``) divides; the
    all-to-alls are not timed, as a context-parallel ring's exchanges are not."""
    m = re.search(r"sequence parallel size\s*(\d+)", text, re.IGNORECASE)
    degree = int(m.group(1)) if m else 1
    if n % degree:
        raise ValueError(f"{n} GPUs do not split into sequence-parallel groups of {degree}")
    return degree


# The ZeRO stage a framework's documented launch passes, for a DeepSpeed run that does not state its stage:
# XTuner's README launches `xtuner train ... --deepspeed deepspeed_zero2` (InternLM/xtuner README.md
# @43ef6ab9972fafd6a614effefcc579be7adc569c), as its long-sequence guide does
# (docs/zh_cn/acceleration/train_extreme_long_sequence.rst, same commit)
_DOCUMENTED_ZERO = {"xtuner": 2}


def _zero2_floor_bytes(model: ModelSpec, n: int, seq_per_gpu: float) -> float:
    """The least a GPU holds in a ZeRO-2 full fine-tune with mixed-precision AdamW and full recomputation, no
    fitted parameter: the whole 16-bit weights, 16-bit gradients and the fp32 master weights and Adam moments
    sharded over at most ``n`` GPUs (Rajbhandari et al. 2020, ZeRO, sec. 5: (2 + 2 + K)·Ψ/N_d with K = 12 for
    P_os+g, weights not partitioned), and each layer's 16-bit input, which a checkpointed layer keeps
    (Korthikanti et al. 2022, sec. 4.1: 2·s·b·h bytes per layer)."""
    n_params = count_params(model).total
    return n_params * (2 + 14 / n) + model.n_layers * seq_per_gpu * model.hidden * 2


def _unstated_zero(row: dict[str, str], fw: Framework, model: ModelSpec, gpu: Any) -> tuple[int, str]:
    """The ZeRO stage of a DeepSpeed run whose row leaves it unstated, and the assumption: the framework's
    documented stage (``_DOCUMENTED_ZERO``), or ZeRO-3 where a documented ZeRO-2 cannot have run, as what every GPU
    would hold under it (``_zero2_floor_bytes``) exceeds its memory."""
    stage = _DOCUMENTED_ZERO.get(fw.framework)
    if not stage or "deepspeed" not in row["parallelism"].lower() or _int(row["zero_stage"]) is not None:
        return 0, ""
    n = _int(row["gpu_count"]) or 1
    seq_per_gpu = (_int(row["seq_len"]) or 0) / _sequence_parallel(row["parallelism"], n)
    floor = _zero2_floor_bytes(model, n, seq_per_gpu)
    if stage == 2 and floor > gpu.memory_bytes:
        return 3, (f"ZeRO stage unstated: 3, as {fw.name}'s documented ZeRO-2 would hold at least "
                   f"{floor / 2**30:.0f} GiB of states and layer inputs on a {gpu.name}")
    return stage, f"ZeRO stage unstated: {fw.name}'s documented launch (ZeRO-{stage})"


def _lora_dropout(row: dict[str, str], fw: Framework) -> float:
    """The LoRA dropout the row's notes state ("lora_dropout 0.05": an older release's builder default), else the
    framework's (frameworks.csv)."""
    m = re.search(r"lora_dropout[\s:=]*(\d*\.?\d+)", row["notes"])
    return float(m.group(1)) if m else fw.lora_dropout or 0.0


def _chunked_loss(row: dict[str, str], fw: Framework) -> bool:
    """Whether the loss is chunked: the framework's default (frameworks.csv), unless the notes say the row's
    release took a plain cross-entropy over all logits ("not chunked")."""
    return fw.chunked_loss and not re.search(r"\bnot chunked\b", row["notes"], re.IGNORECASE)


def _lengths_vary(row: dict[str, str], fw: Framework) -> bool:
    """Whether the row's sequence lengths change between steps: the framework's default (frameworks.csv), unless
    its sequences are packed to one length. A packer that keeps what is left of a buffer after its last full chunk
    ("remainder kept" in the packing column) still hands the trainer shorter sequences: ms-swift's
    ConstantLengthDataset (swift/llm/utils/utils.py @2386b9afafcef956c256ceab0fadf8d15d57f9ae, unchanged at
    @1fc148abb500880ed3d0b95b597e660c9a0b0300) yields ``value[i:i + seq_length]`` for every ``i`` up to the packed
    buffer's length, the last chunk short, and its collator pads a batch to its own longest sequence only."""
    packing = row["packing"].strip().lower()
    return fw.lengths_vary and not (packing.startswith("yes") and "remainder kept" not in packing)


def _loss_16bit(row: dict[str, str]) -> bool | None:
    """True where the notes say the loop takes its cross-entropy over the model's 16-bit logits without an fp32
    upcast ("loss over 16-bit logits"), else None: the model code and stack decide."""
    return True if re.search(r"loss over 16-bit logits", row["notes"], re.IGNORECASE) else None


# The transformers release a launcher's requirements pinned when the row's framework_version names only the
# launcher: ms-swift's requirements/framework.txt reads transformers>=4.33,<4.37 at the Jan 2024 commits that published
# its benchmark tables (modelscope/ms-swift @306fa15a08e625bca0d01f019e6be6ab27669461, @4312aeb2) and <4.41 at the
# Apr-May 2024 ones (@c212b44f0d8903e9480131df1457e3a9f255b909, @c23b853c7, @1fc148abb500880ed3d0b95b597e660c9a0b0300):
# the newest release the pin admits stands for the one that ran.
_TRANSFORMERS_PINS = ((re.compile(r"ms-swift ~1\.5\b"), "4.36 (ms-swift pins transformers<4.37)"),
                      (re.compile(r"ms-swift ~2\.0\b"), "4.40 (ms-swift pins transformers<4.41)"))
_TRANSFORMERS_RELEASE = re.compile(r"\btransformers\s*(?:==\s*)?v?(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)


def _transformers_version(row: dict[str, str]) -> str:
    """The transformers release a row ran (TrainSetup.transformers_version): the one its framework_version states
    ("transformers 4.49.0"; a bound such as "transformers>4.44.2" states none), else its launcher's pin
    (``_TRANSFORMERS_PINS``), else one its notes state, else "" (the current release's behaviour). A row run on
    Unsloth's backend states none: Unsloth replaces the model's forward and its loss with its own."""
    if "unsloth" in row["framework_version"].lower():
        return ""
    stated = _TRANSFORMERS_RELEASE.search(row["framework_version"])
    if stated:
        return stated.group(1)
    pinned = [text for launcher, text in _TRANSFORMERS_PINS if launcher.search(row["framework_version"])]
    stated = _TRANSFORMERS_RELEASE.search(row["notes"])
    return pinned[0] if pinned else stated.group(1) if stated else ""


def _adam_step(row: dict[str, str]) -> str:
    """How the row's AdamW step ran (TrainSetup.adam_step), where its optimizer column names the implementation:
    fused for a fused one ("adamw_torch_fused", "fused=True"), foreach for torch.optim.AdamW or the HF Trainer's
    "adamw_torch" (torch.optim.AdamW with neither foreach nor fused given), else "" (the stack's default)."""
    text = row["optimizer"].lower()
    if "fused" in text:
        return "fused"
    return "foreach" if "torch.optim.adamw" in text or "adamw_torch" in text else ""


def _zero_buckets(row: dict[str, str], fw: Framework) -> dict[str, int | bool]:
    """DeepSpeed ZeRO bucket settings: the framework's (frameworks.csv), overridden by a ds_config the row quotes
    ("reduce_bucket_size 2e8", "overlap_comm")."""
    values = zero_buckets(fw)
    text = row["parallelism"] + " " + row["notes"]
    size = re.search(r"reduce_bucket_size[\s:=]*(\d+(?:\.\d+)?(?:e\d+)?)", text)
    if size:
        values["reduce_bucket_size"] = int(float(size.group(1)))
    if re.search(r"overlap_comm(?![\s:=]*(?:false|off|no)\b)", text, re.IGNORECASE):
        values["overlap_comm"] = True
    return values


def _base_format(text: str, method: str) -> str | None:
    """The frozen base's weight format (data/quant_formats.csv) a row names; None for a 16-bit base, "" for a
    format gpuplan does not model. QLoRA without a stated type is bitsandbytes NF4 (Dettmers et al. 2023)."""
    q = text.lower()
    if not q.strip():
        return "bnb-nf4" if method == "qlora" else None
    if "aqlm" in q or "2bit" in q:
        return ""
    if "gptq" in q:
        return "gptq-int8" if "int8" in q else "gptq-int4"
    if "awq" in q:
        return "awq-int4"
    if "int8" in q:
        return "bnb-int8" if "bnb" in q or "bitsandbytes" in q else "int8-wo"
    if "4-bit" in q or "int4" in q or "nf4" in q or "q4" in q:
        return "bnb-nf4-dq" if "double" in q or "nested" in q else "bnb-nf4"
    return "bnb-nf4" if method == "qlora" else None


def _nf4_whole_matrix(text: str) -> bool:
    """Whether a row's NF4 base was quantized by torchao before 0.2, a whole matrix at once
    (``memory.quantize_on_load_bytes``), as its quant_base column names the release ("torchao 0.1")."""
    release = re.search(r"torchao\W{0,3}0\.(\d+)\b", text.lower())
    return bool(release) and int(release.group(1)) < 2


_BNB_RELEASE = re.compile(r"\bbitsandbytes\s*(?:==\s*)?v?(\d+)\.(\d+)", re.IGNORECASE)


def _nf4_stats_fp16(row: dict[str, str]) -> bool | None:
    """True where the row states a bitsandbytes release before 0.43 (``TrainSetup.nf4_stats_fp16``: such a release
    quantizes an NF4 base from an fp16 copy), else None: the stack's default. ms-swift's January 2024 benchmark
    states bitsandbytes 0.41.3.post2 in its environment (docs/source_en/LLM/Benchmark.md @cdb169b7)."""
    found = _BNB_RELEASE.search(" ".join((row["framework_version"], row["quant_base"], row["notes"])))
    return True if found and (int(found.group(1)), int(found.group(2))) < (0, 43) else None


def _base_fp16(text: str) -> bool:
    """Whether a row's quant_base column says the quantized base's other modules were stored in fp16 ("other
    modules fp16"): transformers' default for a bitsandbytes model loaded without a torch_dtype
    (``memory.output_layer_cast_bytes``)."""
    return bool(re.search(r"other modules (?:stored |kept |loaded )?(?:in )?fp16", text.lower()))


def _targets(text: str) -> str:
    """gpuplan's LoRA target set nearest to the modules a row names (fused QKV counts as attention)."""
    names = set(re.findall(r"[a-z0-9_]+", text.lower()))
    if names & {"all", "all_linear", "linear"} or "all-linear" in text.lower():
        return "all-linear"
    attention, mlp = names & _ATTENTION_MODULES, names & _MLP_MODULES
    if attention and mlp:
        return "all-linear"
    if mlp:
        return "mlp"
    return "qv" if not attention or attention <= {"q", "v", "q_proj", "v_proj"} else "attention"


# the longest sample per tokenizer family, as a dataset column states it ("longest sample 1304 tokens Llama 2, ...")
_LONGEST_SAMPLE = re.compile(r"(\d[\d,]*)(?: tokens)? ([A-Za-z][\w.\- ]*?)\s*(?=[,;)]|$)")


def _longest_first_seq(row: dict[str, str], model_name: str) -> int | None:
    """The micro-batch's length at a lit-gpt memory row's peak, where the row states no fixed length: lit-gpt's
    fine-tuning scripts put the longest training sample into the first micro-batch and pad every micro-batch to its
    longest sample (Lightning-AI/litgpt finetune/adapter.py, adapter_v2.py and lora.py
    @8641822b3249bb94f068c254aa5d13decbc9f0a0: ``get_batch(fabric, train_data, longest_seq_ix if iter_num == 0 else
    None)``, ``pad_right`` to ``max_len``),
    so ``torch.cuda.max_memory_allocated()`` covers a step of micro-batch × the longest sample (the optimizer states,
    made later, are the adapters' few). The length is the one the dataset column gives for the model's tokenizer."""
    if row["framework"].strip().lower() != "litgpt" or not row["metric"].startswith("peak_mem") \
            or "seq_len = longest" not in row["notes"]:
        return None
    name = re.sub(r"[^a-z0-9]", "", f"{row['model']} {model_name}".lower())
    for length, family in _LONGEST_SAMPLE.findall(row["dataset"].partition("longest sample")[2]):
        if re.sub(r"[^a-z0-9]", "", family.lower()) in name:
            return int(length.replace(",", ""))
    return None


def _finetune_case(cat: Any, row: dict[str, str]) -> tuple[Case | None, str]:
    method = _method(row)
    if method is None:
        return None, f"method '{row['method'][:60]}' is not one gpuplan models"
    if method == "galore" and (why := _galore_unmodelled(row)):
        return None, why
    model = _model(cat, row)
    if model is None:
        return None, f"model '{row['model']}' is not a preset"
    found = _gpu_and_framework(cat, row)
    if isinstance(found, str):
        return None, found
    gpu, fw = found
    seq = _int(row["seq_len"])
    if not seq and (seq := _longest_first_seq(row, model.name)) and (_int(row["gpu_count"]) or 1) > 1:
        # lit-gpt @8641822 finetune/lora.py builds the model under fabric.init_module(empty_init=True) and shards it in
        # fabric.setup_module afterwards; the rows measure 2-GPU peaks at or above the one-GPU ones (Llama-2-7B LoRA
        # 22.18 vs 21.30 GB), which a sharded frozen base does not give
        return None, ("lit-gpt on several GPUs builds the model before FSDP shards it, and the Lightning release that "
                      "decides whether each GPU then holds it whole is not stated")
    if not seq:
        return None, "sequence length not stated"
    n = _workers(row["parallelism"], _int(row["gpu_count"]) or 1)
    mb = _int(row["micro_batch"]) or fw.micro_batch or 1
    accum = _int(row["grad_accum"]) or 1
    if fw.stack == "megatron" and not re.search(r"\b[TP]P\s*=?\s*\d", row["parallelism"]):
        return None, "Megatron layout not stated in the row (its TP/PP degrees)"
    # a launcher that runs the engine (ms-swift + DeepSpeed) applies its own defaults to what the row leaves out
    launcher = (framework_of(row["framework_version"]) if fw.stack == "deepspeed" else None) or fw
    zero, zero_assumed = _unstated_zero(row, fw, model, gpu)
    zero = _int(row["zero_stage"]) or _fsdp_stage(row["parallelism"]) or zero
    if "offload_params" in row["parallelism"].lower() or "param offload" in row["parallelism"].lower():
        return None, "FSDP with the parameters offloaded to CPU memory: parameter offload is not modelled"
    base = _base_format(row["quant_base"], method)
    if base == "":
        return None, f"quantized base '{row['quant_base'][:40]}' is not a format gpuplan models"
    recompute, assumed = _recompute(row["grad_checkpointing"], launcher, bool(base) or method == "qlora")
    assumed = "; ".join(a for a in (assumed, zero_assumed) if a)
    optimizer = row["optimizer"].lower()
    opt = ("paged-adamw-8bit" if "paged" in optimizer and "8" in optimizer else "adamw-8bit" if "8bit" in optimizer
           or "8-bit" in optimizer else "paged-adamw" if "paged" in optimizer else "sgd" if "sgd" in optimizer
           else fw.optimizer)
    values: dict[str, Any] = dict(method=method, micro_batch=mb, seq_len=seq, grad_accum=accum, recompute=recompute,
                                  optimizer=opt, framework=fw.stack, chunked_loss=_chunked_loss(row, fw),
                                  loss_16bit=_loss_16bit(row), transformers_version=_transformers_version(row),
                                  adam_step=_adam_step(row),
                                  flash_attention=row["flash_attention"].strip().lower() != "no",
                                  attention_kernel=_attention_kernel(row["notes"], row["flash_attention"]),
                                  # a framework column that names torch.compile ("per-layer torch.compile"), as
                                  # for pretraining rows; else the framework's default
                                  compiled="compile" in row["framework"].lower() or fw.compiled,
                                  compiled_loss=False if "loss uncompiled" in row["notes"].lower() else None,
                                  lengths_vary=_lengths_vary(row, fw),
                                  parallel=_finetune_parallel(row["parallelism"], n, zero))
    if method == "galore":  # ms-swift's galore_target_modules default: find_all_linears (swift/llm/tuner.py)
        values.update(lora_rank=_int_or_default(row["lora_rank"]) or 128, lora_targets="all-linear")
    if method == "lisa":  # ms-swift's lisa_activated_layers, quoted in the row's notes
        found = re.search(r"lisa_activated_layers=(\d+)", row["notes"])
        if not found:
            return None, "LISA's number of active layers not stated"
        values["trainable_layers"] = int(found.group(1))
    if method in ("lora", "qlora", "dora", "adalora"):
        values.update(lora_rank=_int_or_default(row["lora_rank"]) or 8, lora_targets=_targets(row["lora_targets"]),
                      lora_dropout=_lora_dropout(row, launcher),
                      train_embeddings=bool(re.search(r"embedding.*trainable", row["lora_targets"].lower())))
    if method == "adalora":  # the row's rank is AdaLoRA's target_r; the adapters are built at init_r
        values["lora_rank"] = _ADALORA_INIT_R
    if base:
        values["base_quant"] = base
        values["nf4_whole_matrix"] = _nf4_whole_matrix(row["quant_base"])
        values["base_fp16"] = _base_fp16(row["quant_base"])
        values["nf4_stats_fp16"] = _nf4_stats_fp16(row) if base.startswith("bnb-") else None
    values["precision"] = _precision(row["precision"]) if row["precision"].strip() else (
        "bf16" if method in _NEW_WEIGHTS else "bf16-mixed")
    if method in _NEW_WEIGHTS and values["precision"] == "bf16-mixed":
        values["precision"] = "bf16"  # frozen 16-bit base: adapters train in the model's dtype (PEFT, LitGPT)
    elif values["precision"] == "bf16-mixed" and not re.search(r"mixed|amp|autocast", row["precision"].lower()):
        values["precision"] = fw.full_precision  # "bf16" alone: the framework decides whether states stay fp32
    values.update(_zero_buckets(row, launcher))
    setup = TrainSetup(**values)
    describe = f"{model.name} {method} on {n}× {gpu.name} ({fw.name}), mb {mb}×{seq}, recompute {recompute}"
    common: dict[str, Any] = dict(id=row["id"], source=row["source"], describe=describe, group=_group(row["id"], row),
                                  assume=assumed, resolution=resolution(row["value"]))
    meta = {"model_name": model.name, "model": model, "gpu": gpu, "setup": setup}
    metric = row["metric"]
    stated = not assumed and _stated(row)
    if metric.startswith("peak_mem"):
        if "total" in (row["unit"] + " " + row["notes"][:200]).lower() and n > 1:
            return None, "memory summed over GPUs: the per-GPU split is not stated"
        unit = "GiB" if metric.endswith("gib") else "GB"
        measured = _memory_value({"unit": unit, "value": row["value"]})
        if measured >= 0.98 * gpu.memory_nominal_gb * 1e9 and _CARD_FILLED.search(row["notes"]):
            return None, "the reading is the card's whole memory (the allocator filled it), not a peak"
        counter = row["memory_counter"].strip().lower()
        how = {"torch_allocated": "active", "torch_reserved": "reserved"}.get(counter, "device")
        states = _model_state_bytes(model, setup)
        if measured < states:
            return None, (f"the reading ({measured / 1e9:.2f} GB) is below what the stated setup's weights, gradients "
                          f"and optimizer states alone take ({states / 1e9:.2f} GB, no fitted parameter involved): "
                          "the run cannot have used the setup as stated")
        # predicted, reported and counted in the error bands (unseen by the fit, so held out by construction),
        # but not fitted on (FIT_MEMORY): see the comment above FIT_MEMORY
        stated = stated and counter in ("torch_allocated", "torch_reserved", "nvidia_smi")
        # a reserved or device-wide reading stops at the card (calib.within_card): ms-swift's 2024 tables read
        # 78.2-78.8 GiB reserved on an A100-80GB (80 GiB less the CUDA context) for runs as different as Qwen-7B's
        # full fine-tune at 4,096 tokens and Qwen-72B's LoRA on two cards
        predict = training_memory_predictor(model, setup, how, gpu.memory_bytes)
        return Case(cls="finetune_memory", measured=measured, predict=predict,
                    meta={**meta, "measure": how, "fit_on": FIT_MEMORY}, fit=stated, **common), ""
    if setup.parallel.zero >= 3 and n > 1 and _UNSTATED_PCIE_WIDTH.search(row["notes"]):
        return None, ("weights sharded over a PCIe link narrower than the catalog's x16 by the source's account, "
                      "its width not stated: the all-gathers every micro-step take a time gpuplan cannot know")
    per_sample = _tokens_per_sample(row, seq)
    if per_sample is None:
        return None, ("tokens per sample not stated (and sequences are not packed to the sequence length, or the "
                      "sample count is of the samples before packing)")
    return _finetune_time_case(row, model, gpu, setup, per_sample, n, {**common, "fit": stated}, meta)


def _galore_unmodelled(row: dict[str, str]) -> str:
    """Why a GaLore row cannot be sized (empty: it can). ms-swift's ``galore_with_embedding`` also projects the
    embedding table's gradient, and ``galore_quantization`` swaps in q_galore_torch's ``QGaLoreAdamW8bit`` (Q-GaLore:
    8-bit states, int4 projections with ``galore_proj_quant``; modelscope/ms-swift
    swift/trainers/optimizers/galore/utils.py @cdb169b781c22dd06ef03e06209819ec1f4208eb); gpuplan models neither."""
    notes = row["notes"]
    if "galore_with_embedding=true" in notes:
        return "GaLore with the embedding projected too (ms-swift galore_with_embedding) is not modelled"
    if re.search(r"exp_name \S*galore\S*quantize", notes):
        return "Q-GaLore (ms-swift galore_quantization: q_galore_torch's 8-bit QGaLoreAdamW8bit) is not modelled"
    return ""


# A row whose notes say the machine's PCIe lanes were fewer than x16 without saying how many ("PCIe lane width not
# stated"): a sharded run gathers its weights over that link in every micro-step, so its time depends on a width
# gpuplan would have to guess (the catalog's pcie_gen assumes x16 lanes).
_UNSTATED_PCIE_WIDTH = re.compile(r"PCIe lane width not stated", re.IGNORECASE)


def _model_state_bytes(model: ModelSpec, setup: TrainSetup) -> float:
    """Weights, gradients, master weights and optimizer states per GPU of a full fine-tune: arithmetic on the
    parameter count and the dtypes (gpuplan.estimate.memory.state_bytes), no fitted parameter. 0 for the other
    methods, whose states are small next to what the fit explains."""
    if setup.method != "full":
        return 0.0
    par = setup.parallel
    weight, grad, master, optimizer = state_bytes(setup)
    if par.offload_optimizer or "paged" in setup.optimizer:
        master, optimizer = 0.0, 0.0
    per_param = weight + grad + master + optimizer
    shards = par.tp * par.pp * (par.dp if par.zero >= 1 else 1)  # a lower bound: every state sharded from ZeRO-1
    return count_params(model).total * per_param / shards


def _tokens_per_sample(row: dict[str, str], seq: int) -> float | None:
    tokens, samples = _float(row["n_tokens"]), _float(row["n_samples"])
    if tokens and samples:
        return tokens / samples
    # ms-swift's lazy_tokenize reads the raw dataset and packs on the fly: the sample count it reports is of the
    # unpacked samples (the same benchmark's lora+packing run reports 7,900 packed samples for the same data and
    # time as lora+packing+lazytokenize's 78,237), so samples × sequence length is not the tokens trained on
    if "lazytokenize" in row["id"].replace("-", "") or "lazy_tokenize" in row["notes"].lower():
        return None
    if row["packing"].strip().lower().startswith("yes") or "fixed length" in row["notes"].lower():
        return float(seq)
    return None


# MLPerf Training's time to train runs from run_start to run_stop: it holds the evaluations of the eval set between
# training blocks (11-15 % of it in NVIDIA's v4.0 llama2_70b_lora logs), which gpuplan does not time, and the samples
# trained until the target accuracy differ from run to run; the same logs' training throughput is mapped instead
_TIME_TO_TRAIN_WHY = ("MLPerf time to train includes the evaluations between training blocks, which gpuplan does "
                      "not time, over a number of samples that varies by run; the rows' training throughput is mapped")


def _finetune_time_case(row: dict[str, str], model: ModelSpec, gpu: Any, setup: TrainSetup, per_sample: float,
                        n: int, common: dict[str, Any], meta: dict[str, Any]) -> tuple[Case | None, str]:
    metric, value = row["metric"], float(row["value"])
    step_tokens = per_sample * setup.micro_batch * setup.grad_accum * n
    if metric in ("train_time_s", "train_time_h"):
        samples = _float(row["n_samples"])
        epochs = _float(row["epochs"]) or 1.0
        if not samples:
            return None, "training time without the number of samples"
        tokens = samples * per_sample * epochs
        measured = value * (3600 if metric == "train_time_h" else 1)
        rate = False
    elif metric in ("step_time_s", "it_per_s"):
        tokens = step_tokens * 100
        measured = (value if metric == "step_time_s" else 1 / value) * 100  # 100 steps
        rate = False
    elif metric == "time_to_train_min":
        return None, _TIME_TO_TRAIN_WHY
    elif metric in ("samples_per_s", "tokens_per_s", "tokens_per_s_per_gpu"):
        tokens = step_tokens * 100
        measured = value * (per_sample if metric == "samples_per_s" else n if metric == "tokens_per_s_per_gpu" else 1)
        rate = True
    else:
        return None, f"metric '{metric}' is not an estimate gpuplan makes"
    fitted_setup = setup if per_sample >= setup.seq_len else setup.__class__(
        **{**{f: getattr(setup, f) for f in setup.__slots__}, "seq_len": max(1, round(per_sample))})

    def pred(cal: Calibration, m: ModelSpec = model, s: TrainSetup = fitted_setup, t: float = tokens,
             r: bool = rate) -> float:
        est = train_time(m, gpu, s, t, cal)
        return float(est.rate.tokens_per_s) if r else est.total

    return Case(cls="finetune_time", measured=measured, predict=pred, rate=rate,
                meta={**meta, "measure": "tokens_per_s" if rate else "seconds", "tokens": tokens}, **common), ""
