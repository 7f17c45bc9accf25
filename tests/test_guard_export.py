"""A co-located guard's hand-off: the two servers' memory shares are written in every export and add up to what
the plan reserved, each model fitting in its share; spot and on-demand groups select their nodes in Kubernetes."""

from __future__ import annotations

import dataclasses
import shlex
from typing import Any

import pytest
import yaml

from gpuplan.catalog import load_catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.job import inference_setup
from gpuplan.estimate.memory import inference_memory
from gpuplan.export import fleet, k8s
from gpuplan.export.guard import append_to_text, guard_export, guard_file
from gpuplan.export.serve import ServeGroup
from gpuplan.plan import guard
from gpuplan.plan import serving as sv
from gpuplan.units import GiB

VLLM_SHARE = 0.9  # engines.csv: vLLM's gpu_memory_utilization default, what the plan reserves on every GPU


def test_the_shares_add_up_to_the_engines_and_the_guard_is_rounded_up() -> None:
    # a guard of 6.3 GB on an 80 GiB GPU: 6.3e9 / 85,899,345,920 = 0.07334 of it, written as 0.074 (rounded up, so
    # the guard never gets less than it needs); vLLM's 0.9 less that leaves 0.826 for the main server, SGLang's
    # 0.88 leaves 0.806
    assert guard.memory_shares(6.3e9, 80 * GiB, "vllm") == (0.074, 0.826)
    assert guard.memory_shares(6.3e9, 80 * GiB, "sglang") == (0.074, 0.806)
    # an exact step stays: 8 GiB of 80 GiB is 0.1
    assert guard.memory_shares(8 * GiB, 80 * GiB, "vllm") == (0.1, 0.8)


def test_the_main_model_is_planned_on_the_memory_its_share_gives() -> None:
    # the main engine reserves 0.9 of what it sees, so it must see 0.826 / 0.9 of the GPU: 0.9 of that is 0.826
    h100 = load_catalog().gpus["H100"]
    seen = guard.main_gpu(h100, 6.3e9, "vllm")
    assert seen.memory_bytes * VLLM_SHARE == pytest.approx(0.826 * h100.memory_bytes)


@pytest.fixture(scope="module")
def colocated() -> sv.ServePlan:
    cat = load_catalog()
    r = sv.ServeRequest(5.0, targets=sv.Targets(ttft_p99_s=2.0), gpus=("H100",), guard="Llama-Guard-3-1B",
                        providers=("AWS", "GCP", "Nebius", "Cudo Compute"))  # clouds SkyPilot launches H100s on
    p = sv.plan_serving(cat, cat.model("Qwen2.5-7B"), r)
    assert p.guard is not None and p.guard.placement == "colocated", "this scenario's guard is co-located"
    assert p.fleet is not None
    return p


def _flag(argv: list[str], flag: str) -> float:
    return float(argv[argv.index(flag) + 1])


def _exports(p: sv.ServePlan) -> dict[str, Any]:
    cat = load_catalog()
    return {fmt: fleet.export(p, cat.model("Qwen2.5-7B"), "Qwen/Qwen2.5-7B", fmt) for fmt in ("vllm", "k8s",
                                                                                              "skypilot")}


def test_every_export_writes_both_shares_and_they_add_up_to_the_planned_one(colocated: sv.ServePlan) -> None:
    g = guard_export(load_catalog(), colocated)
    assert g is not None
    guard_share = {c["gpu"]: _flag(c["argv"], "--gpu-memory-utilization") for c in g["commands"]}
    ex = _exports(colocated)
    vllm = [doc for doc in ex["vllm"]["document"]]
    pods = [d["spec"]["template"]["spec"] for d in ex["k8s"]["document"] if d["kind"] == "Deployment"]
    sky = [shlex.split(t["run"]) for t in ex["skypilot"]["document"]]
    assert colocated.fleet is not None
    for grp, argv, pod, run in zip(colocated.fleet.groups, vllm, pods, sky, strict=True):
        k8s_argv = pod["containers"][0]["args"]
        main = {_flag(argv, "--gpu-memory-utilization"), _flag(k8s_argv, "--gpu-memory-utilization"),
                _flag(run, "--gpu-memory-utilization")}
        assert len(main) == 1  # the same lowered share in the command, the manifest and the SkyPilot task
        total = main.pop() + guard_share[grp.config.gpu]
        assert total <= VLLM_SHARE + 1e-9 and total == pytest.approx(VLLM_SHARE)


def test_each_model_fits_in_its_share(colocated: sv.ServePlan) -> None:
    cat, cal = load_catalog(), fitted()
    m, gm = cat.model("Qwen2.5-7B"), cat.model("Llama-Guard-3-1B")
    gr = guard.guard_request(colocated.request, guard.presets()["Llama-Guard-3-1B"])
    assert colocated.guard is not None
    shares = {gpu: (g, main) for gpu, g, main in colocated.guard.memory_shares}
    _, fmt, engine, job = sv._basics(m, colocated.request)
    assert colocated.fleet is not None and colocated.guard is not None
    for grp in colocated.fleet.groups:
        c, gpu = grp.config, cat.gpus[grp.config.gpu]
        guard_share, main_share = shares[c.gpu]
        assert guard.guard_bytes(gm, gpu, gr, cal) <= guard_share * gpu.memory_bytes
        s = dataclasses.replace(inference_setup(job, c.tp, engine, fmt), batch=c.max_num_seqs,
                                gpu_memory_utilization=main_share)
        mem = inference_memory(m, gpu, s, cal)  # the planned batch on the whole GPU at the main server's share
        assert mem.breakdown.get("kv_cache") <= mem.extra["kv_budget_bytes"]


def test_the_guard_commands_are_in_the_files_and_the_json(colocated: sv.ServePlan) -> None:
    g = guard_export(load_catalog(), colocated)
    assert g is not None and g["placement"] == "colocated"
    assert "--port 8001" in guard_file(g)["text"] and "together the 0.9 the plan reserved" in g["notes"][1]
    text = append_to_text("a: 1\n", "k8s", g)
    assert yaml.safe_load(text) == {"a": 1}  # the guard's command is a comment: the YAML is unchanged
    assert colocated.guard is not None
    d = colocated.guard.as_dict()["memory_shares"]
    assert d["H100"]["guard"] + d["H100"]["main"] == pytest.approx(VLLM_SHARE)


# ---------------------------------------------------------------- spot and on-demand nodes in Kubernetes


def _pod(provider: str, spot: bool) -> dict[str, Any]:
    g = ServeGroup(model="Qwen/Qwen2.5-7B", gpu="H100", engine="vllm", replicas=2, spot=spot, provider=provider,
                   zones=("zone-a",))
    docs = k8s.manifests(g)
    import kubernetes_validate

    for doc in docs:
        kubernetes_validate.validate(doc, "1.33", strict=True)
    return docs[0]["spec"]["template"]["spec"]


def _terms(pod: dict[str, Any]) -> list[list[tuple[str, str, tuple[str, ...]]]]:
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return [[(e["key"], e["operator"], tuple(e["values"])) for e in t["matchExpressions"]] for t in terms]


ZONE = ("topology.kubernetes.io/zone", "In", ("zone-a",))


def test_a_gke_spot_group_selects_spot_nodes_and_tolerates_their_taint() -> None:
    pod = _pod("GCP", True)
    assert _terms(pod) == [[ZONE, ("cloud.google.com/gke-spot", "In", ("true",))]]
    assert {"key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in \
        pod["tolerations"]


def test_an_aws_spot_group_selects_spot_nodes_of_managed_node_groups_or_karpenter() -> None:
    # the terms are ORed: a node either provisioner labels spot will do
    assert _terms(_pod("AWS", True)) == [[ZONE, ("eks.amazonaws.com/capacityType", "In", ("SPOT",))],
                                         [ZONE, ("karpenter.sh/capacity-type", "In", ("spot",))]]


def test_an_aks_spot_group_tolerates_the_spot_taint_and_an_on_demand_one_keeps_off_spot() -> None:
    spot = _pod("Azure", True)
    assert {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot",
            "effect": "NoSchedule"} in spot["tolerations"]
    on_demand = _pod("Azure", False)
    # one term, both labels "not spot" (NotIn also matches a regular node without the label)
    assert _terms(on_demand) == [[ZONE, ("kubernetes.azure.com/scalesetpriority", "NotIn", ("spot",)),
                                  ("karpenter.sh/capacity-type", "NotIn", ("spot",))]]
    assert len(on_demand["tolerations"]) == 1  # the GPU taint only: no spot toleration on demand


def test_a_provider_without_a_published_label_gets_gpuplans_and_a_note() -> None:
    assert _terms(_pod("Nebius", True)) == [[ZONE, ("gpuplan.io/capacity-type", "In", ("spot",))]]
    g = ServeGroup(model="m", gpu="H100", engine="vllm", spot=True, provider="Nebius")
    (note,) = k8s.capacity_note([g])
    assert note.startswith("Nebius publishes no node label") and "gpuplan.io/capacity-type=spot" in note
    assert k8s.capacity_note([dataclasses.replace(g, provider="GCP")]) == []


def test_every_label_row_has_a_source() -> None:
    from gpuplan.export.registry import _capacity

    rows = _capacity()
    assert {r.provider for r in rows} == {"GCP", "AWS", "Azure"}
    assert all(r.source.startswith("https://") and r.label and r.spot_value for r in rows)
