"""Kubernetes hand-off for a serving group whose replica spans nodes: a LeaderWorkerSet
(``leaderworkerset.x-k8s.io/v1``, kubernetes-sigs/lws, API as of v0.10.0), a Service in front of the leaders, a
PodDisruptionBudget and an HPA.

- One group of pods per replica: a leader (the first node) and ``size - 1`` workers (the others), each pod one
  node's GPUs. LWS gives every container ``LWS_LEADER_ADDRESS`` (the leader's DNS name), ``LWS_GROUP_SIZE`` and
  ``LWS_WORKER_INDEX`` (0 on the leader); the pods' ``sh -c`` scripts read them
  (:func:`gpuplan.export.serve.node_scripts`): vLLM over Ray starts the Ray head and ``vllm serve`` on the leader
  and joins the head from every worker (lws docs/examples/vllm/GPU/lws.yaml @v0.10.0 does the same through the
  image's multi-node-serving.sh); SGLang and expert-parallel vLLM run their own server command on every pod.
- ``restartPolicy: RecreateGroupOnPodRestart``: a failed pod restarts its whole group (the collective cannot lose
  a member). ``startupPolicy: LeaderCreated``: the workers start with the leader, which is not ready until they
  have joined.
- Only the leader serves HTTP, so only it has the ``/health`` probes, the ``app`` label the Service selects and the
  queue gauge the HPA reads (the scale subresource selects the leaders: ``status.hpaPodSelector``).
- A replica's pods stay in one zone (a required pod affinity on the group's ``leaderworkerset.sigs.k8s.io/group-key``
  label, ``matchLabelKeys``: Kubernetes 1.33+), the leaders spread over zones as the single-node pods do, and the
  PDB lets a drain take one pod, i.e. one replica, at a time.
"""

from __future__ import annotations

from typing import Any

from gpuplan.errors import InputError
from gpuplan.export import k8s
from gpuplan.export.serve import GPUS_PER_NODE, PORT, Nodes, ServeGroup, image, node_scripts

API = "leaderworkerset.x-k8s.io/v1"
NAME_KEY = "leaderworkerset.sigs.k8s.io/name"  # on every pod of a LeaderWorkerSet
GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"  # one value per replica (group of pods)
AT = Nodes(head="$LWS_LEADER_ADDRESS", rank="$LWS_WORKER_INDEX", count="$LWS_GROUP_SIZE")
SUFFIX = "-lws"


def set_name(g: ServeGroup) -> str:
    """The LeaderWorkerSet's name: the group's with a suffix, because the LWS controller creates a headless Service
    of the set's own name for its pods' DNS (``LWS_LEADER_ADDRESS``), and skips it when a Service of that name
    exists (lws v0.10.0 pkg/controllers/leaderworkerset_controller.go, CreateHeadlessServiceIfNotExists), which
    the group's own Service would be."""
    return g.name + SUFFIX


def manifests(g: ServeGroup, max_replicas: int | None = None) -> list[dict[str, Any]]:
    """The objects for ``g``; the HPA may grow the group to ``max_replicas`` (default: twice the plan)."""
    labels = {"app": g.name}
    return [leader_worker_set(g, labels), k8s.service(g, labels), pdb(g),
            hpa(g, max_replicas or max(2 * g.replicas, g.replicas + 1))]


def check(g: ServeGroup) -> None:
    """Refuse what a LeaderWorkerSet of whole nodes cannot run as planned."""
    if g.gpus_per_replica % GPUS_PER_NODE:
        raise InputError("--export", f"a replica of {g.gpus_per_replica} GPUs does not fill nodes of "
                         f"{GPUS_PER_NODE}.", f"plan with a multiple of {GPUS_PER_NODE} GPUs per replica.")
    if g.guard is not None:
        raise InputError("--export", "the plan puts the guard beside a replica that spans nodes; the LeaderWorkerSet "
                         "export runs the main server only.", "plan with --guard none and plan the guard model as a "
                         "service of its own (gpuplan plan serve GUARD-MODEL), or add its container to the leader "
                         "by hand.")


def leader_worker_set(g: ServeGroup, labels: dict[str, str], selector: dict[str, str] | None = None,
                      leader_affinity: dict[str, Any] | None = None) -> dict[str, Any]:
    """The LeaderWorkerSet of ``g``: ``labels`` on its leaders (``selector``, default the labels, spreads them
    over zones); ``leader_affinity`` adds pod (anti-)affinity terms to the leaders (a fleet's zone slots)."""
    check(g)
    first, other = node_scripts(g, AT)
    leader = _pod(g, _container(g, "leader", first, serves=True), _spread(g, selector or labels))
    if leader_affinity:
        leader["affinity"] = leader_affinity | leader["affinity"]
    worker = _pod(g, _container(g, "worker", other, serves=False), _same_zone(g))
    return {"apiVersion": API, "kind": "LeaderWorkerSet", "metadata": {"name": set_name(g), "labels": labels},
            "spec": {"replicas": g.replicas, "startupPolicy": "LeaderCreated", "leaderWorkerTemplate": {
                "size": g.nodes, "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": {"metadata": {"labels": labels}, "spec": leader},
                "workerTemplate": {"spec": worker}}}}


def _container(g: ServeGroup, role: str, script: str, serves: bool) -> dict[str, Any]:
    """One node's container: its script under ``sh -c``, one node's GPUs; the leader's port and probes."""
    out: dict[str, Any] = {"name": f"{g.engine}-{role}", "image": image(g.engine), "command": ["sh", "-c", script],
                           "env": [dict(k8s.HF_TOKEN_ENV)],
                           "resources": {"limits": {"nvidia.com/gpu": g.gpus_per_replica // g.nodes}},
                           "volumeMounts": [k8s.SHM_MOUNT]}
    if serves:
        out |= {"ports": [{"name": "http", "containerPort": PORT}], **k8s.probes("http")}
    return out


def _pod(g: ServeGroup, container: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    pod = {"containers": [container], **k8s.placement(g), "affinity": k8s.node_affinity(g), **k8s.SHM_VOLUME}
    for key, value in extra.items():
        pod[key] = pod.get(key, {}) | value if isinstance(value, dict) else value
    return pod


def _spread(g: ServeGroup, selector: dict[str, str]) -> dict[str, Any]:
    """The leaders (one per replica) spread over zones; hard unless a zone slot decides the zones."""
    hard = g.replicas > 1 and not g.zone_slot
    return {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": k8s.ZONE_KEY, "labelSelector": {"matchLabels": selector},
        "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway"}]}


def _same_zone(g: ServeGroup) -> dict[str, Any]:
    """A worker joins its own group's zone: the set's pods with the worker's group key (``matchLabelKeys`` adds
    ``group-key in (its value)`` to the selector; the API forbids a key in both), in one zone."""
    term = {"labelSelector": {"matchLabels": {NAME_KEY: set_name(g)}}, "matchLabelKeys": [GROUP_KEY],
            "topologyKey": k8s.ZONE_KEY}
    return {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def pdb(g: ServeGroup) -> dict[str, Any]:
    """One pod of the set at a time: evicting one restarts its group, and the next waits until it is back."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": g.name},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {NAME_KEY: set_name(g)}}}}


def hpa(g: ServeGroup, max_replicas: int) -> dict[str, Any]:
    """The group's HPA on its leaders' queue length, scaling the LeaderWorkerSet by whole replicas."""
    out = k8s.hpa(g, max_replicas)
    out["spec"]["scaleTargetRef"] = {"apiVersion": API, "kind": "LeaderWorkerSet", "name": set_name(g)}
    return out
