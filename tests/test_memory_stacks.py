"""Training-memory terms that depend on what the stack's modeling code keeps (data/stacks.csv), on LoRA dropout,
on bitsandbytes' saved inputs and on eager attention: hand-computed bytes per token per layer, with the
published measurements they were checked against."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.flops import train_flops_per_token
from gpuplan.estimate.frameworks import framework, stacks, zero_buckets
from gpuplan.estimate.memory import (
    activation_bytes_per_token,
    describe_stack,
    padded_adapter_output_bytes,
    previous_outputs_bytes,
    returned_kv_bytes,
    training_memory,
)
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import weight_format
from gpuplan.export.train import deepspeed_config
from gpuplan.types import FRAMEWORKS, ModelSpec, Parallelism, TrainSetup
from gpuplan.units import GiB

# Llama-2-7B: hidden 4096, 32 query and 32 K/V heads of 128, SwiGLU MLP 11008 wide, vocabulary 32000 (untied)
H, F, V = 4096, 11008, 32000


def test_every_stack_has_its_modeling_row() -> None:
    assert set(stacks()) == set(FRAMEWORKS)


def test_lora_dropout_adds_one_mask_byte_per_adapter_input_in_peft(catalog: Catalog) -> None:
    # PEFT keeps an fp32 copy of each adapted input either way; dropout adds its bool mask: q and v adapters read
    # the 4096-wide normed input, so 2 × 4096 × 1 byte per token per layer
    m = catalog.model("Llama-2-7B")
    plain = TrainSetup(method="lora", lora_targets="qv", framework="hf")
    dropped = replace(plain, lora_dropout=0.05)
    assert activation_bytes_per_token(m, dropped) - activation_bytes_per_token(m, plain) == 2 * H * 1


def test_lora_dropout_in_litgpt_keeps_a_dropped_copy_and_mask_of_the_fused_qkv_input(catalog: Catalog) -> None:
    # LitGPT: one fused QKV module, bf16 adapters. Without dropout the adapter reads the normed input (2 bytes ×
    # 4096, kept); with dropout that input is not kept, the dropped copy (2 bytes) and the mask (1 byte) are
    m = catalog.model("Llama-2-7B")
    plain = TrainSetup(method="lora", lora_targets="qv", framework="pytorch", precision="bf16")
    dropped = replace(plain, lora_dropout=0.05)
    assert activation_bytes_per_token(m, dropped) - activation_bytes_per_token(m, plain) == (2 + 1) * H - 2 * H


def test_bitsandbytes_base_keeps_every_frozen_linear_input(catalog: Catalog) -> None:
    # MatMul4Bit saves its input A: the attention's normed input (4096), the MLP's normed input (4096) and the
    # gated product that feeds down_proj (11008), 2 bytes each; PEFT's q/v adapters read fp32 copies either way
    m = catalog.model("Llama-2-7B")
    lora = TrainSetup(method="lora", lora_targets="qv", framework="hf")
    qlora = replace(lora, method="qlora")
    assert activation_bytes_per_token(m, qlora) - activation_bytes_per_token(m, lora) == 2 * (H + H + F)
    gptq = replace(qlora, base_quant="gptq-int4")  # AutoGPTQ's kernels are not bitsandbytes matmuls
    assert activation_bytes_per_token(m, gptq) == activation_bytes_per_token(m, lora)


def test_litgpt_expands_grouped_kv_heads_before_attention(catalog: Catalog) -> None:
    # Llama-3-8B: 32 query heads, 8 K/V heads of 128. LitGPT expands K and V to 32 heads before SDPA, which keeps
    # them: 2 × (4096 − 1024) × 2 bytes more than Hugging Face's flash-attention path (norms are fp32 in both);
    # SDPA's head-major output is then copied to token-major order for the trained output projection, which
    # keeps that copy (4096 × 2 bytes) besides the output SDPA saves
    m = catalog.model("Llama-3-8B")
    hf, litgpt = TrainSetup(method="full", framework="hf"), TrainSetup(method="full", framework="pytorch")
    expanded, copied = 2 * (4096 - 1024) * 2, 4096 * 2
    assert activation_bytes_per_token(m, litgpt) - activation_bytes_per_token(m, hf) == expanded + copied


def test_litgpt_attention_keeps_the_whole_fused_qkv_output_when_heads_are_not_grouped(catalog: Catalog) -> None:
    # Llama-2-7B: 32 query and 32 K/V heads, so LitGPT expands nothing and V reaches SDPA as a view of the fused
    # QKV output: SDPA's saved V keeps Q's and K's 4096 columns of it too (2 × 4096 × 2 bytes), besides the
    # token-major copy of the output the trained projection keeps (4096 × 2 bytes); Hugging Face's separate
    # q/k/v projections hold no such buffer
    m = catalog.model("Llama-2-7B")
    hf, litgpt = TrainSetup(method="full", framework="hf"), TrainSetup(method="full", framework="pytorch")
    held_qkv, copied = 2 * H * 2, H * 2
    assert activation_bytes_per_token(m, litgpt) - activation_bytes_per_token(m, hf) == held_qkv + copied


@pytest.mark.parametrize(("model", "expected"), [
    ("Llama-2-7B", 2 * (4096 + 4096)),  # 32 query and 32 K/V heads of 128: q and v adapters output 4096 each
    ("Llama-3-8B", 2 * (4096 + 1024)),  # 8 K/V heads of 128: v's adapter outputs 1024
])
def test_litgpt_q_and_v_lora_keeps_its_adapters_output_padded_to_the_qkv_width(
        catalog: Catalog, model: str, expected: int) -> None:
    # LitGPT's LoRAQKVLinear pads the q and v adapters' output to the fused QKV width with index_copy, whose
    # backward keeps that output (2 bytes per element in bf16) to shape its gradient; adapting q, k and v needs no
    # padding, and PEFT adapts q_proj and v_proj as modules of their own
    m = catalog.model(model)
    qv = TrainSetup(method="lora", lora_targets="qv", framework="pytorch", precision="bf16", lora_dropout=0.05)
    assert padded_adapter_output_bytes(m, qv) == expected
    assert padded_adapter_output_bytes(m, replace(qv, lora_targets="all-linear")) == 0
    assert padded_adapter_output_bytes(m, replace(qv, framework="hf")) == 0
    assert padded_adapter_output_bytes(m, replace(qv, method="full")) == 0
    assert "padded to the QKV width" in describe_stack(m, qv)


def test_litgpt_layer_norm_keeps_its_16bit_input_without_autocast(catalog: Catalog) -> None:
    # Phi-2: torch.nn.LayerNorm (weight and bias), one norm per layer shared by the parallel attention and MLP,
    # hidden 2560. Under bf16-true it runs in bf16 and keeps a 2-byte input; under autocast layer_norm runs in fp32
    # and keeps the 4-byte copy: 2 × 2560 bytes per token per layer apart
    m = catalog.model("Phi-2")
    true16 = TrainSetup(method="lora", lora_targets="qv", framework="pytorch", precision="bf16")
    mixed = replace(true16, precision="bf16-mixed")
    assert activation_bytes_per_token(m, mixed) - activation_bytes_per_token(m, true16) == 2 * 2560
    # LitGPT's RMSNorm upcasts explicitly (x.float()), whatever the precision: Llama-2-7B keeps fp32 either way
    llama = catalog.model("Llama-2-7B")
    assert activation_bytes_per_token(llama, mixed) == activation_bytes_per_token(llama, true16)


@pytest.mark.parametrize(("method", "kept_per_column"), [
    ("full", 2),  # F.gelu keeps its input (fc's output); the trained proj keeps its input (GELU's output)
    ("lora", 1),  # frozen proj without an adapter keeps nothing: only GELU's input
])
def test_litgpt_gelu_mlp_keeps_its_input_and_the_output_only_for_a_kept_projection(
        catalog: Catalog, method: str, kept_per_column: int) -> None:
    # widening StableLM-Base-Alpha-3B's ungated MLP by 1,000 columns adds what each column keeps, 2 bytes a value
    m = catalog.model("StableLM-Base-Alpha-3B")
    wider = replace(m, ffn_hidden=m.ffn_hidden + 1000)
    s = TrainSetup(method=method, lora_targets="qv", framework="pytorch", precision="bf16")
    assert activation_bytes_per_token(wider, s) - activation_bytes_per_token(m, s) == kept_per_column * 1000 * 2


def test_norms_keep_an_fp32_copy_of_their_input(catalog: Catalog) -> None:
    # two norms per layer: 4 bytes × 4096 instead of 2 bytes × 4096 each (transformers' LlamaRMSNorm upcasts)
    m = catalog.model("Llama-2-7B")
    hf, titan = TrainSetup(method="full", framework="hf"), TrainSetup(method="full", framework="torchtitan")
    assert activation_bytes_per_token(m, hf) - activation_bytes_per_token(m, titan) == 2 * (4 - 2) * H


def test_eager_attention_keeps_fp32_and_16bit_probabilities(catalog: Catalog) -> None:
    # 32 heads × 2048 attended positions per token, an fp32 softmax output and its bf16 copy: 6 bytes each
    m = catalog.model("Llama-2-7B")
    flash = TrainSetup(method="full", seq_len=2048)
    eager = replace(flash, flash_attention=False)
    assert activation_bytes_per_token(m, eager) - activation_bytes_per_token(m, flash) == 32 * 2048 * (4 + 2)


def test_megatrons_fused_softmax_keeps_only_its_16bit_probabilities(catalog: Catalog) -> None:
    # Megatron's scaled masked softmax saves its output, in the 16-bit input dtype, and nothing in fp32: 32 heads ×
    # 2048 positions per token × 2 bytes, a third of transformers' eager attention (fp32 output and bf16 copy)
    m = catalog.model("Llama-2-7B")
    flash = TrainSetup(method="full", seq_len=2048, framework="megatron")
    unfused = replace(flash, flash_attention=False)
    assert activation_bytes_per_token(m, unfused) - activation_bytes_per_token(m, flash) == 32 * 2048 * 2


def test_tensor_parallelism_splits_the_scores_by_heads_without_sequence_parallelism(catalog: Catalog) -> None:
    # Korthikanti et al. 2022, eq. 2: without sequence parallelism each TP rank keeps whole activations but only its
    # heads' scores (5·a·s/(h·t)); TP 4 keeps a quarter of TP 1's scores (BLOOM's run: TP 4, no sequence parallelism)
    m, cal = catalog.model("Llama-2-7B"), fitted()

    def score_bytes(tp: int) -> float:
        flash = TrainSetup(method="full", seq_len=2048, framework="megatron",
                           parallel=Parallelism(tp=tp, sequence_parallel=False))
        unfused = replace(flash, flash_attention=False)
        return (training_memory(m, unfused, cal).breakdown.get("activations")
                - training_memory(m, flash, cal).breakdown.get("activations"))

    assert score_bytes(4) == pytest.approx(score_bytes(1) / 4)


def test_eager_scores_under_full_recompute_are_one_layers_and_grow_with_the_square_of_length(catalog: Catalog) -> None:
    # Under full recompute only the layer being recomputed holds its (heads × L × L) probabilities: Llama-2-7B's
    # 32 layers would hold 32 times as much without recompute, and doubling the length quadruples the scores
    m = catalog.model("Llama-2-7B")
    cal = fitted()

    def score_bytes(seq_len: int, recompute: str) -> float:
        flash = TrainSetup(method="lora", framework="hf", seq_len=seq_len, recompute=recompute)
        eager = replace(flash, flash_attention=False)
        return (training_memory(m, eager, cal).breakdown.get("activations")
                - training_memory(m, flash, cal).breakdown.get("activations"))

    full_4k, full_8k = score_bytes(4096, "full"), score_bytes(8192, "full")
    assert full_8k == pytest.approx(4 * full_4k)
    assert score_bytes(4096, "none") == pytest.approx(32 * full_4k)
    # one layer at 8,192 tokens: 32 heads × 8192² scores × 6 bytes (fp32 softmax output and its bf16 copy) = 12 GiB
    # before the stack's fitted activation factor
    assert full_8k / (32 * 8192**2 * 6) == pytest.approx(cal.get("activation_scale_hf"), rel=1e-9)


def test_litgpt_holds_a_tied_output_layer_as_its_own_matrix(catalog: Catalog) -> None:
    # Llama-3.2-1B ties its 128256 × 2048 output layer to the embedding; LitGPT loads lm_head as a copy (bf16)
    m = catalog.model("Llama-3.2-1B")
    hf = training_memory(m, TrainSetup(method="lora", framework="hf", precision="bf16"))
    litgpt = training_memory(m, TrainSetup(method="lora", framework="pytorch", precision="bf16"))
    assert litgpt.breakdown.get("weights") - hf.breakdown.get("weights") == pytest.approx(128256 * 2048 * 2)


def test_litgpt_full_fine_tune_trains_a_tied_output_layer_as_a_second_matrix(catalog: Catalog) -> None:
    # LitGPT's GPT has lm_head beside transformer.wte and its converter copies a tied table into lm_head.weight, so
    # a full fine-tune of Llama-3.2-1B (1,235,814,400 parameters by transformers' numel, its 128256 × 2048 output
    # layer tied) trains 262,668,288 more: on one GPU in bf16-true that is 2 bytes of weight, 2 of gradient and
    # 2 × 2 of AdamW states each, 1.96 GiB more than the HF Trainer, which keeps the table tied
    m = catalog.model("Llama-3.2-1B")
    litgpt = TrainSetup(method="full", micro_batch=1, seq_len=512, precision="bf16", framework="pytorch")
    est = training_memory(m, litgpt)
    assert est.trained is not None
    assert est.trained.trainable_params == 1_235_814_400 + 262_668_288
    assert est.breakdown.get("weights") == pytest.approx(2 * (1_235_814_400 + 262_668_288), rel=1e-6)
    assert est.breakdown.get("optimizer") == pytest.approx(4 * (1_235_814_400 + 262_668_288), rel=1e-6)
    hf = training_memory(m, replace(litgpt, framework="hf"))
    assert hf.trained is not None and hf.trained.trainable_params == 1_235_814_400
    # an untied model has its own lm_head under every stack: nothing to add
    untied = catalog.model("Llama-2-7B")
    assert training_memory(untied, litgpt).trained.trainable_params == 6_738_415_616  # type: ignore[union-attr]


def test_litgpt_qlora_quantizes_and_dequantizes_the_output_layer(catalog: Catalog) -> None:
    # Fabric's BitsandbytesPrecision quantizes every nn.Linear: Llama-2-7B's untied 32000 × 4096 head is stored at
    # NF4 with double quantization instead of 16-bit, and dequantized whole when it runs — the largest matrix to
    # dequantize (a layer's largest is 4096 × 11008). Fabric quantizes from an fp16 copy, so the dequantized matrix is
    # fp16 and MatMul4Bit's .to(bf16) copies it: 2 + 2 bytes per weight (see the next test)
    m = catalog.model("Llama-2-7B")
    hf = training_memory(m, TrainSetup(method="qlora", framework="hf", precision="bf16"))
    litgpt = training_memory(m, TrainSetup(method="qlora", framework="pytorch", precision="bf16"))
    nf4 = weight_format("bnb-nf4-dq").bytes_per_weight
    assert litgpt.breakdown.get("weights") - hf.breakdown.get("weights") == pytest.approx(V * H * (nf4 - 2))
    assert litgpt.breakdown.get("dequant") == pytest.approx(V * H * 4)
    assert hf.breakdown.get("dequant") == pytest.approx(H * F * 2)


def test_an_nf4_base_quantized_from_fp16_is_dequantized_to_fp16_then_cast(catalog: Catalog) -> None:
    # Lightning's BitsandbytesPrecision quantizes weight.to(torch.half) (fabric/plugins/precision/bitsandbytes.py
    # @5dea36c5), so the NF4 state records fp16; bitsandbytes' MatMul4Bit runs
    # F.dequantize_4bit(B, state).to(A.dtype): an fp16 matrix (2 bytes a weight) and, in bf16 compute, its bf16
    # copy (2 more) at once. LitGPT's Llama-2-7B QLoRA: the largest matrix is its 32000 × 4096 output layer.
    m = catalog.model("Llama-2-7B")
    bf16 = TrainSetup(method="qlora", framework="pytorch", precision="bf16")
    assert training_memory(m, bf16).breakdown.get("dequant") == 32_000 * 4096 * (2 + 2)
    # fp16 compute: .to(torch.float16) of an fp16 matrix is the matrix itself, no copy
    fp16 = replace(bf16, precision="fp16-mixed")
    assert training_memory(m, fp16).breakdown.get("dequant") == 32_000 * 4096 * 2
    # a LoRA base in bf16 dequantizes nothing
    assert training_memory(m, replace(bf16, method="lora")).breakdown.get("dequant") == 0


def test_transformers_with_an_old_bitsandbytes_dequantizes_to_fp16_then_casts(catalog: Catalog) -> None:
    # bitsandbytes before 0.43 quantizes .half() of every weight (Params4bit.cuda in the 0.41.3.post2 wheel), so
    # under transformers too the NF4 state records fp16 and MatMul4Bit copies each dequantized matrix to bf16:
    # Llama-2-7B's largest quantized linear (4096 × 11008; transformers keeps lm_head 16-bit) at 2 + 2 bytes a weight
    m = catalog.model("Llama-2-7B")
    current = TrainSetup(method="qlora", framework="hf", precision="bf16")
    old = replace(current, nf4_stats_fp16=True)
    assert training_memory(m, current).breakdown.get("dequant") == H * F * 2
    assert training_memory(m, old).breakdown.get("dequant") == H * F * (2 + 2)
    assert training_memory(m, replace(old, precision="fp16-mixed")).breakdown.get("dequant") == H * F * 2
    # a stack that quantizes from fp16 itself (LitGPT) is not turned off by a setup that states nothing
    assert training_memory(m, replace(current, framework="pytorch")).breakdown.get("dequant") == V * H * (2 + 2)


def test_framework_lora_dropout_defaults_are_read() -> None:
    assert framework("litgpt").lora_dropout == 0.05  # config_hub/finetune/*/lora.yaml
    assert framework("swift").lora_dropout == 0.05  # ms-swift lora_dropout_p
    assert framework("hf").lora_dropout == 0.0  # peft LoraConfig
    assert framework("megatron").lora_dropout is None  # not stated


def test_eager_attention_flips_fits_on_a_40gb_card(catalog: Catalog) -> None:
    # ms-swift's 2024 benchmark (docs/source_en/LLM/Benchmark.md @cdb169b7): Qwen-7B-Chat LoRA, 2048 tokens,
    # batch 1, no gradient checkpointing, use_flash_attn false: 57.67 GiB reserved, more than an A100-40GB holds.
    # Before eager attention was modelled the estimate was 36.3 GiB, below the card even before any margin.
    m = catalog.model("Qwen-7B")
    a100 = catalog.gpu("A100")
    s = TrainSetup(method="lora", lora_targets="attention", micro_batch=1, seq_len=2048, grad_accum=16,
                   precision="bf16", framework="hf", lora_dropout=framework("swift").lora_dropout or 0.0,
                   flash_attention=False)
    est = training_memory(m, s)
    assert est.total > a100.memory_bytes
    assert est.total >= 0.9 * 57.67 * GiB
    with_flash = training_memory(m, replace(s, flash_attention=True))
    assert with_flash.total < est.total - 10 * GiB  # the published flash run needed 37.70 GiB, 20 GiB less


def test_litgpt_chunked_loss_keeps_16_bit_logits_and_log_softmax_of_every_chunk(catalog: Catalog) -> None:
    # LitGPT (litgpt/finetune/lora.py @5895df10) asks the model for 128-token chunks of 16-bit logits and runs
    # F.cross_entropy on each chunk without an upcast: until backward every chunk's logits and the log-softmax
    # output that cross-entropy saves are held, 2 + 2 bytes per vocabulary entry, and in backward one chunk's
    # incoming and outgoing gradients beside them, 2 × 2 / 4 more at 512 positions (four chunks; the CPU replica in
    # tests/test_memory_loss.py measures it). Gemma-2B's 256,000-entry vocabulary at 2 × 512 tokens:
    # 1024 × 256000 × 5 bytes, about 1.22 GiB, where a loss that upcasts one chunk of eight at a time to fp32
    # (2 + 8/8 bytes) holds two fifths less
    m = catalog.model("Gemma-2B")
    assert m.vocab == 256_000
    litgpt = TrainSetup(method="lora", micro_batch=2, seq_len=512, chunked_loss=True, framework="pytorch")
    upcast = replace(litgpt, framework="torchtune")
    held = training_memory(m, litgpt).trained.logits_bytes
    assert held == 1024 * 256_000 * 5
    assert training_memory(m, upcast).trained.logits_bytes == pytest.approx(held * 3 / 5)


def test_litgpt_qlora_runs_the_next_forward_with_the_previous_bitsandbytes_inputs_alive(catalog: Catalog) -> None:
    # LitGPT's loop keeps `logits` bound until the next forward returns, and bitsandbytes stores each matmul's
    # input on the autograd context, which backward does not free: the previous micro-batch's inputs of every
    # quantized linear (qkv 4096, attention output 4096, MLP 4096, down projection 11008 per token and layer;
    # the output layer's 4096 per token) are alive through the next forward, 2 bytes each
    m = catalog.model("Llama-2-7B")
    qlora = TrainSetup(method="qlora", micro_batch=2, seq_len=512, grad_accum=4, precision="bf16", lora_rank=32,
                       lora_targets="qv", lora_dropout=0.05, base_quant="bnb-nf4", framework="pytorch",
                       chunked_loss=True)
    inputs, logits = previous_outputs_bytes(m, qlora)
    assert inputs == 1024 * ((3 * H + F) * 32 + H) * 2
    assert logits == 1024 * V * 2
    assert previous_outputs_bytes(m, replace(qlora, recompute="full"))[0] == 0  # checkpointed layers keep no graph
    assert previous_outputs_bytes(m, replace(qlora, framework="hf")) == (0, 0)  # the HF Trainer drops its outputs

    # LitGPT's config hub (config_hub/finetune/README.md @00af8b0d) measured, as torch.cuda.max_memory_allocated,
    # 19.77 GB for Llama-2-7B LoRA and 13.68 GB for QLoRA at these settings: the 4-bit base saves 6.09 GB, not
    # the 8.7 GB the weight formats alone differ by
    def allocated(s: TrainSetup) -> float:
        est = training_memory(m, s)
        return est.total - est.breakdown.get("overhead") - est.breakdown.get("allocator_slack")

    gap = allocated(replace(qlora, method="lora", base_quant=None)) - allocated(qlora)
    assert gap == pytest.approx(19.77e9 - 13.68e9, rel=0.10)


def test_torchtitan_compiles_the_loss_of_a_compiled_model_since_april_2025(catalog: Catalog) -> None:
    # torchtitan/components/loss.py @e7c0cae wraps the cross-entropy in torch.compile when training.compile is on:
    # the 16-bit logits and their 16-bit gradient, 2 + 2 bytes per entry, instead of logits + fp32 copy + fp32
    # log-softmax (2 + 4 + 4). Llama-3.1-8B at 2 × 8192 tokens, vocabulary 128256: 2 × 8192 × 128256 entries.
    # Trainy's June 2025 run of this setup read 47.96 GiB reserved on 32 H200 (benchmarks/
    # llama3-8b_h200_202506_trainy-whitefiber.md); without the compiled loss gpuplan said 68 GiB
    m = catalog.model("Llama-3.1-8B")
    entries = 2 * 8192 * 128256
    compiled = TrainSetup(micro_batch=2, seq_len=8192, framework="torchtitan", recompute="selective", compiled=True,
                          lengths_vary=False)
    eager = replace(compiled, compiled=False)
    dec_2024 = replace(compiled, compiled_loss=False)  # torchtitan before bbb1b616e left the loss uncompiled
    assert training_memory(m, compiled).trained.logits_bytes == entries * 4
    assert training_memory(m, eager).trained.logits_bytes == entries * 10
    assert training_memory(m, dec_2024).trained.logits_bytes == entries * 10
    # a stack that does not compile its loss keeps the fp32 tensors even for a compiled model
    assert training_memory(m, replace(compiled, framework="hf")).trained.logits_bytes == entries * 10


def test_torchtitan_on_b200_recomputes_the_cudnn_attention_its_save_list_missed(catalog: Catalog) -> None:
    # torchtitan ran SDPA with cuDNN attention first on B200 from 3b85aa31f (2025-05-14) while its per-op SAC save
    # list named only the flash and memory-efficient SDPA ops (until b39377f9f, 2025-12-01): the attention output,
    # 1 × 8192 tokens × 32 heads × 128 × 2 bytes in each of Llama-3-8B's 32 layers = 2 GiB, is not kept. torchao's
    # Aug 2025 table read 33.71 GiB reserved on B200 for this setup, 39.09 GiB on MI300X at a commit six days older
    m = catalog.model("Llama-3-8B")
    saved = TrainSetup(micro_batch=1, seq_len=8192, framework="torchtitan", recompute="selective", compiled=True,
                       lengths_vary=False, parallel=Parallelism(dp=8, zero=3))
    rerun = replace(saved, attention_recomputed=True)
    cal = fitted()
    assert training_memory(m, saved, cal).breakdown.get("activations") - \
        training_memory(m, rerun, cal).breakdown.get("activations") == 2 * GiB
    # the same attention over the context runs once more in backward: more FLOPs per token, never fewer
    assert train_flops_per_token(m, rerun) > train_flops_per_token(m, saved)
    # a full recomputation keeps no attention output to begin with: unchanged
    full = replace(saved, recompute="full")
    assert training_memory(m, replace(full, attention_recomputed=True), cal).total == \
        training_memory(m, full, cal).total


def test_llmc_overwrites_its_logits_and_allocates_exactly(catalog: Catalog) -> None:
    # llm.c train_gpt2.cu @2346cdac: one bf16 B·T·Vp buffer holds the logits and fused_classifier writes their
    # gradient over it (2 bytes per entry); every buffer is one exact-size cudaMalloc, so no allocator pool.
    # GPT-2-124M at 32 × 1024 tokens, vocabulary 50257. karpathy's 4-GPU run of this setup (llm.c PR #309) read
    # 16,661 MiB per GPU on the device; gpuplan said 42 GiB with PyTorch's loss and allocator
    m = catalog.model("GPT-2-124M")
    s = TrainSetup(micro_batch=32, seq_len=1024, framework="llmc", lengths_vary=False)
    est = training_memory(m, s)
    assert est.trained.logits_bytes == 32 * 1024 * 50257 * 2
    assert est.breakdown.get("allocator_slack") == 0


def test_llmc_zero1_shards_its_fp32_master_weights_with_the_adam_moments(catalog: Catalog) -> None:
    # karpathy's llm.c PR #309 comment (2024-05-13): GPT-2-1558M, 4 GPUs, -b 4, read 35,975 MiB per GPU with -z 0
    # and 22,601 MiB with -z 1. ZeRO-1 is the only difference, so its saving is 13,374 MiB. llm.c keeps bf16
    # parameters and gradients whole and shards its fp32 master weights and AdamW m and v (12 bytes a parameter) over
    # the ranks: 3/4 of 12 bytes × 1.558e9 parameters = 13,372 MiB. Sharding only the moments saves 8,915 MiB.
    m = catalog.model("GPT-2-1558M")
    z0 = TrainSetup(micro_batch=4, seq_len=1024, framework="llmc", lengths_vary=False,
                    parallel=Parallelism(dp=4, zero=0))
    z1 = replace(z0, parallel=Parallelism(dp=4, zero=1))
    saved = training_memory(m, z0).total - training_memory(m, z1).total
    assert saved / 2**20 == pytest.approx(35_975 - 22_601, rel=0.02)
    # its gradients are one buffer for the whole run: held at the end of a forward, at 2 bytes a parameter
    assert training_memory(m, z0).breakdown.get("gradients") == pytest.approx(2 * count_params(m).total, rel=1e-6)


def test_qwen_v1_under_deepspeed_takes_its_loss_on_16bit_logits(catalog: Catalog) -> None:
    # Qwen (v1) code: CrossEntropyLoss on lm_logits[..., :-1, :].contiguous(), no .float(); under DeepSpeed no
    # autocast runs, so the logits (2 bytes), their shifted copy (2) and the log-softmax (2) are all 16-bit:
    # 1 × 2048 tokens × 151,936 entries × 6 bytes. The same step without DeepSpeed runs under the HF Trainer's
    # autocast, whose cross_entropy casts the shifted 16-bit copy to fp32: the 16-bit logits (2), their shifted copy
    # (2), its fp32 cast (4) and the fp32 log-softmax (4), 12 bytes an entry.
    m = catalog.model("Qwen-7B")
    assert m.vocab == 151_936
    plain = TrainSetup(method="qlora", micro_batch=1, seq_len=2048, grad_accum=8, precision="bf16",
                       recompute="full", base_quant="gptq-int4", framework="hf")
    deepspeed = replace(plain, parallel=replace(plain.parallel, zero=2))
    assert training_memory(m, deepspeed).trained.logits_bytes == 2048 * 151_936 * 6
    assert training_memory(m, plain).trained.logits_bytes == 2048 * 151_936 * 12
    # transformers' own models cast the logits to fp32 before the loss, DeepSpeed or not
    llama = catalog.model("Llama-2-7B")
    assert training_memory(llama, deepspeed).trained.logits_bytes == 2048 * 32_000 * 10


def test_chatglm_code_holds_fp32_logits_their_shifted_copy_and_a_16bit_recast(catalog: Catalog) -> None:
    # ChatGLM3's ChatGLMForConditionalGeneration.forward (czk1997/chatglm3-copy modeling_chatglm.py @00f2a120):
    # lm_logits.to(float32) (4 bytes), the loss on lm_logits[..., :-1, :].contiguous() (4), whose log-softmax is
    # kept (4), then lm_logits.to(bf16) (2) while all three are held: 14 bytes an entry, against the 10 of a
    # model without a shifted copy. ChatGLM3-6B, vocabulary 65,024, LoRA at 1 × 4096 tokens as ms-swift ran it.
    m = catalog.model("ChatGLM3-6B")
    assert m.vocab == 65_024
    lora = TrainSetup(method="lora", micro_batch=1, seq_len=4096, grad_accum=16, precision="bf16", recompute="full",
                      framework="hf")
    assert training_memory(m, lora).trained.logits_bytes == 4096 * 65_024 * 14
    # the step's peak grows by the copy's 4096 × 65,024 × 4 bytes (≈1.0 GiB) or more (the allocator's share)
    llama_code = replace(m, model_type="llama")
    grown = training_memory(m, lora).total - training_memory(llama_code, lora).total
    assert grown >= 4096 * 65_024 * 4
    # a stack with its own model code (LitGPT) makes no such copy
    litgpt = replace(lora, framework="pytorch")
    assert training_memory(m, litgpt).trained.logits_bytes == training_memory(llama_code, litgpt).trained.logits_bytes


@pytest.mark.parametrize(("release", "per_entry", "source"), [
    ("4.36.2", 12, "LlamaForCausalLM.forward: logits = logits.float() frees the 16-bit logits; fp32 + shifted + lsm"),
    ("4.45.2", 12, "the same forward"),
    ("4.46.0", 14, "PR #34191: loss_utils.ForCausalLMLoss upcasts and shifts while forward holds the 16-bit logits"),
    ("4.48.3", 14, "still logits[..., :-1, :].contiguous() in ForCausalLMLoss"),
    ("4.49.0", 10, "PR #35646: labels padded, no shifted copy"),
    ("", 10, "no release stated: the current one, as plans run"),
])
def test_transformers_own_models_hold_the_loss_of_the_release_that_ran(catalog: Catalog, release: str,
                                                                          per_entry: int, source: str) -> None:
    # Llama-2-7B LoRA at 1 × 4096 tokens in bf16 under the HF Trainer: 4096 × 32,000 entries × bytes an entry
    m = catalog.model("Llama-2-7B")
    lora = TrainSetup(method="lora", micro_batch=1, seq_len=4096, precision="bf16", recompute="full", framework="hf",
                      transformers_version=release)
    assert training_memory(m, lora).trained.logits_bytes == 4096 * V * per_entry, source


def test_a_transformers_release_changes_neither_remote_code_nor_a_stack_with_its_own_model_code(
        catalog: Catalog) -> None:
    # ChatGLM3's remote code takes its own loss (14 bytes an entry, see above) whatever transformers runs it; LitGPT
    # runs its own GPT class, not transformers' models
    lora = TrainSetup(method="lora", micro_batch=1, seq_len=4096, precision="bf16", recompute="full", framework="hf")
    old = replace(lora, transformers_version="4.36.2")
    glm = catalog.model("ChatGLM3-6B")
    assert training_memory(glm, old).trained.logits_bytes == training_memory(glm, lora).trained.logits_bytes
    llama = catalog.model("Llama-2-7B")
    litgpt = replace(lora, framework="pytorch")
    assert (training_memory(llama, replace(litgpt, transformers_version="4.36.2")).trained.logits_bytes
            == training_memory(llama, litgpt).trained.logits_bytes)


def test_baichuan2_code_keeps_its_16bit_logits_and_a_shifted_16bit_copy(catalog: Catalog) -> None:
    # Baichuan2's BaichuanForCausalLM.forward (alibaba/MNN copy of Baichuan2-7B-Chat's remote code @4b3d1f81):
    # CrossEntropyLoss on logits[..., :-1, :].contiguous(), no .float(); under autocast the 16-bit logits (2), their
    # shifted copy (2), its fp32 cast (4) and the fp32 log-softmax (4): 12 bytes an entry, vocabulary 125,696
    m = catalog.model("Baichuan2-7B")
    assert m.vocab == 125_696
    lora = TrainSetup(method="lora", micro_batch=1, seq_len=2048, precision="bf16", recompute="full", framework="hf")
    assert training_memory(m, lora).trained.logits_bytes == 2048 * 125_696 * 12


def test_a_loop_that_takes_its_own_loss_on_16bit_logits_holds_no_fp32_copy(catalog: Catalog) -> None:
    # universal-llm-trainer (ljm565/universal-llm-trainer src/models/llama3.py @9efd14b5) calls the model without
    # labels, so transformers 4.49 hands back the lm_head's bf16 logits, and takes nn.CrossEntropyLoss of the shifted
    # copy itself with AMP off: logits, shifted copy and log-softmax, 2 bytes each. Llama-3.1-8B at 2 × 8192 tokens,
    # vocabulary 128,256. The setup states it (loss_16bit); without it transformers' loss upcasts, 10 bytes an entry.
    m = catalog.model("Llama-3.1-8B")
    hf = TrainSetup(method="lora", micro_batch=2, seq_len=8192, precision="bf16", recompute="full", framework="hf")
    own_loss = replace(hf, loss_16bit=True)
    assert training_memory(m, own_loss).trained.logits_bytes == 2 * 8192 * 128_256 * 6
    assert training_memory(m, hf).trained.logits_bytes == 2 * 8192 * 128_256 * 10
    # a model trained in fp32 has fp32 logits whatever the loop does: 4-byte logits, copy and log-softmax
    fp32 = replace(hf, precision="fp32")
    assert training_memory(m, replace(fp32, loss_16bit=True)).trained.logits_bytes == 2 * 8192 * 128_256 * 12


def test_deepspeed_zero2_backward_allocates_its_reduce_buckets(catalog: Catalog) -> None:
    # deepspeed/runtime/zero/stage_1_and_2.py @v0.11.1, DeepSpeedZeroOptimizer.backward: with contiguous_gradients
    # each backward allocates reduce_bucket_size elements in the 16-bit dtype, twice with overlap_comm. Qwen's
    # finetune/ds_config_zero2.json (@af22d5e0) states 2e8 and overlap_comm: 2 × 2e8 × 2 bytes = 0.8 GB, whatever
    # the (LoRA-sized) trainable parameters; DeepSpeed's defaults (5e8, overlap off below stage 3): 1 × 5e8 × 2 = 1 GB.
    m = catalog.model("Qwen-7B")
    plain = TrainSetup(method="qlora", micro_batch=1, seq_len=1024, grad_accum=8, precision="fp16",
                       recompute="full", base_quant="gptq-int4", framework="hf")
    zero2 = replace(plain, parallel=replace(plain.parallel, zero=2))
    qwen = replace(zero2, reduce_bucket_size=200_000_000, overlap_comm=True)
    assert training_memory(m, qwen).breakdown.get("zero_buckets") == 8e8
    assert training_memory(m, zero2).breakdown.get("zero_buckets") == 1e9
    assert training_memory(m, qwen).breakdown.total - training_memory(m, zero2).breakdown.total == -2e8
    # no DeepSpeed optimizer, or ZeRO-3 (which buckets differently): no such buffers
    assert training_memory(m, plain).breakdown.get("zero_buckets") == 0
    zero3 = replace(plain, parallel=replace(plain.parallel, zero=3, dp=2))
    assert training_memory(m, zero3).breakdown.get("zero_buckets") == 0


def test_litgpt_fsdp_accumulation_holds_the_whole_models_gradients(catalog: Catalog) -> None:
    # LitGPT's full fine-tune on 4 GPUs (FSDP FULL_SHARD, bf16-true) runs the accumulating micro-batches under
    # Fabric's no_backward_sync = FSDP.no_sync, which accumulates the full model gradients instead of shards:
    # Llama-2-7B's 6.74 B parameters × 2 bytes = 13.5 GB of gradients on every GPU, not 13.5 / 4 = 3.4 GB
    m = catalog.model("Llama-2-7B")
    n = 6_738_415_616  # transformers LlamaForCausalLM numel
    fsdp = Parallelism(dp=4, zero=3)
    litgpt = TrainSetup(method="full", micro_batch=1, seq_len=512, grad_accum=4, precision="bf16",
                        recompute="full", framework="pytorch", parallel=fsdp)
    assert training_memory(m, litgpt).breakdown.get("gradients") == pytest.approx(2 * n, rel=1e-3)
    # torchtitan's FSDP2 loop reduce-scatters every micro-batch: a quarter each; so does LitGPT without accumulation
    # (no micro-batch runs under no_sync), where the peak is at the end of backward with every shard made
    titan = replace(litgpt, framework="torchtitan")
    assert training_memory(m, titan).breakdown.get("gradients") == pytest.approx(2 * n / 4, rel=1e-3)
    no_accumulation = replace(litgpt, grad_accum=1)
    assert training_memory(m, no_accumulation).breakdown.get("gradients") == pytest.approx(2 * n / 4, rel=1e-3)


def test_litgpt_fsdp_root_keeps_the_embedding_and_output_layer_unsharded(catalog: Catalog) -> None:
    # LitGPT wraps each Block in FSDP; the root unit keeps wte, lm_head and ln_f, which FSDP does not reshard after
    # forward. Llama-2-7B: 2 × 32000 × 4096 + 4096 = 262,148,096 parameters, of which each of 4 GPUs already holds a
    # quarter as its shard: 3/4 × 262,148,096 × 2 bytes = 393,222,144 bytes more than torchtitan's loop
    m = catalog.model("Llama-2-7B")
    litgpt = TrainSetup(method="full", micro_batch=1, seq_len=512, precision="bf16", recompute="full",
                        framework="pytorch", parallel=Parallelism(dp=4, zero=3))
    titan = replace(litgpt, framework="torchtitan")
    extra = training_memory(m, litgpt).breakdown.get("weights") - training_memory(m, titan).breakdown.get("weights")
    assert extra == pytest.approx(393_222_144)
    # one GPU, or no weight sharding: nothing is gathered
    alone = replace(litgpt, parallel=Parallelism(dp=1, zero=3))
    assert training_memory(m, alone).breakdown.get("weights") == training_memory(
        m, replace(alone, framework="torchtitan")).breakdown.get("weights")


def test_the_qwen_framework_passes_its_zero2_config() -> None:
    # QwenLM/Qwen finetune/ds_config_zero2.json @af22d5e0: "reduce_bucket_size": 2e8, "overlap_comm": true
    assert zero_buckets(framework("qwen")) == {"reduce_bucket_size": 200_000_000, "overlap_comm": True}
    assert zero_buckets(framework("hf")) == {}
    # LLaMA-Factory examples/deepspeed/ds_z2_config.json @1d6e8b21: 5e8, overlap_comm false; ms-swift
    # swift/llm/ds_config/zero2.json @9d297f99: 2e8, overlap_comm true
    assert zero_buckets(framework("llama-factory")) == {"reduce_bucket_size": 500_000_000, "overlap_comm": False}
    assert zero_buckets(framework("swift")) == {"reduce_bucket_size": 200_000_000, "overlap_comm": True}


def test_the_exported_zero2_config_allocates_the_buffers_the_estimate_counted(catalog: Catalog) -> None:
    # the DeepSpeed config written for a ZeRO-2 plan states the bucket and overlap_comm the estimate assumed, so
    # DeepSpeed allocates 1 × 5e8 × 2 bytes (LLaMA-Factory's settings), not the 2 GB of overlap_comm on
    s = TrainSetup(method="full", parallel=Parallelism(dp=8, zero=2), reduce_bucket_size=500_000_000)
    zero = deepspeed_config(s)["zero_optimization"]
    assert (zero["reduce_bucket_size"], zero["overlap_comm"], zero["contiguous_gradients"]) == (5e8, False, True)
    assert training_memory(catalog.model("Llama-2-7B"), s).breakdown.get("zero_buckets") == 1e9
    # ZeRO-3 keeps DeepSpeed's own stage-3 default (overlap_comm on) and is not counted here
    assert deepspeed_config(replace(s, parallel=Parallelism(dp=8, zero=3)))["zero_optimization"]["overlap_comm"]


def test_llm_foundry_lora_keeps_the_frozen_base_in_fp32():
    """llm-foundry loads every weight in fp32 and autocasts (llmfoundry/models/consts.py _MASTER_WEIGHTS_PRECISION =
    'float32', models/hf/hf_base.py @8c8dd48f): a LoRA on Qwen2.5-7B (7,615,616,512 parameters, 40,370,176 in rank-16
    all-linear adapters) holds 4 bytes per weight, frozen and trainable, where the HF Trainer + PEFT holds 2."""
    import gpuplan

    def weights(framework: str) -> float:
        e = gpuplan.estimate("qwen2.5-7b", "h100", "finetune", method="lora", framework=framework,
                             tokens_per_sample=2048, samples="1k")
        return dict(e.result.memory.breakdown.parts)["weights"]

    assert weights("llm-foundry") == (7_615_616_512 + 40_370_176) * 4
    assert weights("hf") == (7_615_616_512 + 40_370_176) * 2


def test_gemma_2_softcapping_is_read_from_its_config(catalog: Catalog) -> None:
    # google/gemma-2-2b config.json: "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0; Gemma 1 has
    # neither
    m = catalog.model("Gemma-2-2B")
    assert (m.attn_softcap, m.final_softcap) == (50.0, 30.0)
    assert (catalog.model("Gemma-2B").attn_softcap, catalog.model("Gemma-2B").final_softcap) == (0.0, 0.0)


def test_litgpt_attends_in_eager_pytorch_with_softcapping_and_keeps_the_tanh_output(catalog: Catalog) -> None:
    # litgpt/model.py @2b195c7f: "with softcapping we cannot use SDPA" -> scores = tanh(q @ k.mT * scale / 50) * 50,
    # softmax in fp32, .to(bf16), @ v: per score the tanh output (2 bytes), the fp32 softmax output (4) and its bf16
    # copy (2) are kept for backward. Gemma-2-2B: 8 query heads, 512 positions, 26 layers; 1 × 512 tokens:
    # 26 × 512 tokens × 8 heads × 512 keys × 8 bytes = 436,207,616 bytes (activation factor set to 1)
    m = catalog.model("Gemma-2-2B")
    cal = fitted().with_values(activation_scale_pytorch=1.0, activation_scale_hf=1.0)
    setup = TrainSetup(method="lora", micro_batch=1, seq_len=512, precision="bf16", recompute="none",
                       framework="pytorch", lora_targets="all-linear")
    uncapped = replace(m, attn_softcap=0.0)

    def acts(model: ModelSpec, s: TrainSetup) -> float:
        return training_memory(model, s, cal).breakdown.get("activations")

    assert acts(m, setup) - acts(uncapped, setup) == pytest.approx(26 * 512 * 8 * 512 * 8)
    # transformers with a kernel that caps inside it (flash-attn >= 2.6) keeps no scores; its eager path keeps
    # the tanh output beside what eager attention keeps anyway: 26 × 512 × 8 × 512 × 2 bytes
    hf = replace(setup, framework="hf")
    assert acts(m, hf) == acts(uncapped, hf)
    eager = replace(hf, flash_attention=False)
    assert acts(m, eager) - acts(uncapped, eager) == pytest.approx(26 * 512 * 8 * 512 * 2)


def test_final_logit_softcapping_keeps_one_more_16_bit_logit_per_entry(catalog: Catalog) -> None:
    # tanh(logits / 30) * 30 (litgpt GPT.forward @2b195c7f; transformers Gemma2ForCausalLM): tanh saves its 16-bit
    # output: 512 tokens × 256,000 vocabulary entries × 2 bytes = 262,144,000 bytes more logits
    m = catalog.model("Gemma-2-2B")
    setup = TrainSetup(method="lora", micro_batch=1, seq_len=512, precision="bf16", recompute="none",
                       framework="pytorch", lora_targets="all-linear", grad_accum=1)
    uncapped = replace(m, final_softcap=0.0)
    capped_logits = training_memory(m, setup).breakdown.get("logits")
    assert capped_logits - training_memory(uncapped, setup).breakdown.get("logits") == 512 * 256_000 * 2
    # a compiled model fuses the cap into the loss's kernels
    compiled = replace(setup, compiled=True)
    assert (training_memory(m, compiled).breakdown.get("logits")
            == training_memory(uncapped, compiled).breakdown.get("logits"))


# ATorch's Llama-2 FSDP example (dlrover atorch/examples/llama2 @70df7d5a2): transformers 4.31.0, every decoder
# layer under ATorch's own checkpoint wrapper, the config's use_cache left on, `outputs = model(**batch)` kept until
# the next iteration's forward returns; 4 × 4,096 tokens per GPU
ATORCH = TrainSetup(micro_batch=4, seq_len=4096, recompute="full", framework="hf", transformers_version="4.31.0",
                    lengths_vary=False, parallel=Parallelism(dp=8, zero=3))


def test_a_training_forward_with_use_cache_on_returns_every_layers_keys_and_values(catalog: Catalog) -> None:
    # 32 layers × (K + V) × 32 KV heads × 128 × 16,384 tokens × 2 bytes = 8 GiB, hand-computed
    m = catalog.model("Llama-2-7B")
    assert returned_kv_bytes(m, replace(ATORCH, returns_kv_cache=True)) == 32 * 2 * 4096 * 16384 * 2 == 8 * GiB
    assert returned_kv_bytes(m, ATORCH) == 0
    # without recomputation the returned keys and values are the tensors attention saves anyway
    assert returned_kv_bytes(m, replace(ATORCH, returns_kv_cache=True, recompute="none")) == 0


def test_a_loop_holding_its_outputs_runs_the_next_forward_beside_the_previous_logits_and_cache(
        catalog: Catalog) -> None:
    # transformers 4.31 returns fp32 logits (logits.float() rebound): 16,384 × 32,000 × 4 bytes = 1.95 GiB held from
    # the previous step, and two steps' keys and values (8 GiB each) at the end of this forward: about 18 GiB more
    m = catalog.model("Llama-2-7B")
    cal = fitted()
    held = replace(ATORCH, returns_kv_cache=True, keeps_previous_outputs=True)
    assert previous_outputs_bytes(m, held) == (0, 16384 * V * 4)
    plain, kept = (training_memory(m, s, cal, describe=False).breakdown for s in (ATORCH, held))
    extra = kept.get("kv_cache") + kept.get("logits") - plain.get("logits")
    assert 17.9 * GiB < extra < 18.0 * GiB
    # a stack's default is overridden either way: LitGPT's loop, told it drops its outputs, carries none
    lit = TrainSetup(micro_batch=2, seq_len=512, framework="pytorch")
    assert previous_outputs_bytes(m, lit)[1] > 0 == previous_outputs_bytes(
        m, replace(lit, keeps_previous_outputs=False))[1]


@pytest.mark.parametrize("dp, max_allocated_mib", [
    (8, 33338.1), (16, 31695.5), (32, 30890.2), (64, 30487.6),  # dlrover atorch/examples/llama2/README.md @70df7d5a2
])
def test_the_atorch_lora_runs_no_fit_saw_follow_from_the_returned_cache_and_held_outputs(
        catalog: Catalog, dp: int, max_allocated_mib: float) -> None:
    # the same table's LoRA runs (r 16 on q, k, v, o, dropout 0.05, fp32 base shards under bf16 FSDP mixed
    # precision) are not calibration rows: with the returned keys and values and the held outputs they land within
    # 2 % of torch.cuda.max_memory_allocated, without them more than half under
    m = catalog.model("Llama-2-7B")
    lora = replace(ATORCH, method="lora", lora_rank=16, lora_targets="attention", lora_dropout=0.05, fp32_base=True,
                   parallel=Parallelism(dp=dp, zero=3))
    cal = fitted()

    def allocated(s: TrainSetup) -> float:
        parts = training_memory(m, s, cal, describe=False).breakdown
        return parts.total - parts.get("overhead") - parts.get("allocator_slack")

    measured = max_allocated_mib * 2**20
    assert allocated(lora) < 0.5 * measured
    assert abs(allocated(replace(lora, returns_kv_cache=True, keeps_previous_outputs=True)) / measured - 1) < 0.02
