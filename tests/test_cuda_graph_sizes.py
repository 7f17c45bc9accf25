"""Which decode batches vLLM and SGLang replay as CUDA graphs, and what a larger batch costs on the host."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.engines import graph_batches
from gpuplan.estimate.infer_speed import decode_step_seconds, prefill_seconds
from gpuplan.types import InferSetup


def _largest(s: InferSetup, catalog: Catalog, gpu: str) -> int | None:
    graphs = graph_batches(s, catalog.gpu(gpu))
    if graphs is None:
        return None
    # padded engines graph every batch up to the largest captured size
    assert graphs == frozenset(range(1, max(graphs) + 1))
    return max(graphs)


@pytest.mark.parametrize(("engine", "version", "gpu", "tp", "budget", "largest", "source"), [
    # vllm/config.py _set_cudagraph_sizes @0.8.3: [1, 2, 4] + range(8, 513, 8), none above max_num_batched_tokens
    ("vllm", "0.8.3", "H100", 1, 8192, 512, "vLLM 0.8.3 wheel"),
    # vllm/config/scheduler.py @0.11.0: cuda_graph_sizes = [min(2 x max_num_seqs, 512)]; 1,024 sequences -> 512
    ("vllm", "v0.11.0", "H200", 8, 16384, 512, "vLLM 0.11.0 wheel"),
    # a token budget of 256 (--max-num-batched-tokens 256) drops the sizes above it
    ("vllm", "v0.13.0", "H100", 1, 256, 256, "vLLM 0.13.0 vllm/config/vllm.py"),
    # V0 captured the padded max_num_seqs (model_runner.py _get_max_graph_batch_size @0.6.3): no eager decode batch
    ("vllm", "0.6.3", "A100-80GB", 1, None, None, "vLLM 0.6.3 wheel"),
    # server_args.py @0.4.3.post2: cuda_graph_max_bs 160 from 25,000 MiB up, 8 below at TP 1; ROCm adds 168-256
    ("sglang", "0.4.3.post2", "H200", 8, None, 160, "SGLang 0.4.3.post2 wheel"),
    ("sglang", "0.4.3.post2", "RTX4090", 1, None, 8, "SGLang 0.4.3.post2 wheel (24,564 MiB)"),
    ("sglang", "0.4.2.post4", "MI300X", 8, None, 256, "cuda_graph_runner.py @0.4.3.post2: is_hip_"),
    # cuda_graph_runner.py @0.4.6.post2: 160, plus 160-256 on GPUs over 96 GiB
    ("sglang", "0.4.6.post2", "H200", 8, None, 256, "SGLang 0.4.6.post2 wheel"),
    ("sglang", "0.4.6.post2", "H100", 1, None, 160, "SGLang 0.4.6.post2 wheel"),
    # server_args.py @0.5.3 / 0.5.4.post2: by GPU memory and TP
    ("sglang", "v0.5.3", "H100", 1, None, 256, "80 GB: 256 below TP 4"),
    ("sglang", "v0.5.3", "H200", 8, None, 512, "141 GB: 512 from TP 4"),
    ("sglang", "v0.5.4.post2", "B200", 1, None, 512, "over 160 GiB: 512"),
    ("sglang", "v0.5.3", "RTX4090", 1, None, 16, "under 35 GiB: 16 at 0.5.3"),
    ("sglang", "v0.5.4.post2", "RTX4090", 1, None, 24, "under 35 GiB: 24 from 0.5.4"),
    ("sglang", "v0.5.6.post2", "A100", 2, None, 32, "40 GB A100: 32 below TP 4"),
])
def test_capture_sizes_by_engine_and_release(catalog: Catalog, engine: str, version: str, gpu: str, tp: int,
                                             budget: int | None, largest: int | None, source: str) -> None:
    s = InferSetup(engine=engine, engine_version=version, tp=tp, max_batched_tokens=budget)
    assert _largest(s, catalog, gpu) == largest, source


def test_other_platforms_and_flags(catalog: Catalog) -> None:
    # vllm-ascend runs its own model runner: its graph rules are not modelled
    assert graph_batches(InferSetup(engine="vllm", engine_version="v0.9.1"), catalog.gpu("Ascend-910B")) is None
    # --enforce-eager / --disable-cuda-graph: no graph at all, whatever the release
    assert graph_batches(InferSetup(engine="sglang", cuda_graphs=False), catalog.gpu("H100")) == frozenset()


def test_a_decode_step_above_the_largest_graph_waits_on_the_host(catalog: Catalog) -> None:
    # SGLang 0.5.3 on one H100 captures up to 256. Qwen3-32B has 64 dense layers: at 3 ms of host time per layer
    # launched op by op, a step of 257 sequences takes the host's 192 ms, while the GPU's bf16 step (about 65 GB of
    # weights and 21 GB of 318-token contexts, well under 150 ms at the fitted efficiencies) is what a graphed step
    # of 256 costs
    m, g = catalog.model("Qwen3-32B"), catalog.gpu("H100")
    s = InferSetup(engine="sglang", engine_version="v0.5.3", prompt_len=217, output_len=202)
    cal = fitted().with_values(layer_overhead_s_sglang_eager=3e-3)
    at, above = (decode_step_seconds(m, g, s, b, 318, cal)[0] for b in (256, 257))
    assert at < 0.15
    assert above == pytest.approx(0.192, rel=0.02)
    # a per-layer cost too small to outlast the GPU's step changes nothing
    light = fitted().with_values(layer_overhead_s_sglang_eager=1e-5)
    assert decode_step_seconds(m, g, s, 257, 318, light)[0] == pytest.approx(at, rel=0.02)


def test_vllm_v1_above_512_pays_the_host_but_its_prompt_steps_do_not(catalog: Catalog) -> None:
    # vLLM 0.11 on an H200 captures up to 512 sequences; Llama-3.1-8B has 32 layers, so 4 ms per eager layer is a
    # 128 ms host step, far above the GPU's step of 513 short sequences (16 GB of weights, 20 GB of KV cache)
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("H200")
    s = InferSetup(engine="vllm", engine_version="v0.11.0", prompt_len=200, output_len=200)
    # (the host time per running sequence, which vLLM 0.11 adds to every step, set apart)
    cal = fitted().with_values(layer_overhead_s_vllm_eager=4e-3, host_seq_s_vllm=0.0)
    assert decode_step_seconds(m, g, s, 512, 300, cal)[0] < 0.064
    assert decode_step_seconds(m, g, s, 513, 300, cal)[0] == pytest.approx(0.128, rel=0.02)
    # prompt passes keep the fitted per-layer overhead (piecewise graphs by token count; big passes are GPU-bound)
    assert prefill_seconds(m, g, s, 4096, cal) == prefill_seconds(m, g, s, 4096, fitted())


def test_attention_data_parallel_ranks_replay_their_own_share(catalog: Catalog) -> None:
    # SGLang --enable-dp-attention on 8 H200s: cuda_graph_runner.py can_run checks the largest rank's tokens, so
    # 1,024 running sequences are 128 per rank, inside the 512 captured; without DP attention they run op by op
    m, g = catalog.model("Qwen3-32B"), catalog.gpu("H200")
    s = InferSetup(engine="sglang", engine_version="v0.5.3", tp=8, prompt_len=217, output_len=202)
    cal = fitted().with_values(layer_overhead_s_sglang_eager=1e-3)
    dp = replace(s, attention_dp=True)
    assert decode_step_seconds(m, g, dp, 1024, 318, cal)[0] < 0.064
    assert decode_step_seconds(m, g, s, 1024, 318, cal)[0] >= 0.064
