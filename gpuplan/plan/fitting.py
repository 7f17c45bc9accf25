"""``gpuplan fit`` and ``gpuplan compare``: the seed's "which card for this use case" table, computed.

fit: for each use case (inference in 16-bit, int8, int4; LoRA, QLoRA and full fine-tuning) the smallest
GPU configurations that hold the model, with the memory they need. compare: relative training and inference
speed of two GPUs for one model, from the same estimators.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gpuplan.catalog import Catalog
from gpuplan.errors import GpuplanError, InfeasibleError
from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.infer_speed import throughput
from gpuplan.estimate.job import JobEstimate, estimate_inference, estimate_training, inference_setup, training_setup
from gpuplan.types import Gpu, Job, Method, ModelSpec, Parallelism, Recompute, Task


@dataclass(frozen=True, slots=True)
class UseCase:
    """One row of ``gpuplan fit``: batch inference with weights in ``weight_format``, or a fine-tune by ``method``."""

    label: str
    task: Task
    weight_format: str = "bf16"
    method: Method = Method.FULL


USE_CASES: tuple[UseCase, ...] = (
    UseCase("inference 16-bit", Task.INFER, weight_format="bf16"),
    UseCase("inference int8", Task.INFER, weight_format="int8-wo"),
    UseCase("inference int4 (AWQ)", Task.INFER, weight_format="awq-int4"),
    UseCase("LoRA fine-tune", Task.FINETUNE, method=Method.LORA),
    UseCase("QLoRA fine-tune", Task.FINETUNE, method=Method.QLORA),
    UseCase("full fine-tune", Task.FINETUNE, method=Method.FULL),
)


@dataclass(frozen=True)
class FitRow:
    use_case: str
    options: tuple[JobEstimate, ...]  # smallest configurations that fit, best first
    settings: str

    def as_dict(self) -> dict[str, Any]:
        return {"use_case": self.use_case, "settings": self.settings,
                "options": [{"config": e.describe(), "gpu": e.gpu.name, "n_gpus": e.n_gpus,
                             "memory_needed_bytes": e.needed_bytes, "memory_per_gpu_bytes": e.capacity_bytes}
                            for e in self.options]}


def _job(case: UseCase, context: int) -> Job:
    if case.task is Task.INFER:
        return Job(task=Task.INFER, prompt_len=context // 2, output_len=context - context // 2, batch=1, requests=1,
                   weight_format=case.weight_format)
    return Job(task=Task.FINETUNE, method=case.method, samples=1, tokens_per_sample=context, seq_len=context)


def fit_table(catalog: Catalog, m: ModelSpec, gpus: list[Gpu] | None = None, context: int = 2048,
              per_case: int = 3, cal: Calibration | None = None) -> list[FitRow]:
    """The smallest configurations (fewest GPUs, then least memory) per use case."""
    cal = cal or fitted()
    context = min(context, m.max_positions)
    rentable = {o.gpu for o in catalog.offers}
    pool = sorted(gpus or [g for g in catalog.gpus.values() if g.name in rentable],
                  key=lambda g: (g.memory_bytes, g.name))
    rows = []
    for case in USE_CASES:
        job = _job(case, context)
        found: list[JobEstimate] = []
        for gpu in pool:
            for n in (1, 2, 4, 8):
                e = _try(m, gpu, job, n, cal)
                if e is not None:
                    found.append(e)
                    break  # the fewest GPUs of this type that hold the job
        found.sort(key=lambda e: (e.n_gpus * e.capacity_bytes, e.n_gpus, e.gpu.name))
        settings = (f"batch 1, {context} tokens of context, vLLM" if case.task is Task.INFER else
                    f"micro-batch 1 × {context} tokens, activation checkpointing, AdamW; FSDP across GPUs")
        rows.append(FitRow(case.label, tuple(_distinct_memory(found)[:per_case]), settings))
    return rows


def _distinct_memory(found: list[JobEstimate]) -> list[JobEstimate]:
    """One option per (GPU count, memory size), so the table shows different classes of configuration."""
    out: list[JobEstimate] = []
    sizes: set[tuple[int, int]] = set()
    for e in found:
        key = (e.n_gpus, round(e.capacity_bytes / 2**30))
        if key not in sizes:
            sizes.add(key)
            out.append(e)
    return out


def _try(m: ModelSpec, gpu: Gpu, job: Job, n: int, cal: Calibration) -> JobEstimate | None:
    try:
        if job.task is Task.INFER:
            e = estimate_inference(m, gpu, job, inference_setup(job, n, "vllm", job.weight_format or "bf16"), cal)
        else:
            par = Parallelism(dp=n, zero=3 if n > 1 else 0)
            e = estimate_training(m, gpu, job, training_setup(job, par, 1, "full", gpu=gpu), cal)
    except InfeasibleError:
        return None
    return e if e.fits else None


@dataclass(frozen=True)
class Comparison:
    model: str
    rows: tuple[dict[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "rows": list(self.rows)}


def compare(catalog: Catalog, a: Gpu, b: Gpu, m: ModelSpec, cal: Calibration | None = None) -> Comparison:
    """Speed of ``b`` relative to ``a`` for training (LoRA and full, 8 GPUs with FSDP where one does not
    hold the model) and inference (batch-1 decode and offline throughput) of ``m``."""
    cal = cal or fitted()
    rows = []
    for label, fn in (("training (LoRA, tokens/s)", _train_lora), ("training (full, tokens/s)", _train_full),
                      ("inference batch-1 decode (tokens/s)", _decode), ("inference throughput (tokens/s)", _tput)):
        va, ca = fn(m, a, cal)
        vb, cb = fn(m, b, cal)
        rows.append({"measure": label, a.name: va, b.name: vb, f"{a.name}_config": ca, f"{b.name}_config": cb,
                     "ratio": (vb / va) if va and vb else None})
    return Comparison(m.name, tuple(rows))


def _train(m: ModelSpec, g: Gpu, cal: Calibration, method: str) -> tuple[float | None, str]:
    job = Job(task=Task.FINETUNE, method=Method(method), tokens=1e8, seq_len=min(2048, m.max_positions))
    for n in (1, 8):
        par = Parallelism(dp=n, zero=3 if n > 1 else 0)
        for mb, rc in ((4, Recompute.NONE), (2, Recompute.NONE), (1, Recompute.NONE), (1, Recompute.FULL)):
            try:
                e = estimate_training(m, g, job, training_setup(job, par, mb, rc, gpu=g), cal)
            except GpuplanError:
                break
            if e.fits and e.time and e.time.rate:
                return e.time.rate.tokens_per_s / n, f"{e.describe()}, micro-batch {mb}" + (
                    ", checkpointing" if rc == Recompute.FULL else "") + (" (per GPU)" if n > 1 else "")
    return None, "does not fit on 8"


def _train_lora(m: ModelSpec, g: Gpu, cal: Calibration) -> tuple[float | None, str]:
    return _train(m, g, cal, "lora")


def _train_full(m: ModelSpec, g: Gpu, cal: Calibration) -> tuple[float | None, str]:
    return _train(m, g, cal, "full")


def _infer_setup(m: ModelSpec, g: Gpu, cal: Calibration) -> tuple[JobEstimate | None, int]:
    job = Job(task=Task.INFER, prompt_len=512, output_len=256, requests=1)
    for tp in (1, 2, 4, 8):
        try:
            e = estimate_inference(m, g, job, inference_setup(job, tp, "vllm", "bf16"), cal)
        except GpuplanError:
            continue
        if e.fits:
            return e, tp
    return None, 0


NO_BANDWIDTH = "memory bandwidth not in the catalog"


def _decode(m: ModelSpec, g: Gpu, cal: Calibration) -> tuple[float | None, str]:
    if not g.memory_bandwidth_bytes_per_s:
        return None, NO_BANDWIDTH
    e, tp = _infer_setup(m, g, cal)
    if e is None or e.speed is None:
        return None, "does not fit on 8"
    return 1 / e.speed.tpot_s, f"TP{tp}, bf16, vLLM"


def _tput(m: ModelSpec, g: Gpu, cal: Calibration) -> tuple[float | None, str]:
    if not g.memory_bandwidth_bytes_per_s:
        return None, NO_BANDWIDTH
    e, tp = _infer_setup(m, g, cal)
    if e is None:
        return None, "does not fit on 8"
    figures = throughput(m, g, replace(e.setup, batch=1), cal).figures  # type: ignore[arg-type]
    assert figures is not None  # a speed estimate has its figures
    return figures.output_tokens_per_s / tp, f"TP{tp}, batch {figures.batch} (per GPU)"
