"""Training frameworks (and bitsandbytes for QLoRA) only on hardware they run on: the data file of sources
(``data/runs_on.csv``), the planner leaving other GPU types out with a note, and ``estimate`` refusing them. Which
GPU types a plan ranks depends on prices, so the plans use the frozen snapshot of them (``frozen_catalog``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import read_csv, run_cli
from fastapi.testclient import TestClient

from gpuplan.catalog import BUNDLED_DIR, Catalog
from gpuplan.errors import CatalogError, InfeasibleError
from gpuplan.estimate import hardware
from gpuplan.estimate.engines import engines
from gpuplan.estimate.frameworks import frameworks
from gpuplan.estimate.job import check_training, training_setup
from gpuplan.plan.candidates import Constraints, Note, PlanResult
from gpuplan.plan.planner import plan
from gpuplan.plan_text import note_text
from gpuplan.requests import make_job
from gpuplan.types import Parallelism
from gpuplan.web.app import create_app

ROWS = read_csv(BUNDLED_DIR / "runs_on.csv")
TPUS = ("TPU-v4", "TPU-v5e", "TPU-v5p", "TPU-v6e")


def _plan(catalog: Catalog, method: str, framework: str | None, gpus: tuple[str, ...] = ()) -> PlanResult:
    job = make_job("finetune", method=method, samples=2_000, tokens_per_sample=256, framework=framework)
    return plan(catalog, catalog.model("Qwen2.5-0.5B"), job, Constraints(top=50, gpus=gpus), suggest=False)


def _vendors(r: PlanResult) -> set[str]:
    return {x.estimate.gpu.vendor for x in r.ranked}


def _left_out(r: PlanResult) -> dict[str, tuple[str, ...]]:
    """software → the GPU types its note says were left out."""
    return {n.values[1]: n.values[2] for n in r.notes if n.code == "unsupported"}


# ---------------------------------------------------------------- the data file


def test_every_row_has_a_source_and_a_date() -> None:
    assert len(ROWS) >= 60
    for row in ROWS:
        assert row["source"].strip() and row["as_of"].strip(), row


def test_every_framework_and_engine_has_rows_and_every_row_names_one() -> None:
    named = {(r["kind"], r["software"]) for r in ROWS}
    assert {("framework", f) for f in frameworks()} <= named, "a framework with no hardware row runs nowhere"
    assert {("engine", e) for e in engines()} <= named
    known = {("framework", f) for f in frameworks()} | {("engine", e) for e in engines()} | {
        ("library", "bitsandbytes")}
    assert named <= known, named - known  # a typo in a name would silently support nothing


def test_an_unordered_oldest_architecture_is_a_load_error_at_its_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    text = (BUNDLED_DIR / "runs_on.csv").read_text(encoding="utf-8")
    (tmp_path / "runs_on.csv").write_text(text.replace("framework,unsloth,NVIDIA,Volta", "framework,unsloth,"
                                                       "NVIDIA,Voltaa"), encoding="utf-8")
    monkeypatch.setattr(hardware, "BUNDLED_DIR", tmp_path)
    hardware.support_table.cache_clear()
    try:
        with pytest.raises(CatalogError, match=r"runs_on\.csv:[0-9]+: column 'oldest_architecture'") as info:
            hardware.support_table()
        assert "Volta" in info.value.fix
    finally:
        hardware.support_table.cache_clear()


@pytest.mark.parametrize(("kind", "software", "gpu", "runs", "source"), [
    ("framework", "axolotl", "A100-80GB", True, "axolotl docs/installation.qmd: NVIDIA or AMD GPU"),
    ("framework", "axolotl", "MI300X", True, "same"),
    ("framework", "axolotl", "TPU-v6e", False, "same: no TPU path"),
    ("framework", "axolotl", "M4-Max-40C", False, "axolotl docs/mac.md: partially usable"),
    ("framework", "unsloth", "P100", False, "Unsloth requirements: CUDA capability 7.0 or newer"),
    ("framework", "unsloth", "V100", True, "same"),
    ("framework", "hf", "TPU-v6e", True, "HF blog pytorch-xla: the Trainer on Cloud TPU"),
    ("framework", "hf", "M2-Ultra", True, "transformers perf_train_special: Trainer uses mps"),
    ("framework", "megatron", "MI300X", False, "upstream Megatron-LM: NVIDIA; AMD is the ROCm fork"),
    ("library", "bitsandbytes", "P100", True, "bitsandbytes installation: NF4 on compute capability 6.0+"),
    ("library", "bitsandbytes", "MI300X", True, "bitsandbytes v0.50 installation: AMD GPUs"),
    ("library", "bitsandbytes", "TPU-v6e", False, "bitsandbytes installation: no TPU backend"),
])
def test_each_row_means_what_its_source_says(catalog: Catalog, kind: str, software: str, gpu: str, runs: bool,
                                            source: str) -> None:
    g = catalog.gpu(gpu)
    assert hardware.runs_on(kind, software, g.vendor, g.architecture) is runs, source


# ---------------------------------------------------------------- the planner


def test_an_axolotl_lora_plan_never_ranks_a_tpu_or_an_apple_part_and_says_so(frozen_catalog: Catalog) -> None:
    r = _plan(frozen_catalog, "lora", "axolotl")
    assert r.ranked and _vendors(r) <= {"NVIDIA", "AMD"}
    left = _left_out(r)["axolotl"]
    assert set(TPUS) <= set(left) and "M4-Max-40C" in left and "H100" not in left
    d = r.as_dict()
    assert {"gpu": "TPU-v6e", "kind": "framework", "software": "axolotl"} in d["skipped_gpus"]
    note = next(s for s in d["notes"] if s.startswith("Axolotl does not run on "))
    assert "4 Google TPU" in note and "Apple" in note  # by accelerator family, with how many types each
    assert "Axolotl does not run on" in d["explanation"]
    assert "Axolotl 不支持目录中的" in d["explanation_zh"]


def test_the_same_job_ranks_a_tpu_with_a_framework_that_runs_there(frozen_catalog: Catalog) -> None:
    # the Trainer runs on Cloud TPU through PyTorch/XLA (huggingface.co/blog/pytorch-xla): TPU-v6e stays,
    # and with only it and an A100 allowed it is ranked; Axolotl, given the same choice, gets only the A100
    hf = _plan(frozen_catalog, "lora", "hf", ("TPU-v6e", "A100-80GB"))
    assert "TPU-v6e" in {x.estimate.gpu.name for x in hf.ranked}
    assert not hf.notes
    axolotl = _plan(frozen_catalog, "lora", "axolotl", ("TPU-v6e", "A100-80GB"))
    assert axolotl.ranked and {x.estimate.gpu.name for x in axolotl.ranked} <= {"A100-80GB", "A100-80GB-PCIe"}
    assert _left_out(axolotl) == {"axolotl": ("TPU-v6e",)}


def test_qlora_never_ranks_a_part_bitsandbytes_cannot_run(frozen_catalog: Catalog) -> None:
    lora, qlora = _plan(frozen_catalog, "lora", None), _plan(frozen_catalog, "qlora", None)
    assert "Google" in _vendors(lora)  # LoRA in the same plan ranks TPUs: the filter is what keeps them out
    assert "Google" not in _vendors(qlora) and qlora.ranked
    # TPUs and the Ascend NPUs (whose memory bandwidth makes them training candidates): no bitsandbytes backend
    assert set(_left_out(qlora)["bitsandbytes"]) == {*TPUS, "Ascend-910B", "Ascend-910B4"}
    assert "AMD" in _vendors(qlora)  # bitsandbytes v0.50 supports AMD GPUs: no longer NVIDIA only


def test_without_a_framework_a_plan_keeps_every_part_some_framework_runs_on(frozen_catalog: Catalog) -> None:
    # docs/planner.md: no --framework means any listed framework may run the job (plain PyTorch and the HF
    # Trainer run on all six vendors), so nothing is left out for LoRA
    r = _plan(frozen_catalog, "lora", None)
    assert not r.notes and "Google" in _vendors(r)


def test_a_plan_where_no_allowed_gpu_runs_the_framework_is_an_error_naming_it(frozen_catalog: Catalog) -> None:
    with pytest.raises(InfeasibleError, match="Axolotl does not run on TPU-v6e") as info:
        _plan(frozen_catalog, "lora", "axolotl", ("TPU-v6e",))
    assert info.value.field == "--framework" and "--gpu" in info.value.fix and "hf" in info.value.fix


# ---------------------------------------------------------------- estimate


def test_check_training_refuses_a_framework_off_its_hardware(catalog: Catalog) -> None:
    m, job = catalog.model("Qwen2.5-0.5B"), make_job("finetune", method="lora", tokens=1e6, framework="axolotl")
    setup = training_setup(job.for_model(m), Parallelism(), 1)
    check_training(m, catalog.gpu("MI300X"), job, setup)  # AMD: supported
    with pytest.raises(InfeasibleError) as info:
        check_training(m, catalog.gpu("M4-Max-40C"), job, setup)
    assert info.value.field == "--framework"


def test_estimate_cli_names_gpu_and_framework_and_what_to_do() -> None:
    r = run_cli("estimate", "Llama-3.1-8B", "--task", "finetune", "--method", "lora", "--gpu", "TPU-v6e",
                "--framework", "axolotl", "--tokens", "1e7")
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout
    assert r.stderr.startswith("error: --framework: Axolotl does not run on TPU-v6e"), r.stderr
    assert "To fix: use a --gpu it runs on: NVIDIA, AMD; or a --framework that runs on TPU-v6e: hf, pytorch, trl" \
        in r.stderr
    zh = run_cli("--lang", "zh", "estimate", "Llama-3.1-8B", "--task", "finetune", "--method", "lora", "--gpu",
                 "TPU-v6e", "--framework", "axolotl", "--tokens", "1e7")
    assert zh.returncode == 2 and "Axolotl 不" in zh.stderr and "解决办法" in zh.stderr


def test_estimate_qlora_on_a_tpu_names_bitsandbytes() -> None:
    r = run_cli("estimate", "Qwen2.5-0.5B", "--task", "finetune", "--method", "qlora", "--gpu", "TPU-v5e",
                "--tokens", "1e6")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: --method: QLoRA loads its base through bitsandbytes"), r.stderr


def test_the_http_api_answers_400_with_the_framework_field() -> None:
    body: dict[str, Any] = {"model": "Qwen2.5-0.5B", "task": "finetune", "method": "lora", "gpu": "TPU-v6e",
                            "framework": "axolotl", "tokens": "1M"}
    response = TestClient(create_app()).post("/api/estimate", json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["field"] == "framework" and "Axolotl does not run on TPU-v6e" in error["error"]
    assert "--" not in error["fix"] and "gpu" in error["fix"]  # API field names, not CLI options


def test_plan_json_lists_the_gpus_left_out() -> None:
    r = run_cli("plan", "finetune", "Qwen2.5-0.5B", "--method", "qlora", "--samples", "2000",
                "--tokens-per-sample", "256", "--json")
    assert r.returncode == 0, r.stderr[-500:]
    data = json.loads(r.stdout)
    assert {x["gpu"] for x in data["skipped_gpus"]} == {*TPUS, "Ascend-910B", "Ascend-910B4"}
    assert {x["software"] for x in data["skipped_gpus"]} == {"bitsandbytes"}
    # JSON is English whatever the language: --lang zh changes only explanation (explanation_zh is always there)
    assert data["notes"][0].startswith("bitsandbytes (QLoRA's 4-bit base) does not run on 6 GPU type(s)")
    assert "bitsandbytes（QLoRA 的 4 位基座） 不支持目录中的 6 种加速卡" in data["explanation_zh"]


def test_a_vendor_no_framework_lists_gets_no_training_plan_even_without_a_framework() -> None:
    # AWS parts (none bundled; a user's catalog may add a Trainium) have no row in runs_on.csv
    blocker = hardware.training_blocker("AWS", "Trainium2", None, "lora")
    assert blocker == hardware.Blocker("framework", "")
    assert hardware.training_blocker("Google", "TPU v6e (Trillium)", None, "lora") is None  # hf, pytorch, trl
    note = Note("unsupported", ("framework", "", ("Trainium2",), (("AWS", 1),)))
    assert note_text(note, "en").startswith("no listed training framework runs on 1 GPU type(s) of the catalog (1 AWS)")
    assert note_text(note, "zh").startswith("没有已列出的训练框架支持目录中的 1 种加速卡（AWS 1 种）")


# ---------------------------------------------------------------- rows that name a chip


@pytest.mark.parametrize(("gpu", "runs", "source"), [
    ("RX7900XTX", True, "vLLM docs at v0.6.5, 'Installation with ROCm': Radeon RX 7900 series (gfx1100)"),
    ("RX7900XT", True, "same: gfx1100 is Navi 31, both cards"),
    ("Radeon-8060S", True, "vLLM gpu.rocm.inc.md @06d0369d: Ryzen AI MAX (gfx1151), ROCm 7.0.2 or above"),
    ("Radeon-780M", False, "same lists: RDNA 3 too, but gfx1103 is not among them"),
    ("RX6900XT", False, "same lists: no RDNA 2 part"),
    ("MI300X", True, "the CDNA 2-or-newer row, unchanged"),
])
def test_vllm_on_radeon_follows_the_chips_its_docs_list(catalog: Catalog, gpu: str, runs: bool, source: str) -> None:
    g = catalog.gpu(gpu)
    assert hardware.runs_on("engine", "vllm", g.vendor, g.architecture, g.chip) is runs, source


def test_vllm_on_an_rx_7900_xtx_answers_and_on_a_radeon_780m_is_refused(catalog: Catalog) -> None:
    from gpuplan.estimate.job import check_inference
    from gpuplan.types import InferSetup

    s = InferSetup(engine="vllm", weight_format="bf16", prompt_len=512, output_len=128)
    check_inference(catalog.model("Qwen2.5-7B"), catalog.gpu("RX7900XTX"), s)  # no error
    with pytest.raises(InfeasibleError, match="vLLM does not run on Radeon-780M"):
        check_inference(catalog.model("Qwen2.5-7B"), catalog.gpu("Radeon-780M"), s)
    # llama.cpp's HIP backend runs on every AMD part, the 780M included
    check_inference(catalog.model("Qwen2.5-7B"), catalog.gpu("Radeon-780M"), InferSetup(
        engine="llamacpp", weight_format="gguf-q4_k_m", prompt_len=512, output_len=128))


def test_a_row_naming_a_chip_and_an_oldest_architecture_is_a_load_error(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    text = (BUNDLED_DIR / "runs_on.csv").read_text(encoding="utf-8")
    (tmp_path / "runs_on.csv").write_text(text + "engine,sglang,AMD,CDNA 3,docs,2026-12-07,,Navi 31\n",
                                          encoding="utf-8")
    monkeypatch.setattr(hardware, "BUNDLED_DIR", tmp_path)
    hardware.support_table.cache_clear()
    try:
        with pytest.raises(CatalogError, match=r"runs_on\.csv:[0-9]+: column 'oldest_architecture'"):
            hardware.support_table()
    finally:
        hardware.support_table.cache_clear()
