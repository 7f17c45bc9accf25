"""SGLang before 0.4.6 prefills an MLA model (DeepSeek-V2/V3/R1) against the cached latent (weight absorption)
whenever a pass holds a cached prefix, which its radix cache makes nearly every pass: the attention then costs
3.4 times the decompressed heads' FLOPs, and long prompts take longer to prefill."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.engines import prefills_mla_in_latent, with_engine_defaults
from gpuplan.estimate.flops import attention_flops_per_token, latent_attention_flops_per_token
from gpuplan.estimate.infer_speed import prefill_seconds
from gpuplan.types import Engine, InferSetup


def test_latent_attention_of_deepseek_v3_at_1600_positions(catalog: Catalog) -> None:
    # DeepSeek-V3 config.json: 128 heads, 61 layers, qk_nope 128 + qk_rope 64 = 192, v_head_dim 128, kv_lora_rank
    # 512. Decompressed: 2 x 128 x (192 + 128) x 61 x 1,600 = 7.995 GFLOP per token. Against the latent each head's
    # query is 512 + 64 wide and its output 512: 2 x 128 x (576 + 512) x 61 x 1,600 = 27.18 GFLOP, 3.4 times
    m = catalog.model("DeepSeek-V3")
    assert attention_flops_per_token(m, 1600) == pytest.approx(7.995e9, rel=1e-3)
    assert latent_attention_flops_per_token(m, 1600) == pytest.approx(27.18e9, rel=1e-3)


def test_a_model_without_mla_attends_the_same_either_way(catalog: Catalog) -> None:
    m = catalog.model("Llama-3.1-8B")
    assert latent_attention_flops_per_token(m, 2048) == attention_flops_per_token(m, 2048)


@pytest.mark.parametrize(("engine", "version", "model", "latent"), [
    # deepseek_v2.py DeepseekV2AttentionMLA.forward: only forward_absorb (0.4.0 wheel)
    (Engine.SGLANG, "0.4.0", "DeepSeek-V3", True),
    # forward_normal only for a batch whose extend_prefix_lens sum to 0 (0.4.3.post2 wheel)
    (Engine.SGLANG, "0.4.3.post2", "DeepSeek-R1", True),
    # dispatch_attn_forward_method: FA3 decompresses (MHA_CHUNKED_KV) on Hopper; not modelled (0.4.6.post2 wheel)
    (Engine.SGLANG, "0.4.6.post2", "DeepSeek-R1", False),
    (Engine.SGLANG, "", "DeepSeek-R1", False),  # the current release
    # vLLM 0.7's MLA prefill decompresses (attention/backends/mla/utils.py _forward_prefill, flash-attn varlen)
    (Engine.VLLM, "0.7.3", "DeepSeek-R1", False),
    (Engine.SGLANG, "0.4.3.post2", "Llama-3.1-8B", False),  # no latent to attend against
])
def test_which_setups_prefill_in_latent(catalog: Catalog, engine: Engine, version: str, model: str,
                                        latent: bool) -> None:
    s = InferSetup(engine=engine, weight_format="fp8", tp=8, engine_version=version)
    assert prefills_mla_in_latent(catalog.model(model), s) is latent


def _prefill(catalog: Catalog, version: str, prompt: int) -> float:
    # without its FP8 blocks, so that the releases differ only in their attention (SGLang before 0.4.4 also runs
    # block-FP8 experts at the Triton fused-MoE kernel's rate: tests/test_triton_block_fp8_moe.py)
    m, gpu = replace(catalog.model("DeepSeek-R1"), weight_block=None), catalog.gpu("H200")
    s = InferSetup(engine=Engine.SGLANG, weight_format="fp8", tp=8, prompt_len=prompt, output_len=1,
                   engine_version=version)
    return prefill_seconds(m, gpu, with_engine_defaults(s, gpu), prompt, fitted())


def test_latent_prefill_slows_long_prompts_not_short_ones(catalog: Catalog) -> None:
    # one prompt on 8 H200 at TP 8; 0.4.3.post2 and 0.4.6.post2 pick the same 8,192-token chunk there. At 8,192
    # tokens each attends to 4,096 positions on average: 20.5 GFLOP per token decompressed, 69.6 in the latent,
    # 8,192 x 49.1 G = 0.40 PFLOP more at the 16-bit attention rate, about a third of the decompressed pass; at 256
    # tokens the attention is a sliver of a pass bound by reading the weights
    assert 1.15 < _prefill(catalog, "0.4.3.post2", 8192) / _prefill(catalog, "0.4.6.post2", 8192) < 1.8
    assert _prefill(catalog, "0.4.3.post2", 256) / _prefill(catalog, "0.4.6.post2", 256) < 1.01
