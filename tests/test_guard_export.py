"""A co-located guard's hand-off: the two servers' memory shares are written in every export and add up to what
the plan reserved, each model fitting in its share; spot and on-demand groups select their nodes in Kubernetes."""

from __future__ import annotations

import dataclasses
import shlex
from typing import Any

import pytest
import yaml
from conftest import MARKET_SNAPSHOT
from test_export import _check_argv, _skypilot_load

from gpuplan.catalog import load_catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.job import inference_setup
from gpuplan.estimate.memory import inference_memory
from gpuplan.export import fleet, k8s
from gpuplan.export.guard import append_to_text, guard_export, guard_file
from gpuplan.export.serve import GUARD_PORT, PORT, ServeGroup
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
    cat = load_catalog(market=MARKET_SNAPSHOT)  # which placement wins depends on prices: the frozen snapshot's
    r = sv.ServeRequest(5.0, targets=sv.Targets(ttft_p99_s=2.0), gpus=("H100",), guard="Llama-Guard-3-1B",
                        providers=("AWS", "GCP", "Nebius", "Cudo Compute"))  # clouds SkyPilot launches H100s on
    p = sv.plan_serving(cat, cat.model("Qwen2.5-7B"), r)
    assert p.guard is not None and p.guard.placement == "colocated", "this scenario's guard is co-located"
    assert p.fleet is not None
    return p


def _flag(argv: list[str], flag: str) -> float:
    return float(argv[argv.index(flag) + 1])


def _run_lines(run: str) -> dict[int, list[str]]:
    """The server commands of a SkyPilot ``run`` by the port each listens on (environment prefix dropped)."""
    out = {}
    for line in run.splitlines():
        argv = shlex.split(line.split("#")[0].rstrip(" &"))
        argv = [a for a in argv if "=" not in a or a.startswith("--")]
        if "--port" in argv:
            out[int(argv[argv.index("--port") + 1])] = argv
    return out


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
    sky = [_run_lines(t["run"])[PORT] for t in ex["skypilot"]["document"]]
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
        assert mem.breakdown.get("kv_cache") <= mem.capacity.kv_budget_bytes


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


# ---------------------------------------------------------------- the guard's server in the YAML exports


def _guarded_exports(p: sv.ServePlan) -> dict[str, Any]:
    cat = load_catalog()
    return {fmt: fleet.export(p, cat.model("Qwen2.5-7B"), "Qwen/Qwen2.5-7B", fmt, catalog=cat)
            for fmt in ("k8s", "skypilot")}


def _deployments(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == "Deployment"]


@pytest.mark.parametrize("guarded", [True, False])
def test_the_guard_container_is_there_exactly_when_the_plan_has_a_co_located_guard(colocated: sv.ServePlan,
                                                                                 guarded: bool) -> None:
    import kubernetes_validate

    p = colocated if guarded else dataclasses.replace(colocated, guard=None)
    ex = _guarded_exports(p)
    docs = ex["k8s"]["document"]
    for doc in docs:
        kubernetes_validate.validate(doc, "1.33", strict=True)
    assert colocated.fleet is not None
    deps = _deployments(docs)
    assert len(deps) == len(colocated.fleet.groups)
    for dep in deps:
        names = [c["name"] for c in dep["spec"]["template"]["spec"]["containers"]]
        assert names == (["vllm", "guard"] if guarded else ["vllm"])
    claims = [d for d in docs if d["kind"] == "ResourceClaimTemplate"]
    assert len(claims) == (len(deps) if guarded else 0)
    runs = [_run_lines(t["run"]) for t in ex["skypilot"]["document"]]
    assert all(sorted(r) == ([PORT, GUARD_PORT] if guarded else [PORT]) for r in runs)


def test_k8s_guard_container_has_its_port_probe_share_and_the_pods_gpus(colocated: sv.ServePlan) -> None:
    assert colocated.guard is not None and colocated.fleet is not None
    docs = _guarded_exports(colocated)["k8s"]["document"]
    planned = {gpu: (g, m) for gpu, g, m in colocated.guard.memory_shares}
    claims = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ResourceClaimTemplate"}
    for dep, grp in zip(_deployments(docs), colocated.fleet.groups, strict=True):
        pod = dep["spec"]["template"]["spec"]
        main, guard_c = pod["containers"]
        g_share, m_share = (_flag(guard_c["args"], "--gpu-memory-utilization"),
                            _flag(main["args"], "--gpu-memory-utilization"))
        assert (g_share, m_share) == planned[grp.config.gpu]
        assert g_share + m_share == pytest.approx(VLLM_SHARE)  # the share the plan reserved on the GPU
        assert guard_c["args"][0] == "meta-llama/Llama-Guard-3-1B"
        assert _flag(guard_c["args"], "--port") == GUARD_PORT and guard_c["ports"][0]["containerPort"] == GUARD_PORT
        assert guard_c["readinessProbe"]["httpGet"] == {"path": "/health", "port": "guard-http"}
        assert {"name": "CUDA_VISIBLE_DEVICES", "value": "0"} in guard_c["env"]  # the replica's first GPU
        # both containers name the pod's one claim of the replica's GPUs: they share the devices
        (claim,) = pod["resourceClaims"]
        assert main["resources"] == guard_c["resources"] == {"claims": [{"name": claim["name"]}]}
        request = claims[claim["resourceClaimTemplateName"]]["spec"]["spec"]["devices"]["requests"][0]
        assert request["count"] == grp.config.n_gpus and request["deviceClassName"] == "gpu.nvidia.com"
    (service,) = [d for d in docs if d["kind"] == "Service"]
    assert {"name": "guard", "port": GUARD_PORT, "targetPort": "guard-http"} in service["spec"]["ports"]


def test_skypilot_runs_both_servers_and_probes_the_main_one(colocated: sv.ServePlan) -> None:

    assert colocated.guard is not None
    ex = _guarded_exports(colocated)["skypilot"]
    planned = {gpu: (g, m) for gpu, g, m in colocated.guard.memory_shares}
    assert colocated.fleet is not None
    for task, grp in zip(ex["document"], colocated.fleet.groups, strict=True):
        loaded = _skypilot_load(task)
        assert loaded.service.readiness_path == "/health" and task["resources"]["ports"] == PORT
        servers = _run_lines(task["run"])
        _check_argv("vllm", servers[GUARD_PORT][3:])
        _check_argv("vllm", servers[PORT][3:])
        shares = (_flag(servers[GUARD_PORT], "--gpu-memory-utilization"),
                  _flag(servers[PORT], "--gpu-memory-utilization"))
        assert shares == planned[grp.config.gpu] and sum(shares) == pytest.approx(VLLM_SHARE)
        guard_line = next(x for x in task["run"].splitlines() if f"--port {GUARD_PORT}" in x)
        assert guard_line.startswith("CUDA_VISIBLE_DEVICES=0 ") and guard_line.endswith("&")
        assert "wait -n" in task["run"]  # either server stopping ends the replica (SkyServe replaces it)


@pytest.fixture(scope="module")
def separate() -> sv.ServePlan:
    cat = load_catalog(market=MARKET_SNAPSHOT)  # which placement wins depends on prices: the frozen snapshot's
    # at 60 requests/s and a 0.5 s TTFT p99 the guard's own fleet costs about a third less than co-locating it
    # (331 against 485 per hour at peak on this snapshot; scenarios where the two are close flip as the latency
    # estimates move: at 5 requests/s and 2 s co-locating won after the vLLM V1 step overhead, at 15 requests/s and
    # 0.5 s after vLLM's fitted per-request cost); GPUs only, which GPU feature discovery labels
    r = sv.ServeRequest(60.0, targets=sv.Targets(ttft_p99_s=0.5), guard="Llama-Guard-3-8B",
                        providers=("AWS", "GCP", "Nebius"), exclude_gpus=("TPU-v4", "TPU-v5e", "TPU-v5p", "TPU-v6e"))
    p = sv.plan_serving(cat, cat.model("Qwen2.5-7B"), r)
    assert p.guard is not None and p.guard.placement == "separate", "this scenario's guard has its own fleet"
    return p


def test_a_separate_guard_fleet_is_its_own_deployments_behind_its_own_service(separate: sv.ServePlan) -> None:
    import kubernetes_validate

    assert separate.guard is not None and separate.guard.fleet is not None and separate.fleet is not None
    ex = _guarded_exports(separate)
    docs = ex["k8s"]["document"]
    for doc in docs:
        kubernetes_validate.validate(doc, "1.33", strict=True)
    deps = _deployments(docs)
    n_main, n_guard = len(separate.fleet.groups), len(separate.guard.fleet.groups)
    assert len(deps) == n_main + n_guard and len(ex["k8s"]["guard_groups"]) == n_guard
    guards = [d for d in deps if d["spec"]["template"]["spec"]["containers"][0]["args"][0] ==
              "meta-llama/Llama-Guard-3-8B"]
    assert len(guards) == n_guard
    assert all(len(d["spec"]["template"]["spec"]["containers"]) == 1 for d in deps)  # nothing co-located
    services = {d["metadata"]["name"]: d["spec"]["selector"]["app"] for d in docs if d["kind"] == "Service"}
    assert len(services) == 2
    apps = {d["spec"]["template"]["metadata"]["labels"]["app"] for d in guards}
    assert len(apps) == 1 and apps <= set(services.values())  # one Service selects every guard pod, only them
    assert sum(d["spec"]["replicas"] for d in guards) == separate.guard.replicas
    sky = ex["skypilot"]["document"]
    assert len(sky) == n_main + n_guard  # a SkyServe service per group of each fleet
    assert [t["run"].split()[2] for t in sky[n_main:]] == ["meta-llama/Llama-Guard-3-8B"] * n_guard


def test_a_mig_replica_asks_for_its_slice_and_skypilot_refuses_it() -> None:
    import kubernetes_validate

    from gpuplan.errors import InputError
    from gpuplan.export import skypilot

    g = ServeGroup(model="meta-llama/Llama-Guard-3-1B", gpu="H100", engine="vllm", mig="1g.10gb", replicas=3)
    docs = k8s.manifests(g)
    for doc in docs:
        kubernetes_validate.validate(doc, "1.33", strict=True)
    assert docs[0]["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/mig-1g.10gb":
                                                                                           1}}
    with pytest.raises(InputError, match="SkyPilot launches whole GPUs"):
        skypilot.service_task(g)


# ---------------------------------------------------------------- multimodal checkpoints served text-only


def test_a_multimodal_guard_and_main_model_are_served_without_their_vision_encoder() -> None:
    # Llama Guard 4 and Gemma 3 ship a vision encoder that gpuplan does not size (it plans the text model); a
    # server started without --language-model-only would load it into the memory the plan gave the KV cache
    cat = load_catalog(market=MARKET_SNAPSHOT)
    r = sv.ServeRequest(5.0, targets=sv.Targets(ttft_p99_s=2.0), gpus=("H100",), guard="Llama-Guard-4-12B")
    p = sv.plan_serving(cat, cat.model("Gemma-3-12B"), r)
    g = guard_export(cat, p)
    assert g is not None
    assert all("--language-model-only" in c["argv"] for c in g["commands"])
    assert p.fleet is not None
    main = fleet.parts(p, cat.model("Gemma-3-12B"), "google/gemma-3-12b-it", "vllm")
    assert main and all(x.group.language_model_only for x in main)
    # a text-only checkpoint is served as it is
    q = sv.plan_serving(cat, cat.model("Qwen2.5-7B"), sv.ServeRequest(5.0, targets=sv.Targets(ttft_p99_s=2.0),
                                                                     gpus=("H100",), guard="Llama-Guard-3-1B"))
    lg3 = guard_export(cat, q)
    assert lg3 is not None and not any("--language-model-only" in c["argv"] for c in lg3["commands"])
