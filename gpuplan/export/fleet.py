"""Hand-off of a whole serving fleet (:class:`gpuplan.plan.serving.ServePlan`): every group, not only the first.

A fleet group (one configuration from one offer in one zone) becomes a :class:`Part`: the plain server inputs
(:class:`~gpuplan.export.serve.ServeGroup`), the offer it rents, the requests/s one replica serves within the
targets and is given with nothing lost. :func:`parts` builds them for one model on one fleet; a second model
of the same plan (a guard) builds its own and the exporters take the concatenation.

- ``skypilot``: one ``service`` task per group. ``sky serve up`` loads one task per file (a file of several
  YAML documents is a pipeline, which it refuses), so a fleet of several groups is one file per group.
- ``k8s``: one Deployment, PodDisruptionBudget and HPA per group behind one Service (:func:`k8s.fleet_manifests`).
- ``vllm`` / ``sglang``: one server command per group.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpuplan.catalog import Catalog
from gpuplan.errors import InputError
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.quant import native_format
from gpuplan.export import k8s, skypilot
from gpuplan.export.registry import version
from gpuplan.export.serve import (
    GUARD_PORT,
    HEAD_ADDRESS,
    PORT,
    RAY_PORT,
    SERVERS,
    ServeGroup,
    adapters_to_fill,
    check_format,
    node_commands,
    server_command,
    uses_ray,
)
from gpuplan.plan.serving import Bucket, Fleet, FleetGroup, ServePlan
from gpuplan.types import ModelSpec, Offer

_LABEL = re.compile(r"[^a-z0-9-]+")
NAME_CHARS = 40  # a group's name is a label value (at most 63 characters): the model's part is cut to this


@dataclass(frozen=True, slots=True)
class Part:
    """One group of a fleet as the exporters take it."""

    group: ServeGroup
    offer: Offer | None
    capacity_per_replica: float  # requests/s one replica serves within the targets (the autoscaler's target)
    given_per_replica: float  # requests/s each replica is routed with nothing lost (the router's weight)
    describe: str  # "2 × 1× H100 TP1 bf16, AWS us-east-1/zone-1, spot"
    zone: str  # the plan's zone (its failure domain)
    disk_bytes: float = 0.0


def parts(p: ServePlan, m: ModelSpec, model_ref: str, what: str, fleet: Fleet | None = None,
          service: str | None = None, buckets: Sequence[Bucket] | None = None,
          colocated: Sequence[ServeGroup] = ()) -> list[Part]:
    """The parts of ``fleet`` (default: the plan's peak fleet) serving ``m`` from ``model_ref``, named after
    ``service`` (default: the model); ``what`` is the export asked for (named in errors). ``buckets`` are the
    request sizes that fleet serves (default: the plan's; a second model such as a guard passes its own).
    ``colocated``: a co-located guard's server per GPU type, put beside the main server of every replica."""
    fleet = fleet or p.fleet
    if fleet is None:
        raise InputError("--export", "there is no fleet to export.", "relax the constraints until a fleet fits.")
    base = service or _label(f"gpuplan-{m.name}")[:NAME_CHARS].rstrip("-")
    sizes = buckets or p.request.buckets
    shares = [b.share for b in sizes]
    context = max(b.prompt_len + b.output_len for b in sizes)
    zones = list(dict.fromkeys(g.zone for g in fleet.groups))
    slotted = len(zones) > 1
    quiet = p.day.quiet_replicas if p.day is not None and fleet is p.fleet else ()
    beside = main_shares(p) if fleet is p.fleet else {}
    guards = {x.gpu: x for x in colocated} if fleet is p.fleet else {}
    out = []
    for i, fg in enumerate(fleet.groups, 1):
        group = _serve_group(fg, m, model_ref, what, context, base if len(fleet.groups) == 1 else
                             _label(f"{base}-{i}-{fg.config.gpu}"), base,
                             f"z{zones.index(fg.zone) + 1}" if slotted else "", beside.get(fg.config.gpu))
        if quiet:  # the autoscalers may follow the daily profile down to its quietest hour's fleet
            group = replace(group, min_replicas=quiet[i - 1])
        if fg.config.gpu in guards:  # the co-located guard's server runs in every replica of the group
            group = replace(group, guard=replace(guards[fg.config.gpu], replicas=group.replicas))
        capacity, given = fleet.replica_rate(fg.config, shares)
        out.append(Part(group, fg.offer, round(capacity, 3), given, _describe(fg), fg.zone,
                        skypilot.weights_disk_bytes(m)))
    return out


def main_shares(p: ServePlan) -> dict[str, float]:
    """GPU type -> the main server's memory share beside a co-located guard (the plan's split: the two servers'
    shares add up to what the engine reserves); {} without one."""
    g = p.guard
    if g is None or g.placement != "colocated":
        return {}
    return {gpu: main for gpu, _, main in g.memory_shares}


def _serve_group(fg: FleetGroup, m: ModelSpec, model_ref: str, what: str, context: int, name: str, service: str,
                 slot: str, memory_share: float | None = None) -> ServeGroup:
    c = fg.config
    if c.engine not in SERVERS:
        raise InputError("--export", f"this fleet was estimated for {get_engine(c.engine).name} (its memory "
                         f"reservation and batch); the {what} export runs vLLM or SGLang.",
                         "plan with --engine vllm (or sglang) to export it.")
    check_format(c.quant, native_format(m.native_dtype), m.name, c.engine)
    return ServeGroup(model=model_ref, gpu=c.gpu, engine=c.engine, weight_format=c.quant, tp=c.tp, pp=c.pp, ep=c.ep,
                      context_len=context, max_num_seqs=c.max_num_seqs, gpu_memory_utilization=memory_share,
                      replicas=max(1, fg.replicas),
                      spot=fg.spot, provider=fg.provider, name=name, service=service, zone_slot=slot,
                      lora_adapters=c.lora_adapters,
                      lora_rank=c.lora_rank, trust_remote_code=m.remote_code, mig=c.mig,
                      language_model_only=m.vision_tower)


def _label(text: str) -> str:
    return _LABEL.sub("-", text.lower()).strip("-")


def _describe(fg: FleetGroup) -> str:
    return f"{fg.replicas} × {fg.config.describe()}, {fg.provider} {fg.zone}, {fg.pricing}"


def documents(ps: Sequence[Part], fmt: str, clouds: Mapping[str, str] | None = None) -> list[Any]:
    """Per part its SkyPilot service task or server argv; for ``k8s`` the fleet's objects."""
    if fmt == "k8s":
        return k8s.fleet_manifests([x.group for x in ps])
    if fmt == "skypilot":
        return [skypilot.service_task(x.group, x.offer, x.capacity_per_replica or None, disk_bytes=x.disk_bytes,
                                      clouds=clouds) for x in ps]
    for x in ps:
        if x.group.engine != fmt:
            raise InputError("--export", f"this fleet was estimated for {x.group.engine} (its memory reservation "
                             f"and batch); the {fmt} export runs {fmt}.", f"plan with --engine {fmt} to export it.")
    return [server_command(x.group) for x in ps]


def routing_note(ps: Sequence[Part], by_size: bool, fmt: str = "k8s") -> str:
    """What the router in front of the groups must do for the fleet to carry the load as planned."""
    if len(ps) == 1:
        return ""
    total = sum(x.given_per_replica * x.group.replicas for x in ps) or 1.0
    shares = "; ".join(f"{x.group.name} {x.given_per_replica * x.group.replicas / total:.0%} "
                       f"({x.given_per_replica:.2f} req/s per replica)" for x in ps)
    if by_size:
        return ("the plan sends requests by size to different GPU types (its routing table): a length-aware router "
                "must read each request's prompt length and send it to its group (Kubernetes Services and the "
                "Gateway API match paths and headers, not bodies: have the client or an application router set a "
                "header, e.g. x-request-bucket, and route on it to one backend per group). Traffic with nothing "
                f"lost: {shares}.")
    if fmt == "skypilot":
        return ("each group is its own SkyServe service with its own endpoint: a load balancer in front sends each "
                f"its share of the traffic. Traffic with nothing lost: {shares}.")
    rates = [x.given_per_replica for x in ps]
    if max(rates) - min(rates) <= 0.01 * max(rates):
        return ("every replica is given the same rate, so an even spread over all replicas (what a Kubernetes "
                f"Service does) matches the plan. Traffic with nothing lost: {shares}.")
    return ("the groups' replicas take different rates, so weight them by capacity, not round-robin: a Kubernetes "
            "Service spreads connections evenly over pods, so put a weighted router in front, e.g. a Gateway API "
            "HTTPRoute whose backendRefs are one Service per group, weighted by these shares. Traffic with "
            f"nothing lost: {shares}.")


def _by_size(p: ServePlan, fleet: Fleet) -> bool:
    return len(p.request.buckets) > 1 and len(fleet.gpu_types) > 1


def texts(ps: Sequence[Part], fmt: str, docs: list[Any], label: str, note: str) -> list[tuple[str, str]]:
    """(file stem, text) of every file the export writes: one for ``k8s`` (``kubectl apply -f`` reads several
    documents), one per group for ``skypilot``, ``vllm`` and ``sglang``."""
    if fmt == "k8s":
        return [(ps[0].group.service or ps[0].group.name, _k8s_header(ps, label, note, docs) + _yaml_all(docs))]
    out = []
    for n, (x, doc) in enumerate(zip(ps, docs, strict=True), 1):
        lines = [f"generated by gpuplan for the fleet {label}",
                 f"group {n} of {len(ps)}: {x.describe}"]
        if fmt == "skypilot":
            lines.append(f"sky serve up THIS.yaml -n {x.group.name} --secret HF_TOKEN   (gated models need a "
                         "Hugging Face token)")
            if x.group.guard is not None:
                lines.append(f"the content-safety guard runs in every replica beside the server (first GPU, port "
                             f"{GUARD_PORT}, {x.group.guard.memory_share:g} of its memory; the server "
                             f"{x.group.memory_share:g}); SkyServe probes and balances port {PORT} only, so the "
                             f"guard's checks are sent to port {GUARD_PORT} of the replica (open it with "
                             "resources.ports, or call it from a proxy on the replica)")
            if x.group.nodes > 1:
                lines.append(f"a replica is {x.group.nodes} nodes (num_nodes): run starts each by its "
                             "SKYPILOT_NODE_RANK, the head (rank 0) answers the requests and the readiness probe")
            if any(y is not x and y.offer and x.offer and (y.offer.provider, y.offer.region) ==
                   (x.offer.provider, x.offer.region) for y in ps):
                lines.append(f"the plan puts this group in {x.zone}, apart from the other groups' zones: add "
                             "resources.zone with a zone no other group uses (SkyPilot picks one otherwise)")
            body = _yaml(doc)
        else:
            lines += [f"flags checked against {fmt} {version(fmt)}",
                      f"run on each of its {x.group.replicas} replicas ({x.group.gpus_per_replica}× {x.group.gpu})"]
            body = shlex.join(doc) + "\n"
            nodes = node_commands(x.group)
            if uses_ray(x.group):
                lines.append(f"a replica spans {x.group.nodes} nodes joined by Ray: on its first node run `ray start "
                             f"--head --port={RAY_PORT}` before this command, on each other node `ray start "
                             f"--address={HEAD_ADDRESS}:{RAY_PORT} --block` (the first node's address)")
            if len(nodes) > 1:  # an expert-parallel replica over several nodes: one command per node
                lines.append(f"a replica spans {len(nodes)} nodes of {x.group.gpus_per_replica // len(nodes)} GPUs: "
                             f"the first line on its first node (it answers the requests), each next line on the "
                             f"next node; put the first node's address for {HEAD_ADDRESS} in every line")
                body += "".join(f"# node {n + 1} of {len(nodes)}:\n{shlex.join(argv)}\n"
                                for n, argv in enumerate(nodes[1:], 1))
        if x.group.lora_adapters:
            lines.append(adapters_to_fill(x.group))
        if note:
            lines.append("routing: " + note)
        out.append((x.group.name, "".join(f"# {line}\n" for line in _wrap(lines)) + body))
    return out


def _k8s_header(ps: Sequence[Part], label: str, note: str, docs: list[Any]) -> str:
    engines = list(dict.fromkeys(x.group.engine for x in ps))
    lines = [f"generated by gpuplan for the fleet {label}"]
    lines += [f"group {n}: {x.group.name} = {x.describe}" + (f" (zone slot {x.group.zone_slot})"
                                                              if x.group.zone_slot else "")
              for n, x in enumerate(ps, 1)]
    lines += [f"{x.group.name}: the daily profile's quietest hour needs none of its replicas, but an HPA keeps one "
              "(scaling to zero needs the HPAScaleToZero feature gate)" for x in ps if x.group.fewest == 0]
    lines += k8s.capacity_note([x.group for x in ps])
    lines += k8s.lws_note(docs)
    if any(x.group.guard for x in ps):
        lines.append(f"the content-safety guard is a second container of every pod (port {GUARD_PORT}, Service port "
                     "'guard'); the pod's two containers share its GPUs through a ResourceClaim, which needs dynamic "
                     "resource allocation (Kubernetes 1.32+ with resource.k8s.io/v1beta1 served) and NVIDIA's DRA "
                     "driver for GPUs (device class gpu.nvidia.com) instead of the device plugin on those nodes")
    if any(x.group.zone_slot for x in ps):
        lines.append(f"zone slots: pods of different slots never share a {k8s.ZONE_KEY} (pod anti-affinity), so "
                     "losing a zone loses one slot at most, as the plan assumes; the cluster needs a zone per slot")
    lines += [f"server flags checked against {', '.join(f'{e} {version(e)}' for e in engines)}; create the Secret "
              "for gated models:", f"  kubectl create secret generic {k8s.SECRET} --from-literal=token=hf_...",
              "the HPAs read a custom metric: install Prometheus Adapter with this rule (docs/export.md):"]
    for e in engines:
        lines += ["  " + line for line in k8s.adapter_rule(e).splitlines()]
    lines += list(dict.fromkeys(adapters_to_fill(x.group) + " (args of the container)" for x in ps
                                if x.group.lora_adapters))
    if note:
        lines.append("routing: " + note)
    return "".join(f"# {line}\n" for line in _wrap(lines))


def _wrap(lines: list[str], width: int = 116) -> list[str]:
    import textwrap

    out = []
    for line in lines:
        indent = line[: len(line) - len(line.lstrip())]
        out += textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_on_hyphens=False) or [""]
    return out


def _yaml(doc: Any) -> str:
    from gpuplan.export import _yaml as dump

    return dump(doc)


def _yaml_all(docs: list[Any]) -> str:
    from gpuplan.export import _yaml_all as dump

    return dump(docs)


def export(p: ServePlan, m: ModelSpec, model_ref: str, fmt: str, clouds: Mapping[str, str] | None = None,
           catalog: Catalog | None = None) -> dict[str, Any]:
    """The fleet's export as data: ``format``, ``plan``, ``routing`` (the note), ``document`` (the k8s objects, or
    one task / argv per group), ``groups`` (per group its name, the fleet group, its document), ``files``
    (stem and text of each file) and, with a guard model, ``guard_groups`` (its own fleet's groups, exported as
    the main ones behind their own Service or SkyServe services) and ``guard_in_documents`` (whether the
    documents run the guard: a co-located guard is a second container / server of every main replica; a guard
    on MIG slices is not a SkyPilot task, SkyPilot launching whole GPUs). ``catalog`` (default: the bundled one)
    names the guard's checkpoint."""
    colocated, guard_ps = _guard_parts(p, fmt, catalog)
    ps = parts(p, m, model_ref, fmt, colocated=colocated)
    assert p.fleet is not None  # parts() refused a plan without one
    everything = ps + guard_ps
    docs = documents(everything, fmt, clouds)
    label = fleet_label(p)
    note = routing_note(ps, _by_size(p, p.fleet), fmt)
    files = texts(everything, fmt, docs, label, note)
    per_part = docs if fmt != "k8s" else [None] * len(everything)
    groups = [_group_dict(x, fg, d, fmt) for x, fg, d in zip(ps, p.fleet.groups, per_part[:len(ps)], strict=True)]
    out: dict[str, Any] = {"format": fmt, "plan": label, "routing": note or None, "document": docs,
                           "groups": groups, "files": [{"name": stem, "text": body} for stem, body in files]}
    if p.guard is not None and p.guard.kind == "model":
        own = p.guard.fleet.groups if guard_ps and p.guard.fleet else ()
        out["guard_groups"] = [_group_dict(x, fg, d, fmt) for x, fg, d in
                               zip(guard_ps, own, per_part[len(ps):], strict=True)]
        out["guard_in_documents"] = bool(colocated or guard_ps) and fmt in ("k8s", "skypilot")
    return out


def _group_dict(x: Part, fg: FleetGroup, doc: Any, fmt: str) -> dict[str, Any]:
    return {"name": x.group.name, "fleet_group": fg.as_dict(), "capacity_per_replica_per_s": x.capacity_per_replica,
            "given_per_replica_per_s": x.given_per_replica, "zone_slot": x.group.zone_slot or None,
            "guard": x.group.guard is not None, **({"document": doc} if fmt != "k8s" else {})}


def _guard_parts(p: ServePlan, fmt: str, catalog: Catalog | None) -> tuple[list[ServeGroup], list[Part]]:
    """A guard model's servers for the YAML exports: (a co-located guard's server per GPU type, the parts of the
    guard's own fleet). Neither for the server-command formats (the guard's command is a file of its own,
    :func:`gpuplan.export.guard.guard_file`) nor for MIG slices on SkyPilot."""
    g = p.guard
    if g is None or g.kind != "model" or p.fleet is None or fmt not in ("k8s", "skypilot"):
        return [], []
    from gpuplan.catalog import load_catalog
    from gpuplan.catalog.models import find_preset
    from gpuplan.export.guard import guard_groups
    from gpuplan.plan.guard import presets

    cat = catalog or load_catalog()
    if g.placement == "colocated":
        return guard_groups(cat, p), []
    if g.fleet is None or (g.placement == "mig" and fmt == "skypilot"):
        return [], []
    entry = find_preset(cat, g.name)
    ref = entry.hf_repo if entry and entry.hf_repo else g.name
    service = _label(f"gpuplan-guard-{g.name}")[:NAME_CHARS].rstrip("-")
    return [], parts(p, cat.model(g.name), ref, fmt, g.fleet, service, presets()[g.name].buckets(p.request.buckets))


def fleet_label(p: ServePlan) -> str:
    f = p.fleet
    assert f is not None
    return f"{p.model}: " + " + ".join(f"{g.replicas} × {g.config.describe()}" for g in f.groups)
