"""Keep the docs honest: every CLI command has help and is in the README, every data column is documented,
every fitted parameter is explained, and the accuracy report covers every class."""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from gpuplan.catalog import BUNDLED_DIR
from gpuplan.cli import app
from gpuplan.estimate.engines import EFFICIENCY_PRIORS
from gpuplan.types import Engine

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
DATA_README = (BUNDLED_DIR / "README.md").read_text(encoding="utf-8")
ESTIMATORS = (REPO / "docs" / "estimators.md").read_text(encoding="utf-8")
ACCURACY = REPO / "docs" / "accuracy.md"
PARAMS = json.loads((BUNDLED_DIR / "fitted" / "params.json").read_text(encoding="utf-8"))
# every key per-engine parameters are fitted under: the engines, and the backends fitted apart (llama.cpp's Metal,
# vLLM on Ascend), longest first so that "_vllm_ascend" is matched before "_vllm"
ENGINE_SUFFIXES = tuple(sorted({*(e.value for e in Engine), *EFFICIENCY_PRIORS, *EFFICIENCY_PRIORS.values()},
                               key=len, reverse=True))


def _commands(cmd: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    cmd = cmd or typer.main.get_command(app)
    if path:
        yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands())


def test_the_command_tree_is_what_the_readme_describes() -> None:
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"gpus", "offers", "models", "model", "platforms", "estimate", "fit", "compare", "buy", "plan",
            "plan finetune", "plan pretrain", "plan infer", "plan serve"} <= names


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_help_and_is_in_the_readme(path: tuple[str, ...], cmd: Any) -> None:
    assert (cmd.help or "").strip(), f"'gpuplan {' '.join(path)}' has no help text"
    assert f"gpuplan {' '.join(path)}" in README, f"'gpuplan {' '.join(path)}' is not in README.md"


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_and_argument_has_help(path: tuple[str, ...], cmd: Any) -> None:
    bare = [getattr(p, "opts", None) or p.name for p in cmd.params if not (getattr(p, "help", None) or "").strip()]
    assert not bare, f"'gpuplan {' '.join(path)}': no help for {bare}"


# ---------------------------------------------------------------- data columns

CATALOG_FILES = ["gpus.csv", "gpu_aliases.csv", "purchase_prices.csv", "platforms.csv", "fx.csv",
                 "models/index.csv", *sorted(f"offers/{p.name}" for p in (BUNDLED_DIR / "offers").glob("*.csv"))]
OTHER_FILES = sorted(str(p.relative_to(BUNDLED_DIR)) for p in BUNDLED_DIR.rglob("*.csv")
                     if str(p.relative_to(BUNDLED_DIR)) not in CATALOG_FILES)


def _header(rel: str) -> list[str]:
    with (BUNDLED_DIR / rel).open(encoding="utf-8-sig", newline="") as f:
        return next(csv.reader(f))


def _undocumented(rel: str) -> list[str]:
    return [c for c in _header(rel) if f"`{c}`" not in DATA_README]


@pytest.mark.parametrize("rel", CATALOG_FILES)
def test_every_catalog_column_is_documented(rel: str) -> None:
    section = "`offers/<provider>.csv`" if rel.startswith("offers/") else f"`{rel}`"
    assert section in DATA_README, f"{rel} has no section in gpuplan/data/README.md"
    assert not _undocumented(rel), f"{rel}: columns not in gpuplan/data/README.md: {_undocumented(rel)}"


@pytest.mark.parametrize("rel", OTHER_FILES)
def test_every_other_data_file_is_documented_column_by_column(rel: str) -> None:
    # README.md: "gpuplan/data/ holds the catalogs, documented column by column in gpuplan/data/README.md";
    # STYLE.md: "every data column is documented"
    assert f"`{rel}`" in DATA_README, f"{rel} has no section in gpuplan/data/README.md"
    assert not _undocumented(rel), f"{rel}: columns not in gpuplan/data/README.md: {_undocumented(rel)}"


# ---------------------------------------------------------------- fitted parameters


def _family(name: str) -> str:
    """eta_memory_vllm -> eta_memory_* (per-engine parameters are documented as a family)."""
    for suffix in ENGINE_SUFFIXES:
        if name.endswith("_" + suffix):
            return name[: -len(suffix)] + "*"
    return name


@pytest.mark.parametrize("name", sorted(PARAMS["values"]))
def test_every_fitted_parameter_is_in_estimators_md(name: str) -> None:
    assert f"`{name}`" in ESTIMATORS or f"`{_family(name)}`" in ESTIMATORS, \
        f"{name} ({_family(name)}) is not explained in docs/estimators.md"


def test_every_prior_is_a_fitted_parameter_with_a_reason() -> None:
    assert set(PARAMS["priors"]) <= set(PARAMS["values"])
    assert all(reason.strip() for reason in PARAMS["priors"].values())


def test_every_band_class_is_named_in_the_docs() -> None:
    # params.json "bands" are fitted too (p10-p90 of the residuals), and the CLI prints "band: finetune_time,
    # from calibration residuals (docs/accuracy.md)": a reader must find each class name in the docs
    docs = ESTIMATORS + (ACCURACY.read_text(encoding="utf-8") if ACCURACY.exists() else "")
    missing = [cls for cls in sorted(PARAMS["bands"]) if cls not in docs]
    assert not missing, f"band classes not named in docs/estimators.md or docs/accuracy.md: {missing}"


# ---------------------------------------------------------------- accuracy report


def _accuracy_labels() -> dict[str, str]:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import accuracy  # type: ignore[import-not-found]
        from calib import CLASSES  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(REPO / "bench"))
    assert set(accuracy.LABELS) == set(CLASSES)
    return dict(accuracy.LABELS)


def test_accuracy_report_summary_lists_every_class() -> None:
    assert ACCURACY.exists(), "docs/accuracy.md is missing: run python bench/accuracy.py"
    text = ACCURACY.read_text(encoding="utf-8")
    summary = text.split("## Summary", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip() for line in summary.splitlines() if line.startswith("| ")}
    labels = _accuracy_labels()
    missing = [label for label in labels.values() if label not in rows]
    assert not missing, f"classes missing from the summary of docs/accuracy.md: {missing}"
    for label in labels.values():
        row = next(line for line in summary.splitlines() if line.startswith(f"| {label} |"))
        assert re.search(r"\d+(\.\d+)?%", row), row


def test_readme_links_the_docs_that_exist() -> None:
    for link in re.findall(r"\]\(((?:docs|gpuplan)/[^)#]+)\)", README):
        assert (REPO / link).exists(), link


def test_the_command_reference_is_current() -> None:
    # docs/cli.md is generated from the CLI; a new option or a changed default must be regenerated
    import subprocess

    result = subprocess.run([sys.executable, str(REPO / "scripts" / "cli_reference.py"), "--check"],
                            capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
