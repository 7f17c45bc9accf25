"""Typed estimate results (issue 10, part 2): what an estimator derives besides its total (KV capacity, trained
parameters, MFU and GPU-hours, speed figures) is a frozen dataclass read by attribute, not a dict read by string
key in another module; the JSON of every command keeps the keys it had, in the same order."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import gpuplan
from gpuplan.catalog import Catalog
from gpuplan.estimate.infer_speed import latency
from gpuplan.estimate.job import estimate_inference, estimate_training, inference_setup, training_setup
from gpuplan.estimate.result import Estimate, KvCapacity
from gpuplan.types import Engine, Job, Method, Parallelism, Task

HEAD = ["total_{u}", "low_{u}", "high_{u}", "held_out_low_{u}", "held_out_high_{u}"]
TAIL = ["band", "assumptions"]


def _keys(est: Estimate, unit: str) -> list[str]:
    return list(est.as_dict(f"total_{unit}"))


def _head(unit: str, floor: bool = False) -> list[str]:
    return [k.format(u=unit) for k in HEAD] + (["floor"] if floor else []) + [f"breakdown_{unit}", *TAIL]


def test_no_module_reads_an_estimate_by_string_key() -> None:
    package = Path(gpuplan.__file__).parent
    readers = [f"{path.relative_to(package)}:{node.lineno}" for path in sorted(package.rglob("*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Attribute) and node.attr == "extra"]
    assert readers == []
    assert "extra" not in {f.name for f in dataclasses.fields(Estimate)}


def test_a_training_estimate_keeps_its_json_keys(catalog: Catalog) -> None:
    job = Job(task=Task.FINETUNE, method=Method.LORA, tokens=1e8, seq_len=1024)
    e = estimate_training(catalog.model("Llama-2-7B"), catalog.gpu("H100"), job,
                          training_setup(job, Parallelism(), 1, "none", gpu=catalog.gpu("H100")))
    assert _keys(e.memory, "bytes") == [
        *_head("bytes", floor=True), "trainable_params", "total_params", "gradients_bytes", "activations_bytes",
        "logits_bytes"]
    assert e.time is not None
    assert _keys(e.time, "seconds") == [
        *_head("seconds"), "mfu", "utilisation", "gpu_hours", "tokens_per_s", "steps", "human"]
    rate = e.time.rate
    assert rate is not None and e.time.capacity is None and e.memory.trained is not None
    # 1e8 tokens at tokens_per_s on one GPU: the GPU-hours are the run's hours
    assert rate.gpu_hours == pytest.approx(1e8 / rate.tokens_per_s / 3600, rel=1e-6)
    # LoRA rank 16 on every linear layer of Llama-2-7B: 32 layers × 16 × (4·(4096+4096) + 3·(4096+11008))
    assert e.memory.trained.trainable_params == 32 * 16 * (4 * 8192 + 3 * 15104)


def test_an_inference_estimate_keeps_its_json_keys(catalog: Catalog) -> None:
    job = Job(task=Task.INFER, prompt_len=1024, output_len=256, requests=100)
    e = estimate_inference(catalog.model("Llama-2-7B"), catalog.gpu("H100"), job,
                           inference_setup(job, 1, Engine.VLLM, "bf16"))
    assert _keys(e.memory, "bytes") == [
        *_head("bytes"), "engine_reserved_bytes", "kv_budget_bytes", "kv_capacity_tokens", "max_concurrent_seqs",
        "max_context_tokens"]
    cap = e.memory.capacity
    assert isinstance(cap, KvCapacity) and cap.max_concurrent_seqs >= e.setup.batch
    # vLLM reserves 0.9 (engines.csv gpu_memory_utilization) of the H100's 81,559 MiB (gpus.csv, nvidia-smi's total)
    assert cap.engine_reserved_bytes == pytest.approx(0.9 * 81_559 * 2**20)
    assert e.time is not None and e.time.waves is not None
    assert _keys(e.time, "seconds") == [*_head("seconds"), "batches"]
    assert e.time.waves.batches * e.setup.batch >= 100 > (e.time.waves.batches - 1) * e.setup.batch


def test_a_speed_estimate_has_its_figures(catalog: Catalog) -> None:
    job = Job(task=Task.INFER, prompt_len=1024, output_len=256, requests=1)
    s = dataclasses.replace(inference_setup(job, 1, Engine.VLLM, "bf16"), batch=1)
    est = latency(catalog.model("Llama-2-7B"), catalog.gpu("H100"), s)
    f = est.figures
    assert f is not None and est.capacity is None and f.batch == 1
    assert _keys(est, "seconds") == [
        *_head("seconds"), "ttft_s", "tpot_s", "batch", "output_tokens_per_s", "requests_per_s", "bound",
        "decode_tokens_per_s_per_seq"]
    # one sequence makes its 256 tokens in TTFT + 256 TPOT; alone, it decodes one token per TPOT
    assert f.output_tokens_per_s == pytest.approx(256 / (f.ttft_s + 256 * f.tpot_s))
    assert f.decode_tokens_per_s_per_seq == pytest.approx(1 / f.tpot_s)
