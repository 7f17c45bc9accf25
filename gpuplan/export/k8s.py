"""Kubernetes hand-off for one serving group: Deployment, Service, PodDisruptionBudget and HorizontalPodAutoscaler.

- Nodes are selected by the ``nvidia.com/gpu.product`` label NVIDIA GPU feature discovery (part of the GPU
  Operator) sets, from ``gpuplan/data/gfd_labels.csv``.
- ``HF_TOKEN`` comes from the Secret ``hf-token`` (key ``token``); it is optional so public models start without
  it, and gated ones (meta-llama/*, ...) need it: ``kubectl create secret generic hf-token --from-literal=token=…``.
- ``/health`` answers once the weights are loaded: a startup probe allows the load (up to 30 min), then readiness
  and liveness probes take over.
- Spot groups select spot nodes and tolerate their taint, on-demand groups keep off spot nodes, by the label each
  managed Kubernetes sets (``gpuplan/data/k8s_capacity_labels.csv``: GKE ``cloud.google.com/gke-spot``, EKS managed
  node groups ``eks.amazonaws.com/capacityType``, AKS ``kubernetes.azure.com/scalesetpriority`` and its taint,
  Karpenter ``karpenter.sh/capacity-type``); for a provider with none published, by ``gpuplan.io/capacity-type``,
  which the cluster's operator sets on the nodes.
- Replicas spread over zones (``topology.kubernetes.io/zone``); the PDB lets a drain take one replica at a time.
- A fleet (:func:`fleet_manifests`) is one Deployment, PodDisruptionBudget and HPA per group behind one Service
  that selects every group. Groups the plan put in different zones carry a zone-slot label and a required pod
  anti-affinity: no zone holds pods of two slots, so losing a zone loses at most one slot, the loss the plan
  was sized to survive.
- A co-located guard (``ServeGroup.guard``) is a second container of the same pod, on its own port, with its
  own memory share and probes. Two containers cannot share a GPU the device plugin hands out (``nvidia.com/gpu``
  goes to one container: Kubernetes "Schedule GPUs"), so such a pod claims its GPUs through dynamic resource
  allocation instead: one ResourceClaimTemplate per group (``resource.k8s.io/v1beta1``, device class
  ``gpu.nvidia.com`` of NVIDIA's DRA driver, as in NVIDIA/k8s-dra-driver-gpu demo/specs/quickstart/
  gpu-test-count.yaml @4066752a), and both containers name the pod's claim (containers of a pod that reference one
  claim share its devices: Kubernetes "Dynamic Resource Allocation", device sharing); the guard runs on the first
  of them (``CUDA_VISIBLE_DEVICES=0``).
- A group on MIG slices asks for one slice each, ``nvidia.com/mig-<profile>`` (the GPU Operator's mixed MIG
  strategy names its resources so).
- A replica of more than one node is a LeaderWorkerSet instead of a Deployment (:mod:`gpuplan.export.lws`), also
  inside a fleet beside other groups' Deployments.
- The HPA scales on the server's queue length through the custom metrics API, which needs an adapter such as
  Prometheus Adapter with a rule exposing the server's gauge (``vllm:num_requests_waiting`` or
  ``sglang:num_queue_reqs``) per pod under the name used here (colons renamed to underscores); see
  docs/export.md.
"""

from __future__ import annotations

from typing import Any

from gpuplan.errors import InputError
from gpuplan.export.registry import CapacityLabel, capacity_labels, gfd_product_label
from gpuplan.export.serve import GUARD_PORT, PORT, QUEUE_METRIC, ServeGroup, image, server_command
from gpuplan.types import Engine

SECRET = "hf-token"
ZONE_KEY = "topology.kubernetes.io/zone"
GROUP_KEY = "gpuplan.io/group"
SLOT_KEY = "gpuplan.io/zone-slot"
CAPACITY_KEY = "gpuplan.io/capacity-type"  # spot | on-demand: the label to set where a provider publishes none
GPUS_PER_NODE = 8
LOAD_TIMEOUT_S = 1800  # startup probe budget: weights download + load + warm-up
PROBE_PERIOD_S = 10
CLAIM = "gpus"  # the pod's resource claim both servers of a co-located guard name
DRA_API = "resource.k8s.io/v1beta1"  # served from Kubernetes 1.32 (beta) on; v1 from 1.34
DRA_GPU_CLASS = "gpu.nvidia.com"  # the device class NVIDIA's DRA driver for GPUs installs
FIRST_GPU = dict(name="CUDA_VISIBLE_DEVICES", value="0")  # a co-located guard's server: the claim's first GPU
HF_TOKEN_ENV = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": SECRET, "key": "token", "optional": True}}}
SHM_VOLUME = {"volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}]}  # NCCL's and the servers' /dev/shm
SHM_MOUNT = {"name": "shm", "mountPath": "/dev/shm"}


def queue_target(g: ServeGroup) -> int:
    """Waiting requests per pod above which the HPA adds a replica: a tenth of the batch the plan sized (queueing
    means the replica is full; a small queue absorbs bursts without scaling on every spike)."""
    return max(1, g.max_num_seqs // 10)


def manifests(g: ServeGroup, max_replicas: int | None = None) -> list[dict[str, Any]]:
    """The objects for ``g``; the HPA may grow the group to ``max_replicas`` (default: twice the plan)."""
    if g.gpus_per_replica > GPUS_PER_NODE:
        from gpuplan.export import lws

        return lws.manifests(g, max_replicas)
    labels = {"app": g.name}
    return [*_claim_templates([g]), _deployment(g, labels), service(g, labels, guard=g.guard is not None),
            _pdb(g, labels), hpa(g, max_replicas or max(2 * g.replicas, g.replicas + 1))]


def fleet_manifests(groups: list[ServeGroup]) -> list[dict[str, Any]]:
    """The objects for a fleet: per group a Deployment, a PodDisruptionBudget and an HPA (from its planned
    replicas to twice that), and one Service per ``service`` name selecting all of its groups. One group alone
    gives exactly :func:`manifests`."""
    if len(groups) == 1 and not groups[0].zone_slot:
        return manifests(groups[0])
    names = [g.name for g in groups]
    if len(set(names)) != len(names):
        raise InputError("--export", "two groups of the fleet have the same name.", "report this: the fleet "
                         "export names every group.")
    slots = {g.service or g.name: {x.zone_slot for x in groups if (x.service or x.name) == (g.service or g.name)}
             for g in groups}
    deployments, pdbs, hpas = [], [], []
    for g in groups:
        app = g.service or g.name
        labels = {"app": app, GROUP_KEY: g.name} | ({SLOT_KEY: g.zone_slot} if g.zone_slot else {})
        apart = _apart(app, g.zone_slot) if len(slots[app]) > 1 and g.zone_slot else {}
        workload, pdb, scaler = _group_objects(g, labels, {"app": app, GROUP_KEY: g.name}, apart)
        deployments.append(workload)
        pdbs.append(pdb)
        hpas.append(scaler)
    services = [service(g, {"app": app}, app, any(x.guard for x in groups if (x.service or x.name) == app))
                for app, g in {(x.service or x.name): x for x in groups}.items()]
    return [*_claim_templates(groups), *deployments, *services, *pdbs, *hpas]


def _group_objects(g: ServeGroup, labels: dict[str, str], selector: dict[str, str], apart: dict[str, Any]
                   ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """One fleet group's workload (a Deployment, or a LeaderWorkerSet for a replica over several nodes), PDB and
    HPA; ``apart``: the zone slot's anti-affinity for its serving pods."""
    scale_to = max(2 * g.replicas, g.replicas + 1)
    if g.gpus_per_replica > GPUS_PER_NODE:
        from gpuplan.export import lws

        return lws.leader_worker_set(g, labels, selector, apart), lws.pdb(g), lws.hpa(g, scale_to)
    dep = _deployment(g, labels, selector)
    if apart:
        pod = dep["spec"]["template"]["spec"]
        pod["affinity"] = apart | pod.get("affinity", {})
    return dep, _pdb(g, selector), hpa(g, scale_to)


def claim_name(g: ServeGroup) -> str:
    return f"{g.name}-gpus"


def _claim_templates(groups: list[ServeGroup]) -> list[dict[str, Any]]:
    """One ResourceClaimTemplate per group with a co-located guard: each pod claims its replica's GPUs, and its
    two containers share them."""
    return [{"apiVersion": DRA_API, "kind": "ResourceClaimTemplate", "metadata": {"name": claim_name(g)},
             "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": DRA_GPU_CLASS,
                                                         "count": g.gpus_per_replica}]}}}}
            for g in groups if g.guard is not None]


def _apart(app: str, slot: str) -> dict[str, Any]:
    """A pod anti-affinity that keeps this slot's pods out of any zone where the same service has pods of
    another slot (symmetric for required terms: the scheduler checks both directions)."""
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": [app]},
                                     {"key": SLOT_KEY, "operator": "NotIn", "values": [slot]}]}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": selector, "topologyKey": ZONE_KEY}]}}


def _container(g: ServeGroup, name: str = "", port: int = PORT, port_name: str = "http",
               claimed: bool = False) -> dict[str, Any]:
    """The server container of ``g``, listening on ``port``; ``claimed``: its GPUs are the pod's resource claim
    (shared with a co-located guard) rather than the device plugin's."""
    cmd = server_command(g, port=port)
    split = 2 if g.engine == Engine.VLLM else 3  # `vllm serve` | `python -m sglang.launch_server`
    gpus = f"nvidia.com/mig-{g.mig}" if g.mig else "nvidia.com/gpu"
    return {
        "name": name or g.engine, "image": image(g.engine), "command": cmd[:split], "args": cmd[split:],
        "ports": [{"name": port_name, "containerPort": port}],
        "env": [dict(HF_TOKEN_ENV)],
        "resources": {"claims": [{"name": CLAIM}]} if claimed else {"limits": {gpus: g.gpus_per_replica}},
        **probes(port_name),
        "volumeMounts": [SHM_MOUNT],
    }


def probes(port_name: str) -> dict[str, Any]:
    """``/health`` on the named port: a startup probe that allows the weights' load, then readiness and liveness."""
    probe = {"httpGet": {"path": "/health", "port": port_name}, "periodSeconds": PROBE_PERIOD_S}
    return {"startupProbe": {**probe, "failureThreshold": LOAD_TIMEOUT_S // PROBE_PERIOD_S},
            "readinessProbe": {**probe, "failureThreshold": 3}, "livenessProbe": {**probe, "failureThreshold": 6}}


def _containers(g: ServeGroup) -> list[dict[str, Any]]:
    """The main server's container and, with a co-located guard, the guard's on the first GPU of the claim."""
    if g.guard is None:
        return [_container(g)]
    guard = _container(g.guard, "guard", GUARD_PORT, "guard-http", claimed=True)
    guard["env"].append(FIRST_GPU)
    return [_container(g, claimed=True), guard]


def _capacity(g: ServeGroup) -> tuple[CapacityLabel, ...]:
    """The spot labels of ``g``'s provider, or gpuplan's own where it publishes none."""
    return capacity_labels(g.provider) or (CapacityLabel(g.provider, "", CAPACITY_KEY, "spot", "on-demand", "", ""),)


def _node_terms(g: ServeGroup) -> list[dict[str, Any]]:
    """The node selector terms (ORed): a spot group on a node any of its provider's provisioners labels spot; an
    on-demand group on a node none of them does (NotIn also matches a node without the label); each in the
    group's zones."""
    zone = [{"key": ZONE_KEY, "operator": "In", "values": list(g.zones)}] if g.zones else []
    labels = _capacity(g)
    if g.spot:
        return [{"matchExpressions": [*zone, {"key": c.label, "operator": "In", "values": [c.spot_value]}]}
                for c in labels]
    return [{"matchExpressions": [*zone, *({"key": c.label, "operator": "NotIn", "values": [c.spot_value]}
                                           for c in labels)]}]


def capacity_note(groups: list[ServeGroup]) -> list[str]:
    """Header lines for the groups whose provider publishes no spot label: the label their nodes need."""
    bare = sorted({g.provider or "this cluster" for g in groups if not capacity_labels(g.provider)})
    return [f"{p} publishes no node label for spot or on-demand capacity: label its GPU nodes {CAPACITY_KEY}=spot "
            f"or {CAPACITY_KEY}=on-demand (kubectl label node NAME {CAPACITY_KEY}=on-demand), as the groups "
            "select them by it" for p in bare]


def placement(g: ServeGroup) -> dict[str, Any]:
    """The pod's GPU node selector (the GFD product label) and tolerations (the GPU taint, spot taints)."""
    return {"nodeSelector": {"nvidia.com/gpu.product": gfd_product_label(g.gpu)}, "tolerations": _tolerations(g)}


def node_affinity(g: ServeGroup) -> dict[str, Any]:
    """The required node affinity: spot or on-demand capacity, in the group's zones."""
    return _affinity(g)["affinity"]


def _affinity(g: ServeGroup) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": _node_terms(g)}}}}


def _tolerations(g: ServeGroup) -> list[dict[str, str]]:
    """The GPU taint, and on spot the taints the provider's spot nodes carry (AKS's, GKE's when added)."""
    out = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    for c in _capacity(g) if g.spot else ():
        if c.spot_taint:
            key, rest = c.spot_taint.split("=", 1)
            value, effect = rest.split(":", 1)
            out.append({"key": key, "operator": "Equal", "value": value, "effect": effect})
    return out


def _deployment(g: ServeGroup, labels: dict[str, str], selector: dict[str, str] | None = None) -> dict[str, Any]:
    """``labels`` on the pods, ``selector`` (default: the labels) the Deployment's own. A group pinned to a zone
    slot only prefers to spread: the slot's anti-affinity decides its zones."""
    selector = selector or labels
    hard = g.replicas > 1 and not g.zone_slot
    spread = {"maxSkew": 1, "topologyKey": ZONE_KEY, "labelSelector": {"matchLabels": selector},
              "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway"}
    pod = {
        "containers": _containers(g),
        **({"resourceClaims": [{"name": CLAIM, "resourceClaimTemplateName": claim_name(g)}]} if g.guard else {}),
        **placement(g), "topologySpreadConstraints": [spread], **_affinity(g), **SHM_VOLUME,
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": g.name, "labels": labels},
            "spec": {"replicas": g.replicas, "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": labels}, "spec": pod}}}


def service(g: ServeGroup, labels: dict[str, str], name: str | None = None, guard: bool = False
             ) -> dict[str, Any]:
    """The Service in front of ``labels``' pods; ``guard``: their co-located guard answers on its own port too."""
    ports = [{"name": "http", "port": PORT, "targetPort": "http"}]
    if guard:
        ports.append({"name": "guard", "port": GUARD_PORT, "targetPort": "guard-http"})
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name or g.name, "labels": labels},
            "spec": {"selector": labels, "ports": ports}}


def _pdb(g: ServeGroup, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": g.name},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}}}


def hpa(g: ServeGroup, max_replicas: int) -> dict[str, Any]:
    metric = QUEUE_METRIC[g.engine].replace(":", "_")
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": g.name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": g.name},
                     "minReplicas": max(1, g.fewest), "maxReplicas": max_replicas,
                     "metrics": [{"type": "Pods", "pods": {
                         "metric": {"name": metric},
                         "target": {"type": "AverageValue", "averageValue": str(queue_target(g))}}}]}}


def _pod_specs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod specs of a Deployment or a LeaderWorkerSet (leader first); [] for other objects."""
    if doc["kind"] == "Deployment":
        return [doc["spec"]["template"]["spec"]]
    if doc["kind"] == "LeaderWorkerSet":
        t = doc["spec"]["leaderWorkerTemplate"]
        return [t["leaderTemplate"]["spec"], t["workerTemplate"]["spec"]]
    return []


def engine_of(docs: list[dict[str, Any]]) -> str:
    """The server (vllm | sglang) the objects' first workload runs."""
    image_of = next(p["containers"][0]["image"] for d in docs for p in _pod_specs(d))
    return "vllm" if image_of.startswith("vllm/") else "sglang"


def lws_note(docs: list[dict[str, Any]]) -> list[str]:
    """Header lines for objects with a LeaderWorkerSet: what the cluster needs for it."""
    if not any(d["kind"] == "LeaderWorkerSet" for d in docs):
        return []
    return ["a replica spans nodes: it is a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), which needs the LWS "
            "controller (kubernetes-sigs/lws v0.10.0 or later) and Kubernetes 1.33+ (matchLabelKeys keeps a "
            "replica's pods in one zone); its nodes talk over the cluster network the plan assumed, so give those "
            "nodes a fast fabric (InfiniBand / RoCE / EFA and its device plugin)"]


def adapter_rule(engine: str) -> str:
    """The Prometheus Adapter rule that exposes the server's queue gauge per pod under the HPA's metric name."""
    source = QUEUE_METRIC[engine]
    return (f'- seriesQuery: \'{source}{{namespace!="",pod!=""}}\'\n'
            '  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}\n'
            f'  name: {{matches: "^{source}$", as: "{source.replace(":", "_")}"}}\n'
            "  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'\n")
