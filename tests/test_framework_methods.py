"""Which fine-tuning methods each training framework runs (data/frameworks.csv ``methods``): an estimate or a plan
with a framework that cannot run the method is refused, naming --method and --framework and the methods it runs,
and a plan's alternatives leave out methods the framework cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from gpuplan.catalog import Catalog
from gpuplan.catalog.csvload import Column, read_table
from gpuplan.errors import CatalogError, InputError
from gpuplan.estimate.frameworks import framework, frameworks
from gpuplan.plan.planner import Constraints, _cheaper_changes, plan
from gpuplan.requests import estimate_config, make_job
from gpuplan.types import METHODS


@pytest.mark.parametrize(("name", "methods", "source"), [
    ("litgpt", {"full", "lora", "qlora", "adapter", "adapter-v2"},
     "Lightning-AI/litgpt litgpt/finetune/full.py, lora.py, adapter.py, adapter_v2.py @c16c72c0"),
    ("llama-factory", {"full", "freeze", "lora", "qlora", "dora", "galore"},
     "hiyouga/LLaMA-Factory finetuning_args.py @00577a85: finetuning_type, use_dora, use_galore"),
    ("torchtune", {"full", "lora", "qlora", "dora"}, "pytorch/torchtune recipes/configs/llama3 @0031bfb0"),
    ("swift", {"full", "freeze", "lora", "qlora", "dora", "adalora", "galore", "lisa"},
     "modelscope/ms-swift swift/llm/utils/argument.py @003f77b2: sft_type, use_dora, use_galore, lisa"),
    ("qwen", {"full", "lora"}, "QwenLM/Qwen finetune.py @343017c4: its Q-LoRA is LoRA on a GPTQ base"),
    ("llmc", {"full"}, "karpathy/llm.c train_gpt2.cu"),
])
def test_a_frameworks_methods_are_those_its_code_runs(name: str, methods: set[str], source: str) -> None:
    fw = framework(name)
    assert set(fw.methods) == methods, source
    assert "methods (read" in fw.source  # the row cites where its list was read


def test_every_framework_runs_full_training_and_a_plain_loop_runs_every_method() -> None:
    # pretraining is full training, so no framework may refuse it; a loop of one's own rules nothing out
    assert all(fw.runs("full") for fw in frameworks().values())
    assert set(framework("pytorch").methods) == set(METHODS)


@pytest.mark.parametrize(("name", "method"), [("litgpt", "galore"), ("unsloth", "adapter"), ("megatron", "ptuning"),
                                              ("torchtune", "lisa")])
def test_an_estimate_with_a_framework_that_cannot_run_the_method_is_refused(catalog: Catalog, name: str,
                                                                            method: str) -> None:
    m, g = catalog.model("Qwen2.5-0.5B"), catalog.gpu("A100-80GB")
    job = make_job("finetune", method=method, samples=1000, tokens_per_sample=512)
    with pytest.raises(InputError) as info:
        estimate_config(m, g, job, micro_batch=1, framework=name)
    err = info.value
    assert err.field == "--method" and f"--framework {name}" in err.message and f"--method {method}" in err.message
    assert ", ".join(framework(name).methods) in err.fix
    estimate_config(m, g, job, micro_batch=1, framework="pytorch")  # the same job runs where the method does


def test_a_plan_with_a_framework_that_cannot_run_the_method_is_refused(frozen_catalog: Catalog) -> None:
    m = frozen_catalog.model("Qwen2.5-0.5B")
    job = make_job("finetune", method="adapter", samples=1000, tokens_per_sample=512, framework="unsloth")
    with pytest.raises(InputError, match="does not run --method adapter"):
        plan(frozen_catalog, m, job, Constraints())


def test_the_cli_refusal_says_what_to_type_next() -> None:
    out = run_cli("estimate", "Qwen2.5-0.5B", "--gpu", "A100-80GB", "--task", "finetune", "--method", "galore",
                  "--framework", "litgpt", "--samples", "1k", "--tokens-per-sample", "512")
    assert out.returncode != 0
    assert "LitGPT (--framework litgpt) does not run --method galore" in out.stderr
    assert "full, lora, qlora, adapter, adapter-v2" in out.stderr


def test_alternatives_name_only_methods_the_framework_runs(frozen_catalog: Catalog) -> None:
    # Qwen's finetune.py runs full and LoRA; its Q-LoRA is LoRA on a GPTQ base, not QLoRA's NF4
    qwen = make_job("finetune", method="full", samples=5_000, tokens_per_sample=1_000, framework="qwen")
    hf = make_job("finetune", method="full", samples=5_000, tokens_per_sample=1_000, framework="hf")
    assert [label for label, _, _ in _cheaper_changes(qwen, Constraints())] == ["switch to LoRA"]
    assert [label for label, _, _ in _cheaper_changes(hf, Constraints())] == ["switch to LoRA", "switch to QLoRA"]
    r = plan(frozen_catalog, frozen_catalog.model("Qwen2.5-7B"), qwen, Constraints())
    changes = [a["change"] for a in r.alternatives]
    assert "switch to LoRA" in changes and "switch to QLoRA" not in changes


def test_a_methods_cell_naming_an_unknown_or_repeated_method_is_refused(tmp_path: Path) -> None:
    columns = (Column("framework", required=True), Column("methods", "enums", True, METHODS))
    for cell in ("full;lorra", "full;lora;full"):
        path = tmp_path / "frameworks.csv"
        path.write_text(f"framework,methods\nx,{cell}\n", encoding="utf-8")
        with pytest.raises(CatalogError, match="methods"):
            read_table(path, columns, ["framework"], "frameworks.csv")
    path.write_text("framework,methods\nx,full; lora\n", encoding="utf-8")
    assert read_table(path, columns, ["framework"], "frameworks.csv")[0].values["methods"] == ("full", "lora")
