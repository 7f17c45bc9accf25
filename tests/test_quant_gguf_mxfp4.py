"""llama.cpp's MXFP4_MOE file type (gguf-mxfp4_moe), the GGUF gpt-oss runs as in llama.cpp, Ollama and LM Studio:
its routed experts in MXFP4, every other matrix in Q8_0 (src/llama-quant.cpp, llama_tensor_get_type)."""

from __future__ import annotations

import pytest

from gpuplan import api
from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import InfeasibleError
from gpuplan.estimate.infer_speed import decode_weight_bytes, expert_fraction_touched
from gpuplan.estimate.memory import gguf_expert_bytes, gguf_weights_bytes
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import weight_format
from gpuplan.types import InferSetup
from gpuplan.units import GiB

MXFP4_MOE = "gguf-mxfp4_moe"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


# the files' tensor bytes as llama.cpp reports them: llama-bench 'gpt-oss 20B MXFP4 MoE | 11.27 GiB | 20.91 B'
# (ggml-org/llama.cpp PR #16991); LM Studio's gpt-oss-120b-MXFP4 load log, file type 38, 'file size = 59.02 GiB'
# (ggml-org/llama.cpp issue #15253)
@pytest.mark.parametrize(("model", "file_gib"), [("gpt-oss-20b", 11.27), ("gpt-oss-120b", 59.02)])
def test_a_gpt_oss_mxfp4_gguf_is_the_size_llama_cpp_reports(catalog: Catalog, model: str, file_gib: float) -> None:
    size = gguf_weights_bytes(catalog.model(model), weight_format(MXFP4_MOE)) / GiB
    assert size == pytest.approx(file_gib, rel=0.01)


def test_the_experts_are_mxfp4_and_every_other_matrix_q8_0(catalog: Catalog) -> None:
    # ggml block_mxfp4: 17 bytes per 32 weights; the rest as a Q8_0 file types it (no use_more_bits, no 8-expert
    # rule: the MXFP4_MOE branch comes first)
    m = catalog.model("gpt-oss-20b")
    mxfp4, q8 = weight_format(MXFP4_MOE), weight_format("gguf-q8_0")
    experts = count_params(m).experts
    assert gguf_expert_bytes(m, mxfp4) == pytest.approx(experts * 17 / 32)
    assert gguf_weights_bytes(m, mxfp4) - gguf_expert_bytes(m, mxfp4) == pytest.approx(
        gguf_weights_bytes(m, q8) - gguf_expert_bytes(m, q8))


def test_a_model_without_routed_experts_quantized_to_mxfp4_moe_is_q8_0_throughout(catalog: Catalog) -> None:
    # llama-quantize MXFP4_MOE gives MXFP4 only to 3-D tensors (ne[2] > 1); a dense model has none
    m = catalog.model("Llama-3.1-8B")
    assert gguf_weights_bytes(m, weight_format(MXFP4_MOE)) == gguf_weights_bytes(m, weight_format("gguf-q8_0"))
    e = api.estimate("Llama-3.1-8B", "RTX4090", "infer", engine="llamacpp", quant="MXFP4_MOE", prompt=512,
                     output=128)
    assert e.setup.weight_format == MXFP4_MOE and e.fits


@pytest.mark.parametrize("typed", ["MXFP4_MOE", "mxfp4_moe", "mxfp4-moe", "gguf-mxfp4_moe", "gpt-oss-20b-mxfp4.gguf",
                                   "gpt-oss-120b-MXFP4-00001-of-00002.gguf", "Qwen3-30B-A3B-MXFP4_MOE.gguf"])
def test_the_names_of_the_mxfp4_moe_file_type_resolve(typed: str) -> None:
    assert weight_format(typed).name == MXFP4_MOE


def test_mxfp4_alone_stays_the_checkpoints_format() -> None:
    # the safetensors format (experts MXFP4, the rest BF16) that vLLM and transformers load
    assert weight_format("mxfp4").name == "mxfp4"


@pytest.mark.parametrize("engine", ["llamacpp", "ollama", "LM Studio"])
def test_gpt_oss_under_llama_cpp_or_its_runners_is_its_mxfp4_gguf_and_fits_a_24_gb_card(engine: str) -> None:
    e = api.estimate("gpt-oss-20b", "RTX4090", "infer", engine=engine)
    assert e.setup.weight_format == MXFP4_MOE and e.fits


def test_ollamas_defaults_name_the_file_its_library_serves_for_the_model() -> None:
    # Ollama's library serves gpt-oss as its MXFP4 file and a dense model as Q4_K_M: the stated default says which
    def library(model: str) -> str:
        e = api.estimate(model, "RTX4090", "infer", engine="ollama").as_dict()
        return next(a["value"] for a in e["memory"]["assumptions"] if a["name"] == "runner defaults")
    assert library("gpt-oss-20b").endswith(f"library quantization {MXFP4_MOE}")
    assert library("Llama-3.1-8B").endswith("library quantization gguf-q4_k_m")


def test_an_mxfp4_checkpoint_under_vllm_keeps_its_format() -> None:
    assert api.estimate("gpt-oss-20b", "H100", "infer", engine="vllm").setup.weight_format == "mxfp4"


def test_quant_mxfp4_under_llama_cpp_is_refused_naming_the_gguf_type() -> None:
    with pytest.raises(InfeasibleError) as err:
        api.estimate("gpt-oss-20b", "RTX4090", "infer", engine="llamacpp", quant="mxfp4")
    assert err.value.field == "--quant" and "--quant MXFP4_MOE" in err.value.fix


def test_decode_leaves_the_unchosen_experts_unread_at_mxfp4s_bytes(catalog: Catalog) -> None:
    # gpt-oss-120b: 4 of 128 experts a token; the step reads the file less its token table less the experts no
    # token chose, each at 17 bytes per 32 weights
    m = catalog.model("gpt-oss-120b")
    fmt = weight_format(MXFP4_MOE)
    s = InferSetup(engine="llamacpp", weight_format=MXFP4_MOE)
    unread = count_params(m).experts * 17 / 32 * (1 - expert_fraction_touched(m, 1))
    assert decode_weight_bytes(m, fmt, s, 1) == pytest.approx(
        gguf_weights_bytes(m, fmt, input_table=False) - unread)
    assert decode_weight_bytes(m, fmt, s, 1) < 0.07 * gguf_weights_bytes(m, fmt, input_table=False)
