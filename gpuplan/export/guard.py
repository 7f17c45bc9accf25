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
from gpuplan.export.serve import PORT, ServeGroup, server_command
from gpuplan.plan.guard import presets

GUARD_PORT = PORT + 1  # a co-located guard's port, beside the main server's


def guard_group(cat: Catalog, plan: Any) -> ServeGroup | None:
    """The guard's serving group of a :class:`~gpuplan.plan.serving.ServePlan`, or None without a guard model."""
    g = plan.guard
    if g is None or g.kind != "model" or plan.fleet is None:
        return None
    r = plan.request
    entry = find_preset(cat, g.name)
    repo = entry.hf_repo if entry and entry.hf_repo else g.name
    context = max(b.prompt_len + b.output_len for b in presets()[g.name].buckets(r.buckets))
    name = f"gpuplan-guard-{g.name}".lower().replace(".", "-")[:50].rstrip("-")
    if g.placement == "colocated":
        main = max(plan.fleet.groups, key=lambda x: x.replicas)
        gpu = cat.gpus[main.config.gpu]
        share = round((g.memory_bytes_per_gpu or 0.0) / gpu.memory_bytes, 3)
        fmt = native_format(cat.model(g.name).native_dtype)
        return ServeGroup(model=repo, gpu=gpu.name, engine=r.engine, weight_format=fmt, context_len=context,
                          max_num_seqs=g.max_num_seqs or 1, gpu_memory_utilization=share,
                          replicas=sum(x.replicas for x in plan.fleet.groups), name=name)
    group = max(g.fleet.groups, key=lambda x: x.replicas)
    c = group.config
    return ServeGroup(model=repo, gpu=c.gpu, engine=c.engine, weight_format=c.quant, tp=c.tp, pp=c.pp,
                      context_len=context, max_num_seqs=c.max_num_seqs, replicas=group.replicas, spot=group.spot,
                      name=name)


def guard_export(cat: Catalog, plan: Any) -> dict[str, Any] | None:
    """The guard's server command and how to run it: ``placement``, ``model``, ``argv``, ``text``, ``notes``."""
    group = guard_group(cat, plan)
    if group is None:
        return None
    g = plan.guard
    port = GUARD_PORT if g.placement == "colocated" else PORT
    argv = server_command(group, port=port)
    if g.placement == "colocated":
        notes = [f"run it beside the main server on one GPU of each replica (CUDA_VISIBLE_DEVICES of that GPU), "
                 f"port {port}; it takes {group.memory_share:.1%} of that GPU's memory, so lower the main server's "
                 "memory share on that GPU by as much"]
    elif g.placement == "mig":
        c = max(g.fleet.groups, key=lambda x: x.replicas).config
        notes = [f"run one server per MIG {c.mig} slice ({c.slices_per_gpu} per GPU, nvidia-smi mig -cgi), each "
                 "with CUDA_VISIBLE_DEVICES=MIG-<uuid>, behind the guard's own endpoint"]
    else:
        notes = [f"{sum(x.replicas for x in g.fleet.groups)} replicas behind the guard's own endpoint"]
    return {"placement": g.placement, "model": group.model, "name": group.name, "argv": argv,
            "text": shlex.join(argv), "notes": notes}


def guard_file(guard: dict[str, Any]) -> dict[str, str]:
    """The guard's server command as one more file of a server-format export (its stem and text)."""
    head = f"# content-safety guard ({guard['placement']}): {'; '.join(guard['notes'])}"
    return {"name": guard["name"], "text": f"{head}\n{guard['text']}\n"}


def append_to_text(text: str, fmt: str, guard: dict[str, Any]) -> str:
    """A YAML export's text with the guard's command after it as a comment (valid YAML still; a server-format
    export takes :func:`guard_file` instead)."""
    head = f"# content-safety guard ({guard['placement']}): {'; '.join(guard['notes'])}"
    line = guard["text"] if fmt in ("vllm", "sglang") else f"# {guard['text']}"
    return text.rstrip("\n") + f"\n\n{head}\n{line}\n"
