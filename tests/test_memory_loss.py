"""The loss line of a training estimate states the bytes per vocabulary entry per token the estimate counts, and
names the tensors of the case that holds them, in English and in Chinese. Each row is a setup whose bytes an
existing test derives from the code that ran (tests/test_memory_stacks.py), with the source beside it."""

from __future__ import annotations

import re

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.loss import LossCase
from gpuplan.estimate.memory import loss_case, training_memory
from gpuplan.estimate.result import Estimate
from gpuplan.i18n import tr, translate, using
from gpuplan.types import Parallelism, TrainSetup

CJK = re.compile(r"[\u4e00-\u9fff]")
LORA = {"method": "lora", "micro_batch": 1, "seq_len": 2048, "precision": "bf16", "recompute": "full"}

CASES = [  # (model, setup, case, bytes per entry, words the line names the case by, source of the bytes)
    ("GPT-2-124M", {"framework": "llmc"}, LossCase.IN_PLACE, 2, "llm.c",
     "llm.c train_gpt2.cu @2346cdac: one bf16 logits buffer, its gradient written over it"),
    ("Gemma-2B", {"framework": "pytorch", "chunked_loss": True}, LossCase.CHUNKED_16BIT, 4.25, "16-bit chunked",
     "LitGPT litgpt/finetune/lora.py @5895df10: 16-bit chunk logits + saved 16-bit log-softmax or gradient, "
     "and one of 16 chunks' two gradients: 4 + 4 / 16"),
    ("Llama-3.1-8B", {"framework": "torchtitan", "compiled": True}, LossCase.COMPILED, 4, "compiled",
     "torchtitan components/loss.py @e7c0cae: compiled loss keeps 16-bit logits and their 16-bit gradient"),
    ("Qwen-7B", {"framework": "hf", "parallel": Parallelism(zero=2)}, LossCase.NO_UPCAST, 6, "without autocast",
     "Qwen v1 QWenLMHeadModel.forward, no .float(), DeepSpeed runs no autocast: 2 + 2 + 2"),
    ("Gemma-2B", {"framework": "torchtune", "chunked_loss": True}, LossCase.CHUNKED, 3, "one chunk in 8",
     "16-bit logits + an fp32 copy and log-softmax of one chunk of 8: 2 + 8 / 8"),
    ("Llama-2-7B", {"framework": "hf"}, LossCase.UPCAST, 10, "fp32 copy + fp32 log-softmax",
     "transformers >= 4.49 ForCausalLMLoss: 2 + 4 + 4"),
    ("Llama-2-7B", {"framework": "hf", "precision": "fp32"}, LossCase.UPCAST, 12, "fp32 copy + fp32 log-softmax",
     "fp32 training: fp32 logits, their fp32 copy and log-softmax, 4 + 4 + 4"),
    ("Baichuan2-7B", {"framework": "hf"}, LossCase.SHIFTED_COPY, 12, "shifted 16-bit copy",
     "Baichuan2 BaichuanForCausalLM.forward under autocast: 2 + 2 + 4 + 4"),
    ("ChatGLM3-6B", {"framework": "hf"}, LossCase.SHIFTED_FP32_COPY, 14, "16-bit recast",
     "ChatGLM3 ChatGLMForConditionalGeneration.forward: 4 + 4 + 4 + 2"),
    ("Llama-2-7B", {"framework": "hf", "transformers_version": "4.46.0"}, LossCase.HF_LOSS_UTILS, 14,
     "transformers 4.46 to 4.48", "PR #34191: forward keeps the 16-bit logits, ForCausalLMLoss upcasts and shifts"),
    ("Llama-2-7B", {"framework": "hf", "transformers_version": "4.36.2"}, LossCase.HF_FLOAT_REBOUND, 12,
     "transformers before 4.46", "logits = logits.float() frees the 16-bit logits: 4 + 4 + 4"),
    ("Gemma-2-2B", {"framework": "hf"}, LossCase.UPCAST, 12, "capped logits' tanh output",
     "Gemma 2 final_logit_softcapping: 10 + the 16-bit tanh output autograd keeps"),
]


def _estimate(catalog: Catalog, model: str, setup: dict[str, object]) -> tuple[Estimate, int]:
    m = catalog.model(model)
    s = TrainSetup(**{**LORA, **setup})  # type: ignore[arg-type]
    assert loss_case(m, s) in LossCase
    return training_memory(m, s), s.micro_batch * s.seq_len * m.vocab


def _loss_row(e: Estimate) -> dict[str, str]:
    """The loss line as the CLI's and the page's assumptions table shows it, in the language of the moment."""
    loss = next(a for a in e.assumptions if a.name == "loss")
    return {"name": tr(loss.name), "value": translate(loss.value), "source": translate(loss.source)}


@pytest.mark.parametrize(("model", "setup", "case", "per_entry", "words", "source"), CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in CASES])
def test_the_loss_line_names_the_bytes_the_estimate_counts(catalog: Catalog, model: str, setup: dict[str, object],
                                                           case: LossCase, per_entry: float, words: str,
                                                           source: str) -> None:
    e, entries = _estimate(catalog, model, setup)
    assert e.trained.logits_bytes == entries * per_entry, source
    with using("en"):
        row = _loss_row(e)
    assert row["source"] == f"{per_entry} bytes per vocabulary entry per token"
    assert row["value"].startswith(case.held) and words in row["value"]
    with using("zh"):
        row = _loss_row(e)
    assert row["name"] == "损失"
    assert row["source"] == f"每个 token 每个词表项 {per_entry} 字节"
    assert CJK.search(row["value"]) and not re.search(r"\b[a-z]{3,} [a-z]{3,} [a-z]{3,}\b", row["value"]), row


def test_every_case_has_a_row_above() -> None:
    assert {c[2] for c in CASES} == set(LossCase)


class _LiveStorages:
    """Bytes of the tensor storages made inside it and still alive, and their peak (a CPU stand-in for the CUDA
    allocator's allocated peak: the same tensors, without its rounding)."""

    def __init__(self) -> None:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils._pytree import tree_leaves

        owner = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                out = func(*args, **(kwargs or {}))
                for t in tree_leaves(out):
                    if isinstance(t, torch.Tensor):
                        owner.add(t)
                return out

        self.mode, self.live, self.now, self.peak = Mode(), set(), 0, 0

    def add(self, tensor: object) -> None:
        import weakref

        storage = tensor.untyped_storage()  # type: ignore[attr-defined]
        key, size = storage.data_ptr(), storage.nbytes()
        if key in self.live or not size:
            return
        self.live.add(key)
        self.now += size
        self.peak = max(self.peak, self.now)

        def freed() -> None:
            self.live.discard(key)
            self.now -= size

        weakref.finalize(storage, freed)


@pytest.mark.parametrize("chunks", [1, 2, 4, 8])
def test_litgpt_chunked_loss_peaks_where_its_count_says(chunks: int) -> None:
    # LitGPT's fine-tuning step, its output layer and loss only (litgpt/finetune/lora.py and litgpt/utils.py
    # chunked_cross_entropy @00af8b0d): a frozen 16-bit output layer applied to chunks of 128 positions, 16-bit
    # cross-entropy per chunk, the last chunk shifted by one, the logits list held by the loop through backward and
    # until the next forward returns. Run on CPU tensors; the peak of the live storages is what the 16-bit chunked
    # case counts (a hidden size of 8 keeps every other tensor negligible beside the logits).
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    positions, hidden, vocab = 128 * chunks, 8, 4096
    head = torch.nn.Linear(hidden, vocab, bias=False, dtype=torch.bfloat16).requires_grad_(False)
    trained = torch.nn.Linear(hidden, hidden, dtype=torch.bfloat16)
    x = torch.randn(1, positions, hidden, dtype=torch.bfloat16)
    targets = torch.randint(0, vocab, (1, positions - 1))
    counter = _LiveStorages()
    with counter.mode:
        logits: list[torch.Tensor] = []
        for _ in range(2):
            logits = [head(h) for h in trained(x).split(128, dim=1)]
            logits[-1] = logits[-1][..., :-1, :]
            losses = [F.cross_entropy(chunk.reshape(-1, vocab), target.reshape(-1), reduction="none")
                      for chunk, target in zip(logits, targets.split(128, dim=1), strict=True)]
            torch.cat(losses).sum().backward()
            trained.zero_grad(set_to_none=True)
    measured = counter.peak / (positions * vocab)
    assert measured == pytest.approx(LossCase.CHUNKED_16BIT.bytes_per_entry(2, chunks), rel=0.03)
