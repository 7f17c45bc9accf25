"""Training frameworks and the defaults they apply when a run does not state them, from ``data/frameworks.csv``.

A published run (or a user's job) that says "LLaMA-Factory, LoRA" without more runs with LLaMA-Factory's
defaults — gradient checkpointing on, for one — not with none of them. Each row names the framework's
efficiency class (which fitted utilisation and memory family applies), its default activation recomputation,
sequence packing, optimizer, micro-batch, fused/chunked loss and the precision of a full fine-tune (fp32 master
and optimizer states, or the model's bf16 throughout), each with the code or docs it was read from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import InputError
from gpuplan.types import ADAM_STEPS, ATTENTION_FAMILIES, FRAMEWORKS, METHODS, OPTIMIZERS, PRECISIONS, RECOMPUTE

_COLUMNS = (
    Column("framework", required=True), Column("name", required=True),
    Column("stack", "enum", True, FRAMEWORKS),
    Column("recompute", "enum", True, RECOMPUTE), Column("packing", "bool", True),
    Column("pads_to_max_length", "bool", True),
    Column("optimizer", "enum", True, OPTIMIZERS), Column("micro_batch", "int", min=1),
    Column("chunked_loss", "bool", True), Column("compiled", "bool", True),
    Column("full_precision", "enum", True, PRECISIONS), Column("lora_dropout", "float", min=0.0, max=0.9),
    Column("reduce_bucket_size", "int", min=1), Column("overlap_comm", "bool"), Column("adapter_base_fp32", "bool"),
    Column("quantized_base_recompute", "enum", False, RECOMPUTE), Column("methods", "enums", True, METHODS),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"),
)


@dataclass(frozen=True, slots=True)
class Framework:
    """A training framework's defaults (``stack``: the efficiency class gpuplan's fit distinguishes)."""

    framework: str
    name: str
    stack: str
    recompute: str
    packing: bool
    pads_to_max_length: bool  # every sample padded to the maximum length: the same tensor shapes every step
    optimizer: str
    micro_batch: int | None
    chunked_loss: bool
    compiled: bool
    full_precision: str  # a full fine-tune's precision: bf16-mixed keeps fp32 weights/states, bf16 does not
    lora_dropout: float | None  # the LoRA dropout its configs default to (None: not stated)
    # the DeepSpeed ZeRO config its scripts pass: gradient reduce bucket (elements) and overlap_comm; None: not
    # stated, DeepSpeed's own defaults apply (TrainSetup)
    reduce_bucket_size: int | None
    overlap_comm: bool | None
    # LoRA/P-tuning keep the unquantized frozen base in fp32 (the stack loads every weight in fp32 and autocasts)
    adapter_base_fp32: bool | None
    # the recomputation a quantized base (QLoRA) gets where it differs from ``recompute``; None: the same
    quantized_base_recompute: str | None
    # the fine-tuning methods (types.Method values) its code or docs run; one it may run but does not say is listed
    methods: tuple[str, ...]
    source: str

    def runs(self, method: str) -> bool:
        """Whether this framework can train with ``method`` (a :class:`gpuplan.types.Method` value)."""
        return method in self.methods

    @property
    def lengths_vary(self) -> bool:
        """Whether tensor shapes change between micro-steps: neither packed nor padded to one length."""
        return not (self.packing or self.pads_to_max_length)

    def recompute_for(self, quantized_base: bool) -> str:
        """The activation recomputation a run gets when it does not say: PEFT's
        ``prepare_model_for_kbit_training``, which HF QLoRA scripts call, turns gradient checkpointing on for a
        quantized base (``quantized_base_recompute``) where the Trainer alone leaves it off."""
        if quantized_base and self.quantized_base_recompute:
            return self.quantized_base_recompute
        return self.recompute

    def describe(self, quantized_base: bool = False) -> str:
        """The defaults a job on this framework gets, its recomputation as :meth:`recompute_for` picks it."""
        checkpointing = {"none": "no activation recomputation", "full": "gradient checkpointing on",
                         "selective": "selective recomputation"}[self.recompute_for(quantized_base)]
        sequences = ("packed sequences" if self.packing else "sequences padded to the maximum length"
                     if self.pads_to_max_length else "unpacked sequences")
        rest = ", ".join([checkpointing, sequences, self.optimizer]
                         + (["chunked loss"] if self.chunked_loss else [])
                         + (["torch.compile"] if self.compiled else [])
                         + (["full fine-tuning in pure bf16 (no fp32 master or states)"]
                            if self.full_precision == "bf16" else [])
                         + ([f"LoRA dropout {self.lora_dropout:g}"] if self.lora_dropout else []))
        return f"{self.name} defaults: {rest}"


@cache
def frameworks() -> Mapping[str, Framework]:
    rows = read_table(BUNDLED_DIR / "frameworks.csv", _COLUMNS, ["framework"], "gpuplan/data/frameworks.csv")
    return MappingProxyType({r.values["framework"]: Framework(**{k: v for k, v in r.values.items()
                                                                   if k not in ("as_of", "notes")}) for r in rows})


def zero_buckets(fw: Framework) -> dict[str, int | bool]:
    """The DeepSpeed ZeRO bucket settings ``fw`` states, as ``TrainSetup`` fields (the rest keep DeepSpeed's
    defaults)."""
    stated: dict[str, int | bool] = {}
    if fw.reduce_bucket_size is not None:
        stated["reduce_bucket_size"] = fw.reduce_bucket_size
    if fw.overlap_comm is not None:
        stated["overlap_comm"] = fw.overlap_comm
    return stated


_STACK_COLUMNS = (
    Column("stack", "enum", True, FRAMEWORKS), Column("norm_input_fp32", "bool", True),
    Column("adapters_fp32", "bool", True), Column("fused_qkv", "bool", True), Column("expands_kv_heads", "bool", True),
    Column("quantizes_output_layer", "bool", True), Column("unties_embeddings", "bool", True),
    Column("chunked_loss_bf16", "bool", True), Column("keeps_previous_outputs", "bool", True),
    Column("copies_attention_output", "bool", True), Column("compiles_loss", "bool", True),
    Column("caching_allocator", "bool", True), Column("logits_in_place", "bool", True),
    Column("loads_base_in_place", "bool", True), Column("nf4_stats_fp16", "bool", True),
    Column("softcap_eager", "bool", True), Column("fsdp_no_sync_accumulation", "bool", True),
    Column("fsdp_root_unsharded", "bool", True), Column("attention_kernel", "enum", True, ATTENTION_FAMILIES),
    Column("adam_step", "enum", True, ADAM_STEPS), Column("layer_norm_16bit", "bool", True),
    Column("mha_v_views_qkv", "bool", True), Column("gelu_single_op", "bool", True),
    Column("softmax_fp32_kept", "bool", True), Column("lora_pads_qkv_output", "bool", True),
    Column("source", required=True), Column("as_of", "date", True),
    Column("notes"),
)


@dataclass(frozen=True, slots=True)
class Stack:
    """What a stack's modeling code keeps for backward, where it differs between stacks (``data/stacks.csv``)."""

    stack: str
    norm_input_fp32: bool  # norms upcast their input to fp32 and keep that copy for backward
    adapters_fp32: bool  # LoRA adapters in fp32: each adapted module keeps an fp32 copy of its input
    fused_qkv: bool  # one projection makes Q, K and V: one adapter input for the three
    expands_kv_heads: bool  # grouped K/V heads are expanded to every query head before attention
    quantizes_output_layer: bool  # a quantized base quantizes the output layer too (dequantized per call)
    unties_embeddings: bool  # a tied output layer is loaded as its own matrix
    # a chunked loss keeps every chunk's 16-bit logits and its 16-bit log-softmax output, with no fp32 upcast
    chunked_loss_bf16: bool
    # the training loop keeps the previous micro-batch's logits (and their autograd graph) through the next forward
    keeps_previous_outputs: bool
    # attention's head-major output is copied to token-major order before the output projection
    copies_attention_output: bool
    # a compiled model's loss is compiled too: no fp32 copy or log-softmax of the logits is materialized
    compiles_loss: bool
    # memory comes from PyTorch's caching allocator (a pool above the tensors); False: exact-size device allocations
    caching_allocator: bool
    # one 16-bit logits buffer that the fused classifier overwrites with the logits' gradient
    logits_in_place: bool
    # a 16-bit base is built in its training dtype on the GPU and the checkpoint copied into it: the allocator caches
    # no segment freed by a load or a dtype conversion around the frozen weights
    loads_base_in_place: bool
    # an NF4 base is quantized from an fp16 copy: each dequantization makes fp16, then a copy in the compute dtype
    nf4_stats_fp16: bool
    # a model with attention-logit softcapping (Gemma 2) attends in eager PyTorch, whatever the kernel setting
    softcap_eager: bool
    # under FSDP (ZeRO-2/3 on this stack) the accumulating micro-batches run in FSDP's no_sync: every GPU holds the
    # whole model's gradients, unsharded, until the step's last micro-batch reduce-scatters them
    fsdp_no_sync_accumulation: bool
    # under FSDP the root unit holds the parameters outside the wrapped blocks (embedding, output layer, final norm),
    # which it does not reshard after forward: they stay unsharded through forward and backward
    fsdp_root_unsharded: bool
    # the attention kernel family its attention runs on Hopper and newer: "flash2" (FlashAttention-2, PyTorch
    # SDPA's flash backend) or "cudnn" (cuDNN fused attention, and FlashAttention-3: Hopper's asynchronous MMAs)
    attention_kernel: str
    # how its AdamW step runs (types.ADAM_STEPS): "foreach" holds a parameter-sized temporary beside the gradients
    adam_step: str
    # torch.nn.LayerNorm runs on the 16-bit input, outside autocast, and keeps that input (not an fp32 copy)
    layer_norm_16bit: bool
    # with as many K/V heads as query heads, V is a view of the fused QKV output: attention keeps that whole output
    mha_v_views_qkv: bool
    # an ungated MLP's activation is one op (F.gelu), which keeps only its input; its output is kept only as the
    # down projection's input where that projection keeps it
    gelu_single_op: bool
    # attention without flash attention keeps its softmax output in fp32 beside the 16-bit copy P·V reads; False: a
    # fused softmax kernel keeps only its 16-bit output (Megatron's scaled masked softmax)
    softmax_fp32_kept: bool
    # a fused QKV projection whose LoRA adapts only some of q, k and v pads the adapters' output to the fused width
    # with index_copy, whose autograd node keeps that output (its source) for backward
    lora_pads_qkv_output: bool
    source: str


@cache
def stacks() -> Mapping[str, Stack]:
    rows = read_table(BUNDLED_DIR / "stacks.csv", _STACK_COLUMNS, ["stack"], "gpuplan/data/stacks.csv")
    return MappingProxyType({r.values["stack"]: Stack(**{k: v for k, v in r.values.items()
                                                         if k not in ("as_of", "notes")}) for r in rows})


def stack(name: str) -> Stack:
    """The modeling behaviour of stack ``name`` (one of ``types.FRAMEWORKS``; every one has a row)."""
    return stacks()[name]


_ALIASES = {"llamafactory": "llama-factory", "llama_factory": "llama-factory", "hf-trainer": "hf",
            "transformers": "hf", "peft": "hf", "huggingface": "hf", "megatron-lm": "megatron", "nemo": "megatron",
            "foundry": "llm-foundry", "llmfoundry": "llm-foundry", "llm.c": "llmc", "glm": "chatglm"}


def check_method(framework_name: str | None, method: str) -> None:
    """Raise when the framework called ``framework_name`` cannot train with ``method`` (its ``methods`` in
    ``data/frameworks.csv``); a job that names no framework may use any method."""
    if not framework_name:
        return
    fw = framework(framework_name)
    if not fw.runs(method):
        raise InputError("--method", f"{fw.name} (--framework {fw.framework}) does not run --method {method}.",
                         f"use a --method it runs: {', '.join(fw.methods)}; or a --framework that runs {method}: "
                         f"{', '.join(name for name, f in frameworks().items() if f.runs(method))}.")


def framework(name: str, field: str = "--framework") -> Framework:
    """The framework called ``name`` (case-insensitive, common spellings accepted)."""
    table = frameworks()
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in table:
        raise InputError(field, f"unknown framework '{name}'.", f"use one of: {', '.join(sorted(table))}.")
    return table[key]
