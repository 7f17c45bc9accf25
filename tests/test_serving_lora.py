"""Multi-LoRA serving: N adapters resident on the base take their memory out of the KV cache and add their reads and
FLOPs to every step; the plan's capacity is recomputed and the exports carry the engines' LoRA flags."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from test_export import LLAMA_8B, _check_argv

from gpuplan.catalog import load_catalog
from gpuplan.errors import InputError
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.infer_speed import decode_step_seconds, lora_step_bytes
from gpuplan.estimate.memory import inference_memory, served_adapter_bytes
from gpuplan.export.serve import ServeGroup, sglang_command, vllm_command
from gpuplan.plan.serving import ServeRequest, Targets, parse_buckets, plan_serving, reserved_lora, serve_request
from gpuplan.types import InferSetup

Cli = Callable[..., Any]


# Llama-3.1-8B (hidden 4096, 8 KV heads of 128, FFN 14336, 32 layers), rank 16 on q, k, v, o, gate, up, down:
# r·(in + out) per matrix = 16 × (8192 + 5120 + 5120 + 8192 + 18432 × 3) = 16 × 81,920 per layer
@pytest.mark.parametrize(("n", "tp", "expected"), [
    (1, 1, 16 * 81_920 * 32 * 2),  # 83,886,080 bytes: 80 MiB
    (8, 1, 8 * 16 * 81_920 * 32 * 2),
    # TP 2: B of q, k, v, gate, up and A of o, down halved, the other factor whole:
    # q 4096+2048, k 4096+512, v 4096+512, o 2048+4096, gate/up 4096+7168, down 7168+4096 = 55,296
    (1, 2, 16 * 55_296 * 32 * 2),
])
def test_adapter_memory_is_the_hand_sum(n: int, tp: int, expected: int) -> None:
    assert served_adapter_bytes(LLAMA_8B, n, 16, tp) == expected


def test_adapters_come_out_of_the_kv_cache() -> None:
    gpu = load_catalog().gpus["H100"]
    base = InferSetup(engine="vllm", prompt_len=1000, output_len=300)
    lora = replace(base, lora_adapters=8, lora_rank=16)
    plain, with_lora = inference_memory(LLAMA_8B, gpu, base), inference_memory(LLAMA_8B, gpu, lora)
    adapters = 8 * 16 * 81_920 * 32 * 2
    assert with_lora.breakdown.get("adapter") == adapters and plain.breakdown.get("adapter") == 0
    assert plain.capacity.kv_budget_bytes - with_lora.capacity.kv_budget_bytes == pytest.approx(adapters)


def test_a_decode_step_reads_each_distinct_adapter_of_its_batch() -> None:
    s = InferSetup(engine="vllm", prompt_len=512, output_len=128, lora_adapters=4, lora_rank=16)
    one = served_adapter_bytes(LLAMA_8B, 1, 16)
    assert lora_step_bytes(LLAMA_8B, s, 1) == pytest.approx(one)  # one sequence: its adapter
    # 2 sequences over 4 adapters: 4 × (1 − (3/4)²) = 1.75 distinct on average
    assert lora_step_bytes(LLAMA_8B, s, 2) == pytest.approx(1.75 * one)
    assert lora_step_bytes(LLAMA_8B, s, 10_000) == pytest.approx(4 * one)  # never more than are resident
    gpu, cal = load_catalog().gpus["A100-80GB"], fitted()
    steps = [decode_step_seconds(LLAMA_8B, gpu, replace(s, lora_adapters=n), 32, 576, cal)[0] for n in (0, 1, 8, 32)]
    assert steps == sorted(steps) and steps[0] < steps[-1]


def _plan(adapters: int, **kw: Any) -> Any:
    cat = load_catalog()
    r = serve_request(5.0, None, parse_buckets((), 100, 500), Targets(tpot_p99_s=0.04), 99.9, adapters=adapters, **kw)
    return plan_serving(cat, cat.model("Qwen2.5-7B"), r)


def test_capacity_is_recomputed_and_never_grows_with_adapters() -> None:
    plans = [_plan(n) for n in (0, 64, 512)]
    by_config = [{(c.gpu, c.tp): c.capacity_per_s[0] for c in p.configs} for p in plans]
    for fewer, more in itertools.pairwise(by_config):
        for key in fewer.keys() & more.keys():
            assert more[key] <= fewer[key] + 1e-9, key
    assert by_config[1][("H100", 1)] < by_config[0][("H100", 1)]
    # 512 adapters of 7B at rank 16 are ~41 GB: a 48 GB L40S no longer holds them with the weights
    assert ("L40S", 1) in by_config[0] and ("L40S", 1) not in by_config[2]
    assert plans[2].fleet is not None and plans[2].fleet.cost_per_hour >= plans[0].fleet.cost_per_hour
    assert any(a["name"] == "multi-LoRA" and "Punica" in a["source"] for a in plans[1].assumptions)


def test_vllm_reserves_the_next_rank_it_accepts() -> None:
    r = ServeRequest(1.0, adapters=8, adapter_rank=20)
    assert reserved_lora(r) == (8, 32)  # vLLM's --max-lora-rank choices: 1, 8, 16, 32, 64, ...
    assert reserved_lora(replace(r, engine="sglang")) == (8, 20)


def test_the_server_commands_carry_the_lora_flags() -> None:
    g = ServeGroup(model="Qwen/Qwen2.5-7B", gpu="H100", engine="vllm", lora_adapters=8, lora_rank=32)
    cmd = vllm_command(g)
    assert "--enable-lora" in cmd and cmd[cmd.index("--max-loras") + 1] == "8"
    assert cmd[cmd.index("--max-lora-rank") + 1] == "32"
    _check_argv("vllm", cmd[3:])
    s = sglang_command(replace(g, engine="sglang"))
    assert s[s.index("--max-loras-per-batch") + 1] == "8" and s[s.index("--max-lora-rank") + 1] == "32"
    _check_argv("sglang", s[3:])


def test_the_fleet_export_carries_the_adapters(cli: Cli) -> None:
    r = cli("plan", "serve", "Qwen2.5-7B", "--rps", "5", "--adapters", "8", "--adapter-rank", "20", "--export",
            "vllm", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    for argv in data["export"]["document"]:
        assert argv[argv.index("--max-loras") + 1] == "8" and argv[argv.index("--max-lora-rank") + 1] == "32"
    assert "--lora-modules NAME=PATH" in data["export"]["text"]
    assert data["request"]["adapters"] == 8 and data["fleet"]["groups"][0]["lora_rank"] == 32


@pytest.mark.parametrize(("kw", "field"), [
    ({"adapters": -1}, "--adapters"),
    ({"adapters": 4, "adapter_rank": 1000}, "--adapter-rank"),
    ({"adapters": 4, "engine": "trtllm"}, "--adapters"),
])
def test_bad_adapter_requests_are_refused(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        ServeRequest(1.0, **kw)
    assert err.value.field == field and err.value.fix


def test_adapters_on_a_mixture_of_experts_model_are_refused() -> None:
    cat = load_catalog()
    moe = next(m for m in (cat.model(n) for n in cat.models) if m.is_moe)
    with pytest.raises(InputError, match="mixture-of-experts") as err:
        plan_serving(cat, moe, ServeRequest(1.0, adapters=2))
    assert err.value.field == "--adapters"
