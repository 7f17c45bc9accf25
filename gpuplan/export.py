"""Hand-off: turn a plan's pick into files existing engines run. gpuplan writes them; it never launches.

- SkyPilot task YAML (``sky launch plan.yaml``): the planned accelerators, count, nodes, cloud, region, spot
  and disk; for serving plans the vLLM server as the task's ``run`` and a ``service`` section with the
  planned replicas (``sky serve up plan.yaml``).
- vLLM and SGLang server commands with the planned tensor parallelism, context length, memory share,
  concurrency cap, quantization and KV-cache dtype.
- A Kubernetes Deployment + Service running the vLLM OpenAI server with the planned GPUs and replicas.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

import yaml

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import InputError
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.quant import native_format
from gpuplan.plan.planner import Candidate
from gpuplan.types import InferSetup
from gpuplan.units import GB

FORMATS = ("skypilot", "vllm", "sglang", "k8s")



def skypilot_clouds(catalog: Catalog | None = None) -> Mapping[str, str]:
    """Provider name -> the cloud SkyPilot launches it as: the ``skypilot_cloud`` column of providers.csv
    (checked against SkyPilot's own registry by tests/test_providers.py)."""
    return (catalog or load_catalog()).skypilot_clouds()

# providers whose instance_type column holds the name SkyPilot launches (their API names, or SkyPilot's own
# catalog); Vast.ai offers are matched at launch time, so the plan names only the accelerators there
SKYPILOT_INSTANCE_NAMES = {"AWS", "GCP", "Azure", "OCI", "Lambda", "RunPod", "Cudo Compute", "Hyperstack", "Nebius",
                           "DigitalOcean", "Paperspace"}
_INSTANCE_NAME = re.compile(r"[A-Za-z0-9_.\-]+")  # rows like 'H200 per-GPU' describe a price, not an instance
_QUANTIZATION = {"awq-int4": "awq", "gptq-int4": "gptq", "gptq-int8": "gptq", "fp8": "fp8", "bnb-nf4": "bitsandbytes",
                 "bnb-nf4-dq": "bitsandbytes", "bnb-int8": "bitsandbytes"}


def _model_ref(c: Candidate, hf_repo: str | None) -> str:
    return hf_repo or c.estimate.model.name


def _infer_setup(c: Candidate, what: str) -> InferSetup:
    setup = c.estimate.setup
    if not isinstance(setup, InferSetup):
        raise InputError("--export", f"{what} runs an inference server; this plan is a {c.estimate.job.task} job.",
                         "use --export skypilot for training plans.")
    return setup


def _servable(c: Candidate, what: str, engine: str) -> InferSetup:
    """The plan's setup, if ``engine`` (vllm or sglang) can run it as planned; else an error that says why.
    A plan is sized for one engine's memory reservation and batching, so it is exported only to that engine."""
    s = _infer_setup(c, what)
    server = get_engine(engine).name
    if s.engine != engine:
        runs = server if what in ("vllm", "sglang") else "vLLM or SGLang"
        fix = engine if what in ("vllm", "sglang") else "vllm (or sglang)"
        raise InputError("--export", f"this plan was estimated for {get_engine(s.engine).name} (its memory reservation "
                         f"and batch); the {what} export runs {runs}.", f"plan with --engine {fix} to export it.")
    m = c.estimate.model
    native = native_format(m.native_dtype)
    fmt = s.weight_format
    if fmt in ("awq-int4", "gptq-int4", "gptq-int8") and fmt != native:
        raise InputError("--export", f"the plan serves {fmt} weights, but {m.name} is published in {native}; "
                         f"{server} loads {fmt.split('-')[0].upper()} weights only from a checkpoint quantized that "
                         "way.", "plan with that checkpoint's config.json (its quantization_config makes the format "
                         "the default), or use --quant fp8, which the server quantizes on load.")
    if fmt not in _QUANTIZATION and fmt not in ("bf16", "fp16", "fp32", native):
        raise InputError("--export", f"{server} has no on-load {fmt} quantization.",
                         "use --quant fp8 (quantized on load), a pre-quantized AWQ/GPTQ checkpoint, or 16-bit.")
    return s


def vllm_command(c: Candidate, hf_repo: str | None = None, what: str = "vllm") -> list[str]:
    """``vllm serve`` with the plan's layout (vLLM engine arguments); ``what``: the export asked for."""
    s = _servable(c, what, "vllm")
    eng = get_engine("vllm")
    args = ["vllm", "serve", _model_ref(c, hf_repo), "--tensor-parallel-size", str(s.tp),
            "--max-model-len", str(s.context_len),
            "--gpu-memory-utilization", f"{s.gpu_memory_utilization or eng.gpu_memory_utilization:g}",
            "--max-num-seqs", str(max(1, s.batch))]
    if s.pp > 1:
        args += ["--pipeline-parallel-size", str(s.pp)]
    if s.weight_format in _QUANTIZATION:
        args += ["--quantization", _QUANTIZATION[s.weight_format]]
    if s.kv_dtype == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    return args


def sglang_command(c: Candidate, hf_repo: str | None = None, what: str = "sglang") -> list[str]:
    """``python -m sglang.launch_server`` with the plan's layout (SGLang server arguments)."""
    s = _servable(c, what, "sglang")
    eng = get_engine("sglang")
    args = ["python", "-m", "sglang.launch_server", "--model-path", _model_ref(c, hf_repo), "--tp", str(s.tp),
            "--context-length", str(s.context_len), "--mem-fraction-static", f"{eng.gpu_memory_utilization:g}",
            "--max-running-requests", str(max(1, s.batch))]
    if s.weight_format in _QUANTIZATION:
        args += ["--quantization", _QUANTIZATION[s.weight_format]]
    if s.kv_dtype == "fp8":
        args += ["--kv-cache-dtype", "fp8_e5m2"]
    return args


def skypilot_task(c: Candidate, hf_repo: str | None = None, clouds: Mapping[str, str] | None = None,
                  ) -> dict[str, Any]:
    """A SkyPilot task: the planned hardware (and, for serving, the vLLM server)."""
    clouds = skypilot_clouds() if clouds is None else clouds
    e = c.estimate
    per_node = min(e.n_gpus, 8)
    nodes = max(1, e.n_gpus // per_node)
    resources: dict[str, Any] = {"accelerators": f"{e.gpu.name}:{per_node}"}
    if c.offer is not None:
        cloud = clouds.get(c.offer.provider)
        if cloud is None:
            raise InputError("--export", f"SkyPilot has no cloud for provider '{c.offer.provider}'.",
                             "pick a plan on " + ", ".join(sorted(clouds)) + " (--provider), or use "
                             "another export format.")
        resources["cloud"] = cloud
        if not c.offer.region.startswith("("):
            resources["region"] = c.offer.region
        if c.offer.provider in SKYPILOT_INSTANCE_NAMES and _INSTANCE_NAME.fullmatch(c.offer.instance_type):
            resources["instance_type"] = c.offer.instance_type  # else SkyPilot picks one with these accelerators
        resources["use_spot"] = c.offer.pricing == "spot"
    resources["disk_size"] = max(64, int(_disk_gb(c)))
    task: dict[str, Any] = {"name": f"gpuplan-{e.job.task}-{e.model.name}".lower().replace(".", "-"),
                            "resources": resources, "num_nodes": nodes}
    if isinstance(e.setup, InferSetup):  # the server the plan was sized for
        task["resources"]["ports"] = 8000
        sglang = e.setup.engine == "sglang"
        task["setup"] = "pip install 'sglang[all]'" if sglang else "pip install vllm"
        cmd = sglang_command(c, hf_repo, "skypilot") if sglang else vllm_command(c, hf_repo, "skypilot")
        task["run"] = shlex.join(cmd) + " --host 0.0.0.0 --port 8000"
    if e.job.task == "serve":  # SkyPilot Serve (`sky serve up`): the planned number of replicas
        task["service"] = {"readiness_probe": "/v1/models", "replicas": max(1, e.replicas)}
    return task


def _disk_gb(c: Candidate) -> float:
    from gpuplan.plan.planner import _disk_bytes

    return _disk_bytes(c.estimate.model, c.estimate.job) / GB * 1.2


def k8s_manifest(c: Candidate, hf_repo: str | None = None, image: str | None = None) -> list[dict]:
    """A Deployment (replicas = the plan's replicas) and a Service for the OpenAI-compatible server the plan
    was sized for (vLLM, or SGLang)."""
    e = c.estimate
    s = _infer_setup(c, "k8s")
    name = f"gpuplan-{e.model.name}".lower().replace(".", "-")[:50]
    if s.engine == "sglang":
        cmd = sglang_command(c, hf_repo, "k8s")
        server = {"name": "sglang", "image": image or "lmsysorg/sglang:latest", "command": cmd[:3],
                  "args": [*cmd[3:], "--host", "0.0.0.0", "--port", "8000"]}
    else:
        cmd = vllm_command(c, hf_repo, "k8s")
        server = {"name": "vllm", "image": image or "vllm/vllm-openai:latest", "command": cmd[:2],
                  "args": [*cmd[2:], "--port", "8000"]}
    container = {
        **server, "ports": [{"containerPort": 8000}],
        "resources": {"limits": {"nvidia.com/gpu": s.tp * s.pp}},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {
            "replicas": max(1, e.replicas), "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container],
                         "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
                         "nodeSelector": {"nvidia.com/gpu.product": _gpu_product_label(e.gpu.name)}},
            },
        },
    }
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
               "spec": {"selector": {"app": name}, "ports": [{"port": 8000, "targetPort": 8000}]}}
    return [deployment, service]


def _gpu_product_label(name: str) -> str:
    """Value of the NVIDIA GPU feature discovery label ``nvidia.com/gpu.product`` for a gpuplan name (the
    driver's product name with spaces as dashes); users adjust it to their cluster's labels."""
    return {"H100": "NVIDIA-H100-80GB-HBM3", "A100-80GB": "NVIDIA-A100-SXM4-80GB", "A100": "NVIDIA-A100-SXM4-40GB",
            "L40S": "NVIDIA-L40S", "L4": "NVIDIA-L4", "A10G": "NVIDIA-A10G", "T4": "Tesla-T4",
            "H200": "NVIDIA-H200"}.get(name, "NVIDIA-" + name)


def render(c: Candidate, fmt: str, hf_repo: str | None = None, clouds: Mapping[str, str] | None = None) -> str:
    """The export as text (YAML or a shell command line)."""
    if fmt not in FORMATS:
        raise InputError("--export", f"unknown export format '{fmt}'.", "use one of: " + ", ".join(FORMATS) + ".")
    header = f"# generated by gpuplan for the plan {c.label()}\n"
    if fmt == "skypilot":
        return header + yaml.safe_dump(skypilot_task(c, hf_repo, clouds), sort_keys=False)
    if fmt == "k8s":
        return header + yaml.safe_dump_all(k8s_manifest(c, hf_repo), sort_keys=False)
    cmd = vllm_command(c, hf_repo) if fmt == "vllm" else sglang_command(c, hf_repo)
    return header + shlex.join(cmd) + "\n"


def exportable(ranked: list[Candidate], fmt: str, clouds: Mapping[str, str] | None = None) -> Candidate | None:
    """The best-ranked plan ``fmt`` can express: any plan for the engine commands, one on a cloud SkyPilot
    launches for ``skypilot``."""
    if fmt != "skypilot":
        return ranked[0] if ranked else None
    clouds = skypilot_clouds() if clouds is None else clouds
    return next((c for c in ranked if c.offer is not None and c.offer.provider in clouds), None)
