"""Serving replicas over several nodes: the Kubernetes export as a LeaderWorkerSet and the SkyPilot export with
``num_nodes``, each validated by the target's own schema or loader, and the per-node scripts run through ``sh``
with the launcher's variables set, so the server flags checked are the ones the servers would receive.

Validators: the LeaderWorkerSet CRD's openAPIV3Schema (tests/fixtures/lws, cut from kubernetes-sigs/lws@v0.10.0
by scripts/trim_lws_schema.py) with jsonschema, made strict as the API server's strict field validation is
(an unknown field is an error); kubernetes-validate (strict) for the Service, PodDisruptionBudget, HPA and both pod
templates as core/v1 PodTemplates; SkyPilot 0.14.1's task schema, loader and ``validate_service_task``; the
recorded vLLM 0.33.0 / SGLang 0.5.23 option sets.

Regenerate the golden files after an intended change with ``GPUPLAN_UPDATE_GOLDEN=1 pytest tests/test_export_lws.py``.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from test_export import _check_argv, _skypilot_load

from gpuplan.errors import InputError
from gpuplan.export import serve_document, text
from gpuplan.export.serve import ServeGroup
from gpuplan.types import Offer

FIXTURE = Path(__file__).parent / "fixtures" / "lws" / "leaderworkerset_v1_schema.json"
GOLDEN = Path(__file__).parent / "golden"

# Llama-3.1-405B in FP8 as TP 8 within a node × PP 2 across two (the LWS vLLM example's layout); DeepSeek-V3 as 16
# data-parallel attention ranks with the experts split over them (the practitioners' two-node layout)
TP_PP = ServeGroup(model="meta-llama/Llama-3.1-405B-Instruct", gpu="H100", engine="vllm", weight_format="fp8",
                   tp=8, pp=2, context_len=8192, max_num_seqs=64, replicas=2, name="gpuplan-llama-3-1-405b",
                   zones=("us-east-1a", "us-east-1b"), provider="AWS")
EP = ServeGroup(model="deepseek-ai/DeepSeek-V3", gpu="H100", engine="vllm", weight_format="fp8", ep=16,
                context_len=1300, max_num_seqs=125, replicas=2, name="gpuplan-deepseek-v3", provider="AWS")
GROUPS = {"vllm-tp8-pp2": TP_PP, "vllm-ep16": EP, "sglang-tp8-pp2": replace(TP_PP, engine="sglang"),
          "sglang-ep16": replace(EP, engine="sglang")}
P5 = Offer(provider="AWS", instance_type="p5.48xlarge", gpu="H100", gpu_count=8, vcpus=None, ram_bytes=None,
           region="us-east-1", market="global", price_per_hour=55.0, currency="USD", pricing="on-demand",
           billing_granularity_s=1, included_disk_bytes=None, storage_price_per_gb_month=None, gpu_mapping="stated",
           source="test fixture", as_of=dt.date(2026, 1, 1))
LWS_ENV = {"LWS_LEADER_ADDRESS": "gpuplan-x-0.gpuplan-x.default", "LWS_GROUP_SIZE": "2"}
HEAD, OTHER = "10.0.0.1", "10.0.0.2"


def _strict(schema: Any) -> Any:
    """The schema with unknown fields refused wherever it lists the fields (not where it keeps them open)."""
    if isinstance(schema, list):
        return [_strict(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        out.setdefault("additionalProperties", False)
    return out


def _validate_lws(doc: dict[str, Any]) -> None:
    schema = json.loads(FIXTURE.read_text(encoding="utf-8"))
    jsonschema.validate(doc, _strict(schema), cls=jsonschema.Draft7Validator)


def _objects(g: ServeGroup) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in serve_document(g, "k8s")}


def _templates(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    t = doc["spec"]["leaderWorkerTemplate"]
    return t["leaderTemplate"], t["workerTemplate"]


def _stubs(tmp_path: Path) -> Path:
    """Programs named vllm, ray and python that print the arguments they were started with, one a line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("vllm", "ray", "python"):
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\necho {name}\nfor a in "$@"; do echo "$a"; done\necho --end--\n',
                        encoding="utf-8")
        stub.chmod(0o755)
    return bin_dir


def _run(script: str, env: dict[str, str], tmp_path: Path) -> list[list[str]]:
    """Run ``script`` under sh with the stubs first on PATH: the argv of every program it started."""
    path = f"{_stubs(tmp_path)}:{os.environ['PATH']}"
    out = subprocess.run(["sh", "-c", script], env={**env, "PATH": path}, capture_output=True, text=True,
                         check=True, timeout=30).stdout
    return [cmd.strip("\n").split("\n") for cmd in out.split("--end--") if cmd.strip()]


def _server(argvs: list[list[str]]) -> tuple[str, list[str]]:
    """(engine, its flags) of the server command among the started programs."""
    (argv,) = [a for a in argvs if a[0] != "ray"]
    return ("vllm", argv[3:]) if argv[0] == "vllm" else ("sglang", argv[3:])


def _flags(flags: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for i, flag in enumerate(flags):
        if flag.startswith("--"):
            nxt = flags[i + 1] if i + 1 < len(flags) else ""
            out[flag] = None if nxt.startswith("--") or not nxt else nxt
    return out


# ---------------------------------------------------------------- the objects, validated


@pytest.mark.parametrize("name", list(GROUPS))
def test_leader_worker_set_is_valid_against_the_lws_crd_schema(name: str) -> None:
    objects = _objects(GROUPS[name])
    assert list(objects) == ["LeaderWorkerSet", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"]
    _validate_lws(objects["LeaderWorkerSet"])


def test_the_crd_schema_refuses_what_the_api_server_would() -> None:
    doc = _objects(TP_PP)["LeaderWorkerSet"]
    for path, value in ((("spec", "leaderWorkerTemplate", "restartPolicy"), "Always"),
                        (("spec", "startupPolicy"), "WorkersFirst"),
                        (("spec", "leaderWorkerTemplate", "groupSize"), 2)):  # the field is `size`
        bad = copy.deepcopy(doc)
        node = bad
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        with pytest.raises(jsonschema.ValidationError):
            _validate_lws(bad)


@pytest.mark.parametrize("name", list(GROUPS))
def test_the_core_objects_and_both_pod_templates_are_valid_kubernetes(name: str) -> None:
    import kubernetes_validate

    objects = _objects(GROUPS[name])
    for kind in ("Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"):
        kubernetes_validate.validate(objects[kind], "1.33", strict=True)
    for i, template in enumerate(_templates(objects["LeaderWorkerSet"])):
        pod_template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"t{i}"},
                        "template": template}
        kubernetes_validate.validate(pod_template, "1.33", strict=True)
        for term in _affinity_terms(template["spec"]):
            # PodAffinityTerm.matchLabelKeys (core/v1, 1.33): "The same key is forbidden to exist in both
            # matchLabelKeys and labelSelector. Also, matchLabelKeys cannot be set when labelSelector isn't set."
            selector = term["labelSelector"]
            used = set(selector.get("matchLabels", {})) | {e["key"] for e in selector.get("matchExpressions", [])}
            assert not used & set(term.get("matchLabelKeys", ())), term


def _affinity_terms(pod: dict[str, Any]) -> list[dict[str, Any]]:
    affinity = pod.get("affinity", {})
    return [t for kind in ("podAffinity", "podAntiAffinity")
            for t in affinity.get(kind, {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])]


# ---------------------------------------------------------------- what the objects do


def test_one_replica_is_two_pods_of_eight_gpus_and_only_the_leader_serves() -> None:
    objects = _objects(TP_PP)
    doc = objects["LeaderWorkerSet"]
    assert doc["spec"]["replicas"] == 2 and doc["spec"]["leaderWorkerTemplate"]["size"] == 2  # 16 GPUs / 8
    assert doc["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    leader, worker = _templates(doc)
    (lc,), (wc,) = leader["spec"]["containers"], worker["spec"]["containers"]
    assert lc["resources"]["limits"] == {"nvidia.com/gpu": 8} == wc["resources"]["limits"]
    assert lc["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert "readinessProbe" not in wc and "livenessProbe" not in wc and "ports" not in wc
    for pod in (leader["spec"], worker["spec"]):
        assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
        assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"
    # the Service and the zone spread see the leaders only: the workers have no `app` label
    assert objects["Service"]["spec"]["selector"] == {"app": "gpuplan-llama-3-1-405b"} == leader["metadata"]["labels"]
    assert "metadata" not in worker
    spread = leader["spec"]["topologySpreadConstraints"][0]
    assert spread["topologyKey"] == "topology.kubernetes.io/zone" and spread["whenUnsatisfiable"] == "DoNotSchedule"
    (term,) = worker["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["matchLabelKeys"] == ["leaderworkerset.sigs.k8s.io/group-key"]  # with its own group's pods
    assert term["topologyKey"] == "topology.kubernetes.io/zone"


@pytest.mark.parametrize("name", list(GROUPS))
def test_no_service_takes_the_name_of_the_sets_own_headless_service(name: str) -> None:
    # the LWS controller creates a headless Service named after the set for its pods' DNS, and skips it when a
    # Service of that name exists (lws v0.10.0 leaderworkerset_controller.go: CreateHeadlessServiceIfNotExists);
    # its webhook wants the set's name a DNS-1035 label (leaderworkerset_webhook.go generalValidate)
    objects = _objects(GROUPS[name])
    set_name = objects["LeaderWorkerSet"]["metadata"]["name"]
    assert objects["Service"]["metadata"]["name"] != set_name
    assert re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", set_name) and len(set_name) <= 63


def test_pdb_and_hpa_act_on_the_whole_set() -> None:
    objects = _objects(TP_PP)
    pdb, hpa = objects["PodDisruptionBudget"], objects["HorizontalPodAutoscaler"]
    assert pdb["spec"] == {"maxUnavailable": 1, "selector": {
        "matchLabels": {"leaderworkerset.sigs.k8s.io/name": "gpuplan-llama-3-1-405b-lws"}}}
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                                             "name": "gpuplan-llama-3-1-405b-lws"}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 4)
    assert hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"] == "6"  # a tenth of the 64-sequence batch


# ---------------------------------------------------------------- the scripts, run


def _lws_scripts(g: ServeGroup) -> tuple[str, str]:
    leader, worker = _templates(_objects(g)["LeaderWorkerSet"])
    return leader["spec"]["containers"][0]["command"][2], worker["spec"]["containers"][0]["command"][2]


def test_vllm_over_ray_starts_the_head_and_serves_on_the_leader_and_joins_it_from_the_worker(tmp_path: Path) -> None:
    first, other = _lws_scripts(TP_PP)
    leader = _run(first, {**LWS_ENV, "LWS_WORKER_INDEX": "0"}, tmp_path)
    assert leader[0] == ["ray", "start", "--head", "--port=6379"]
    engine, flags = _server(leader)
    _check_argv(engine, flags)
    f = _flags(flags)
    assert (f["--tensor-parallel-size"], f["--pipeline-parallel-size"], f["--distributed-executor-backend"]) == \
        ("8", "2", "ray")
    assert _run(other, {**LWS_ENV, "LWS_WORKER_INDEX": "1"}, tmp_path) == [
        ["ray", "start", "--address=gpuplan-x-0.gpuplan-x.default:6379", "--block"]]


@pytest.mark.parametrize("name", ["sglang-tp8-pp2", "sglang-ep16", "vllm-ep16"])
def test_every_pod_runs_its_own_server_with_its_place_in_the_group(name: str, tmp_path: Path) -> None:
    first, other = _lws_scripts(GROUPS[name])
    for index, script in (("0", first), ("1", other)):
        engine, flags = _server(_run(script, {**LWS_ENV, "LWS_WORKER_INDEX": index}, tmp_path))
        _check_argv(engine, flags)
        f = _flags(flags)
        if engine == "sglang":
            assert (f["--nnodes"], f["--node-rank"]) == ("2", index)
            assert f["--dist-init-addr"] == "gpuplan-x-0.gpuplan-x.default:5000"
        else:  # the second node's ranks are 8-15, and it only computes (the leader's API server answers)
            assert f["--data-parallel-address"] == "gpuplan-x-0.gpuplan-x.default"
            assert f.get("--data-parallel-start-rank") == (None if index == "0" else "8")
            assert ("--headless" in f) == (index == "1")


# ---------------------------------------------------------------- SkyPilot


def _sky_task(g: ServeGroup) -> dict[str, Any]:
    return serve_document(g, "skypilot", P5, 1.5, 700e9)


@pytest.mark.parametrize("name", list(GROUPS))
def test_skypilot_service_of_two_nodes_loads_in_skypilot(name: str) -> None:
    from sky.serve import serve_utils

    task = _sky_task(GROUPS[name])
    loaded = _skypilot_load(task)
    serve_utils.validate_service_task(loaded, pool=False)
    assert loaded.num_nodes == 2 and task["num_nodes"] == 2
    (res,) = loaded.resources
    assert res.accelerators == {"H100": 8}  # per node
    assert loaded.service.readiness_path == "/health" and loaded.service.min_replicas == 2


@pytest.mark.parametrize("name", list(GROUPS))
def test_skypilot_run_gives_each_node_its_rank_and_the_head_address(name: str, tmp_path: Path) -> None:
    g = GROUPS[name]
    run = _sky_task(g)["run"]
    env = {"SKYPILOT_NODE_IPS": f"{HEAD}\n{OTHER}\n", "SKYPILOT_NUM_NODES": "2"}
    head = _run(run, {**env, "SKYPILOT_NODE_RANK": "0"}, tmp_path)
    engine, flags = _server(head)
    _check_argv(engine, flags)
    assert _flags(flags)["--port"] == "8000"  # the port SkyServe probes on the head
    other = _run(run, {**env, "SKYPILOT_NODE_RANK": "1"}, tmp_path)
    joined = " ".join(" ".join(a) for a in other)
    assert HEAD in joined and OTHER not in joined  # every node finds the head, the first address
    if g.engine == "sglang":
        assert _flags(_server(other)[1])["--node-rank"] == "1"


# ---------------------------------------------------------------- refused, and golden files


def test_a_replica_that_does_not_fill_whole_nodes_is_refused() -> None:
    for fmt in ("k8s", "skypilot"):
        with pytest.raises(InputError, match="12 GPUs") as info:
            serve_document(replace(TP_PP, tp=4, pp=3), fmt, P5)
        assert info.value.field == "--export" and info.value.fix


def test_a_guard_beside_a_replica_over_nodes_is_refused_with_what_to_do() -> None:
    guard = ServeGroup(model="meta-llama/Llama-Guard-3-1B", gpu="H100", engine="vllm")
    for fmt in ("k8s", "skypilot"):
        with pytest.raises(InputError, match="guard") as info:
            serve_document(replace(TP_PP, guard=guard), fmt, P5)
        assert "--guard none" in info.value.fix


GOLDENS = {"serve_lws_vllm.yaml": lambda: text(serve_document(TP_PP, "k8s"), "k8s", "2 × 16× H100", TP_PP),
           "serve_lws_sglang.yaml": lambda: text(serve_document(replace(TP_PP, engine="sglang"), "k8s"), "k8s",
                                                 "2 × 16× H100", TP_PP),
           "serve_two_nodes_sky.yaml": lambda: text(_sky_task(TP_PP), "skypilot", "2 × 16× H100")}


@pytest.mark.parametrize("name", list(GOLDENS))
def test_multi_node_exports_match_golden_files(name: str) -> None:
    written = GOLDENS[name]()
    path = GOLDEN / name
    if os.environ.get("GPUPLAN_UPDATE_GOLDEN"):
        path.write_text(written, encoding="utf-8")
    assert written == path.read_text(encoding="utf-8"), f"{name} changed; see the docstring to update it"
