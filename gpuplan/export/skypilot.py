"""SkyPilot hand-off (SkyPilot 0.14: ``sky jobs launch`` for training, ``sky serve up`` for serving).

Training tasks carry the framework's setup and run (:mod:`gpuplan.export.train`), a bucket mounted at
``/checkpoints`` (``CKPT_BUCKET``; SkyPilot creates it if it does not exist) and, run as a managed job, recovery
from preemption: ``job_recovery`` relaunches the task, which resumes from the last checkpoint in the bucket.
Serving tasks run the planned server and a ``service`` with the planned replicas, a replica policy that scales on
requests per second, a ``/health`` readiness probe and, on spot, an on-demand fallback; a replica over several
nodes is ``num_nodes`` of them, its ``run`` branching on ``SKYPILOT_NODE_RANK``. A co-located guard's server
starts in the same ``run`` on the replica's first GPU and its own port (SkyServe probes and balances the main
server's port).

Cloud names are SkyPilot's (each provider's ``skypilot_cloud`` in providers.csv); accelerator names come from SkyPilot's
accelerator registry (``gpuplan/data/skypilot_accelerators.csv``). A plan SkyPilot cannot launch is refused.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export import registry
from gpuplan.export.serve import GUARD_PORT, PORT, Nodes, ServeGroup, install, node_scripts, server_command
from gpuplan.export.train import CKPT_DIR, train_run
from gpuplan.plan.planner import Candidate
from gpuplan.types import ModelSpec, Offer, TrainSetup
from gpuplan.units import GB

GPUS_PER_NODE = 8
MAX_RESTARTS_ON_ERRORS = 3  # relaunches after a failure of the job itself (preemptions are always recovered)
# clouds whose offers name the API's own regions and instance types (the others' rows describe a listing)
_API_NAMES = ("aws", "gcp", "azure", "oci", "lambda", "nebius", "cudo")
_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
HEAD_IP = "HEAD_IP"  # the run's shell variable holding the head node's address
SKYPILOT_NODES = Nodes(head=f"${HEAD_IP}", rank="$SKYPILOT_NODE_RANK", count="$SKYPILOT_NUM_NODES")


def skypilot_clouds(clouds: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """Provider -> SkyPilot cloud: ``clouds`` when given (the CLI passes its catalog's), else the bundled
    catalog's ``skypilot_cloud`` column of providers.csv (checked against SkyPilot's CLOUD_REGISTRY)."""
    if clouds is not None:
        return clouds
    from gpuplan.catalog import load_catalog

    return load_catalog().skypilot_clouds()


def skypilot_cloud(provider: str, clouds: Mapping[str, str] | None = None) -> str | None:
    return skypilot_clouds(clouds).get(provider)


def launchable(c: Candidate, clouds: Mapping[str, str] | None = None) -> bool:
    """Whether SkyPilot can launch ``c`` as planned: a cloud it knows, with the planned GPU in its registry."""
    if c.offer is None:
        return False
    cloud = skypilot_cloud(c.offer.provider, clouds)
    return cloud is not None and registry.skypilot_accelerator(c.estimate.gpu.name, cloud) is not None


def _resources(gpu: str, offer: Offer | None, per_node: int, disk_bytes: float,
               clouds: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``resources`` section for ``per_node`` × ``gpu`` on ``offer`` (None: any cloud SkyPilot picks)."""
    if offer is None:
        where = registry.skypilot_clouds_with(gpu)
        if not where:
            raise InputError("--export", f"SkyPilot's accelerator registry has no {gpu}.", "plan with other --gpus.")
        names = {registry.skypilot_accelerator(gpu, cloud) or gpu for cloud in where}
        if len(names) > 1:
            raise InputError("--export", f"SkyPilot names {gpu} differently per cloud ({', '.join(sorted(names))}).",
                             "give the offer (its cloud) to export.")
        return {"accelerators": f"{names.pop()}:{per_node}", "disk_size": _disk_gb(disk_bytes)}
    cloud = skypilot_cloud(offer.provider, clouds)
    if cloud is None:
        raise InputError("--export", f"SkyPilot has no cloud for provider '{offer.provider}'.",
                         f"pick a plan on {', '.join(sorted(skypilot_clouds(clouds)))} (--provider), or use "
                         "another export format.")
    accelerator = registry.skypilot_accelerator(gpu, cloud)
    if accelerator is None:
        where = registry.skypilot_clouds_with(gpu)
        raise InputError("--export", f"SkyPilot's accelerator registry lists no {gpu} on {cloud}, so "
                         "`sky launch` would find no resources.", (f"plan with --provider on one of: "
                                                                   f"{', '.join(where)}." if where else
                                                                   f"SkyPilot launches no {gpu}; plan with "
                                                                   "other --gpus."))
    res: dict[str, Any] = {"cloud": cloud, "accelerators": f"{accelerator}:{per_node}"}
    if cloud in _API_NAMES and _NAME.fullmatch(offer.region) and offer.region.lower() == offer.region:
        res["region"] = offer.region
    if cloud in _API_NAMES and _NAME.fullmatch(offer.instance_type):
        res["instance_type"] = offer.instance_type
    res["use_spot"] = offer.pricing == "spot"
    res["disk_size"] = _disk_gb(disk_bytes)
    return res


def _disk_gb(disk_bytes: float) -> int:
    return max(64, math.ceil(disk_bytes * 1.2 / GB))  # 20 % beyond weights, data and checkpoints


def disk_bytes(e: JobEstimate) -> float:
    """What the instance's disk holds: weights, data and a resumable checkpoint (the planner's own figure)."""
    from gpuplan.plan.pricing import disk_bytes as planned

    return planned(e.model, e.job)


def weights_disk_bytes(m: ModelSpec) -> float:
    """What a serving replica's disk holds: the published checkpoint (the planner's figure for a job with no
    data)."""
    from gpuplan.estimate.memory import weights_bytes
    from gpuplan.estimate.quant import native_format, weight_format

    return weights_bytes(m, weight_format(native_format(m.native_dtype)))


def _storage(name: str) -> tuple[dict[str, str], dict[str, Any]]:
    bucket = f"{name}-checkpoints"
    return {"CKPT_BUCKET": bucket}, {CKPT_DIR: {"name": "${CKPT_BUCKET}", "mode": "MOUNT_CACHED"}}


def training_task(c: Candidate, model_ref: str, clouds: Mapping[str, str] | None = None) -> dict[str, Any]:
    e = c.estimate
    assert isinstance(e.setup, TrainSetup)
    per_node = min(e.n_gpus, GPUS_PER_NODE)
    nodes = max(1, math.ceil(e.n_gpus / per_node))
    name = f"gpuplan-{e.job.task}-{e.model.name}".lower().replace(".", "-").replace("_", "-")[:60]
    if c.offer is None:
        raise InputError("--export", "this plan runs on a notebook platform, which SkyPilot does not launch.",
                         "plan with --provider set to a cloud SkyPilot launches.")
    resources = _resources(e.gpu.name, c.offer, per_node, disk_bytes(e), clouds)
    resources["job_recovery"] = {"strategy": "EAGER_NEXT_REGION", "max_restarts_on_errors": MAX_RESTARTS_ON_ERRORS}
    run = train_run(e, model_ref, nodes, name, spot=c.offer.pricing == "spot")
    envs, mounts = _storage(name)
    return {"name": name, "resources": resources, "num_nodes": nodes, "envs": {**envs, **run.envs},
            "secrets": {"HF_TOKEN": None}, "file_mounts": mounts, "setup": run.setup, "run": run.run}


def target_qps(c: Candidate) -> float | None:
    speed = c.estimate.speed
    return round(speed.requests_per_s, 3) if speed is not None and speed.requests_per_s > 0 else None


def service_task(g: ServeGroup, offer: Offer | None = None, target_qps_per_replica: float | None = None,
                 max_replicas: int | None = None, disk_bytes: float = 0.0,
                 clouds: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A SkyServe task for one serving group. ``offer`` gives cloud, region and instance (None: SkyPilot picks,
    spot as ``g.spot`` says); ``target_qps_per_replica`` is the planned capacity of one replica, which the
    autoscaler keeps each replica below; the group may grow to ``max_replicas`` (default twice the plan)."""
    if g.nodes > 1 and (g.gpus_per_replica % GPUS_PER_NODE or g.guard is not None):
        what = "a co-located guard beside it" if g.guard is not None else f"{g.gpus_per_replica} GPUs"
        raise InputError("--export", f"a replica over {g.nodes} nodes with {what} is not exported to SkyPilot.",
                         f"plan with whole nodes of {GPUS_PER_NODE} GPUs per replica, and the guard as a service "
                         "of its own (--guard none).")
    if g.mig:
        raise InputError("--export", f"a replica of {g.name} is a MIG {g.mig} slice; SkyPilot launches whole "
                         "GPUs.", "export it with --export k8s, or run its server command on the slices.")
    resources = _resources(g.gpu, offer, g.gpus_per_replica // g.nodes, disk_bytes, clouds)
    resources.setdefault("use_spot", g.spot)
    resources["ports"] = PORT
    policy: dict[str, Any] = {"min_replicas": g.fewest, "max_replicas": max_replicas or 2 * g.replicas}
    if target_qps_per_replica:
        policy["target_qps_per_replica"] = target_qps_per_replica
    if resources["use_spot"]:  # keep one on-demand replica, and replace preempted spot ones on demand
        policy |= {"base_ondemand_fallback_replicas": 1, "dynamic_ondemand_fallback": True}
    nodes = {"num_nodes": g.nodes} if g.nodes > 1 else {}
    return {"name": g.name, "resources": resources, **nodes, "secrets": {"HF_TOKEN": None},
            "service": {"readiness_probe": {"path": "/health", "initial_delay_seconds": 1800},
                        "replica_policy": policy},
            "setup": install(g), "run": serve_run(g)}


def serve_run(g: ServeGroup) -> str:
    """The task's ``run``: the server; with a co-located guard both servers, the guard on the first GPU and its
    own port, and the replica stops (so SkyServe replaces it) when either of them stops."""
    if g.nodes > 1:
        return _nodes_run(g)
    main = shlex.join(server_command(g))
    if g.guard is None:
        return main
    guard = shlex.join(server_command(g.guard, port=GUARD_PORT))
    return (f"CUDA_VISIBLE_DEVICES=0 {guard} &\n{main} &\n"
            "wait -n  # the first server to stop ends the replica\nexit 1\n")


def _nodes_run(g: ServeGroup) -> str:
    """The ``run`` of a replica over ``num_nodes`` nodes: SkyPilot runs it on every node with the node's
    ``SKYPILOT_NODE_RANK``, the nodes' addresses in ``SKYPILOT_NODE_IPS`` (one a line, the head's first) and
    ``SKYPILOT_NUM_NODES``; the head (rank 0) answers the requests and the readiness probe."""
    first, other = node_scripts(g, SKYPILOT_NODES)
    return (f'{HEAD_IP}=$(echo "$SKYPILOT_NODE_IPS" | head -n1)\n'
            f'if [ "$SKYPILOT_NODE_RANK" = 0 ]; then\n{_indent(first)}else\n{_indent(other)}fi\n')


def _indent(script: str) -> str:
    return "".join(f"  {line}\n" for line in script.splitlines())
