"""The CLI's --export path: --json keeps stdout one JSON document with the export inside it; --out writes the file
and says where in the JSON."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

Cli = Callable[..., subprocess.CompletedProcess[str]]
SERVE = ("plan", "serve", "Qwen2.5-0.5B", "--rps", "1")


@pytest.mark.parametrize("fmt", ["vllm", "sglang", "k8s", "skypilot"])
def test_export_with_json_keeps_stdout_one_json_document(cli: Cli, fmt: str) -> None:
    engine = ("--engine", "sglang") if fmt == "sglang" else ()
    result = cli(*SERVE, *engine, "--export", fmt, "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # nothing printed before or after the JSON
    export = data["export"]
    assert export["format"] == fmt and export["plan"]
    n = len(data["fleet"]["groups"])
    assert len(export["groups"]) == n  # every group of the fleet
    if fmt in ("vllm", "sglang"):  # the commands are inside the JSON, as argv and as the lines the file holds
        assert all(argv[0] in ("vllm", "python") for argv in export["document"])
        lines = [x for x in export["text"].splitlines() if x and not x.startswith("#")]
        assert [shlex.split(x) for x in lines] == export["document"]
    elif fmt == "k8s":
        kinds = [d["kind"] for d in export["document"]]
        assert kinds == ["Deployment"] * n + ["Service"] + ["PodDisruptionBudget"] * n + \
            ["HorizontalPodAutoscaler"] * n
    else:
        assert list(yaml.safe_load_all(export["text"])) == export["document"]


def test_export_with_json_and_out_writes_the_file_and_names_it(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "serve.sh"
    result = cli(*SERVE, "--export", "vllm", "--json", "--out", str(target))
    assert result.returncode == 0, result.stderr
    export = json.loads(result.stdout)["export"]
    assert export["path"] == str(target) and target.read_text(encoding="utf-8") == export["text"]


def test_bnb_nf4_on_vllm_is_an_input_error_naming_the_fix(cli: Cli) -> None:
    result = cli(*SERVE, "--quant", "bnb-nf4", "--export", "vllm")
    assert result.returncode == 2, result.stderr
    assert "has no on-load bnb-nf4" in result.stderr and "--engine sglang" in result.stderr
