"""GPU measurement kit: measure fine-tuning and inference on the GPU at hand, as calibration rows.

    python bench/measure_gpu.py                  # default grid, about 5-8 minutes on one H100/H200
    python bench/measure_gpu.py --quick          # one small model, a smoke test
    python bench/measure_gpu.py --dry-run        # print the grid; needs neither a GPU nor torch
    python bench/measure_gpu.py --out DIR --max-minutes 5 --only Llama-3.2-1B

Models are built from gpuplan's bundled presets (``gpuplan/data/models/<name>.json``) with random weights:
nothing is downloaded (``HF_HUB_OFFLINE=1``). For every grid item the kit measures peak memory
(``torch.cuda.max_memory_allocated`` and ``max_memory_reserved``, counters reset once the model is built) and
time (median of timed steps after warm-up, with ``torch.cuda.synchronize``), and writes rows in the columns of
``bench/calibration/finetune_runs.csv`` and ``inference_runs.csv`` to ``DIR/measured_finetune.csv`` and
``DIR/measured_inference.csv``, plus ``DIR/measured_cases.yaml`` (the ``bench/cases.yaml`` entries that map the
fine-tune rows to estimates). Files are merged by row id and replaced atomically. docs/measure_gpu.md says how
to add the rows to the calibration set and refit.

Everything above the "GPU side" line is pure and imports neither torch nor transformers, so the grid, the row
building, the file writing, the time budget and the environment check are tested on machines without a GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import gc
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
GiB = 2**30
EXIT_CANNOT_RUN = 2

FINETUNE_COLUMNS = (
    "id", "category", "model", "params_b", "active_params_b", "layers", "hidden", "heads", "method", "precision",
    "gpu", "gpu_count", "parallelism", "tokens_or_samples", "seq_len", "batch", "framework", "measured_quantity",
    "value", "unit", "source", "source_locator", "confidence", "secondhand", "notes",
)
INFERENCE_COLUMNS = (
    "id", "source_group", "system", "engine", "engine_version", "model", "precision", "gpu", "gpu_spec_name",
    "gpu_count", "tp", "pp", "isl", "osl", "batch_or_concurrency", "scenario", "metric", "value", "unit", "source",
    "date", "confidence", "provenance", "notes",
)
FINETUNE_FILE = "measured_finetune.csv"
INFERENCE_FILE = "measured_inference.csv"
CASES_FILE = "measured_cases.yaml"
PACKAGES = ("torch", "transformers", "peft", "bitsandbytes")

# ---------------------------------------------------------------- grid (data)

METHODS = ("full", "lora", "qlora", "ptuning")
METHOD_LABELS = {"full": "full", "lora": "lora", "qlora": "qlora", "ptuning": "p-tuning v2"}
PRECISION_LABELS = {  # {trainable}: the dtype of the trained parameters, as measured
    "full": "bf16 weights (no AMP), torch AdamW (bf16 states)",
    "lora": "bf16 frozen base, {trainable} LoRA adapters, torch AdamW",
    "qlora": "NF4 frozen base (bitsandbytes, double quant), bf16 compute, {trainable} LoRA adapters, torch AdamW",
    "ptuning": "bf16 frozen base, {trainable} prefix key/values, torch AdamW",
}
LORA_ALPHA_PER_RANK = 2  # alpha = 2 * rank, the common choice (PEFT and torchtune examples)


@dataclass(frozen=True, slots=True)
class TrainItem:
    """One fine-tuning measurement: model, method and the size of one optimizer step on one GPU."""

    kind: ClassVar[str] = "finetune"
    model: str
    method: str  # full | lora | qlora | ptuning
    batch: int
    seq_len: int
    grad_ckpt: bool = False
    lora_rank: int = 16
    prefix_len: int = 128

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method '{self.method}' is not one of {', '.join(METHODS)}")
        if min(self.batch, self.seq_len, self.lora_rank, self.prefix_len) < 1:
            raise ValueError(f"{self.model}: batch, seq_len, lora_rank and prefix_len must be positive")
        if self.method == "ptuning" and self.grad_ckpt:
            raise ValueError("prefix training with gradient checkpointing is not measured by this kit")

    @property
    def key(self) -> str:
        return f"{self.model}-{self.method}-b{self.batch}-s{self.seq_len}" + ("-gc" if self.grad_ckpt else "")

    @property
    def needs(self) -> tuple[str, ...]:
        """Packages besides torch and transformers that the method needs."""
        return {"lora": ("peft",), "qlora": ("peft", "bitsandbytes")}.get(self.method, ())

    def describe(self) -> str:
        extra = {"lora": f" r={self.lora_rank}", "qlora": f" r={self.lora_rank}",
                 "ptuning": f" prefix={self.prefix_len}"}.get(self.method, "")
        return f"{METHOD_LABELS[self.method]}{extra} b{self.batch}×{self.seq_len}" + (" ckpt" if self.grad_ckpt else "")


@dataclass(frozen=True, slots=True)
class InferItem:
    """One inference measurement: prefill of ``batch`` prompts, then ``new_tokens`` greedy steps with a KV cache."""

    kind: ClassVar[str] = "inference"
    model: str
    batch: int
    prompt_len: int
    new_tokens: int

    def __post_init__(self) -> None:
        if min(self.batch, self.prompt_len) < 1 or self.new_tokens < 2:
            raise ValueError(f"{self.model}: batch and prompt_len must be positive, new_tokens at least 2")

    @property
    def key(self) -> str:
        return f"{self.model}-infer-b{self.batch}-p{self.prompt_len}-n{self.new_tokens}"

    @property
    def needs(self) -> tuple[str, ...]:
        return ()

    def describe(self) -> str:
        return f"inference b{self.batch} prompt {self.prompt_len} +{self.new_tokens}"


GridItem = TrainItem | InferItem


def _infer(model: str, prompt_len: int, new_tokens: int, batches: Iterable[int]) -> tuple[InferItem, ...]:
    return tuple(InferItem(model, b, prompt_len, new_tokens) for b in batches)


DEFAULT_GRID: tuple[GridItem, ...] = (
    TrainItem("Llama-3.2-1B", "full", 4, 1024),
    TrainItem("Llama-3.2-1B", "full", 4, 2048, grad_ckpt=True),
    TrainItem("Llama-3.2-1B", "lora", 4, 1024),
    TrainItem("Llama-3.2-1B", "qlora", 4, 1024),
    TrainItem("Llama-3.2-1B", "ptuning", 4, 1024),
    TrainItem("Qwen2.5-1.5B", "full", 2, 2048),
    TrainItem("Qwen2.5-1.5B", "lora", 2, 2048),
    TrainItem("Qwen2.5-3B", "full", 2, 1024),
    TrainItem("Qwen2.5-3B", "lora", 4, 1024),
    TrainItem("Qwen2.5-3B", "qlora", 4, 1024),
    TrainItem("Qwen2.5-3B", "ptuning", 2, 1024),
    TrainItem("Llama-3.1-8B", "lora", 2, 2048, grad_ckpt=True),
    TrainItem("Llama-3.1-8B", "qlora", 2, 2048, grad_ckpt=True),
    TrainItem("Llama-3.1-8B", "lora", 1, 512),
    *_infer("Llama-3.2-1B", 512, 128, (1, 8, 32)),
    *_infer("Qwen2.5-3B", 512, 128, (1, 8, 32)),
    *_infer("Llama-3.1-8B", 512, 128, (1, 8, 32)),
    *_infer("Llama-3.1-8B", 2048, 64, (1,)),
    *_infer("Mistral-7B", 512, 128, (1, 8, 32)),
)

QUICK_GRID: tuple[GridItem, ...] = (
    TrainItem("Qwen2.5-0.5B", "full", 2, 512),
    TrainItem("Qwen2.5-0.5B", "lora", 2, 512),
    TrainItem("Qwen2.5-0.5B", "qlora", 2, 512),
    TrainItem("Qwen2.5-0.5B", "ptuning", 2, 512),
    *_infer("Qwen2.5-0.5B", 256, 32, (1, 8)),
)


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How long each measurement runs."""

    warmup_steps: int = 3
    timed_steps: int = 5
    prefill_repeats: int = 3  # prefill is timed this many times; the median is reported
    warmup_decode_tokens: int = 4
    lr: float = 1e-5


def select_grid(quick: bool, only: str | None = None) -> tuple[GridItem, ...]:
    """The grid to run: the quick or the default one, keeping items whose key contains ``only``."""
    grid = QUICK_GRID if quick else DEFAULT_GRID
    if not only:
        return grid
    return tuple(item for item in grid if only.lower() in item.key.lower())


# ---------------------------------------------------------------- presets


def _catalog() -> Any:
    """gpuplan's catalog, importing gpuplan from this checkout when it is not installed."""
    try:
        from gpuplan import load_catalog
    except ImportError:
        sys.path.insert(0, str(ROOT))
        from gpuplan import load_catalog
    return load_catalog()


def preset_config(name: str) -> dict[str, Any]:
    """The bundled ``config.json`` of preset ``name`` (gpuplan/data/models/<name>.json)."""
    entry = _catalog().models.get(name)
    if entry is None:
        raise ValueError(f"'{name}' is not a bundled model preset: run 'gpuplan models' to list them")
    return json.loads(Path(entry.path).read_text(encoding="utf-8"))


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """The architecture columns of a calibration row, read from a preset's config.json."""

    layers: int | None
    hidden: int | None
    heads: int | None
    kv_heads: int | None
    head_dim: int | None
    vocab: int | None

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> ModelFacts:
        heads, hidden = cfg.get("num_attention_heads"), cfg.get("hidden_size")
        head_dim = cfg.get("head_dim") or (hidden // heads if hidden and heads else None)
        return cls(cfg.get("num_hidden_layers"), hidden, heads, cfg.get("num_key_value_heads") or heads,
                   head_dim, cfg.get("vocab_size"))


# ---------------------------------------------------------------- environment


@dataclass(frozen=True, slots=True)
class Env:
    """The conditions every row carries: the GPU, its driver, the software and the date."""

    gpu_name: str
    gpu_spec_name: str  # the catalog's name for the GPU, or "" when the catalog does not know it
    gpu_memory_bytes: int
    driver: str
    cuda: str
    versions: tuple[tuple[str, str], ...]  # (package, version); version "" when not installed
    date: str  # ISO date of the run

    def version(self, package: str) -> str:
        return dict(self.versions).get(package, "")

    @property
    def software(self) -> str:
        parts = [f"{p} {v}" for p, v in self.versions if v]
        return ", ".join(parts) + (f", CUDA {self.cuda}" if self.cuda else "")

    @property
    def gpu_slug(self) -> str:
        return _slug(self.gpu_spec_name or self.gpu_name)

    @property
    def source(self) -> str:
        return f"gpuplan bench/measure_gpu.py run {self.date}"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def package_versions(names: Sequence[str] = PACKAGES) -> tuple[tuple[str, str], ...]:
    """Installed versions of ``names`` ("" for a package that is not installed), read without importing them."""
    out = []
    for name in names:
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            out.append((name, ""))
    return tuple(out)


def missing_packages(names: Sequence[str]) -> list[str]:
    return [n for n in names if importlib.util.find_spec(n) is None]


def environment_problem(cuda_status: Callable[[], str | None] | None = None) -> str | None:
    """Why this machine cannot measure (one line), or None when torch sees an NVIDIA GPU."""
    missing = missing_packages(("torch", "transformers"))
    if missing:
        return (f"{' and '.join(missing)} not installed, so nothing can be measured here. Run this on a machine "
                "with an NVIDIA GPU after 'pip install torch transformers peft bitsandbytes'; "
                "'--dry-run' prints the grid without one.")
    return (cuda_status or _cuda_status)()


def _cuda_status() -> str | None:
    try:
        import torch
    except Exception as exc:  # a broken install must end in the one-line message, not a traceback
        return f"torch failed to import ({type(exc).__name__}: {exc}); '--dry-run' prints the grid without it."
    if torch.version.cuda is None:
        return (f"this torch build ({torch.__version__}) has no CUDA support, and the kit measures NVIDIA GPUs "
                "only; '--dry-run' prints the grid.")
    if not torch.cuda.is_available():
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        hint = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
        return (f"no NVIDIA GPU is visible to torch{hint}. Run this on a machine with an NVIDIA GPU; "
                "'--dry-run' prints the grid without one.")
    return None


def driver_version() -> str:
    """The NVIDIA driver version, from pynvml (nvidia-ml-py) or nvidia-smi; "" when neither answers."""
    try:
        import pynvml

        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        return out.strip().splitlines()[0].strip() if out.strip() else ""
    except (OSError, subprocess.SubprocessError, IndexError):
        return ""


def resolve_gpu_name(device_name: str) -> str:
    """The catalog's name for a torch device name ("NVIDIA H100 80GB HBM3" -> "H100"), or ""."""
    try:
        return _catalog().resolve_gpu(device_name) or ""
    except Exception:
        return ""


# ---------------------------------------------------------------- rows (pure)


def _g(value_bytes: float) -> str:
    return f"{value_bytes / GiB:.3f}"


def _num(value: float, digits: int) -> str:
    return f"{value:.{digits}f}"


def _train_notes(item: TrainItem, m: dict[str, Any], env: Env, s: RunSettings) -> str:
    parts = [
        f"method={item.method}", f"optimizer=torch.optim.AdamW lr {s.lr:g} (states in the parameter dtype)",
        "dtype=bfloat16", f"grad_ckpt={'on (non-reentrant)' if item.grad_ckpt else 'off'}",
        f"batch={item.batch}", f"seq_len={item.seq_len}", "grad_accum=1",
        f"attention={m.get('attn', '')}", "loss=transformers causal-LM loss (labels = inputs)",
    ]
    if item.method in ("lora", "qlora"):
        parts.append(f"lora r={item.lora_rank} alpha={LORA_ALPHA_PER_RANK * item.lora_rank} dropout 0 "
                     "on all linear layers except lm_head (peft target_modules='all-linear')")
    if item.method == "qlora":
        parts.append("base nn.Linear layers replaced by bitsandbytes Linear4bit NF4, double quant, blocksize 64")
    if item.method == "ptuning":
        parts.append(f"prefix_len={item.prefix_len} key/value vectors per layer, no reparametrisation "
                     f"({m.get('prefix_impl', '')})")
    if m["status"] == "ok":
        parts += [
            f"trainable params {m.get('n_trainable', '')} of {m.get('n_params', '')}",
            f"timing: {s.warmup_steps} warm-up + {s.timed_steps} timed steps, median; steps (s) "
            + " ".join(f"{t:.4f}" for t in m["step_seconds"]),
            "memory: torch counters reset after the model was built, peak over warm-up and timed steps; "
            f"allocated before the first step {_g(m.get('start_allocated_bytes', 0))} GiB",
        ]
    parts += ["random weights from the preset config.json, random token ids",
              f"GPU {env.gpu_name}, driver {env.driver or 'unknown'}; {env.software}"]
    return "; ".join(parts)


def _train_common(item: TrainItem, m: dict[str, Any], env: Env, facts: ModelFacts) -> dict[str, str]:
    n_params = m.get("n_params")
    return {
        "category": "finetune", "model": item.model,
        "params_b": f"{n_params / 1e9:.3f}" if n_params else "", "active_params_b": "",
        "layers": str(facts.layers or ""), "hidden": str(facts.hidden or ""), "heads": str(facts.heads or ""),
        "method": METHOD_LABELS[item.method],
        "precision": PRECISION_LABELS[item.method].format(trainable=m.get("trainable_dtype") or "peft-default"),
        "gpu": env.gpu_name, "gpu_count": "1", "parallelism": "none (1 GPU)",
        "seq_len": f"{item.seq_len} (fixed, no padding)",
        "batch": f"{item.batch} (no grad-acc), grad ckpt={item.grad_ckpt}, compile=False",
        "framework": env.software, "source": env.source,
        "source_locator": f"bench/measure_gpu.py grid item {item.key}",
        "confidence": "exact", "secondhand": "no",
    }


def finetune_rows(item: TrainItem, m: dict[str, Any], env: Env, facts: ModelFacts,
                  s: RunSettings = RunSettings()) -> list[dict[str, str]]:
    """Calibration rows (finetune_runs.csv columns) for one fine-tuning measurement ``m``.

    ``m`` holds ``status`` ("ok" or "oom") and, when ok, ``peak_allocated_bytes``, ``peak_reserved_bytes``,
    ``step_seconds`` (the timed steps), ``n_params``, ``n_trainable``, ``attn``."""
    common = _train_common(item, m, env, facts)
    stem = f"gpuplan-{env.gpu_slug}-{_slug(item.key)}"
    notes = _train_notes(item, m, env, s)
    tokens = f"{s.warmup_steps} warm-up + {s.timed_steps} timed steps of {item.batch}x{item.seq_len} tokens"
    if m["status"] == "oom":
        unit = f"1=OOM on {env.gpu_memory_bytes / GiB:.0f}GiB"
        values = [("oom", "oom", "1", unit)]
        notes = f"out of memory: {m.get('error', '')[:200]}; " + notes
    else:
        step = statistics.median(m["step_seconds"])
        values = [
            ("mem-alloc", "peak_mem_allocated_gib", _g(m["peak_allocated_bytes"]),
             "GiB (torch max_memory_allocated)"),
            ("mem-reserved", "peak_mem_reserved_gib", _g(m["peak_reserved_bytes"]),
             "GiB (torch max_memory_reserved)"),
            ("step", "step_time_s", _num(step, 4), "s (median optimizer step)"),
            ("tokens", "tokens_per_s", _num(item.batch * item.seq_len / step, 1),
             "tok/s (batch x seq_len / median step time)"),
        ]
    return [{**common, "id": f"{stem}-{suffix}", "tokens_or_samples": tokens, "measured_quantity": quantity,
             "value": value, "unit": unit, "notes": notes} for suffix, quantity, value, unit in values]


def _infer_notes(item: InferItem, m: dict[str, Any], env: Env, s: RunSettings) -> str:
    return "; ".join([
        f"batch={item.batch}", f"prompt={item.prompt_len} random token ids", f"new_tokens={item.new_tokens} greedy",
        "dtype=bfloat16", f"attention={m.get('attn', '')}",
        "manual loop: one prefill forward (use_cache=True), then one forward per new token on the KV cache; "
        f"logits {m.get('logits', 'for every position')}",
        f"timing: warm-up prefill + {s.warmup_decode_tokens} decode steps; prefill median of {s.prefill_repeats}; "
        f"decode = {item.new_tokens - 1} steps after the prefill",
        "memory: torch counters reset after the model was built and before each batch; weights included",
        *([f"params {m['n_params']}"] if m.get("n_params") else []), "random weights from the preset config.json",
        f"GPU {env.gpu_name}, driver {env.driver or 'unknown'}; {env.software}",
    ])


def _infer_values(item: InferItem, m: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(id suffix, scenario, metric, value, unit) of one successful inference measurement."""
    b, n = item.batch, item.new_tokens
    prefill, decode = m["prefill_seconds"], m["decode_seconds"]
    per = "batch1" if b == 1 else "total"
    return [
        ("prefill", "prefill", "prefill_latency_ms", _num(prefill * 1e3, 2), "ms"),
        ("decode", "batch-1 decode" if b == 1 else "batched decode", f"decode_tok_s_{per}",
         _num(b * (n - 1) / decode, 1), "tokens/s"),
        ("generate", "generate" if b == 1 else "offline throughput", f"generate_output_tok_s_{per}",
         _num(b * n / (prefill + decode), 1), "tokens/s"),
        ("mem-alloc", "memory", "peak_mem_gib", _g(m["peak_allocated_bytes"]), "GiB"),
        ("mem-reserved", "memory", "peak_mem_reserved_gib", _g(m["peak_reserved_bytes"]), "GiB"),
    ]


def inference_rows(item: InferItem, m: dict[str, Any], env: Env,
                   s: RunSettings = RunSettings()) -> list[dict[str, str]]:
    """Calibration rows (inference_runs.csv columns) for one inference measurement ``m``.

    ``m`` holds ``status`` and, when ok, ``prefill_seconds``, ``decode_seconds`` (the ``new_tokens - 1`` steps
    after the prefill), ``peak_allocated_bytes``, ``peak_reserved_bytes``, ``n_params``, ``attn``."""
    common = {
        "source_group": "gpuplan measure_gpu",
        "system": f"1x {env.gpu_name}, HF transformers manual greedy loop with KV cache, random weights",
        "engine": "HF transformers", "engine_version": env.version("transformers"), "model": item.model,
        "precision": "BF16", "gpu": env.gpu_name, "gpu_spec_name": env.gpu_spec_name, "gpu_count": "1",
        "tp": "1", "pp": "1", "isl": str(item.prompt_len), "osl": str(item.new_tokens),
        "batch_or_concurrency": str(item.batch), "source": env.source, "date": env.date,
        "confidence": "high", "provenance": "primary",
    }
    stem = f"gpuplan-{env.gpu_slug}-{_slug(item.key)}"
    notes = _infer_notes(item, m, env, s)
    if m["status"] == "oom":
        values = [("oom", "memory", "oom", "1", f"1=OOM on {env.gpu_memory_bytes / GiB:.0f}GiB")]
        notes = f"out of memory: {m.get('error', '')[:200]}; " + notes
    else:
        values = _infer_values(item, m)
    return [{**common, "id": f"{stem}-{suffix}", "scenario": scenario, "metric": metric, "value": value,
             "unit": unit, "notes": notes} for suffix, scenario, metric, value, unit in values]


def finetune_cases(item: TrainItem, rows: Sequence[dict[str, str]], env: Env) -> list[dict[str, Any]]:
    """``bench/cases.yaml`` entries mapping the fine-tune rows to gpuplan estimates (none when the catalog does
    not know the GPU, or for an OOM row)."""
    if not env.gpu_spec_name:
        return []
    setup: dict[str, Any] = {"method": item.method, "micro_batch": item.batch, "seq_len": item.seq_len,
                             "precision": "bf16", "optimizer": "adamw", "framework": "hf",
                             "recompute": "full" if item.grad_ckpt else "none"}
    if item.method in ("lora", "qlora"):
        setup.update(lora_rank=item.lora_rank, lora_targets="all-linear")
    if item.method == "ptuning":
        setup["prefix_len"] = item.prefix_len
    measures = {"peak_mem_allocated_gib": ("finetune_memory", "active"),
                "peak_mem_reserved_gib": ("finetune_memory", "reserved"),
                "tokens_per_s": ("finetune_time", "tokens_per_s")}
    assume = "gpuplan bench/measure_gpu.py: random weights and token ids, transformers' default attention, no padding"
    return [{"id": r["id"], "model": item.model, "gpu": env.gpu_spec_name, "kind": measures[q][0],
             "measure": measures[q][1], "setup": setup, "assume": assume}
            for r in rows if (q := r["measured_quantity"]) in measures]


# ---------------------------------------------------------------- files (pure)


@dataclass(frozen=True, slots=True)
class WriteReport:
    """What merging rows into one output file did."""

    path: Path
    added: int
    replaced: int  # rows whose id was already there (the new measurement replaced the old one)
    total: int


def merge_by_id(existing: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """``existing`` with ``new`` merged in by ``id``: a new row replaces the row of the same id in place (the
    newest measurement wins), the others are appended in order. Returns the rows and how many ids were there."""
    merged = list(existing)
    index = {row["id"]: i for i, row in enumerate(merged)}
    replaced = 0
    for row in new:
        if row["id"] in index:
            replaced += 1
            merged[index[row["id"]]] = row
        else:
            index[row["id"]] = len(merged)
            merged.append(row)
    return merged, replaced


def _atomic_write(path: Path, write: Callable[[Any], None]) -> None:
    """Write through ``write(file)`` into a temporary file beside ``path``, then rename it over ``path``:
    readers see the old file or the new one, never a partial one, and a failure leaves the old file as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_csv_rows(path: Path, columns: Sequence[str]) -> list[dict[str, str]]:
    """Rows of an existing output file; a file with other columns is an error, never silently rewritten."""
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != tuple(columns):
            raise ValueError(f"{path} has other columns than this kit writes: move it away or pass another --out")
        return list(reader)


def write_csv_rows(path: Path, rows: Sequence[dict[str, str]], columns: Sequence[str]) -> WriteReport:
    """Merge ``rows`` into the CSV at ``path`` (by id, newest wins) and replace the file atomically."""
    for row in rows:
        if set(row) != set(columns):
            odd = sorted(set(row) ^ set(columns))
            raise ValueError(f"row {row.get('id')!r} does not have exactly the calibration columns: {odd}")
    merged, replaced = merge_by_id(read_csv_rows(path, columns), rows)

    def write(f: Any) -> None:
        writer = csv.DictWriter(f, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(merged)

    _atomic_write(path, write)
    return WriteReport(path, len(rows) - replaced, replaced, len(merged))


CASES_HEADER = (
    "# bench/cases.yaml entries for the rows of measured_finetune.csv, written by bench/measure_gpu.py.\n"
    "# Copy the rows into bench/calibration/finetune_runs.csv and these entries under 'cases:' in\n"
    "# bench/cases.yaml, then run python bench/fit.py and python bench/accuracy.py (docs/measure_gpu.md).\n"
)


def read_cases(path: Path) -> list[dict[str, Any]]:
    """Entries of an existing cases file: one ``  - {json}`` line each (a JSON object is YAML flow syntax)."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line.strip()[2:]) for line in lines if line.strip().startswith("- {")]


def write_cases(path: Path, cases: Sequence[dict[str, Any]]) -> WriteReport:
    """Merge ``cases`` into the cases file at ``path`` by id and replace the file atomically."""
    merged, replaced = merge_by_id(read_cases(path), cases)
    text = CASES_HEADER + "".join(f"  - {json.dumps(c, ensure_ascii=False)}\n" for c in merged)
    _atomic_write(path, lambda f: f.write(text))
    return WriteReport(path, len(cases) - replaced, replaced, len(merged))


# ---------------------------------------------------------------- time budget and outcomes (pure)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one grid item: ok, oom, skipped or error."""

    item: GridItem
    status: str
    measurement: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Budget:
    """A wall-clock budget for the whole grid; None means no limit."""

    limit_s: float | None = None

    def allows(self, elapsed_s: float, expected_s: float = 0.0) -> bool:
        """Whether an item expected to take ``expected_s`` may start ``elapsed_s`` into the run."""
        return self.limit_s is None or elapsed_s + expected_s <= self.limit_s


def expected_seconds(item: GridItem, done: Sequence[Outcome]) -> float:
    """How long ``item`` will probably take: the longest finished item of the same model and kind, else the
    longest of the same kind, else 0 (the first item always starts)."""
    ran = [o for o in done if o.status in ("ok", "oom") and o.item.kind == item.kind]
    same = [o.seconds for o in ran if o.item.model == item.model]
    pool = same or [o.seconds for o in ran]
    return max(pool, default=0.0)


def budget_minutes(value: str) -> float:
    """argparse type of --max-minutes: a positive number of minutes."""
    minutes = float(value)
    if not minutes > 0:
        raise argparse.ArgumentTypeError(f"--max-minutes must be positive, not {value}")
    return minutes


# ---------------------------------------------------------------- summary (pure)

SUMMARY_HEADERS = ("item", "status", "alloc GiB", "reserved GiB", "time", "rate", "note")


def summary_row(o: Outcome) -> tuple[str, ...]:
    """One summary line for one grid item."""
    m = o.measurement
    label = f"{o.item.model} {o.item.describe()}"
    if o.status != "ok":
        return (label, o.status, "", "", "", "", o.note)
    alloc, reserved = _g(m["peak_allocated_bytes"]), _g(m["peak_reserved_bytes"])
    if isinstance(o.item, TrainItem):
        step = statistics.median(m["step_seconds"])
        rate = o.item.batch * o.item.seq_len / step
        return (label, "ok", alloc, reserved, f"step {step:.3f} s", f"{rate:,.0f} tok/s", o.note)
    b, n = o.item.batch, o.item.new_tokens
    decode = b * (n - 1) / m["decode_seconds"]
    return (label, "ok", alloc, reserved, f"prefill {m['prefill_seconds'] * 1e3:,.1f} ms",
            f"decode {decode:,.1f} tok/s", o.note)


def summary_caption(outcomes: Sequence[Outcome], elapsed_s: float, budget: Budget) -> str:
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    text = ", ".join(f"{n} {status}" for status, n in counts.items())
    limit = f" of a {budget.limit_s / 60:g}-minute budget" if budget.limit_s else ""
    over = sum(1 for o in outcomes if o.status == "skipped" and o.note.startswith("time budget"))
    tail = f"; {over} item(s) skipped for the time budget" if over else ""
    return f"{len(outcomes)} grid items: {text}; {elapsed_s / 60:.1f} min{limit}{tail}"


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Rows as aligned plain-text columns."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in [headers, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "") -> None:
    """Print a table with rich when it is installed, else as plain text."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(f"\n{title}\n{plain_table(headers, rows)}" + (f"\n{caption}" if caption else ""))
        return
    table = Table(title=title, caption=caption or None)
    for h in headers:
        table.add_column(h, overflow="fold")
    for r in rows:
        table.add_row(*r)
    Console(width=None if sys.stdout.isatty() else 200).print(table)


def grid_rows(grid: Sequence[GridItem]) -> list[tuple[str, ...]]:
    """The --dry-run listing: one line per grid item."""
    return [(str(i), item.kind, item.model, item.describe(), ", ".join(item.needs))
            for i, item in enumerate(grid, 1)]


# ---------------------------------------------------------------- the run (pure orchestration)

Measure = Callable[[GridItem, RunSettings], dict[str, Any]]


@dataclass
class OutputFiles:
    """The kit's output folder and what has been merged into it so far in this run."""

    out_dir: Path
    reports: dict[str, WriteReport] = field(default_factory=dict)

    def write(self, item: GridItem, m: dict[str, Any], env: Env, s: RunSettings) -> None:
        if isinstance(item, TrainItem):
            rows = finetune_rows(item, m, env, ModelFacts.from_config(preset_config(item.model)), s)
            self._add(write_csv_rows(self.out_dir / FINETUNE_FILE, rows, FINETUNE_COLUMNS))
            cases = finetune_cases(item, rows, env)
            if cases:
                self._add(write_cases(self.out_dir / CASES_FILE, cases))
        else:
            rows = inference_rows(item, m, env, s)
            self._add(write_csv_rows(self.out_dir / INFERENCE_FILE, rows, INFERENCE_COLUMNS))

    def check(self) -> None:
        """Fail before measuring when an existing output file has other columns (it would refuse every row)."""
        read_csv_rows(self.out_dir / FINETUNE_FILE, FINETUNE_COLUMNS)
        read_csv_rows(self.out_dir / INFERENCE_FILE, INFERENCE_COLUMNS)

    def _add(self, r: WriteReport) -> None:
        old = self.reports.get(r.path.name)
        if old:
            r = WriteReport(r.path, old.added + r.added, old.replaced + r.replaced, r.total)
        self.reports[r.path.name] = r

    def lines(self) -> list[str]:
        return [f"{r.path}: {r.added} added, {r.replaced} replaced (same id, newer measurement), "
                f"{r.total} in the file" for r in self.reports.values()]


def run_grid(grid: Sequence[GridItem], measure: Measure, env: Env, files: OutputFiles, budget: Budget,
             settings: RunSettings = RunSettings(), clock: Callable[[], float] = time.monotonic,
             available: Callable[[str], bool] | None = None) -> list[Outcome]:
    """Measure every grid item in order, writing its rows as soon as it is done; an item needing a package
    that is not installed, or that would overrun the budget, is skipped; an error in one item never stops
    the others."""
    available = available or (lambda name: not missing_packages([name]))
    start = clock()
    outcomes: list[Outcome] = []
    for n, item in enumerate(grid, 1):
        outcome = _run_item(item, measure, env, files, budget, settings, clock, start, available, outcomes)
        outcomes.append(outcome)
        print(f"[{n}/{len(grid)}] {item.model} {item.describe()}: {outcome.status}"
              + (f" ({outcome.note})" if outcome.note else "") + f" {outcome.seconds:.1f} s", flush=True)
    return outcomes


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__


def _run_item(item: GridItem, measure: Measure, env: Env, files: OutputFiles, budget: Budget,
              settings: RunSettings, clock: Callable[[], float], start: float,
              available: Callable[[str], bool], done: Sequence[Outcome]) -> Outcome:
    missing = [p for p in item.needs if not available(p)]
    if missing:
        return Outcome(item, "skipped", note=f"{', '.join(missing)} not installed")
    elapsed = clock() - start
    if not budget.allows(elapsed, expected_seconds(item, done)):
        return Outcome(item, "skipped", note=f"time budget: {elapsed / 60:.1f} min used")
    t0 = clock()
    try:
        m = measure(item, settings)
        files.write(item, m, env, settings)
    except Exception as exc:  # one broken item (a library version, a model) must not stop the grid
        return Outcome(item, "error", note=_one_line(exc), seconds=clock() - t0)
    note = m.get("error", "")[:80] if m["status"] == "oom" else m.get("note", "")
    return Outcome(item, m["status"], m, note, clock() - t0)


# ================================================================ GPU side: imports torch/transformers lazily


def collect_env(device_index: int = 0) -> Env:
    """The conditions of this run: GPU, driver, CUDA, package versions, date."""
    import torch

    name = torch.cuda.get_device_name(device_index)
    total = torch.cuda.get_device_properties(device_index).total_memory
    return Env(name, resolve_gpu_name(name), total, driver_version(), torch.version.cuda or "",
               package_versions(), dt.date.today().isoformat())


def _is_cuda(device: str) -> bool:
    return device.startswith("cuda")


def free_memory(device: str) -> None:
    """Drop unreachable tensors and return cached blocks to the driver."""
    gc.collect()
    if _is_cuda(device):
        import torch

        torch.cuda.empty_cache()


def reset_peaks(device: str) -> None:
    if _is_cuda(device):
        import torch

        torch.cuda.reset_peak_memory_stats(device)


def peaks(device: str) -> tuple[int, int]:
    """Peak (allocated, reserved) bytes since the last reset; (0, 0) off CUDA."""
    if not _is_cuda(device):
        return 0, 0
    import torch

    return torch.cuda.max_memory_allocated(device), torch.cuda.max_memory_reserved(device)


def allocated(device: str) -> int:
    if not _is_cuda(device):
        return 0
    import torch

    return torch.cuda.memory_allocated(device)


def timed(fn: Callable[[], Any], device: str) -> tuple[Any, float]:
    """``fn()`` and its wall time in seconds, the GPU synchronised before and after."""
    import torch

    if _is_cuda(device):
        torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    result = fn()
    if _is_cuda(device):
        torch.cuda.synchronize(device)
    return result, time.perf_counter() - t0


def build_model(cfg: dict[str, Any], device: str) -> Any:
    """A causal LM with random weights in bfloat16 built on ``device`` from a config.json dict: no download."""
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    skip = {"architectures", "transformers_version", "torch_dtype", "dtype", "auto_map"}
    config = AutoConfig.for_model(**{k: v for k, v in cfg.items() if k not in skip and not k.startswith("_")})
    dtype_arg = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, **{dtype_arg: torch.bfloat16})
    return model.to(device=device, dtype=torch.bfloat16)


def count_params(model: Any) -> int:
    return sum(p.numel() for p in model.parameters())


def attention_impl(model: Any) -> str:
    return str(getattr(model.config, "_attn_implementation", "") or "")


def enable_checkpointing(model: Any) -> None:
    """Non-reentrant activation checkpointing of every decoder layer (either transformers API)."""
    kwargs = {"use_reentrant": False}
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def quantize_nf4(model: Any, device: str) -> None:
    """Replace every nn.Linear but lm_head by a bitsandbytes NF4 Linear4bit (double quant), as QLoRA loads
    its base model; the bf16 weights are freed layer by layer."""
    import bitsandbytes as bnb
    import torch

    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is not torch.nn.Linear or name == "lm_head":
                continue
            q = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                  compute_dtype=torch.bfloat16, compress_statistics=True, quant_type="nf4",
                                  device="meta")
            q.weight = bnb.nn.Params4bit(child.weight.data, requires_grad=False, compress_statistics=True,
                                         quant_type="nf4", module=q).to(device)
            if child.bias is not None:
                q.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
            setattr(parent, name, q)
    model.is_loaded_in_4bit = True  # peft dispatches its 4-bit LoRA layer on this flag


def add_lora(model: Any, rank: int) -> Any:
    """LoRA adapters on all linear layers (peft), the base frozen."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=rank, lora_alpha=LORA_ALPHA_PER_RANK * rank, lora_dropout=0.0,
                        target_modules="all-linear", task_type="CAUSAL_LM")
    return get_peft_model(model, config)


class PrefixKV:
    """P-tuning v2 (Liu et al. 2022): a trainable key and value prefix for every layer, fed to the frozen model
    as ``past_key_values``. Used when peft is not installed."""

    def __init__(self, facts: ModelFacts, prefix_len: int, device: str) -> None:
        import torch

        shape = (facts.layers, 2, facts.kv_heads, prefix_len, facts.head_dim)
        self.param = torch.nn.Parameter(torch.randn(shape, device=device, dtype=torch.bfloat16) * 0.02)
        self.prefix_len = prefix_len

    def cache(self, batch: int) -> Any:
        from transformers import DynamicCache

        cache = DynamicCache()
        for layer in range(self.param.shape[0]):
            k, v = (self.param[layer, i].unsqueeze(0).expand(batch, -1, -1, -1) for i in (0, 1))
            cache.update(k, v, layer)
        return cache


@dataclass
class Trainee:
    """A model ready for training steps: the module, its trainable parameters and its loss function."""

    model: Any
    params: list[Any]
    loss: Callable[[Any], Any]
    note: str = ""


def prepare(model: Any, item: TrainItem, facts: ModelFacts, device: str) -> Trainee:
    """Freeze, quantise and add adapters as ``item.method`` asks."""
    model.config.use_cache = False
    if item.grad_ckpt:
        enable_checkpointing(model)
    if item.method == "full":
        model.train()
        return Trainee(model, list(model.parameters()), lambda ids: model(input_ids=ids, labels=ids).loss)
    model.requires_grad_(False)
    if item.method == "qlora":
        quantize_nf4(model, device)
        free_memory(device)
    if item.method in ("lora", "qlora"):
        model = add_lora(model, item.lora_rank)
        return _trainee(model, _adapter_dtypes(model))
    return _prefix_trainee(model, item, facts, device)


def _trainee(model: Any, note: str = "") -> Trainee:
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    return Trainee(model, params, lambda ids: model(input_ids=ids, labels=ids).loss, note)


def _dtype_names(params: Iterable[Any]) -> str:
    short = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
    names = sorted({str(p.dtype).replace("torch.", "") for p in params})
    return "/".join(short.get(n, n) for n in names)


def _adapter_dtypes(model: Any) -> str:
    return f"adapter dtype {_dtype_names(p for p in model.parameters() if p.requires_grad)}"


def _prefix_trainee(model: Any, item: TrainItem, facts: ModelFacts, device: str) -> Trainee:
    if not missing_packages(["peft"]):
        from peft import PrefixTuningConfig, get_peft_model

        config = PrefixTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=item.prefix_len)
        peft_model = get_peft_model(model, config)
        return _trainee(peft_model, "peft PrefixTuning, prefix_projection=False; " + _adapter_dtypes(peft_model))
    import torch

    prefix = PrefixKV(facts, item.prefix_len, device)
    model.train()

    arg = cache_arg(model)

    def loss(ids: Any) -> Any:
        mask = torch.ones(ids.shape[0], item.prefix_len + ids.shape[1], dtype=torch.long, device=ids.device)
        return model(input_ids=ids, labels=ids, attention_mask=mask, use_cache=True,
                     **{arg: prefix.cache(ids.shape[0])}).loss

    return Trainee(model, [prefix.param], loss, "past_key_values from a trainable nn.Parameter (bf16)")


def measure_train(item: TrainItem, s: RunSettings, device: str = "cuda") -> dict[str, Any]:
    """Peak memory and step time of ``item``: warm-up steps, then timed steps (forward, backward, AdamW)."""
    import torch

    cfg = preset_config(item.model)
    facts = ModelFacts.from_config(cfg)
    free_memory(device)
    model = build_model(cfg, device)
    n_params, attn = count_params(model), attention_impl(model)
    trainee = prepare(model, item, facts, device)
    optimizer = torch.optim.AdamW(trainee.params, lr=s.lr)
    ids = torch.randint(0, facts.vocab or 32000, (item.batch, item.seq_len), device=device)

    def step() -> None:
        trainee.loss(ids).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    free_memory(device)
    reset_peaks(device)
    start = allocated(device)
    times = [timed(step, device)[1] for _ in range(s.warmup_steps + s.timed_steps)][s.warmup_steps:]
    peak_alloc, peak_reserved = peaks(device)
    return {"status": "ok", "peak_allocated_bytes": peak_alloc, "peak_reserved_bytes": peak_reserved,
            "step_seconds": times, "n_params": n_params, "n_trainable": sum(p.numel() for p in trainee.params),
            "trainable_dtype": _dtype_names(trainee.params), "attn": attn, "start_allocated_bytes": start,
            "prefix_impl": trainee.note, "note": trainee.note}


def _forward_params(model: Any) -> set[str]:
    import inspect

    return set(inspect.signature(model.forward).parameters)


def cache_arg(model: Any) -> str:
    """The forward() argument that takes the KV cache: ``cache`` in newer transformers, else ``past_key_values``."""
    return "cache" if "cache" in _forward_params(model) else "past_key_values"


def output_cache(out: Any) -> Any:
    """The KV cache a forward returned, under either name."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def last_logits_kwargs(model: Any) -> dict[str, int]:
    """The forward() argument that computes logits for the last position only, where the model has one."""
    names = _forward_params(model)
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in names:
            return {name: 1}
    return {}


def decode(model: Any, out: Any, steps: int) -> Any:
    """``steps`` greedy steps on the KV cache of ``out`` (a forward output); returns the last token ids."""
    arg = cache_arg(model)
    past, nxt = output_cache(out), out.logits[:, -1:].argmax(-1)
    del out
    for _ in range(steps):
        out = model(input_ids=nxt, use_cache=True, **{arg: past})
        past, nxt = output_cache(out), out.logits[:, -1:].argmax(-1)
        del out
    return nxt


def measure_inference(model: Any, item: InferItem, s: RunSettings, vocab: int, device: str = "cuda") -> dict[str, Any]:
    """Prefill time (median), decode time of ``new_tokens - 1`` steps and peak memory for one batch size."""
    import torch

    extra = last_logits_kwargs(model)
    ids = torch.randint(0, vocab, (item.batch, item.prompt_len), device=device)

    def prefill() -> Any:
        return model(input_ids=ids, use_cache=True, **extra)

    free_memory(device)
    reset_peaks(device)
    with torch.inference_mode():
        decode(model, prefill(), s.warmup_decode_tokens)
        prefill_times = []
        out = None
        for _ in range(s.prefill_repeats):
            out = None
            out, seconds = timed(prefill, device)
            prefill_times.append(seconds)
        _, decode_s = timed(lambda: decode(model, out, item.new_tokens - 1), device)
        out = None
    peak_alloc, peak_reserved = peaks(device)
    return {"status": "ok", "prefill_seconds": statistics.median(prefill_times), "decode_seconds": decode_s,
            "prefill_seconds_all": prefill_times, "peak_allocated_bytes": peak_alloc,
            "peak_reserved_bytes": peak_reserved, "n_params": count_params(model), "attn": attention_impl(model),
            "logits": "for the last position only" if extra else "for every prompt position"}


class GpuMeasure:
    """The measure function of a run on the GPU: keeps one inference model built across batch sizes, turns an
    out-of-memory error into an ``oom`` measurement and frees memory after it."""

    def __init__(self, device: str = "cuda") -> None:
        self.device = device
        self._model: Any = None
        self._model_name = ""

    def __call__(self, item: GridItem, s: RunSettings) -> dict[str, Any]:
        import torch

        try:
            if isinstance(item, TrainItem):
                self.release()
                return measure_train(item, s, self.device)
            model = self._inference_model(item.model)
            vocab = ModelFacts.from_config(preset_config(item.model)).vocab or 32000
            return measure_inference(model, item, s, vocab, self.device)
        except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:
            if not isinstance(exc, torch.cuda.OutOfMemoryError) and "out of memory" not in str(exc).lower():
                raise  # not a memory error: the grid records it as an error
            error = str(exc).strip().splitlines()[0] if str(exc).strip() else "CUDA out of memory"
        # outside the except block: the traceback (and the tensors its frames hold) is gone
        self.release()
        return {"status": "oom", "error": error}

    def _inference_model(self, name: str) -> Any:
        if self._model_name != name:
            self.release()
            self._model = build_model(preset_config(name), self.device).eval()
            self._model_name = name
        return self._model

    def release(self) -> None:
        self._model, self._model_name = None, ""
        free_memory(self.device)


def quiet_libraries() -> None:
    """Offline, and no per-step warnings from transformers."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", category=FutureWarning)  # deprecation notices of transformers and peft
    with contextlib.suppress(Exception):
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()


# ---------------------------------------------------------------- command line


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python bench/measure_gpu.py",
                                description="Measure fine-tuning and inference on this NVIDIA GPU (random weights "
                                            "from gpuplan's presets) and write calibration rows.")
    p.add_argument("--out", type=Path, default=Path("measurements"),
                   help="folder for measured_finetune.csv, measured_inference.csv, measured_cases.yaml "
                        "(default ./measurements); existing files are merged by row id")
    p.add_argument("--quick", action="store_true", help="a tiny grid (one small model), for smoke tests")
    p.add_argument("--max-minutes", type=budget_minutes, default=7.5,
                   help="skip the grid items that would start or run past this many minutes (default 7.5)")
    p.add_argument("--only", metavar="TEXT", help="run only grid items whose key contains TEXT (e.g. Llama-3.2-1B)")
    p.add_argument("--dry-run", action="store_true", help="print the grid and exit; needs neither a GPU nor torch")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    grid = select_grid(args.quick, args.only)
    if not grid:  # with or without --dry-run: a filter that selects nothing is a mistake
        print(f"measure_gpu: no grid item matches --only {args.only!r}; '--dry-run' without --only lists them.",
              file=sys.stderr)
        return EXIT_CANNOT_RUN
    if args.dry_run:
        print_table(f"measure_gpu grid ({'quick' if args.quick else 'default'}): {len(grid)} items",
                    ("#", "kind", "model", "setting", "needs"), grid_rows(grid))
        return 0
    problem = environment_problem()
    if problem:
        print(f"measure_gpu: {problem}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    files = OutputFiles(args.out)
    try:
        files.check()
    except ValueError as exc:
        print(f"measure_gpu: {exc}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    quiet_libraries()
    env = collect_env()
    print(f"measure_gpu: {env.gpu_name} ({env.gpu_spec_name or 'not in the catalog'}), driver "
          f"{env.driver or 'unknown'}; {env.software}; {len(grid)} grid items -> {args.out}", flush=True)
    budget, start = Budget(args.max_minutes * 60), time.monotonic()
    outcomes = run_grid(grid, GpuMeasure(), env, files, budget)
    print("\n".join(files.lines()) or "no rows written")
    print_table(f"measure_gpu on {env.gpu_name}", SUMMARY_HEADERS, [summary_row(o) for o in outcomes],
                summary_caption(outcomes, time.monotonic() - start, budget))
    return 1 if any(o.status == "error" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
