"""Hand-off of a serving plan's guard model: its own server command (vLLM or SGLang, its flags checked against
the recorded release exactly like the main model's, by :func:`gpuplan.export.serve.server_command`).

Per placement: ``separate`` and ``mig`` run the guard's replicas behind their own endpoint (on MIG, one server
per slice, selected with ``CUDA_VISIBLE_DEVICES=MIG-<uuid>``); ``colocated`` runs one guard server beside the
main server on one GPU of each replica, on its own port, with the memory share the plan gave it.
"""

from __future__ import annotations

import shlex
from typing import Any

from gpuplan.catalog import Catalog
from gpuplan.catalog.models import find_preset
from gpuplan.estimate.quant import native_format
from gpuplan.export.serve import GUARD_PORT, PORT, ServeGroup, server_command
from gpuplan.plan.guard import presets


def guard_groups(cat: Catalog, plan: Any) -> list[ServeGroup]:
    """The guard's serving groups of a :class:`~gpuplan.plan.serving.ServePlan` ([] without a guard model): its own
    fleet's largest group, or co-located one per GPU type of the main fleet, each with the memory share the plan
    gave it on that GPU."""
    g = plan.guard
    if g is None or g.kind != "model" or plan.fleet is None:
        return []
    r = plan.request
    entry = find_preset(cat, g.name)
    repo = entry.hf_repo if entry and entry.hf_repo else g.name
    context = max(b.prompt_len + b.output_len for b in presets()[g.name].buckets(r.buckets))
    name = f"gpuplan-guard-{g.name}".lower().replace(".", "-")[:50].rstrip("-")
    spec = cat.model(g.name)
    if g.placement == "colocated":
        fmt = native_format(spec.native_dtype)
        return [ServeGroup(model=repo, gpu=gpu, engine=r.engine, weight_format=fmt, context_len=context,
                           max_num_seqs=g.max_num_seqs or 1, gpu_memory_utilization=share,
                           language_model_only=spec.vision_tower,
                           replicas=sum(x.replicas for x in plan.fleet.groups if x.config.gpu == gpu), name=name)
                for gpu, share, _ in g.memory_shares]
    group = max(g.fleet.groups, key=lambda x: x.replicas)
    c = group.config
    return [ServeGroup(model=repo, gpu=c.gpu, engine=c.engine, weight_format=c.quant, tp=c.tp, pp=c.pp,
                       context_len=context, max_num_seqs=c.max_num_seqs, replicas=group.replicas, spot=group.spot,
                       name=name, language_model_only=spec.vision_tower)]


def guard_export(cat: Catalog, plan: Any) -> dict[str, Any] | None:
    """The guard's server command and how to run it: ``placement``, ``model``, ``name``, ``argv`` and ``text`` (the
    first command), ``commands`` (per GPU type: ``gpu``, ``memory_share``, ``main_memory_share``, ``argv``, ``text``)
    and ``notes``."""
    groups = guard_groups(cat, plan)
    if not groups:
        return None
    g = plan.guard
    port = GUARD_PORT if g.placement == "colocated" else PORT
    main = {gpu: m for gpu, _, m in g.memory_shares}
    commands: list[dict[str, Any]] = [
        {"gpu": x.gpu, "memory_share": x.gpu_memory_utilization, "main_memory_share": main.get(x.gpu),
         "argv": server_command(x, port=port), "text": shlex.join(server_command(x, port=port))} for x in groups]
    if g.placement == "colocated":
        notes = [f"run it beside the main server on one GPU of each replica (CUDA_VISIBLE_DEVICES of that GPU), "
                 f"port {port}"] + [f"on {c['gpu']} it takes {c['memory_share']:g} of the GPU's memory and the main "
                                    f"server {c['main_memory_share']:g} (written in its command): together the "
                                    f"{c['memory_share'] + c['main_memory_share']:.3g} the plan reserved"
                                    for c in commands]
    elif g.placement == "mig":
        c = max(g.fleet.groups, key=lambda x: x.replicas).config
        notes = [f"run one server per MIG {c.mig} slice ({c.slices_per_gpu} per GPU, nvidia-smi mig -cgi), each "
                 "with CUDA_VISIBLE_DEVICES=MIG-<uuid>, behind the guard's own endpoint"]
    else:
        notes = [f"{sum(x.replicas for x in g.fleet.groups)} replicas behind the guard's own endpoint"]
    return {"placement": g.placement, "model": groups[0].model, "name": groups[0].name,
            "argv": commands[0]["argv"], "text": commands[0]["text"], "commands": commands, "notes": notes}


def _lines(guard: dict[str, Any], comment: bool) -> str:
    """The guard's commands, one per GPU type (each headed by its GPU when there are several)."""
    out = []
    several = len(guard["commands"]) > 1
    for c in guard["commands"]:
        if several:
            out.append(f"# on {c['gpu']}:")
        out.append(f"# {c['text']}" if comment else c["text"])
    return "\n".join(out)


def guard_file(guard: dict[str, Any]) -> dict[str, str]:
    """The guard's server command(s) as one more file of a server-format export (its stem and text)."""
    head = f"# content-safety guard ({guard['placement']}): {'; '.join(guard['notes'])}"
    return {"name": guard["name"], "text": f"{head}\n{_lines(guard, False)}\n"}


def append_to_text(text: str, fmt: str, guard: dict[str, Any]) -> str:
    """A YAML export's text with the guard's command(s) after it as a comment (valid YAML still; a server-format
    export takes :func:`guard_file` instead)."""
    head = f"# content-safety guard ({guard['placement']}): {'; '.join(guard['notes'])}"
    return text.rstrip("\n") + f"\n\n{head}\n{_lines(guard, fmt not in ('vllm', 'sglang'))}\n"
