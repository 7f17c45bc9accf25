"""The caching allocator's pool when sequence lengths vary between steps, and the frameworks whose data make the
shapes repeat (data/frameworks.csv): hand-computed parts and a published reading that flips "fits"."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.frameworks import framework
from gpuplan.estimate.job import training_setup
from gpuplan.estimate.memory import training_memory
from gpuplan.types import Job, Parallelism, TrainSetup
from gpuplan.units import GiB

# ms-swift's 2024 benchmark setup (docs/source_en/LLM/Benchmark.md @cdb169b781c22dd06ef03e06209819ec1f4208eb):
# Qwen-1.8B-Chat LoRA on c_attn, rank 8, batch 1, gradient checkpointing, flash attention, bf16
SWIFT_LORA = TrainSetup(method="lora", lora_targets="attention", lora_rank=8, micro_batch=1, seq_len=8192,
                        grad_accum=16, precision="bf16", framework="hf", recompute="full", lora_dropout=0.05)


def test_varying_lengths_add_one_set_of_the_length_dependent_tensors(catalog: Catalog) -> None:
    # the pool grows by exactly activations + logits at the peak (gradients keep their shapes), nothing else moves
    m = catalog.model("Qwen-1.8B")
    fixed = training_memory(m, replace(SWIFT_LORA, lengths_vary=False))
    varying = training_memory(m, SWIFT_LORA)
    transients = sum(fixed.breakdown.get(k) for k in ("activations", "logits"))
    assert varying.total - fixed.total == pytest.approx(transients)  # one more set: 1 × (activations + logits)
    # 8,192 tokens × 151,936 vocabulary entries × 10 bytes of loss-time logits: 11.6 GiB of the transients
    assert fixed.breakdown.get("logits") == pytest.approx(8192 * 151936 * 10)
    for k in ("weights", "optimizer", "overhead"):
        assert varying.breakdown.get(k) == fixed.breakdown.get(k)


def test_varying_lengths_flip_fits_on_a_32gb_card(catalog: Catalog) -> None:
    # the same benchmark at max_length 8192 reads 37.02 GiB of PyTorch reserved memory (dataset lengths 3234 ± 2548
    # tokens, dynamic padding): more than a 32 GB V100 holds. Sized as if every step had the same shapes the
    # estimate (22.9 GiB reserved) says it fits.
    m = catalog.model("Qwen-1.8B")
    v100 = catalog.gpu("V100-32GB")
    fixed = training_memory(m, replace(SWIFT_LORA, lengths_vary=False))
    varying = training_memory(m, SWIFT_LORA)
    assert fixed.total < v100.memory_bytes < varying.total
    reserved = varying.total - varying.breakdown.get("overhead")
    assert reserved == pytest.approx(37.02 * GiB, rel=0.06)


@pytest.mark.parametrize(("name", "vary", "why"), [
    ("qwen", False, "QwenLM/Qwen finetune.py pads every sample to model_max_length"),
    ("chatglm", False, "THUDM/ChatGLM-6B ptuning/main.py pads to max_source_length + max_target_length"),
    ("megatron", False, "GPT dataset concatenates documents (packing)"),
    ("axolotl", False, "shipped examples turn sample_packing on"),
    ("swift", True, "dynamic padding per batch"),
    ("hf", True, "DataCollator pads per batch"),
    ("litgpt", True, "pads per batch"),
])
def test_framework_data_say_whether_shapes_repeat(name: str, vary: bool, why: str) -> None:
    assert framework(name).lengths_vary is vary, why


def test_a_framework_job_takes_the_framework_s_padding() -> None:
    base: dict[str, Any] = dict(task="finetune", method="lora", seq_len=2048)
    assert training_setup(Job(**base, framework="qwen"), Parallelism()).lengths_vary is False
    assert training_setup(Job(**base, framework="swift"), Parallelism()).lengths_vary is True
    assert training_setup(Job(**base), Parallelism()).lengths_vary is True  # unstated: the larger pool
    pretrain = dict(base, task="pretrain", method="full")
    assert training_setup(Job(**pretrain), Parallelism(dp=8)).lengths_vary is False
