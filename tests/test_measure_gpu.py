"""The pure parts of the GPU measurement kit (bench/measure_gpu.py): grid, rows, files, budget, no-GPU exit.

None of these tests needs a GPU or torch; the last one runs the torch code paths on the CPU with a tiny model
when torch and transformers happen to be installed, and is skipped otherwise.
"""

from __future__ import annotations

import csv
import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplan import count_params, load_catalog

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import calib  # noqa: E402
import measure_gpu as mg  # noqa: E402

ENV = mg.Env(gpu_name="NVIDIA H100 80GB HBM3", gpu_spec_name="H100", gpu_memory_bytes=85_520_809_984,
             driver="550.54.15", cuda="12.4",
             versions=(("torch", "2.5.1"), ("transformers", "4.46.3"), ("peft", "0.13.2"), ("bitsandbytes", "0.44.1")),
             date="2026-11-29")
SETTINGS = mg.RunSettings()
GiB = 2**30


def train_measurement(**over: Any) -> dict[str, Any]:
    m = {"status": "ok", "peak_allocated_bytes": 10 * GiB, "peak_reserved_bytes": 12 * GiB,
         "step_seconds": [0.5, 0.4, 0.6, 0.45, 0.55], "n_params": 1_235_814_400, "n_trainable": 11_272_192,
         "trainable_dtype": "fp32", "attn": "sdpa", "start_allocated_bytes": 3 * GiB}
    return {**m, **over}


def infer_measurement(**over: Any) -> dict[str, Any]:
    m = {"status": "ok", "prefill_seconds": 0.050, "decode_seconds": 2.54, "peak_allocated_bytes": 3 * GiB,
         "peak_reserved_bytes": 4 * GiB, "n_params": 1_235_814_400, "attn": "sdpa",
         "logits": "for the last position only"}
    return {**m, **over}


def csv_header(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as f:
        return next(csv.reader(f))


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------- grid


ALL_ITEMS = mg.DEFAULT_GRID + mg.QUICK_GRID


@pytest.mark.parametrize("name", sorted({item.model for item in ALL_ITEMS}))
def test_every_grid_model_is_a_bundled_preset_transformers_builds_natively(name: str) -> None:
    cat = load_catalog()
    spec = cat.model(name)  # raises for an unknown name
    entry = cat.models[name]
    assert spec.n_layers > 0
    assert not entry.remote_code, "remote-code models need trust_remote_code: not for a random-weight kit"
    cfg = mg.preset_config(name)
    assert cfg["model_type"] and cfg["vocab_size"] > 0


@pytest.mark.parametrize("grid", [mg.DEFAULT_GRID, mg.QUICK_GRID], ids=["default", "quick"])
def test_grid_keys_are_unique(grid: tuple[mg.GridItem, ...]) -> None:
    keys = [item.key for item in grid]
    assert len(keys) == len(set(keys))


def test_default_grid_covers_every_method_and_the_batch_sizes() -> None:
    methods = {i.method for i in mg.DEFAULT_GRID if isinstance(i, mg.TrainItem)}
    assert methods == set(mg.METHODS)
    batches = {i.batch for i in mg.DEFAULT_GRID if isinstance(i, mg.InferItem)}
    assert {1, 8, 32} <= batches
    seqs = {i.seq_len for i in mg.DEFAULT_GRID if isinstance(i, mg.TrainItem)}
    assert min(seqs) >= 512 and max(seqs) <= 2048


def test_default_grid_fully_fine_tunes_only_small_models() -> None:
    """bf16 AdamW full fine-tuning needs ~8 bytes per parameter before activations: keep it to models that fit
    an 80 GB GPU with room to spare; Llama-3.1-8B gets LoRA/QLoRA and inference only."""
    cat = load_catalog()
    full = {i.model for i in mg.DEFAULT_GRID if isinstance(i, mg.TrainItem) and i.method == "full"}
    assert full and all(count_params(cat.model(name)).total < 4e9 for name in full)
    eight_b = {i.method for i in mg.DEFAULT_GRID if isinstance(i, mg.TrainItem) and i.model == "Llama-3.1-8B"}
    assert eight_b == {"lora", "qlora"}


def test_quick_grid_is_one_small_model() -> None:
    models = {i.model for i in mg.QUICK_GRID}
    assert len(models) == 1
    assert count_params(load_catalog().model(models.pop())).total < 1e9


def test_grid_items_are_frozen_and_validated() -> None:
    item = mg.TrainItem("Llama-3.2-1B", "lora", 4, 1024)
    with pytest.raises(AttributeError):
        item.batch = 8  # type: ignore[misc]
    with pytest.raises(ValueError, match="method"):
        mg.TrainItem("Llama-3.2-1B", "dora", 4, 1024)
    with pytest.raises(ValueError):
        mg.TrainItem("Llama-3.2-1B", "full", 0, 1024)
    with pytest.raises(ValueError):
        mg.InferItem("Llama-3.2-1B", 1, 512, 1)
    assert mg.TrainItem("X", "qlora", 1, 8).needs == ("peft", "bitsandbytes")
    assert mg.TrainItem("X", "full", 1, 8).needs == ()


def test_only_filters_the_grid() -> None:
    picked = mg.select_grid(False, "mistral")
    assert picked and all(i.model == "Mistral-7B" for i in picked)
    assert mg.select_grid(True, None) == mg.QUICK_GRID
    assert mg.main(["--dry-run", "--only", "no-such-item"]) == mg.EXIT_CANNOT_RUN  # a filter that selects nothing


# ---------------------------------------------------------------- rows


def test_output_columns_are_the_calibration_files_columns() -> None:
    assert list(mg.FINETUNE_COLUMNS) == csv_header(BENCH / "calibration" / "finetune_runs.csv")
    assert list(mg.INFERENCE_COLUMNS) == csv_header(BENCH / "calibration" / "inference_runs.csv")


def test_finetune_rows_have_the_columns_and_carry_the_conditions() -> None:
    item = mg.TrainItem("Llama-3.2-1B", "lora", 4, 1024, grad_ckpt=True)
    facts = mg.ModelFacts.from_config(mg.preset_config(item.model))
    rows = mg.finetune_rows(item, train_measurement(), ENV, facts, SETTINGS)
    assert [r["measured_quantity"] for r in rows] == ["peak_mem_allocated_gib", "peak_mem_reserved_gib",
                                                      "step_time_s", "tokens_per_s"]
    for row in rows:
        assert tuple(row) and set(row) == set(mg.FINETUNE_COLUMNS)
        assert row["source"] == "gpuplan bench/measure_gpu.py run 2026-11-29"
        assert row["confidence"] == "exact" and row["category"] == "finetune" and row["method"] == "lora"
        assert row["gpu"] == "NVIDIA H100 80GB HBM3" and row["gpu_count"] == "1"
        assert "grad ckpt=True" in row["batch"] and row["batch"].startswith("4 ")
        assert row["seq_len"].startswith("1024")
        assert (row["layers"], row["hidden"], row["heads"]) == ("16", "2048", "32")
        for text in ("torch 2.5.1", "transformers 4.46.3", "peft 0.13.2", "bitsandbytes 0.44.1", "CUDA 12.4"):
            assert text in row["framework"]
        for text in ("driver 550.54.15", "AdamW", "dtype=bfloat16", "grad_ckpt=on", "lora r=16",
                     "3 warm-up + 5 timed steps", "trainable params 11272192 of 1235814400"):
            assert text in row["notes"]
        assert "fp32 LoRA adapters" in row["precision"]
    by_quantity = {r["measured_quantity"]: r for r in rows}
    assert float(by_quantity["peak_mem_allocated_gib"]["value"]) == 10.0
    assert float(by_quantity["peak_mem_reserved_gib"]["value"]) == 12.0
    assert float(by_quantity["step_time_s"]["value"]) == 0.5  # the median of the timed steps
    assert float(by_quantity["tokens_per_s"]["value"]) == 4 * 1024 / 0.5
    assert len({r["id"] for r in rows}) == len(rows)


def test_finetune_rows_differ_by_condition() -> None:
    facts = mg.ModelFacts.from_config(mg.preset_config("Llama-3.2-1B"))
    ids = set()
    for item in (mg.TrainItem("Llama-3.2-1B", "full", 4, 1024), mg.TrainItem("Llama-3.2-1B", "full", 4, 1024, True),
                 mg.TrainItem("Llama-3.2-1B", "full", 2, 1024), mg.TrainItem("Llama-3.2-1B", "lora", 4, 1024)):
        ids |= {r["id"] for r in mg.finetune_rows(item, train_measurement(), ENV, facts)}
    assert len(ids) == 16
    other_gpu = mg.Env(**{**{f: getattr(ENV, f) for f in ENV.__slots__}, "gpu_spec_name": "H200",
                          "gpu_name": "NVIDIA H200"})
    item = mg.TrainItem("Llama-3.2-1B", "full", 4, 1024)
    assert not ids & {r["id"] for r in mg.finetune_rows(item, train_measurement(), other_gpu, facts)}


def test_oom_is_one_row_saying_so() -> None:
    item = mg.TrainItem("Llama-3.1-8B", "lora", 2, 2048)
    facts = mg.ModelFacts.from_config(mg.preset_config(item.model))
    rows = mg.finetune_rows(item, {"status": "oom", "error": "CUDA out of memory. Tried to allocate 2 GiB"}, ENV, facts)
    assert len(rows) == 1 and rows[0]["measured_quantity"] == "oom" and rows[0]["value"] == "1"
    assert "OOM on 80GiB" in rows[0]["unit"] and "out of memory" in rows[0]["notes"]
    assert mg.finetune_cases(item, rows, ENV) == []
    irows = mg.inference_rows(mg.InferItem("Llama-3.1-8B", 32, 512, 128), {"status": "oom", "error": "x"}, ENV)
    assert [r["metric"] for r in irows] == ["oom"] and set(irows[0]) == set(mg.INFERENCE_COLUMNS)


@pytest.mark.parametrize("batch", [1, 8])
def test_inference_rows_have_the_columns_and_carry_the_conditions(batch: int) -> None:
    item = mg.InferItem("Llama-3.2-1B", batch, 512, 128)
    rows = mg.inference_rows(item, infer_measurement(), ENV, SETTINGS)
    per = "batch1" if batch == 1 else "total"
    by_metric = {r["metric"]: r for r in rows}
    assert set(by_metric) == {"prefill_latency_ms", f"decode_tok_s_{per}", f"generate_output_tok_s_{per}",
                              "peak_mem_gib", "peak_mem_reserved_gib"}
    for row in rows:
        assert set(row) == set(mg.INFERENCE_COLUMNS)
        assert (row["isl"], row["osl"], row["batch_or_concurrency"]) == ("512", "128", str(batch))
        assert row["engine"] == "HF transformers" and row["engine_version"] == "4.46.3"
        assert row["gpu"] == "NVIDIA H100 80GB HBM3" and row["gpu_spec_name"] == "H100"
        assert row["precision"] == "BF16" and row["date"] == "2026-11-29"
        assert row["source"] == "gpuplan bench/measure_gpu.py run 2026-11-29"
        for text in ("driver 550.54.15", "torch 2.5.1", "greedy", "dtype=bfloat16"):
            assert text in row["notes"]
    assert float(by_metric["prefill_latency_ms"]["value"]) == 50.0
    assert float(by_metric[f"decode_tok_s_{per}"]["value"]) == pytest.approx(batch * 127 / 2.54, abs=0.05)
    assert float(by_metric[f"generate_output_tok_s_{per}"]["value"]) == pytest.approx(batch * 128 / 2.59, abs=0.05)
    assert float(by_metric["peak_mem_gib"]["value"]) == 3.0


def test_inference_rows_become_calibration_cases() -> None:
    """Copied into bench/calibration/, the rows map to gpuplan estimates as the published ones do."""
    cat = load_catalog()
    for batch in (1, 8):
        rows = mg.inference_rows(mg.InferItem("Llama-3.1-8B", batch, 512, 128), infer_measurement(), ENV)
        mapped = {}
        for row in rows:
            case, _why = calib._inference_case(cat, row)
            mapped[row["metric"]] = case
            if case is not None:
                assert math.isfinite(case.measured) and case.measured > 0
                assert math.isfinite(case.predict(_fitted()))
        assert mapped["prefill_latency_ms"] is not None and mapped["peak_mem_gib"] is not None
        assert mapped["generate_output_tok_s_batch1" if batch == 1 else "generate_output_tok_s_total"] is not None
        assert mapped["peak_mem_reserved_gib"] is None  # not an estimate gpuplan makes
    decode = mg.inference_rows(mg.InferItem("Llama-3.1-8B", 1, 512, 128), infer_measurement(), ENV)[1]
    assert calib._inference_case(cat, decode)[0] is not None


def _fitted() -> Any:
    from gpuplan.estimate.calibration import fitted

    return fitted()


def test_finetune_cases_map_the_rows_for_bench_fit() -> None:
    """measured_cases.yaml entries are accepted by bench/calib.py and predict the measured quantity."""
    cat = load_catalog()
    defaults = yaml.safe_load((BENCH / "cases.yaml").read_text(encoding="utf-8"))["defaults"]["train"]
    for item in (mg.TrainItem("Llama-3.2-1B", "full", 4, 1024, True), mg.TrainItem("Llama-3.1-8B", "qlora", 2, 2048),
                 mg.TrainItem("Qwen2.5-3B", "ptuning", 2, 1024)):
        facts = mg.ModelFacts.from_config(mg.preset_config(item.model))
        rows = mg.finetune_rows(item, train_measurement(), ENV, facts)
        cases = mg.finetune_cases(item, rows, ENV)
        assert {c["measure"] for c in cases} == {"active", "reserved", "tokens_per_s"}
        by_id = {r["id"]: r for r in rows}
        for spec in cases:
            case = calib._training_case(cat, spec, by_id[spec["id"]], defaults)
            assert math.isfinite(case.predict(_fitted())) and case.measured > 0
    no_gpu = mg.Env(**{**{f: getattr(ENV, f) for f in ENV.__slots__}, "gpu_spec_name": ""})
    assert mg.finetune_cases(item, rows, no_gpu) == []


# ---------------------------------------------------------------- files


def _rows(n: int, value: str = "1", start: int = 0) -> list[dict[str, str]]:
    return [{**dict.fromkeys(mg.INFERENCE_COLUMNS, ""), "id": f"row-{i}", "value": value}
            for i in range(start, start + n)]


def test_writing_twice_appends_and_dedupes_by_id(tmp_path: Path) -> None:
    path = tmp_path / "measured_inference.csv"
    first = mg.write_csv_rows(path, _rows(3, "1"), mg.INFERENCE_COLUMNS)
    assert (first.added, first.replaced, first.total) == (3, 0, 3)
    second = mg.write_csv_rows(path, _rows(3, "2", start=2), mg.INFERENCE_COLUMNS)  # row-2 again, row-3/4 new
    assert (second.added, second.replaced, second.total) == (2, 1, 5)
    rows = read_rows(path)
    assert [r["id"] for r in rows] == ["row-0", "row-1", "row-2", "row-3", "row-4"]
    assert [r["value"] for r in rows] == ["1", "1", "2", "2", "2"]  # the newer row-2 replaced the older one
    assert csv_header(path) == list(mg.INFERENCE_COLUMNS)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "measured_inference.csv"
    mg.write_csv_rows(path, _rows(2), mg.INFERENCE_COLUMNS)
    before = path.read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(mg.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        mg.write_csv_rows(path, _rows(5, "9"), mg.INFERENCE_COLUMNS)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["measured_inference.csv"]


def test_a_row_with_other_columns_is_refused_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "measured_inference.csv"
    mg.write_csv_rows(path, _rows(1), mg.INFERENCE_COLUMNS)
    before = path.read_bytes()
    bad = [{**_rows(1)[0], "extra": "x"}]
    with pytest.raises(ValueError, match="columns"):
        mg.write_csv_rows(path, bad, mg.INFERENCE_COLUMNS)
    assert path.read_bytes() == before


def test_an_existing_file_with_other_columns_is_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "measured_inference.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="other columns"):
        mg.write_csv_rows(path, _rows(1), mg.INFERENCE_COLUMNS)
    assert path.read_text(encoding="utf-8") == "a,b\n1,2\n"


def test_cases_file_merges_by_id_and_is_yaml(tmp_path: Path) -> None:
    path = tmp_path / "measured_cases.yaml"
    mg.write_cases(path, [{"id": "a", "v": 1}, {"id": "b", "v": 1}])
    report = mg.write_cases(path, [{"id": "b", "v": 2}, {"id": "c", "v": 2}])
    assert (report.added, report.replaced, report.total) == (1, 1, 3)
    assert yaml.safe_load(path.read_text(encoding="utf-8")) == [{"id": "a", "v": 1}, {"id": "b", "v": 2},
                                                               {"id": "c", "v": 2}]


# ---------------------------------------------------------------- time budget and the run loop


def test_budget() -> None:
    assert mg.Budget(None).allows(1e9, 1e9)
    assert mg.Budget(60).allows(50, 10)
    assert not mg.Budget(60).allows(50, 11)
    assert not mg.Budget(60).allows(61)


def test_expected_seconds_learns_from_finished_items() -> None:
    small, big = mg.TrainItem("A", "full", 1, 8), mg.TrainItem("B", "lora", 1, 8)
    done = [mg.Outcome(small, "ok", seconds=10), mg.Outcome(small, "ok", seconds=12),
            mg.Outcome(mg.InferItem("B", 1, 8, 8), "ok", seconds=99), mg.Outcome(big, "skipped", seconds=500)]
    assert mg.expected_seconds(mg.TrainItem("A", "lora", 1, 8), done) == 12  # same model and kind
    assert mg.expected_seconds(big, done) == 12  # no finished B training: the longest training so far
    assert mg.expected_seconds(mg.InferItem("C", 1, 8, 8), []) == 0


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_run_grid_skips_oom_errors_and_budget_and_writes_rows(tmp_path: Path) -> None:
    clock = FakeClock()
    grid = (mg.TrainItem("Llama-3.2-1B", "full", 4, 1024), mg.TrainItem("Llama-3.2-1B", "qlora", 4, 1024),
            mg.TrainItem("Llama-3.2-1B", "lora", 4, 1024), mg.InferItem("Llama-3.2-1B", 1, 512, 128),
            mg.InferItem("Llama-3.2-1B", 8, 512, 128), mg.InferItem("Llama-3.2-1B", 32, 512, 128))

    def measure(item: mg.GridItem, s: mg.RunSettings) -> dict[str, Any]:
        clock.now += 100
        if isinstance(item, mg.TrainItem):
            if item.method == "lora":
                raise RuntimeError("peft broke\nsecond line")
            return train_measurement()
        if item.batch == 8:
            return {"status": "oom", "error": "CUDA out of memory"}
        return infer_measurement()

    files = mg.OutputFiles(tmp_path)
    outcomes = mg.run_grid(grid, measure, ENV, files, mg.Budget(450), clock=clock,
                           available=lambda name: name != "bitsandbytes")
    assert [o.status for o in outcomes] == ["ok", "skipped", "error", "ok", "oom", "skipped"]
    assert "bitsandbytes not installed" in outcomes[1].note
    assert outcomes[2].note == "RuntimeError: peft broke"
    assert outcomes[5].note.startswith("time budget")  # 400 s used, ~100 s expected, 450 s allowed
    finetune = read_rows(tmp_path / mg.FINETUNE_FILE)
    assert len(finetune) == 4 and all("full-b4-s1024" in r["id"] for r in finetune)
    inference = read_rows(tmp_path / mg.INFERENCE_FILE)
    assert len(inference) == 6 and sum(r["metric"] == "oom" for r in inference) == 1
    assert len(mg.read_cases(tmp_path / mg.CASES_FILE)) == 3
    caption = mg.summary_caption(outcomes, 400, mg.Budget(450))
    assert "1 item(s) skipped for the time budget" in caption and "7.5-minute budget" in caption
    table = [mg.summary_row(o) for o in outcomes]
    assert all(len(r) == len(mg.SUMMARY_HEADERS) for r in table)
    assert table[0][1] == "ok" and "tok/s" in table[0][5] and table[4][1] == "oom"


# ---------------------------------------------------------------- no GPU, dry run


def test_no_gpu_exits_2_with_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    monkeypatch.setattr(mg, "missing_packages", lambda names: [])
    monkeypatch.setattr(mg, "_cuda_status", lambda: "no NVIDIA GPU is visible to torch.")
    monkeypatch.setattr(mg, "collect_env", lambda: pytest.fail("must not measure without a GPU"))
    assert mg.main(["--quick", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "measure_gpu: no NVIDIA GPU is visible to torch."
    assert not (tmp_path / "out").exists()


def test_an_output_file_with_other_columns_stops_the_run_before_measuring(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setattr(mg, "environment_problem", lambda: None)
    monkeypatch.setattr(mg, "collect_env", lambda: pytest.fail("must not measure"))
    (tmp_path / mg.INFERENCE_FILE).write_text("a,b\n", encoding="utf-8")
    assert mg.main(["--quick", "--out", str(tmp_path)]) == 2
    assert "other columns" in capsys.readouterr().err
    assert (tmp_path / mg.INFERENCE_FILE).read_text(encoding="utf-8") == "a,b\n"


def test_missing_torch_is_reported_with_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mg, "missing_packages", lambda names: ["torch"])
    problem = mg.environment_problem(cuda_status=lambda: pytest.fail("must not probe CUDA without torch"))
    assert problem and "pip install torch" in problem and "\n" not in problem


def test_no_gpu_subprocess_exits_2_without_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, str(BENCH / "measure_gpu.py"), "--quick", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("measure_gpu: ") and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_dry_run_prints_the_grid_without_gpu_or_torch(tmp_path: Path) -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, str(BENCH / "measure_gpu.py"), "--dry-run"],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in {i.model for i in mg.DEFAULT_GRID}:
        assert name in proc.stdout
    assert f"{len(mg.DEFAULT_GRID)} items" in proc.stdout
    assert not list(tmp_path.iterdir())  # a dry run writes nothing


def test_quick_dry_run_lists_the_quick_grid(capsys: pytest.CaptureFixture[str]) -> None:
    assert mg.main(["--quick", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{len(mg.QUICK_GRID)} items" in out and "Qwen2.5-0.5B" in out and "Llama-3.1-8B" not in out


def test_plain_table_aligns_columns() -> None:
    text = mg.plain_table(("a", "bb"), [("xxx", "y"), ("z", "wwww")])
    lines = text.splitlines()
    assert lines[0] == "a    bb" and lines[1] == "---  ----" and lines[2] == "xxx  y"


# ---------------------------------------------------------------- torch code paths on the CPU (optional)


def _tiny(cfg: dict[str, Any]) -> dict[str, Any]:
    small = {k: v for k, v in cfg.items() if k != "head_dim"}
    ratio = cfg["num_attention_heads"] // cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    small.update(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                 num_key_value_heads=max(1, 4 // ratio), vocab_size=512)
    return small


@pytest.mark.skipif(importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None,
                    reason="torch and transformers are not installed")
def test_torch_paths_run_on_cpu_with_a_tiny_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = mg.preset_config
    monkeypatch.setattr(mg, "preset_config", lambda name: _tiny(real(name)))
    settings = mg.RunSettings(warmup_steps=1, timed_steps=2, prefill_repeats=1, warmup_decode_tokens=1)
    measure = mg.GpuMeasure(device="cpu")
    grid = (mg.TrainItem("Llama-3.2-1B", "full", 2, 32), mg.TrainItem("Llama-3.2-1B", "ptuning", 2, 32, prefix_len=4),
            mg.InferItem("Llama-3.2-1B", 2, 16, 4))
    outcomes = mg.run_grid(grid, measure, ENV, mg.OutputFiles(tmp_path), mg.Budget(None), settings)
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"], [o.note for o in outcomes]
    full, prefix, infer = (o.measurement for o in outcomes)
    assert full["n_trainable"] == full["n_params"] and len(full["step_seconds"]) == 2
    assert 0 < prefix["n_trainable"] < prefix["n_params"]
    assert infer["decode_seconds"] > 0 and infer["logits"] == "for the last position only"


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_out_of_memory_becomes_an_oom_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    def oom(item: mg.TrainItem, s: mg.RunSettings, device: str) -> dict[str, Any]:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore")

    measure = mg.GpuMeasure(device="cpu")
    monkeypatch.setattr(mg, "measure_train", oom)
    m = measure(mg.TrainItem("Llama-3.2-1B", "full", 4, 1024), SETTINGS)
    assert m == {"status": "oom", "error": "CUDA out of memory. Tried to allocate 2.00 GiB"}

    def broken(item: mg.TrainItem, s: mg.RunSettings, device: str) -> dict[str, Any]:
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    monkeypatch.setattr(mg, "measure_train", broken)
    with pytest.raises(RuntimeError, match="shapes"):  # not a memory error: the grid records it as an error
        measure(mg.TrainItem("Llama-3.2-1B", "full", 4, 1024), SETTINGS)
