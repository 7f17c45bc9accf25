"""Whole-fleet hand-off: every group of a mixed serving fleet exported, each document validated by the tool's own
parser (SkyPilot's schema and loader, kubernetes-validate strict, the recorded vLLM/SGLang option sets).

The fleets are literal (hand-made configurations and offers), so the goldens do not move with the catalog or the
fitted estimators. Regenerate with ``GPUPLAN_UPDATE_GOLDEN=1 pytest tests/test_export_fleet.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_export import _check_argv, _skypilot_load

from gpuplan.errors import InputError
from gpuplan.export import fleet
from gpuplan.plan.availability import Recovery
from gpuplan.plan.serving import Bucket, Fleet, FleetGroup, ReplicaConfig, ServePlan, ServeRequest
from gpuplan.types import ModelSpec, Offer

GOLDEN = Path(__file__).parent / "golden"
REPO = "meta-llama/Llama-3.1-8B"
LLAMA_8B = ModelSpec(name="Llama-3.1-8B", model_type="llama", n_layers=32, hidden=4096, n_heads=32, n_kv_heads=8,
                     head_dim=128, ffn_hidden=14336, vocab=128256, max_positions=131072)
Cli = Callable[..., Any]


def _offer(provider: str, gpu: str, instance: str, pricing: str, region: str = "us-east-1") -> Offer:
    return Offer(provider=provider, instance_type=instance, gpu=gpu, gpu_count=1, vcpus=None, ram_bytes=None,
                 region=region, market="global", price_per_hour=2.0, currency="USD", pricing=pricing,
                 billing_granularity_s=1, included_disk_bytes=None, storage_price_per_gb_month=None,
                 gpu_mapping="stated", source="test fixture", as_of=dt.date(2026, 1, 1))


# an H100 replica serves 10 req/s of the one bucket, an L40S one 4 req/s (literal, not estimated)
H100 = ReplicaConfig("H100", 1, 1, "bf16", "vllm", (10.0,), (0.2,), 128)
L40S = ReplicaConfig("L40S", 1, 1, "fp8", "vllm", (4.0,), (0.2,), 64)


def _group(c: ReplicaConfig, offer: Offer, zone: str, replicas: int) -> FleetGroup:
    return FleetGroup(c, offer.provider, offer.instance_type, offer.region, zone, offer.pricing, replicas, replicas,
                      2.0 * replicas, offer.source, "2026-01-01", "global", offer)


def _plan(groups: tuple[FleetGroup, ...], routing: tuple[tuple[str, int, float], ...],
          buckets: tuple[Bucket, ...] = (Bucket(1000, 300),)) -> ServePlan:
    r = ServeRequest(12.0, buckets=buckets)
    f = Fleet(groups, sum(g.cost_per_hour for g in groups), routing, 0.0, 0.9995, 0.01)
    return ServePlan("Llama-3.1-8B", r, f, f, None, tuple({g.config for g in groups}), Recovery(300, 30, 205),
                     None, None, ())


def _two_groups() -> ServePlan:
    """2 H100 replicas on demand in zone 1 and 2 L40S replicas on spot in zone 2 of one AWS region, the 12 req/s
    split 8 + 4 (4 and 2 per replica): a fleet that survives either zone lost only if the zones stay apart."""
    h100 = _group(H100, _offer("AWS", "H100", "p5.4xlarge", "on-demand"), "us-east-1/zone-1", 2)
    l40s = _group(L40S, _offer("AWS", "L40S", "g6e.xlarge", "spot"), "us-east-1/zone-2", 2)
    return _plan((h100, l40s), ((H100.describe(), 0, 8.0), (L40S.describe(), 0, 4.0)))


def _export(fmt: str, p: ServePlan | None = None) -> dict[str, Any]:
    return fleet.export(p or _two_groups(), LLAMA_8B, REPO, fmt)


def test_two_groups_give_two_deployments_behind_one_service() -> None:
    import kubernetes_validate

    docs = _export("k8s")["document"]
    kinds = [d["kind"] for d in docs]
    assert kinds == ["Deployment", "Deployment", "Service", "PodDisruptionBudget", "PodDisruptionBudget",
                     "HorizontalPodAutoscaler", "HorizontalPodAutoscaler"]
    for doc in docs:
        kubernetes_validate.validate(doc, "1.33", strict=True)
    deps, (service,) = docs[:2], [d for d in docs if d["kind"] == "Service"]
    selector = service["spec"]["selector"].items()
    for dep in deps:  # the one Service reaches every group's pods; each Deployment owns only its own
        pod_labels = dep["spec"]["template"]["metadata"]["labels"]
        assert selector <= pod_labels.items()
        assert dep["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert deps[0]["spec"]["selector"] != deps[1]["spec"]["selector"]
    products = [d["spec"]["template"]["spec"]["nodeSelector"]["nvidia.com/gpu.product"] for d in deps]
    assert products == ["NVIDIA-H100-80GB-HBM3", "NVIDIA-L40S"]  # gfd_labels.csv, one per group
    assert [d["spec"]["replicas"] for d in deps] == [2, 2]
    hpas = [d for d in docs if d["kind"] == "HorizontalPodAutoscaler"]
    assert [(h["spec"]["scaleTargetRef"]["name"], h["spec"]["minReplicas"], h["spec"]["maxReplicas"]) for h in hpas] \
        == [(deps[0]["metadata"]["name"], 2, 4), (deps[1]["metadata"]["name"], 2, 4)]
    pdbs = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
    assert [p["spec"]["selector"]["matchLabels"] for p in pdbs] == [d["spec"]["selector"]["matchLabels"]
                                                                   for d in deps]


def test_groups_in_different_zones_never_share_one() -> None:
    deps = [d for d in _export("k8s")["document"] if d["kind"] == "Deployment"]
    slots = []
    for dep in deps:
        pod = dep["spec"]["template"]
        slot = pod["metadata"]["labels"]["gpuplan.io/zone-slot"]
        (term,) = pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["topologyKey"] == "topology.kubernetes.io/zone"
        other = {e["key"]: e for e in term["labelSelector"]["matchExpressions"]}["gpuplan.io/zone-slot"]
        assert other == {"key": "gpuplan.io/zone-slot", "operator": "NotIn", "values": [slot]}
        # a slot pinned by anti-affinity must not also demand an even spread over every zone (it would stay Pending)
        assert pod["spec"]["topologySpreadConstraints"][0]["whenUnsatisfiable"] == "ScheduleAnyway"
        slots.append(slot)
    assert slots == ["z1", "z2"]


def test_one_group_fleet_is_the_single_group_export() -> None:
    p = _plan((_group(H100, _offer("AWS", "H100", "p5.4xlarge", "on-demand"), "us-east-1/zone-1", 3),),
              ((H100.describe(), 0, 12.0),))
    kinds = [d["kind"] for d in _export("k8s", p)["document"]]
    assert kinds == ["Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"]
    (dep, *_) = _export("k8s", p)["document"]
    assert "podAntiAffinity" not in dep["spec"]["template"]["spec"]["affinity"]  # no zone slots: one group
    assert dep["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["whenUnsatisfiable"] == "DoNotSchedule"


def test_every_skypilot_service_loads_in_skypilot_with_its_own_policy() -> None:
    e = _export("skypilot")
    tasks = e["document"]
    assert len(tasks) == 2 and len(e["files"]) == 2  # one file per group: sky serve up loads one service a file
    for task, f in zip(tasks, e["files"], strict=True):
        loaded = _skypilot_load(task)
        assert loaded.service.readiness_path == "/health"
        assert yaml.safe_load(f["text"]) == task  # the file is the document (comments aside)
    h100, l40s = (t["service"]["replica_policy"] for t in tasks)
    assert (h100["min_replicas"], h100["max_replicas"], h100["target_qps_per_replica"]) == (2, 4, 10.0)
    assert (l40s["min_replicas"], l40s["target_qps_per_replica"]) == (2, 4.0)
    assert "base_ondemand_fallback_replicas" not in h100  # on demand: no fallback
    assert l40s["base_ondemand_fallback_replicas"] == 1 and l40s["dynamic_ondemand_fallback"] is True
    assert tasks[1]["resources"]["use_spot"] is True and tasks[0]["resources"]["use_spot"] is False
    # SkyPilot's registry names: H100 and L40S on AWS; the region and instance are AWS's own names
    assert [t["resources"]["accelerators"] for t in tasks] == ["H100:1", "L40S:1"]
    assert [t["resources"]["instance_type"] for t in tasks] == ["p5.4xlarge", "g6e.xlarge"]
    assert "resources.zone" in e["files"][0]["text"]  # two groups in one region: the zones must be told apart


def test_every_group_has_a_server_command_the_engine_accepts() -> None:
    e = _export("vllm")
    assert len(e["document"]) == 2
    for argv, f in zip(e["document"], e["files"], strict=True):
        _check_argv("vllm", argv[3:])
        line = next(x for x in f["text"].splitlines() if not x.startswith("#"))
        assert shlex.split(line) == argv
    assert e["document"][1][e["document"][1].index("--quantization") + 1] == "fp8"  # the L40S group's format
    assert [a[a.index("--max-num-seqs") + 1] for a in e["document"]] == ["128", "64"]


def test_the_routing_note_gives_each_group_its_share() -> None:
    # 8 req/s to 2 H100 replicas (4 each), 4 req/s to 2 L40S ones (2 each): capacity-weighted, not round-robin
    note = _export("k8s")["routing"]
    assert "weight" in note and "67% (4.00 req/s per replica)" in note and "33% (2.00 req/s per replica)" in note


def test_requests_routed_by_size_ask_for_a_length_aware_router() -> None:
    short, long_ = Bucket(300, 100, 0.7), Bucket(4000, 500, 0.3)
    h100 = ReplicaConfig("H100", 1, 1, "bf16", "vllm", (30.0, 3.0), (0.1, 0.5), 128)
    l40s = ReplicaConfig("L40S", 1, 1, "bf16", "vllm", (12.0, 0.0), (0.1, 0.0), 64)
    p = _plan((_group(h100, _offer("AWS", "H100", "p5.4xlarge", "on-demand"), "us-east-1", 2),
               _group(l40s, _offer("AWS", "L40S", "g6e.xlarge", "on-demand"), "us-east-1", 1)),
              ((h100.describe(), 1, 3.6), (h100.describe(), 0, 0.0), (l40s.describe(), 0, 8.4)), (short, long_))
    assert "length-aware" in _export("k8s", p)["routing"]


def test_k8s_fleet_matches_its_golden_file() -> None:
    (f,) = _export("k8s")["files"]
    path = GOLDEN / "fleet_two_groups_kubernetes.yaml"
    if os.environ.get("GPUPLAN_UPDATE_GOLDEN"):
        path.write_text(f["text"], encoding="utf-8")
    assert f["text"] == path.read_text(encoding="utf-8")


def test_a_group_the_format_cannot_run_refuses_the_whole_export() -> None:
    # 12 GPUs a replica (TP 4 × PP 3) leave a node of 8 half used: neither a LeaderWorkerSet nor num_nodes
    odd = ReplicaConfig("H100", 4, 3, "bf16", "vllm", (1.0,), (0.2,), 32)
    h100 = _group(H100, _offer("AWS", "H100", "p5.4xlarge", "on-demand"), "us-east-1/zone-1", 2)
    p = _plan((h100, _group(odd, _offer("AWS", "H100", "p5.48xlarge", "on-demand"), "us-east-1/zone-2", 1)),
              ((H100.describe(), 0, 8.0), (odd.describe(), 0, 1.0)))
    for fmt in ("k8s", "skypilot"):
        with pytest.raises(InputError, match="12 GPUs"):
            _export(fmt, p)


def test_a_fleet_with_a_replica_over_two_nodes_exports_it_as_a_leader_worker_set_beside_the_deployment() -> None:
    # the 2 single-GPU H100 replicas in zone 1, one TP 8 × PP 2 replica over two p5.48xlarge nodes in zone 2
    multi = ReplicaConfig("H100", 8, 2, "bf16", "vllm", (1.0,), (0.2,), 32)
    h100 = _group(H100, _offer("AWS", "H100", "p5.4xlarge", "on-demand"), "us-east-1/zone-1", 2)
    two = _group(multi, _offer("AWS", "H100", "p5.48xlarge", "on-demand"), "us-east-1/zone-2", 1)
    plan = _plan((h100, two), ((H100.describe(), 0, 8.0), (multi.describe(), 0, 1.0)))
    docs = _export("k8s", plan)["document"]
    kinds = {d["kind"]: d for d in docs}
    assert [d["kind"] for d in docs].count("Service") == 1  # one Service for both groups
    leader = kinds["LeaderWorkerSet"]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert leader["metadata"]["labels"]["app"] == kinds["Service"]["spec"]["selector"]["app"]
    # the zone slots keep the two groups apart: the leader carries the anti-affinity the Deployment's pods do
    anti = leader["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["labelSelector"]["matchExpressions"][1] == {"key": "gpuplan.io/zone-slot", "operator": "NotIn",
                                                               "values": ["z2"]}
    hpas = [d["spec"]["scaleTargetRef"]["kind"] for d in docs if d["kind"] == "HorizontalPodAutoscaler"]
    assert hpas == ["Deployment", "LeaderWorkerSet"]
    services = {d["metadata"]["name"] for d in docs if d["kind"] == "Service"}
    assert kinds["LeaderWorkerSet"]["metadata"]["name"] not in services  # the set's own headless Service's name
    # the plain vLLM command of the two-node group says how its nodes form the Ray cluster it runs on
    head = _export("vllm", plan)["files"][1]["text"].replace("\n#  ", "")
    assert "ray start --head --port=6379" in head and "ray start --address=HEAD_NODE_IP:6379 --block" in head


# ---------------------------------------------------------------- the command line


def test_cli_exports_every_group_and_json_holds_them_all(cli: Cli) -> None:
    r = cli("plan", "serve", "Qwen2.5-7B", "--rps", "5", "--peak-rps", "12", "--spot", "--export", "k8s", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    n = len(data["fleet"]["groups"])
    assert n >= 2  # the mixed fleet of the issue
    export = data["export"]
    assert len(export["groups"]) == n
    assert sum(d["kind"] == "Deployment" for d in export["document"]) == n
    assert sum(d["kind"] == "Service" for d in export["document"]) == 1
    assert list(yaml.safe_load_all(export["text"])) == export["document"]


def test_cli_skypilot_fleet_needs_a_folder_and_writes_one_file_per_group(cli: Cli, tmp_path: Path) -> None:
    args = ("plan", "serve", "Qwen2.5-7B", "--rps", "5", "--peak-rps", "12", "--spot", "--export", "skypilot")
    r = cli(*args, "--json")
    assert r.returncode == 0, r.stderr
    n = len(json.loads(r.stdout)["export"]["files"])
    if n > 1:
        refused = cli(*args)
        assert refused.returncode == 2 and "one service per file" in refused.stderr
    written = cli(*args, "--out", str(tmp_path))
    assert written.returncode == 0, written.stderr
    files = sorted(tmp_path.glob("*.yaml"))
    assert len(files) == n
    for path in files:
        _skypilot_load(yaml.safe_load(path.read_text(encoding="utf-8")))
