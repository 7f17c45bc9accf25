"""The optimizer step's transient memory: torch's foreach AdamW holds one temporary the size of the parameters it
updates (``exp_avg_sq_sqrt``, in the states' dtype) beside every gradient and state, where a fused step holds
none. Hand-computed on Qwen-1.8B (1,836,828,672 parameters, transformers QWenLMHeadModel numel)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.memory import adam_step, training_memory
from gpuplan.types import Parallelism, TrainSetup

N_QWEN_1_8B = 1_836_828_672


def _full(**fields: object) -> TrainSetup:
    # a short sequence with recomputation: backward holds little, so the step is the peak where it has temporaries
    values: dict[str, object] = dict(method="full", precision="bf16", framework="pytorch", micro_batch=1,
                                     seq_len=256, recompute="full", lengths_vary=False)
    return TrainSetup(**{**values, **fields})  # type: ignore[arg-type]


def test_foreach_adamw_holds_one_bf16_copy_of_the_parameters_at_the_step(catalog: Catalog) -> None:
    # pure bf16: Adam states in bf16, so exp_avg_sq_sqrt is 2 bytes per parameter: 3.67 GB for 1.84 B parameters
    m = catalog.model("Qwen-1.8B")
    parts = training_memory(m, _full()).breakdown
    assert parts.get("optimizer_temporaries") == pytest.approx(2 * N_QWEN_1_8B, rel=1e-6)
    assert parts.get("activations") == 0 and parts.get("logits") == 0  # freed before the step


def test_a_fused_step_holds_no_temporaries_and_needs_less(catalog: Catalog) -> None:
    m = catalog.model("Qwen-1.8B")
    foreach, fused = training_memory(m, _full()), training_memory(m, _full(adam_step="fused"))
    assert fused.breakdown.get("optimizer_temporaries") == 0
    # at most the 3.67 GB copy: the step reuses the pool backward left around the gradients, which it replaces
    assert 1.0e9 < foreach.total - fused.total < 2 * N_QWEN_1_8B


def test_the_step_is_not_the_peak_when_backward_holds_more(catalog: Catalog) -> None:
    # 8 × 4096 tokens without recomputation: the activations outweigh a 3.7 GB copy, the estimate is unchanged
    m = catalog.model("Qwen-1.8B")
    long = _full(micro_batch=8, seq_len=4096, recompute="none")
    assert training_memory(m, long).total == training_memory(m, replace(long, adam_step="fused")).total


def test_fsdp_holds_the_temporaries_of_its_shard(catalog: Catalog) -> None:
    m = catalog.model("Qwen-1.8B")
    whole = training_memory(m, _full()).breakdown.get("optimizer_temporaries")
    shard = training_memory(m, _full(parallel=Parallelism(dp=4, zero=3))).breakdown.get("optimizer_temporaries")
    assert shard == pytest.approx(whole / 4, rel=0.01)


@pytest.mark.parametrize(("release", "step"), [
    ("4.31.0", "per-tensor"),  # adamw_hf, transformers' own AdamW, until PR #25109
    ("4.36.2", "foreach"),  # adamw_torch from 4.32.0
    ("4.53.3", "foreach"),
    ("4.54.0", "fused"),  # adamw_torch_fused from PR #37358 (torch >= 2.8)
    ("", "fused"),  # no stated release: the current one, as plans run
])
def test_hf_trainer_default_optimizer_follows_the_transformers_release(release: str, step: str) -> None:
    assert adam_step(TrainSetup(framework="hf", transformers_version=release)) == step


def test_stacks_that_step_in_place_add_nothing(catalog: Catalog) -> None:
    # torchtitan's default implementation is "fused"; DeepSpeed's FusedAdam wraps the step under ZeRO
    m = catalog.model("Qwen-1.8B")
    for setup in (_full(framework="torchtitan"), _full(framework="hf", parallel=Parallelism(zero=2)),
                  _full(optimizer="adamw-8bit")):
        assert training_memory(m, setup).breakdown.get("optimizer_temporaries") == 0
