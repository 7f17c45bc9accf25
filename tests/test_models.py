"""Model presets and the config.json reader: exact parameter counts, native key names, clear errors."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from conftest import MODEL_INDEX, PRESET_NAMES, TESTS_DATA, read_csv, run_cli

from gpuplan.catalog import BUNDLED_DIR, Catalog, load_catalog
from gpuplan.catalog.hfconfig import parse_config, read_config_file
from gpuplan.catalog.models import base_names, find_preset, hub_repo
from gpuplan.errors import CatalogError, InputError, ModelConfigError, OfflineError, UnknownNameError
from gpuplan.estimate.memory import kv_cache_bytes
from gpuplan.estimate.params import count_params

# ---------------------------------------------------------------- every preset parses


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_preset_parses(catalog: Catalog, name: str) -> None:
    spec = catalog.model(name)
    params = count_params(spec)
    assert spec.name == name
    assert params.total > 0 and 0 < params.active <= params.total
    assert spec.n_heads % spec.n_kv_heads == 0


# ---------------------------------------------------------------- exact counts against transformers

# tests/data/param_counts.csv: sum(p.numel() for p in model.parameters()) of the transformers class built from
# each preset's config.json on the meta device (tied weights once); columns give the class and versions.
PARAM_COUNTS = [row for row in read_csv(TESTS_DATA / "param_counts.csv") if row["n_params"]]


@pytest.mark.parametrize("row", PARAM_COUNTS, ids=[row["name"] for row in PARAM_COUNTS])
def test_param_count_equals_transformers_numel(catalog: Catalog, row: dict[str, str]) -> None:
    assert count_params(catalog.model(row["name"])).total == int(row["n_params"]), row["model_class"]


def test_param_count_table_covers_every_preset_transformers_can_build() -> None:
    covered = {row["name"] for row in read_csv(TESTS_DATA / "param_counts.csv")}
    assert set(PRESET_NAMES) <= covered


# ---------------------------------------------------------------- remote-code presets: published counts

INDEX_PUBLISHED = {row["name"]: float(row["published_params"]) for row in MODEL_INDEX if row["published_params"]}

# Remote-code models (modeling file in the model repo): transformers cannot build them, so the formula count is
# checked against the count the authors publish or a loaded checkpoint prints. (preset, count, tolerance, source)
REMOTE_CODE_COUNTS = [
    ("ChatGLM-6B", INDEX_PUBLISHED["ChatGLM-6B"], 0.02, "models/index.csv published_params: 6.2B (THUDM)"),
    ("ChatGLM2-6B", 6_243_584_000, 0.02,
     "PEFT print_trainable_parameters on THUDM/chatglm2-6b: 'all params: 6243584000' "
     "(public file, repository not identified)"),
    ("ChatGLM3-6B", 6_243_584_000, 0.02,
     "model.num_parameters() of THUDM/chatglm3-6b ChatGLMForConditionalGeneration "
     "(public file, repository not identified)"),
    ("GLM-4-9B-Chat", 9_399_951_360, 0.02,
     "glm-4-9b-chat ChatGLMForConditionalGeneration parameter summary: 9399951360 "
     "(public file, repository not identified)"),
    ("GLM-130B", INDEX_PUBLISHED["GLM-130B"], 0.02, "models/index.csv published_params: 130B (Zeng et al. 2022)"),
    ("Baichuan2-7B", 7.51e9, 0.02,
     "Baichuan2-7B 7.51B in a published comparison table (public file, repository not identified); "
     "the Baichuan 2 report rounds it to 7B"),
    ("Baichuan2-13B", 13_896_668_160, 0.0,
     "transformers 5.24 LlamaForCausalLM numel on meta with Baichuan2-13B's shapes (vocab 125696, 40 layers, hidden "
     "5120, MLP 13696, untied): W_pack is q, k and v in one matrix and ALiBi has no weights; the report rounds to 13B"),
    ("InternLM2-7B", 7_737_708_544, 0.02,
     "InternLM2 chat banner 'with 7737708544 (7.7B) parameters'; checkpoint element count 7737708544 "
     "(public file, repository not identified)"),
    ("Qwen-7B", 7_721_324_544, 0.02,
     "Qwen-7B-Chat GGUF metadata: 7,721,324,544 params (public file, repository not identified)"),
    ("Qwen-14B", 14e9, 0.02, "Qwen README model table: 14B (QwenLM/Qwen; public file, repository not identified)"),
    ("Qwen-72B", 72_287_920_128, 0.02, "Qwen-72B: 72,287,920,128 parameters (public file, repository not identified)"),
    ("Kimi-K2", 1.0e12, 0.03, "MoonshotAI/Kimi-K2 README: '1 trillion total parameters' (rounded; the DeepseekV3 "
     "class built from its config counts 1,026,408,209,408)"),
    ("Qwen-1.8B", 1.8e9, 0.028, "Qwen-1_8B model card: '1.8B' only, rounded to 0.1B, so ±2.8 % is the rounding "
     "itself (huggingface.co/Qwen/Qwen-1_8B)"),
]


@pytest.mark.parametrize(("name", "published", "tolerance", "source"), REMOTE_CODE_COUNTS,
                         ids=[r[0] for r in REMOTE_CODE_COUNTS])
def test_remote_code_preset_matches_published_count(catalog: Catalog, name: str, published: float,
                                                    tolerance: float, source: str) -> None:
    assert count_params(catalog.model(name)).total == pytest.approx(published, rel=tolerance), source


def test_every_remote_code_preset_has_a_published_reference() -> None:
    remote = {row["name"] for row in MODEL_INDEX if row["remote_code"] == "yes"}
    assert remote <= {r[0] for r in REMOTE_CODE_COUNTS}


@pytest.mark.parametrize("name", sorted(row["name"] for row in MODEL_INDEX if row["remote_code"] == "yes"))
def test_a_preset_the_index_marks_as_remote_code_is_served_with_its_code(catalog: Catalog, name: str) -> None:
    # Baichuan2-7B's and InternLM2-7B's stored configs are copies without the Hub file's auto_map: the index row
    # says what the copy lost, so the exports still pass --trust-remote-code
    assert catalog.model(name).remote_code


def test_the_export_of_a_remote_code_preset_whose_copy_lacks_auto_map_trusts_its_code() -> None:
    raw = json.loads((BUNDLED_DIR / "models" / "Baichuan2-7B.json").read_text(encoding="utf-8"))
    assert "auto_map" not in raw  # the case: the config copy alone would not say it
    out = run_cli("plan", "serve", "Baichuan2-7B", "--rps", "1", "--export", "vllm", "--json")
    assert out.returncode == 0, out.stderr
    argvs = json.loads(out.stdout)["export"]["document"]
    assert argvs and all("--trust-remote-code" in a for a in argvs), argvs


@pytest.mark.parametrize(("name", "published"), sorted(INDEX_PUBLISHED.items()), ids=sorted(INDEX_PUBLISHED))
def test_index_published_params_within_2_percent(catalog: Catalog, name: str, published: float) -> None:
    # models/index.csv published_params: the authors' (mostly rounded) size, with its source in the row
    assert count_params(catalog.model(name)).total == pytest.approx(published, rel=0.02)


# Counts read from released checkpoints (safetensors metadata) for presets whose config came from a copy.
CHECKPOINT_COUNTS = [
    ("Qwen1.5-7B", 7_721_324_544, "Qwen/Qwen1.5-7B safetensors metadata (public file, repository not identified)"),
    ("Qwen1.5-1.8B", 1_836_828_672, "Qwen/Qwen1.5-1.8B safetensors metadata, untied embeddings "
     "(a Qwen1.5-1.8B-Chat LoRA log prints the same)"),
]


@pytest.mark.parametrize(("name", "n_params", "source"), CHECKPOINT_COUNTS, ids=[r[0] for r in CHECKPOINT_COUNTS])
def test_preset_matches_released_checkpoint(catalog: Catalog, name: str, n_params: int, source: str) -> None:
    assert count_params(catalog.model(name)).total == n_params, source


# ---------------------------------------------------------------- live: transformers on the meta device

def _transformers_classes() -> list[tuple[str, str]]:
    """(preset, transformers class) for every preset whose class ships in transformers."""
    with (Path(__file__).parent / "data" / "param_counts.csv").open(encoding="utf-8") as f:
        return [(r["name"], r["model_class"]) for r in csv.DictReader(f) if r["model_class"]]


@pytest.mark.parametrize(("name", "model_class"), _transformers_classes(), ids=[n for n, _ in _transformers_classes()])
def test_live_transformers_numel(catalog: Catalog, name: str, model_class: str) -> None:
    """Every preset with a transformers class: the exact count of that class built on the meta device."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = json.loads(Path(catalog.models[name].path).read_text(encoding="utf-8"))
    if "text_config" in cfg:  # multimodal wrapper (Gemma 3): gpuplan counts the text model
        cfg = cfg["text_config"]
    config = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device("meta"):  # shapes only: no memory, no weights
        model = getattr(transformers, model_class)(config)
    numel = sum(p.numel() for p in model.parameters())  # shared (tied) parameters are yielded once
    assert count_params(catalog.model(name)).total == numel, model_class


def test_llama_guard_4_with_its_vision_encoder_is_the_cards_12b(catalog: Catalog) -> None:
    """The Llama Guard 4 preset is derived (Scout pruned to its shared expert, Scout's vision encoder), so it is held
    to the model card's '12 billion parameters in total': transformers' whole Llama4ForConditionalGeneration built
    from it counts 12,001,097,216. A dense layer as wide as Scout's dense MLPs (16384) would make it 18.0B."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = json.loads(Path(catalog.models["Llama-Guard-4-12B"].path).read_text(encoding="utf-8"))
    cfg.pop("architectures")
    config = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device("meta"):
        model = transformers.Llama4ForConditionalGeneration(config)
    total = sum(p.numel() for p in model.parameters())
    assert total == pytest.approx(12e9, rel=0.01)  # PurpleLlama Llama-Guard4/12B/MODEL_CARD.md
    text = sum(p.numel() for n, p in model.named_parameters() if "vision" not in n and "multi_modal" not in n)
    assert count_params(catalog.model("Llama-Guard-4-12B")).total == text  # gpuplan sizes the text model only


DENSE_LLAMA4 = {  # a dense Llama 4 text config, Llama Guard 4's shape with 2 layers
    "model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 8192,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 2,
    "vocab_size": 202048, "num_local_experts": 0, "interleave_moe_layer_step": 0, "max_position_embeddings": 131072,
}


@pytest.mark.parametrize("config", [
    DENSE_LLAMA4,  # as the hub file gives it (vLLM and SGLang read step 0 as no MoE layer)
    {**DENSE_LLAMA4, "moe_layers": []},  # as transformers needs it
    {**DENSE_LLAMA4, "interleave_moe_layer_step": 1, "num_local_experts": 1, "moe_layers": []},
], ids=["step-0", "step-0-moe-layers-empty", "moe-layers-empty"])
def test_a_llama4_without_moe_layers_is_dense(config: dict[str, object]) -> None:
    spec = parse_config(config, "dense-llama4")
    assert not spec.is_moe and spec.ffn_hidden == 8192
    # 2 x 202048 x 5120 + 2 layers x (62,914,560 attention + 3 x 5120 x 8192 MLP + 10,240 norms) + 5120
    assert count_params(spec).total == 2_068_971_520 + 2 * 188_753_920 + 5120


def test_a_llama4_without_no_rope_layers_chunks_three_layers_in_four() -> None:
    # transformers' Llama4TextConfig fills a missing no_rope_layers with every 4th layer global (NoPE), the others
    # RoPE layers that attend within attention_chunk_size (configuration_llama4.py @b17cfe48 default_no_rope_layers)
    spec = parse_config({**DENSE_LLAMA4, "num_hidden_layers": 8, "attention_chunk_size": 8192}, "chunked-llama4")
    assert (spec.n_sliding_layers, spec.n_full_attention_layers, spec.sliding_window) == (6, 2, 8192)
    listed = parse_config({**DENSE_LLAMA4, "num_hidden_layers": 8, "attention_chunk_size": 8192,
                           "no_rope_layers": [1, 0, 1, 0, 1, 0, 1, 0]}, "listed")
    assert listed.n_sliding_layers == 4  # a listed pattern is kept as given


def test_maverick_caches_a_20k_prompt_in_chunks(catalog: Catalog) -> None:
    # Maverick's 48 layers: 12 global ones keep all 20,000 tokens, 36 chunked ones at most one 8,192-token chunk,
    # so its cache holds (12 x 20,000 + 36 x 8,192) / (48 x 20,000) = 55.7 % of an all-global cache's bytes
    m = catalog.model("Llama-4-Maverick-17B-128E")
    per_token_all_layers = 48 * 8 * 128 * 2 * 2  # bf16 keys and values, 8 KV heads of 128
    assert kv_cache_bytes(m, 1, 20_000, "bf16") / (20_000 * per_token_all_layers) == pytest.approx(0.557, abs=0.002)


@pytest.mark.parametrize(("config", "words"), [
    ({**DENSE_LLAMA4, "moe_layers": [1]}, "interleave_moe_layer_step is 0 (no MoE layer) but moe_layers lists"),
    ({**DENSE_LLAMA4, "num_local_experts": 16, "moe_layers": []}, "num_local_experts = 16"),
    # 0 experts is a dense Llama 4's declaration only, not a size other configs may give
    ({"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000, "num_local_experts": 0,
      "num_experts_per_tok": 2}, "num_local_experts is 0"),
], ids=["step-0-with-moe-layers", "experts-in-a-dense-llama4", "zero-experts-elsewhere"])
def test_a_contradictory_llama4_is_refused_naming_the_field(config: dict[str, object], words: str) -> None:
    with pytest.raises(ModelConfigError, match=re.escape(words)) as info:
        parse_config(config, "x")
    assert info.value.fix


# ---------------------------------------------------------------- native key names are read


def test_chatglm_native_keys() -> None:
    # THUDM/chatglm2-6b config.json names (num_layers, multi_query_group_num, padded_vocab_size, kv_channels)
    spec = parse_config({
        "model_type": "chatglm", "num_layers": 28, "hidden_size": 4096, "num_attention_heads": 32,
        "multi_query_attention": True, "multi_query_group_num": 2, "kv_channels": 128, "ffn_hidden_size": 13696,
        "padded_vocab_size": 65024, "seq_length": 32768, "add_qkv_bias": True, "rmsnorm": True,
    }, "glm")
    assert (spec.n_layers, spec.n_kv_heads, spec.vocab, spec.head_dim) == (28, 2, 65024, 128)
    assert (spec.ffn_hidden, spec.max_positions, spec.qkv_bias, spec.norm_bias) == (13696, 32768, True, False)


def test_falcon_native_keys() -> None:
    # tiiuae/falcon-40b: new_decoder_architecture with num_kv_heads (GQA groups), parallel attention
    spec = parse_config({
        "model_type": "falcon", "hidden_size": 8192, "num_attention_heads": 128, "num_hidden_layers": 60,
        "num_kv_heads": 8, "new_decoder_architecture": True, "parallel_attn": True, "bias": False,
        "vocab_size": 65024,
    }, "falcon")
    assert (spec.n_kv_heads, spec.n_layers, spec.parallel_attn, spec.norms_per_layer) == (8, 60, True, 2)


def test_falcon_multi_query_without_new_architecture() -> None:
    # tiiuae/falcon-7b: multi_query=true means one KV head
    spec = parse_config({"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71,
                         "num_hidden_layers": 32, "multi_query": True, "vocab_size": 65024}, "f7")
    assert spec.n_kv_heads == 1


def test_mpt_native_keys() -> None:
    # mosaicml/mpt-7b: d_model, n_heads, n_layers, expansion_ratio, max_seq_len
    spec = parse_config({"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
                         "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432,
                         "attn_config": {"alibi": True}}, "mpt")
    assert (spec.hidden, spec.n_heads, spec.n_layers, spec.ffn_hidden) == (4096, 32, 32, 16384)
    assert (spec.max_positions, spec.positional) == (2048, "alibi")


@pytest.mark.parametrize(("name", "native_key", "field", "value"), [
    ("ChatGLM2-6B", "multi_query_group_num", "n_kv_heads", 2),
    ("ChatGLM3-6B", "padded_vocab_size", "vocab", 65024),
    ("GLM-4-9B-Chat", "num_layers", "n_layers", 40),
    ("Falcon-40B", "num_kv_heads", "n_kv_heads", 8),
    ("MPT-7B", "d_model", "hidden", 4096),
])
def test_presets_keep_native_keys(catalog: Catalog, name: str, native_key: str, field: str, value: int) -> None:
    raw = json.loads(Path(catalog.models[name].path).read_text(encoding="utf-8"))
    assert raw[native_key] == value  # the preset file is the model's own config.json, keys unchanged
    assert getattr(catalog.model(name), field) == value


# group-limited routing: a token's top-k experts come from topk_group of the n_group expert groups
@pytest.mark.parametrize(("name", "groups", "source"), [
    # no n_group / topk_group in the preset's config.json: transformers' DeepseekV3Config defaults 8 and 4, the values
    # of the published config (DeepSeek-V3 Technical Report sec. 2.1.2: each token reaches at most 4 nodes)
    ("DeepSeek-V3", (8, 4), "DeepseekV3Config defaults"),
    ("DeepSeek-R1", (8, 4), "DeepseekV3Config defaults"),
    ("DeepSeek-V3.1", (8, 4), "config.json n_group 8, topk_group 4"),
    ("DeepSeek-V2", (8, 3), "topk_method group_limited_greedy; DeepSeek-V2 paper sec. 2.1.3, M = 3"),
    ("DeepSeek-V2-Lite", (1, 1), "topk_method greedy"),
    ("Kimi-K2", (1, 1), "config.json n_group 1"),
    ("GLM-4.5", (1, 1), "config.json n_group 1"),
    ("Qwen3-30B-A3B", (1, 1), "a softmax top-k over all experts"),
])
def test_expert_groups_follow_the_router(catalog: Catalog, name: str, groups: tuple[int, int], source: str) -> None:
    spec = catalog.model(name)
    assert (spec.n_expert_groups, spec.n_routed_groups) == groups, source


def test_a_deepseek_v2_router_without_topk_method_is_greedy() -> None:
    # transformers DeepseekV2Moe's default topk_method "greedy" takes top-k over all experts, groups or not
    config = json.loads((BUNDLED_DIR / "models" / "DeepSeek-V2.json").read_text(encoding="utf-8"))
    del config["topk_method"]
    assert not parse_config(config, "v2-greedy").is_group_limited


def test_groups_that_cannot_hold_a_tokens_experts_are_refused() -> None:
    config = json.loads((BUNDLED_DIR / "models" / "DeepSeek-V3.1.json").read_text(encoding="utf-8"))
    with pytest.raises(ModelConfigError, match="top-8 experts do not fit in the 1 chosen expert groups of 4"):
        parse_config({**config, "n_group": 64, "topk_group": 1}, "tiny-groups")
    with pytest.raises(ModelConfigError, match="do not split into 7 groups"):
        parse_config({**config, "n_group": 7}, "uneven-groups")


# ---------------------------------------------------------------- malformed config.json

LLAMA = {  # Llama-2-7B's shape
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
}


@pytest.mark.parametrize(("config", "words"), [
    ({"model_type": "t5", "d_model": 512, "num_layers": 6}, "encoder-decoder"),
    ({"model_type": "mamba", "hidden_size": 768, "num_hidden_layers": 24}, "state-space"),
    ({"model_type": "gpt_bigcode_x", "n_embd": 768}, "does not know"),
    ({**LLAMA, "num_attention_heads": 0}, "zero attention heads"),
    # an unknown type is refused even when Llama-shaped: Kimi-K2 (1.03 T) used to come out as a 39 B Llama
    ({**LLAMA, "model_type": "kimi_k3", "n_routed_experts": 384}, "field model_type is 'kimi_k3'"),
    ({**LLAMA, "model_type": "olmo9", "auto_map": {"AutoModel": "modeling.X"}}, "does not know"),
    # a known type carrying fields its reader does not model names the field
    ({**LLAMA, "num_local_experts": 8}, "num_local_experts = 8"),
    ({**LLAMA, "kv_lora_rank": 512}, "kv_lora_rank"),
    ({**LLAMA, "model_type": "qwen2", "full_attention_interval": 4}, "full_attention_interval"),
    ({**LLAMA, "layer_types": ["linear_attention", "full_attention"]}, "layer_types holds linear_attention"),
    # a DeepSeek-V3.2 config without the indexer's top-k is incomplete, not a dense-attention V3; Nemotron-H's pattern
    # under another type (a Llama is not a Mamba hybrid), Nemotron NAS (per-layer blocks): refused, and the indexer's
    # field under any other type gpuplan reads (a V3.2 config relabelled deepseek_v3 is not V3)
    ({**LLAMA, "model_type": "deepseek_v32", "kv_lora_rank": 512, "q_lora_rank": 1536, "index_n_heads": 64,
      "index_head_dim": 128}, "lacks the key 'index_topk'"),
    ({**LLAMA, "model_type": "deepseek_v3", "index_n_heads": 64, "index_topk": 2048}, "has index_n_heads"),
    ({**LLAMA, "hybrid_override_pattern": "M-M*-"}, "has hybrid_override_pattern"),
    ({**LLAMA, "block_configs": [{"attention": {"no_op": True}}]}, "has block_configs"),
], ids=["t5", "mamba", "unknown-type", "zero-heads", "unknown-moe-type", "auto-map", "experts-in-dense-reader",
        "latent-in-dense-reader", "linear-attention", "layer-types", "deepseek-v32", "indexer-under-v3",
        "nemotron-h", "nas-blocks"])
def test_models_gpuplan_cannot_size_say_so(tmp_path: Path, config: dict[str, object], words: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelConfigError, match=words) as info:
        read_config_file(path)
    assert info.value.fix


@pytest.mark.parametrize(("text", "words"), [
    ("{not json", "not valid JSON"),
    ("[1, 2, 3]", "not an object"),
    (json.dumps({"model_type": "llama", "hidden_size": 4096}), "lacks the key"),
    (json.dumps({**LLAMA, "num_hidden_layers": 10**7}), "number of layers 10000000 is outside"),
    (json.dumps({**LLAMA, "hidden_size": -1}), "hidden size -1 is outside"),
    (json.dumps({**LLAMA, "num_key_value_heads": 5}), "do not divide"),
    (json.dumps({**LLAMA, "num_hidden_layers": "32"}), "wrong type"),
    (json.dumps({**LLAMA, "padding": "x" * (1024 * 1024 + 1)}), "a config.json is a few KiB"),
], ids=["not-json", "json-array", "missing-keys", "1e7-layers", "negative-hidden", "kv-heads", "string-number",
        "over-1MiB"])
def test_malformed_config_raises_model_config_error(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelConfigError) as info:
        read_config_file(path)
    assert words in str(info.value)
    assert info.value.fix, "the error says what to pass instead"


def test_config_path_through_the_catalog_and_cli(tmp_path: Path, catalog: Catalog) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA), encoding="utf-8")
    assert count_params(catalog.model(str(tmp_path))).total == 6_738_415_616  # Llama-2-7B's shape
    (tmp_path / "config.json").write_text("[]", encoding="utf-8")
    result = run_cli("model", str(tmp_path / "config.json"))
    assert result.returncode == 2 and "error:" in result.stderr and "Traceback" not in result.stderr


def test_hub_id_while_offline_raises_offline_error(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineError) as info:
        catalog.model("some-org/some-model-7b")
    assert "offline" in str(info.value) and "config.json" in info.value.fix


def test_unknown_preset_suggests_close_names(catalog: Catalog) -> None:
    with pytest.raises(UnknownNameError) as info:
        catalog.model("Lama-2-7B")
    assert info.value.suggestions[0] == "Llama-2-7B"
    assert "Did you mean 'Llama-2-7B'" in str(info.value) and "gpuplan models" in str(info.value)


@pytest.mark.parametrize(("typed", "preset"), [
    ("llama-2-7b", "Llama-2-7B"), ("meta-llama/Llama-3.1-8B", "Llama-3.1-8B"), ("qwen2.5_7b", "Qwen2.5-7B"),
])
def test_presets_resolve_by_normalised_name_or_repo(catalog: Catalog, typed: str, preset: str) -> None:
    assert catalog.model(typed) == catalog.model(preset)


# Published variants of a preset: the index's hf_repo, or a models/aliases.csv row with its source.
@pytest.mark.parametrize(("typed", "preset", "why"), [
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama-4-Scout-17B-16E", "index.csv hf_repo"),
    ("Llama-4-Maverick-17B-128E-Instruct", "Llama-4-Maverick-17B-128E", "index.csv hf_repo, owner left out"),
    ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B", "aliases.csv"),
    ("Qwen2.5-72B-Instruct", "Qwen2.5-72B", "aliases.csv, owner left out"),
    ("Llama-2-13B-chat", "Llama-2-13B", "aliases.csv, the name benchmark tables use"),
    ("GLM-4-9B-Chat", "GLM-4-9B-Chat", "a preset whose own name ends in -Chat"),
])
def test_published_variants_resolve_to_their_preset(catalog: Catalog, typed: str, preset: str, why: str) -> None:
    assert find_preset(catalog, typed) is catalog.models[preset], why


# Quantized or re-published copies of a checkpoint resolve to the preset of the checkpoint they were made from; the
# weight format is --quant's, never read from the name. One rule per row, each name as a benchmark table writes it.
@pytest.mark.parametrize(("typed", "preset", "rule"), [
    ("unsloth/Qwen3-8B-GGUF", "Qwen3-8B", "-GGUF dropped, then the re-publisher's owner"),
    ("bartowski/google_gemma-3-12b-it-GGUF", "Gemma-3-12B", "owner_name folded back to google/gemma-3-12b-it"),
    ("bartowski/microsoft_Phi-4-mini-instruct-GGUF", "Phi-4-mini", "folded owner, the preset's own hf_repo"),
    ("bartowski/Qwen2.5-Coder-7B-Instruct-GGUF", "Qwen2.5-7B", "owner dropped, then an aliases.csv row"),
    ("Qwen/Qwen-7B-Chat-AWQ", "Qwen-7B", "-AWQ: AutoAWQ's export of Qwen/Qwen-7B-Chat"),
    ("Qwen/Qwen1.5-7B-Chat-GPTQ-Int4", "Qwen1.5-7B", "-GPTQ-Int4"),
    ("Qwen3-14B-AWQ", "Qwen3-14B", "-AWQ on a preset name"),
    ("Qwen2.5-7B-4bit", "Qwen2.5-7B", "-4bit: an MLX conversion"),
    ("DeepSeek-R1-Distill-Qwen-32B-MLX-4Bit", "Qwen2.5-32B", "-MLX-4Bit in any case"),
    ("zai-org/GLM-4.6-FP8", "GLM-4.6", "-FP8"),
    ("Llama-3.1-8B-Instruct-Q4_K_M.gguf", "Llama-3.1-8B", "a file of a GGUF repository: -Q4_K_M.gguf"),
    ("Llama-3.1-8B-Instruct-UD-Q4_K_XL.gguf", "Llama-3.1-8B", "an unsloth dynamic-quant file"),
    ("Qwen3-32B-Q8_0-00001-of-00002.gguf", "Qwen3-32B", "the first shard of a split GGUF"),
])
def test_a_quantized_copy_resolves_to_its_base_preset(catalog: Catalog, typed: str, preset: str, rule: str) -> None:
    assert find_preset(catalog, typed) is catalog.models[preset], rule
    assert catalog.model(typed).name == preset, rule


# Models that published benchmark rows name (bench/calibration), each as the row or a user writes it.
@pytest.mark.parametrize(("typed", "preset", "why"), [
    ("openai-community/gpt2-xl", "GPT-2-1558M", "index.csv hf_repo: the model of llm.c's gpt2_1558M runs"),
    ("gpt2-large", "GPT-2-774M", "index.csv hf_repo, owner left out"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen3-Coder-30B-A3B", "index.csv hf_repo"),
    ("Qwen3-Coder-30B-A3B-Instruct-4bit", "Qwen3-Coder-30B-A3B", "mac-llm-bench's name of the MLX copy"),
    ("unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF", "Qwen3-Coder-30B-A3B", "a GGUF copy"),
    ("OpenBuddy/openbuddy-zephyr-7b-v14.1", "Mistral-7B", "aliases.csv: ms-swift's benchmark names it"),
    ("baichuan-inc/Baichuan2-13B-Chat", "Baichuan2-13B", "aliases.csv: ms-swift's benchmark names it"),
    ("Baichuan2-13B-Base", "Baichuan2-13B", "index.csv hf_repo, owner left out"),
    ("facebook/opt-1.3b", "OPT-1.3B", "index.csv hf_repo: DeepSpeed-Chat's and FlexGen's OPT runs name these"),
    ("facebook/opt-6.7b", "OPT-6.7B", "index.csv hf_repo"),
    ("facebook/opt-13b", "OPT-13B", "index.csv hf_repo"),
    ("opt-66b", "OPT-66B", "index.csv hf_repo, owner left out"),
    ("codellama/CodeLlama-7b-Instruct-hf", "CodeLlama-7B", "aliases.csv: the instruct copy, vocabulary 32016"),
    ("codellama/CodeLlama-13b-hf", "CodeLlama-13B", "index.csv hf_repo"),
    ("CodeLlama-70b-hf", "CodeLlama-70B", "index.csv hf_repo, owner left out"),
])
def test_benchmark_model_names_resolve_to_their_preset(catalog: Catalog, typed: str, preset: str, why: str) -> None:
    assert catalog.model(typed).name == preset, why


def test_qwen3_coder_30b_keeps_its_own_context_window(catalog: Catalog) -> None:
    # the weights of Qwen3-30B-A3B (one count), but a 262,144-token context where Qwen3-30B-A3B has 40,960: an alias
    # row would have capped a long-context plan at the base model's window
    coder, base = catalog.model("Qwen3-Coder-30B-A3B"), catalog.model("Qwen3-30B-A3B")
    assert count_params(coder).total == count_params(base).total == 30_532_122_624
    assert (coder.max_positions, base.max_positions) == (262_144, 40_960)


def test_baichuan2_13b_attends_with_alibi_where_7b_rotates(catalog: Catalog) -> None:
    # the Baichuan 2 report (and NeMo's Baichuan 2 page): 7B uses RoPE, 13B ALiBi; a 13B sized with RoPE would still
    # count the same weights, but its context window and any positional cost would be the 7B's
    assert catalog.model("baichuan-inc/Baichuan2-13B-Chat").positional == "alibi"
    assert catalog.model("Baichuan2-7B").positional == "rope"
    assert catalog.model("Baichuan2-13B").max_positions == 4096


def test_base_names_are_tried_most_specific_first() -> None:
    assert base_names("bartowski/google_gemma-3-12b-it-GGUF") == [
        "bartowski/google_gemma-3-12b-it-GGUF", "bartowski/google_gemma-3-12b-it", "google/gemma-3-12b-it",
        "google_gemma-3-12b-it"]
    assert base_names("Qwen/Qwen1.5-7B-Chat-GPTQ-Int4") == [
        "Qwen/Qwen1.5-7B-Chat-GPTQ-Int4", "Qwen/Qwen1.5-7B-Chat", "Qwen1.5-7B-Chat"]
    assert base_names("Llama-2-7B") == ["Llama-2-7B"]


def test_a_gguf_copy_of_an_unknown_base_is_refused_naming_the_model_field(catalog: Catalog) -> None:
    # Gemma 4 E2B is not a preset (gpuplan does not model its per-layer embeddings), and a GGUF repository has no
    # config.json that the Hub could give
    with pytest.raises(InputError) as info:
        catalog.model("unsloth/gemma-4-E2B-it-GGUF")
    assert info.value.field == "model"
    assert "GGUF copy of 'gemma-4-E2B-it', which is not a model preset" in str(info.value)
    assert "config.json of 'gemma-4-E2B-it'" in info.value.fix


@pytest.mark.parametrize(("typed", "preset"), [
    ("unsloth/Qwen3.5-4B-GGUF", "Qwen3.5-4B"), ("Qwen3.5-4B-4bit", "Qwen3.5-4B"),
    ("unsloth/Qwen3.5-9B-GGUF", "Qwen3.5-9B"), ("Qwen3.5-9B-MLX-4bit", "Qwen3.5-9B"),
])
def test_the_copies_the_calibration_rows_name_resolve_to_their_base(catalog: Catalog, typed: str, preset: str) -> None:
    # llama.cpp and MLX scoreboard rows name these copies; the base preset's shapes are what they run
    assert catalog.model(typed).name == preset


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_model_name_is_refused_naming_the_field(catalog: Catalog, blank: str) -> None:
    # the copy-name rules had no base to read in an empty name and raised IndexError (found by the CLI fuzz test)
    with pytest.raises(InputError) as info:
        catalog.model(blank)
    assert info.value.field == "model" and "empty" in str(info.value)


def test_an_mlx_copy_of_an_unknown_base_is_an_unknown_model(catalog: Catalog) -> None:
    with pytest.raises(UnknownNameError) as info:
        catalog.model("gemma-4-E4B-it-4bit")
    assert info.value.field == "model" and "gpuplan models" in info.value.fix


def test_a_local_config_folder_named_like_a_copy_is_read_not_resolved(catalog: Catalog, tmp_path: Path) -> None:
    folder = tmp_path / "Qwen2.5-7B-AWQ"  # a user's own checkpoint folder: its config.json is the truth
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA), encoding="utf-8")
    spec = catalog.model(str(folder))
    assert spec.name == "Qwen2.5-7B-AWQ" and spec.hidden == 4096  # Llama-2-7B's shape, not Qwen2.5-7B's 3584


def test_an_export_loads_the_copy_the_user_named(catalog: Catalog) -> None:
    assert hub_repo(catalog, "Qwen/Qwen-7B-Chat-AWQ") == "Qwen/Qwen-7B-Chat-AWQ"  # the AWQ weights, not the base
    assert hub_repo(catalog, "Qwen-7B") == "Qwen/Qwen-7B"
    assert hub_repo(catalog, "Qwen2.5-7B-4bit") == "Qwen/Qwen2.5-7B"  # not a Hub id: the base preset's repo


def test_estimate_and_plan_accept_a_gguf_repo_name() -> None:
    est = run_cli("estimate", "bartowski/microsoft_Phi-4-mini-instruct-GGUF", "--gpu", "4090", "--quant",
                  "gguf-q4_k_m", "--engine", "llamacpp", "--json", env={"GPUPLAN_OFFLINE": "1"})
    assert est.returncode == 0, est.stderr
    assert json.loads(est.stdout)["model"] == "Phi-4-mini"
    plan = run_cli("plan", "infer", "unsloth/Qwen3-8B-GGUF", "--quant", "gguf-q4_k_m", "--engine", "llamacpp",
                   "--requests", "100", "--prompt", "512", "--output", "128", "--json", env={"GPUPLAN_OFFLINE": "1"})
    assert plan.returncode == 0, plan.stderr
    assert "Qwen3-8B" in plan.stdout


@pytest.mark.parametrize("typed", ["Llama-3.1-9B-Instruct", "Qwen2.5-7B-Chat", "Mixtral-8x7B-Instruct-v0.3"])
def test_a_suffix_is_never_stripped_to_guess_a_preset(catalog: Catalog, typed: str) -> None:
    # none of these is a preset, a hf_repo or an alias row: refused, naming what to run
    with pytest.raises(UnknownNameError) as info:
        catalog.model(typed)
    assert "gpuplan models" in str(info.value)


def test_an_owner_less_name_shared_by_two_repos_is_refused(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "aliases.csv").write_text(
        "alias,name,source,as_of,notes\nsome-org/Llama-3.1-8B-Instruct,Llama-2-7B,test,2026-01-01,\n",
        encoding="utf-8")
    user = load_catalog([tmp_path])
    assert find_preset(user, "Llama-3.1-8B-Instruct") is None  # two owners: ambiguous
    assert find_preset(user, "some-org/Llama-3.1-8B-Instruct") is user.models["Llama-2-7B"]


@pytest.mark.parametrize(("row", "column", "says"), [
    ("org/x,No-Such-Preset,test,2026-01-01,", "name", "is not a preset"),
    ("Llama-2-7B,Llama-3.1-8B,test,2026-01-01,", "alias", "is the name or Hub repo of preset 'Llama-2-7B'"),
    ("org/x,Llama-2-7B,,2026-01-01,", "source", ""),
])
def test_a_bad_alias_row_is_a_load_error(tmp_path: Path, row: str, column: str, says: str) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "aliases.csv").write_text(f"alias,name,source,as_of,notes\n{row}\n", encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog([tmp_path])
    assert info.value.column == column and says in str(info.value)


def test_every_bundled_alias_names_a_preset_of_another_name(catalog: Catalog) -> None:
    rows = read_csv(BUNDLED_DIR / "models" / "aliases.csv")
    assert rows and all(r["name"] in catalog.models and r["alias"] != r["name"] for r in rows)


@pytest.mark.parametrize(("qc", "native"), [
    ({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}, "fp8"),
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True}, "awq-int4"),
    ({"quant_method": "gptq", "bits": 8, "group_size": 128}, "gptq-int8"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "bf16"),  # quantized at load time, not on disk
], ids=["fp8", "awq", "gptq-8", "bnb"])
def test_pre_quantized_checkpoints_keep_their_format(tmp_path: Path, qc: dict[str, object], native: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA, "torch_dtype": "bfloat16", "quantization_config": qc}), encoding="utf-8")
    assert read_config_file(path).native_dtype == native
