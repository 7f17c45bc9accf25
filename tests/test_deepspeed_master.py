"""A full fine-tune of bf16 weights under DeepSpeed ZeRO still holds fp32 master weights and fp32 Adam states
(deepspeed/runtime/zero/stage_1_and_2.py single_partition_of_fp32_groups): the estimate must price them."""

from __future__ import annotations

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.memory import training_memory
from gpuplan.types import Parallelism, TrainSetup


def _setup(framework: str, zero: int, dp: int) -> TrainSetup:
    return TrainSetup(method="full", micro_batch=1, seq_len=512, precision="bf16", framework=framework,
                      parallel=Parallelism(dp=dp, zero=zero))


def test_zero_under_the_hf_trainer_keeps_fp32_master_and_states(catalog: Catalog) -> None:
    m = catalog.model("Llama-2-7B")  # 6.74 B parameters
    mem = training_memory(m, _setup("hf", zero=1, dp=8)).breakdown
    # ZeRO-1 over 8 ranks: 6.74e9 × 4 bytes ÷ 8 = 3.37 GB of fp32 master, × 8 bytes (two fp32 moments) ÷ 8 = 6.74 GB
    assert mem.get("master_weights") == pytest.approx(3.37e9, rel=0.01)
    assert mem.get("optimizer") == pytest.approx(6.74e9, rel=0.01)


def test_pure_bf16_without_deepspeed_keeps_no_master_copy(catalog: Catalog) -> None:
    m = catalog.model("Llama-2-7B")
    one = training_memory(m, _setup("hf", zero=0, dp=1)).breakdown  # torch AdamW on bf16 parameters
    assert one.get("master_weights") == 0 and one.get("optimizer") == pytest.approx(6.74e9 * 4, rel=0.01)
    fsdp = training_memory(m, _setup("torchtune", zero=3, dp=8)).breakdown  # FSDP2 shards the bf16 parameters
    assert fsdp.get("master_weights") == 0
