"""What must fit the GPU for a training run: the tensors and the CUDA context, not the allocator's cache that a
large card lets grow (PyTorch gives it back and retries before it reports out-of-memory)."""

from __future__ import annotations

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.job import DEFAULT_HEADROOM, needed_memory
from gpuplan.estimate.result import Band, Breakdown, Estimate, Floor
from gpuplan.requests import estimate_config, make_job
from gpuplan.units import GiB


def _estimate(tensors: float, cache: float, held_high: float, floor_high: float | None) -> Estimate:
    whole = Band(0.8, 1.1, "training_memory", 100, 0.7, held_high)
    parts = (("weights", tensors), ("allocator_slack", cache))
    floor = None if floor_high is None else Floor(tensors, Band(0.9, 1.05, "allocated", 50, 0.9, floor_high),
                                                  ("allocator_slack",))
    return Estimate(Breakdown("bytes", parts), whole, (), {}, floor)


def test_a_training_estimate_must_fit_without_its_cache_raised_by_the_floors_band() -> None:
    # 70 GiB of tensors and 30 GiB of cache; the whole estimate's band reaches 1.30, the floor's 1.10:
    # 70 × 1.10 = 77 GiB must fit, not 100 × 1.30 = 130 GiB
    needed, margin = needed_memory(_estimate(70 * GiB, 30 * GiB, 1.30, 1.10))
    assert needed == pytest.approx(77 * GiB) and margin == pytest.approx(0.10)


def test_the_floor_keeps_a_least_margin_for_the_cache_that_cannot_be_given_back() -> None:
    needed, margin = needed_memory(_estimate(70 * GiB, 30 * GiB, 1.30, 1.01))
    assert margin == DEFAULT_HEADROOM and needed == pytest.approx(70 * GiB * (1 + DEFAULT_HEADROOM))


def test_a_user_headroom_applies_to_the_floor_too() -> None:
    needed, margin = needed_memory(_estimate(70 * GiB, 30 * GiB, 1.30, 1.10), headroom=0.2)
    assert margin == pytest.approx(0.2) and needed == pytest.approx(84 * GiB)


def test_the_floor_never_asks_for_more_than_the_whole_estimate() -> None:
    # nearly no cache, and a floor band wider than the whole one: 99 × 1.5 would exceed 100 × 1.2
    needed, margin = needed_memory(_estimate(99 * GiB, 1 * GiB, 1.20, 1.50))
    assert needed == pytest.approx(120 * GiB) and margin == pytest.approx(0.20)


def test_without_a_floor_the_whole_estimate_must_fit() -> None:
    needed, margin = needed_memory(_estimate(70 * GiB, 30 * GiB, 1.30, None))
    assert needed == pytest.approx(130 * GiB) and margin == pytest.approx(0.30)


def test_a_published_lora_run_fits_the_24_gb_class_card_it_ran_on(catalog: Catalog) -> None:
    # LitGPT's config hub: Llama-3-8B LoRA (rank 32 on query and value, micro-batch 1 × 512 tokens) ran on one
    # A10G with 18.37 GiB allocated at the peak (Lightning-AI/litgpt config_hub/finetune/README.md). The device
    # estimate with the allocator's cache a large card lets grow is above the A10G's memory; the run fitted.
    m, g = catalog.model("Llama-3-8B"), catalog.gpu("A10G")
    job = make_job("finetune", method="lora", seq_len=512, lora_rank=32, lora_targets="qv", framework="litgpt")
    e = estimate_config(m, g, job, micro_batch=1, framework="litgpt")
    assert e.memory.floor is not None and e.memory.floor.value < e.memory.total
    assert e.fits, f"needs {e.needed_bytes / GiB:.1f} GiB of {e.capacity_bytes / GiB:.1f} GiB"


def test_a_run_whose_states_alone_exceed_the_card_is_still_refused(catalog: Catalog) -> None:
    # full fine-tuning in mixed precision with AdamW holds 16 bytes per parameter (Rajbhandari et al. 2020,
    # sec. 3.1): 6.74 B × 16 = 108 GB for Llama-2-7B, above an 80 GB A100 before any activation (PEFT's README
    # reports the same out-of-memory for the 7.1 B bloomz-7b1 on an A100 80GB)
    m, g = catalog.model("Llama-2-7B"), catalog.gpu("A100-80GB")
    e = estimate_config(m, g, make_job("finetune", method="full", seq_len=512), micro_batch=1,
                        precision="bf16-mixed")
    assert not e.fits
    assert e.needed_bytes >= 6.7e9 * 16
