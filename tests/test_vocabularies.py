"""Vocabularies are enums (issue 10, part 3): no code, the estimators and the planner included, compares a method,
recomputation, engine, task, market or objective with a string literal (``s.recompute == "selective"``): it names
the enum's member (``Recompute.SELECTIVE``), so a typo is an AttributeError at once instead of a branch that never
runs; nor with another vocabulary's member (``s.recompute == Method.FULL`` holds, as both are the text "full"). What
a member means (a method that trains the base, an engine that reads GGUF) is a property of the enum, checked here
through the estimators that act on it."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

import gpuplan
from gpuplan.catalog import Catalog
from gpuplan.errors import InputError
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.job import estimate_inference, inference_setup
from gpuplan.estimate.memory import state_bytes, training_memory
from gpuplan.estimate.train_time import train_seconds
from gpuplan.types import Engine, Framework, InferSetup, Job, Method, Parallelism, Recompute, Task, TrainSetup

VOCABULARIES = ("method", "recompute", "engine", "task", "market", "objective", "users", "framework")
# each enum and the fields and variables it is the vocabulary of (users: the market the users are in)
ENUMS = {"Method": ("method",), "Recompute": ("recompute",), "Engine": ("engine",), "Task": ("task",),
         "Market": ("market", "users"), "Objective": ("objective",), "Framework": ("framework",)}
PACKAGE = Path(gpuplan.__file__).parent


def _named(node: ast.AST) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def _is_text(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_is_text(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _other_vocabulary(name: str | None, node: ast.AST) -> bool:
    """``node`` names a member of another vocabulary's enum than ``name``'s (``Method.FULL`` for ``recompute``)."""
    nodes = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in ENUMS
               and name not in ENUMS[n.value.id] for n in nodes)


def string_comparisons(source: str) -> list[str]:
    """Each comparison of a vocabulary's field or variable with a string (or a tuple of strings), or with a member
    of another vocabulary, as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            pair = (node.left, node.comparators[0])
            if any(_named(a) in VOCABULARIES and (_is_text(b) or _other_vocabulary(_named(a), b))
                   for a, b in (pair, pair[::-1])):
                found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize(("source", "expected"), [
    ('if s.recompute == "selective": pass', ['s.recompute == "selective"'.replace('"', "'")]),
    ('ok = job.task in ("infer", "serve")', ["job.task in ('infer', 'serve')"]),
    ('if "lora" != method: pass', ["'lora' != method"]),
    ("if s.recompute == Recompute.SELECTIVE: pass", []),
    ('if fmt == "vllm": pass', []),  # an export format, not a vocabulary of the table
    ("if s.recompute == Method.FULL: pass", ["s.recompute == Method.FULL"]),  # "full" the method, not recomputation
    ("ok = s.method in (Method.FULL, Recompute.FULL)", ["s.method in (Method.FULL, Recompute.FULL)"]),
    ("if s.method == Method.FULL or s.recompute == Recompute.FULL: pass", []),
])
def test_the_scan_finds_string_comparisons(source: str, expected: list[str]) -> None:
    assert string_comparisons(source) == expected


def test_no_module_compares_a_vocabulary_with_a_string() -> None:
    offenders = [f"{path.relative_to(PACKAGE.parent)}: {c}" for path in sorted(PACKAGE.rglob("*.py"))
                 for c in string_comparisons(path.read_text(encoding="utf-8"))]
    assert offenders == []


# ---------------------------------------------------------------- what the members mean, as the estimators act on it

# (method, trains the base's own weights, trains weights the base lacks, loads its base quantized): written from the
# methods' papers, not from the properties: freeze trains the last layers of the base (LLaMA-Factory's freeze),
# P-tuning v2 a prefix (Liu et al. 2022), QLoRA LoRA adapters on an NF4 base (Dettmers et al. 2023)
MEANINGS = [(Method.FULL, True, False, False), (Method.FREEZE, True, False, False),
            (Method.LORA, False, True, False), (Method.QLORA, False, True, True), (Method.PTUNING, False, True, False)]


@pytest.mark.parametrize(("method", "base", "new", "quantized"), MEANINGS, ids=[m[0].value for m in MEANINGS])
def test_what_each_method_trains(method: Method, base: bool, new: bool, quantized: bool) -> None:
    assert (method.trains_base, method.new_weights, method.quantizes_base) == (base, new, quantized)
    assert method.adapters is not (method is Method.FULL)  # every method but a full fine-tune freezes some base


def test_qlora_is_lora_on_an_nf4_base(catalog: Catalog) -> None:
    # Method.quantizes_base: QLoRA with no base format given holds the same memory as LoRA told to load the base in
    # bitsandbytes NF4 with double quantization, and more than 4 bits per frozen weight less than LoRA's bf16 base
    m = catalog.model("Llama-2-7B")
    qlora = training_memory(m, TrainSetup(method="qlora", precision="bf16"))
    lora_nf4 = training_memory(m, TrainSetup(method="lora", precision="bf16", base_quant="bnb-nf4-dq"))
    lora = training_memory(m, TrainSetup(method="lora", precision="bf16"))
    assert qlora.breakdown == lora_nf4.breakdown
    saved = lora.breakdown.get("weights") - qlora.breakdown.get("weights")
    assert saved > 6.7e9 * (16 - 4.127) / 8 * 0.9  # 6.7 B linear-heavy weights from 16 to 4.127 bits


@pytest.mark.parametrize(("engine", "quant", "tp", "field", "says"), [
    (Engine.VLLM, "gguf-q4_k_m", 1, "--quant", "runs in llama.cpp"),  # Engine.reads_gguf
    (Engine.LLAMACPP, "awq-int4", 1, "--quant", "not a GGUF type"),
    (Engine.TRTLLM, "bnb-nf4", 1, "--quant", "not TensorRT-LLM"),  # Engine.loads_bnb
    (Engine.LLAMACPP, "bnb-nf4", 1, "--quant", "not a GGUF type"),
    (Engine.LLAMACPP, "gguf-q4_k_m", 2, "--tp", "no tensor parallelism"),  # Engine.tensor_parallel
], ids=["gguf-on-vllm", "awq-on-llamacpp", "bnb-on-trtllm", "bnb-on-llamacpp", "tp-on-llamacpp"])
def test_an_engine_refuses_what_it_cannot_run(catalog: Catalog, engine: Engine, quant: str, tp: int, field: str,
                                              says: str) -> None:
    job = Job(task=Task.INFER, prompt_len=512, output_len=128, requests=1)
    with pytest.raises(InputError, match=says) as err:
        estimate_inference(catalog.model("Llama-2-7B"), catalog.gpu("H100"), job,
                           inference_setup(job, tp, engine, quant))
    assert err.value.field == field


@pytest.mark.parametrize(("engine", "quant"), [(Engine.VLLM, "bnb-nf4"), (Engine.HF, "bnb-nf4"),
                                               (Engine.LLAMACPP, "gguf-q4_k_m"), (Engine.LLAMACPP, "bf16")])
def test_an_engine_runs_what_it_can(catalog: Catalog, engine: Engine, quant: str) -> None:
    job = Job(task=Task.INFER, prompt_len=512, output_len=128, requests=1)
    setup = inference_setup(job, 1, engine, quant)
    e = estimate_inference(catalog.model("Llama-2-7B"), catalog.gpu("H100"), job, setup)
    assert e.fits


# ---------------------------------------------------------------- a setup reads its vocabularies once

@pytest.mark.parametrize(("cls", "field", "given", "member"), [
    (TrainSetup, "method", "qlora", Method.QLORA), (TrainSetup, "recompute", "selective", Recompute.SELECTIVE),
    (TrainSetup, "framework", "llm-foundry", Framework.LLM_FOUNDRY),
    (InferSetup, "engine", "llamacpp", Engine.LLAMACPP),
], ids=["method", "recompute", "framework", "engine"])
def test_a_setup_takes_the_documented_values_as_members(cls: type, field: str, given: str, member: object) -> None:
    # the library API keeps taking the strings docs/ shows; inside, the field is the member (so its properties work)
    setup = cls(**{field: given})
    assert type(getattr(setup, field)) is type(member) and getattr(setup, field) is member
    assert setup == cls(**{field: member}) and hash(setup) == hash(cls(**{field: member}))
    assert getattr(replace(cls(), **{field: given}), field) is member


@pytest.mark.parametrize(("cls", "field", "typo", "valid"), [
    (TrainSetup, "method", "lorra",
     "full, lora, qlora, dora, adalora, galore, lisa, adapter, adapter-v2, ptuning, freeze"),
    (TrainSetup, "recompute", "selctive", "none, selective, full"),
    (TrainSetup, "framework", "megatron-lm",
     "hf, pytorch, deepspeed, megatron, torchtitan, torchtune, llmc, llm-foundry"),
    (InferSetup, "engine", "vLLM", "hf, vllm, sglang, trtllm, llamacpp, mindie, mlx"),
    (InferSetup, "engine", None, "hf, vllm, sglang"),
], ids=["method", "recompute", "framework", "engine-case", "engine-none"])
def test_a_setup_refuses_a_value_outside_its_vocabulary(cls: type, field: str, typo: object, valid: str) -> None:
    # before, a typo'd framework ran as HF Trainer's stack and a typo'd method as a full fine-tune, silently
    for make in (lambda: cls(**{field: typo}), lambda: replace(cls(), **{field: typo})):
        with pytest.raises(InputError) as err:
            make()
        assert err.value.field == f"{cls.__name__}.{field}"
        assert valid in err.value.fix


# (stack, bytes per trained parameter of weights, gradients, fp32 master copy) in bf16 mixed precision, from the
# stacks' own designs: DeepSpeed keeps 16-bit parameters and gradients with an fp32 master (Rajbhandari et al. 2020,
# ZeRO, sec. 3: 2 + 2 + 4 bytes); Megatron-LM 16-bit parameters with gradients accumulated in its fp32 main_grad
# buffer; torch AMP (HF Trainer, torchtune, torchtitan) fp32 parameters and gradients, no separate master
MIXED_PRECISION = [(Framework.DEEPSPEED, 2.0, 2.0, 4.0), (Framework.MEGATRON, 2.0, 4.0, 4.0),
                   (Framework.HF, 4.0, 4.0, 0.0), (Framework.TORCHTUNE, 4.0, 4.0, 0.0),
                   (Framework.TORCHTITAN, 4.0, 4.0, 0.0)]


@pytest.mark.parametrize(("framework", "weight", "grad", "master"), MIXED_PRECISION,
                         ids=[f[0].value for f in MIXED_PRECISION])
def test_what_each_stack_keeps_in_mixed_precision(framework: Framework, weight: float, grad: float,
                                                  master: float) -> None:
    s = TrainSetup(method="full", precision="bf16-mixed", optimizer="adamw", framework=framework.value)
    assert state_bytes(s)[:3] == (weight, grad, master)


@pytest.mark.parametrize("framework", list(Framework), ids=[f.value for f in Framework])
def test_every_stack_trains_at_a_fitted_utilisation(catalog: Catalog, framework: Framework) -> None:
    # each stack's efficiency class names a utilisation bench/fit.py fitted (u_megatron, u_torchtitan, u_eager), so a
    # full fine-tune on any stack has a finite time; a class without its parameter would fail here, not in a plan
    s = TrainSetup(method="full", framework=framework.value, parallel=Parallelism(dp=8))
    assert 0 < fitted().get(f"u_{framework.efficiency_class}") <= 1
    assert 0 < train_seconds(catalog.model("Llama-2-7B"), catalog.gpu("H100"), s, 1e9) < 1e6
