"""The ways a training step's loss holds its logits, each with the tensors it keeps per vocabulary entry per token.

:func:`gpuplan.estimate.memory.loss_case` decides which one a setup runs (once); the bytes the memory estimate counts
and the line its assumptions print both come from the member, so the two cannot disagree. The code each case comes
from is cited where the case is decided (``gpuplan/estimate/memory.py``) and in ``docs/estimators.md``.
"""

from __future__ import annotations

from enum import StrEnum

FP32 = 4.0  # bytes of an fp32 value
CHUNKS = 8  # a chunked loss upcasts one chunk of 8 at a time
# LitGPT's fine-tuning scripts split the output layer's input into chunks of this many positions along the sequence
# (``model(input_ids, lm_head_chunk_size=128)``, litgpt/finetune/lora.py @00af8b0d9b43eaa3f8c812e3e8bd53ef38cbb49d)
HEAD_CHUNK_POSITIONS = 128


class LossCase(StrEnum):
    """What the loss holds at once (the value is what JSON would use)."""

    IN_PLACE = "in_place"  # llm.c's fused classifier: one logits buffer, overwritten by its gradient
    CHUNKED_16BIT = "chunked_16bit"  # LitGPT: every chunk's logits, and its log-softmax or gradient, not upcast
    COMPILED = "compiled"  # torch.compile'd cross-entropy: the logits and their gradient
    NO_UPCAST = "no_upcast"  # model code without .float(), run without autocast (Qwen v1 under DeepSpeed)
    CHUNKED = "chunked"  # a chunked loss that upcasts one chunk at a time (torchtune, TRL)
    UPCAST = "upcast"  # logits, their fp32 copy and the fp32 log-softmax (transformers >= 4.49, most stacks)
    SHIFTED_COPY = "shifted_copy"  # remote code's shifted 16-bit .contiguous() copy (Qwen v1, Baichuan2)
    SHIFTED_FP32_COPY = "shifted_fp32_copy"  # remote code's shifted fp32 copy and a 16-bit recast (ChatGLM)
    HF_LOSS_UTILS = "hf_loss_utils"  # transformers 4.46 to 4.48: ForCausalLMLoss upcasts and shifts
    HF_FLOAT_REBOUND = "hf_float_rebound"  # transformers before 4.46: logits.float() rebound, shifted fp32 copy

    def bytes_per_entry(self, act: float, chunks: int = 1) -> float:
        """Bytes per vocabulary entry per token, for logits of ``act`` bytes (2 in 16-bit training, 4 in fp32): the
        sum of the tensors :attr:`held` names. ``chunks``: the chunks a 16-bit chunked loss splits the sequence
        into (:data:`HEAD_CHUNK_POSITIONS` positions each).

        A 16-bit chunked loss peaks in backward. Autograd runs the ready node with the highest sequence number
        first, and every chunk's cross-entropy was recorded after every chunk's output-layer matmul, so all the
        cross-entropy backwards run before any output-layer backward. While chunk i's log-softmax backward runs,
        memory holds: every chunk's logits (the training loop's ``logits`` list keeps them), the saved
        log-softmax of the chunks not yet reached, the logit gradients of the chunks done, and chunk i's incoming
        and outgoing gradients. That is 2 + 2/chunks values per entry."""
        match self:
            case LossCase.IN_PLACE:
                return act
            case LossCase.CHUNKED_16BIT:
                return 2 * act + 2 * act / max(chunks, 1)
            case LossCase.COMPILED:
                return 2 * act
            case LossCase.NO_UPCAST:
                return 3 * act
            case LossCase.CHUNKED:
                return act + 2 * FP32 / CHUNKS
            case LossCase.UPCAST:
                return act + 2 * FP32
            case LossCase.SHIFTED_COPY:
                return act + 2 * FP32 + act
            case LossCase.SHIFTED_FP32_COPY | LossCase.HF_LOSS_UTILS:
                return act + 2 * FP32 + FP32
            case LossCase.HF_FLOAT_REBOUND:
                return 3 * FP32
        raise AssertionError(self)

    @property
    def held(self) -> str:
        """The tensors :meth:`bytes_per_entry` counts, and whose code holds them (an assumption's value)."""
        return _HELD[self]


_HELD = {
    LossCase.IN_PLACE: "one logits buffer, their gradient written over it (llm.c's fused classifier)",
    LossCase.CHUNKED_16BIT: "every chunk's logits + their log-softmax or gradient + one chunk's two gradients, none "
                            "upcast (16-bit chunked loss)",
    LossCase.COMPILED: "logits + their gradient, no fp32 copy (compiled loss)",
    LossCase.NO_UPCAST: "16-bit logits + their shifted 16-bit copy + 16-bit log-softmax (model code without upcast, "
                        "run without autocast)",
    LossCase.CHUNKED: "logits + fp32 copy and fp32 log-softmax of one chunk in 8 (chunked loss)",
    LossCase.UPCAST: "logits + fp32 copy + fp32 log-softmax",
    LossCase.SHIFTED_COPY: "16-bit logits + their shifted 16-bit copy + its fp32 cast + fp32 log-softmax (the model "
                           "code's shifted copy)",
    LossCase.SHIFTED_FP32_COPY: "fp32 logits + their shifted fp32 copy + fp32 log-softmax + a 16-bit recast (the "
                                "model code's shifted copy)",
    LossCase.HF_LOSS_UTILS: "16-bit logits + fp32 logits + their shifted fp32 copy + fp32 log-softmax (transformers "
                            "4.46 to 4.48)",
    LossCase.HF_FLOAT_REBOUND: "fp32 logits + their shifted fp32 copy + fp32 log-softmax (transformers before 4.46)",
}
