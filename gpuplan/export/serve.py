"""Serving hand-off: one group of identical replicas as plain inputs, and the vLLM / SGLang server command for it.

A fleet planner with several GPU types calls these once per group. Flags are those of the pinned releases
(``gpuplan/data/flags/vllm.json``, ``sglang.json``, recorded from each release's own argument parser); every
command built here is checked against that record before it is returned.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

from gpuplan.errors import InputError
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.engines import with_engine_defaults
from gpuplan.estimate.quant import native_format
from gpuplan.export.registry import check_options, version
from gpuplan.plan.planner import Candidate
from gpuplan.types import Engine, InferSetup

PORT = 8000
GPUS_PER_NODE = 8
HEAD_ADDRESS = "HEAD_NODE_IP"  # a multi-node replica's first node, to be filled in by whoever starts the nodes
DP_RPC_PORT = 13345  # vLLM's data-parallel RPC port on the head node (the docs' example port)
DIST_INIT_PORT = 5000  # SGLang's --dist-init-addr port on the first node (the docs' example port)
RAY_PORT = 6379  # the Ray head's port on a vLLM replica's first node (Ray's default; SkyPilot's own Ray uses 6380)
GUARD_PORT = PORT + 1  # a co-located guard server's port, beside the main server's on every replica
SERVERS = ("vllm", "sglang")

# weight format -> the server's on-load (or checkpoint) quantization method, for the pinned versions. vLLM 0.33
# has no bitsandbytes method (QUANTIZATION_METHODS); SGLang quantizes a 16-bit checkpoint to NF4 with double
# quantization while loading (model_loader/loader.py BitsAndBytesModelLoader: quantize_4bit(...,
# compress_statistics=True, quant_type="nf4")), chosen by --load-format bitsandbytes.
_QUANT = {
    "vllm": {"awq-int4": "awq", "gptq-int4": "gptq", "gptq-int8": "gptq", "fp8": "fp8"},
    "sglang": {"awq-int4": "awq", "gptq-int4": "gptq", "gptq-int8": "gptq", "fp8": "fp8",
               "bnb-nf4": "bitsandbytes", "bnb-nf4-dq": "bitsandbytes"},
}
_KV_FP8 = {"vllm": "fp8", "sglang": "fp8_e5m2"}
_UNQUANTIZED = ("bf16", "fp16", "fp32")


@dataclass(frozen=True, slots=True)
class ServeGroup:
    """One group of identical serving replicas: what a server command and a deployment need, nothing more."""

    model: str  # Hugging Face repository (or local path) the server loads
    gpu: str  # gpuplan GPU name
    engine: str  # vllm | sglang
    weight_format: str = "bf16"
    kv_dtype: str = "bf16"
    tp: int = 1
    pp: int = 1
    context_len: int = 4096
    max_num_seqs: int = 256
    gpu_memory_utilization: float | None = None  # None: the engine's default (engines.csv)
    replicas: int = 1
    min_replicas: int | None = None  # the fewest an autoscaler keeps (a daily profile's quietest hour); None: replicas
    zones: tuple[str, ...] = ()
    spot: bool = False
    provider: str = ""  # the offer's provider (its managed Kubernetes' spot labels); "": not known
    name: str = "gpuplan-serve"
    service: str = ""  # the Service (app label) the group answers behind, shared by a fleet's groups; "": name
    lora_adapters: int = 0  # LoRA adapters served on the base (multi-LoRA), all resident
    lora_rank: int = 0  # the rank reserved per adapter (vLLM: one of its --max-lora-rank choices)
    zone_slot: str = ""  # the plan's failure zone this group is in ("": the fleet does not rely on zones)
    trust_remote_code: bool = False  # the model's config has auto_map (ChatGLM): the server runs the repo's code
    # a multimodal checkpoint sized as its text model: the server loads the language model only, as planned
    language_model_only: bool = False
    ep: int = 1  # expert parallelism: a replica of ``ep`` data-parallel attention ranks, the experts split over them
    mig: str = ""  # a MIG profile (1g.10gb ...): each replica is one slice of a GPU ("": whole GPUs)
    guard: ServeGroup | None = None  # a co-located guard's server on the first GPU of every replica (GUARD_PORT)

    def __post_init__(self) -> None:
        if self.engine not in SERVERS:
            raise InputError("--engine", f"the serving exports run vLLM or SGLang, not '{self.engine}'.",
                             "plan with --engine vllm (or sglang).")
        for field, value in (("tp", self.tp), ("pp", self.pp), ("ep", self.ep), ("replicas", self.replicas),
                             ("max_num_seqs", self.max_num_seqs), ("context_len", self.context_len)):
            if value < 1:
                raise InputError(field, f"must be at least 1, got {value}.", f"give {field} >= 1.")

    @property
    def fewest(self) -> int:
        """The replicas an autoscaler may scale down to."""
        return self.replicas if self.min_replicas is None else min(self.min_replicas, self.replicas)

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp * self.ep

    @property
    def nodes(self) -> int:
        """Nodes of ``GPUS_PER_NODE`` one replica spans."""
        return max(1, -(-self.gpus_per_replica // GPUS_PER_NODE))

    @property
    def memory_share(self) -> float:
        return self.gpu_memory_utilization or get_engine(self.engine).gpu_memory_utilization or 0.9


def group_of(c: Candidate, model: str, what: str) -> ServeGroup:
    """The serving group a planned candidate describes; ``what`` is the export asked for (named in errors)."""
    e = c.estimate
    s = e.setup
    if not isinstance(s, InferSetup):
        raise InputError("--export", f"{what} runs an inference server; this plan is a {e.job.task} job.",
                         "use --export skypilot for training plans.")
    if s.engine not in SERVERS:
        runs = get_engine(what).name if what in SERVERS else "vLLM or SGLang"
        fix = what if what in SERVERS else "vllm (or sglang)"
        raise InputError("--export", f"this plan was estimated for {get_engine(s.engine).name} (its memory "
                         f"reservation and batch); the {what} export runs {runs}.", f"plan with --engine {fix} to "
                         "export it.")
    check_format(s.weight_format, native_format(e.model.native_dtype), e.model.name, s.engine)
    spot = c.offer is not None and c.offer.pricing == "spot"
    return ServeGroup(model=model, gpu=e.gpu.name, engine=s.engine, weight_format=s.weight_format,
                      kv_dtype=s.kv_dtype, tp=s.tp, pp=s.pp, context_len=s.context_len,
                      max_num_seqs=max(1, s.batch),
                      # the share the estimate sized the KV cache with: SGLang's release picks it by GPU and TP
                      gpu_memory_utilization=with_engine_defaults(s, e.gpu).gpu_memory_utilization,
                      replicas=max(1, e.replicas), spot=spot, provider=c.offer.provider if c.offer else "",
                      name=_name(e.model.name),
                      trust_remote_code=e.model.remote_code, language_model_only=e.model.vision_tower)


def _name(model: str) -> str:
    return f"gpuplan-{model}".lower().replace(".", "-").replace("_", "-")[:50].rstrip("-")


def check_format(fmt: str, native: str, model: str, engine: str) -> None:
    server = f"{get_engine(engine).name} {version(engine)}"
    if fmt in ("awq-int4", "gptq-int4", "gptq-int8") and fmt != native:
        raise InputError("--export", f"the plan serves {fmt} weights, but {model} is published in {native}; "
                         f"{server} loads {fmt.split('-')[0].upper()} weights only from a checkpoint quantized "
                         "that way.", "plan with that checkpoint's config.json (its quantization_config makes "
                         "the format the default), or use --quant fp8, which the server quantizes on load.")
    if fmt in _QUANT[engine] or fmt in _UNQUANTIZED or fmt == native:
        return
    other = [e for e in SERVERS if e != engine and fmt in _QUANT[e]]
    fix = "use --quant fp8 (quantized on load), a pre-quantized AWQ/GPTQ checkpoint, or 16-bit."
    raise InputError("--export", f"{server} has no on-load {fmt} quantization.",
                     f"plan with --engine {other[0]}, which quantizes {fmt} on load; or {fix}" if other else fix)


@dataclass(frozen=True, slots=True)
class Nodes:
    """How the nodes of one multi-node replica find each other, as whatever starts them says: the first node's
    address, this node's index (0 on the first) and the replica's node count, each a value or a shell expression
    (``$LWS_LEADER_ADDRESS`` under a LeaderWorkerSet, ``$SKYPILOT_NODE_RANK`` on SkyPilot)."""

    head: str = HEAD_ADDRESS
    rank: str = "0"
    count: str = ""  # "": the replica's planned node count

    def start_rank(self, ranks_per_node: int) -> str:
        """The first data-parallel rank on this node."""
        if self.rank.isdigit():
            return str(int(self.rank) * ranks_per_node)
        return f"$(({self.rank.lstrip('$')} * {ranks_per_node}))"


def server_command(g: ServeGroup, host: str = "0.0.0.0", port: int = PORT, node: int = 0,
                   at: Nodes | None = None) -> list[str]:
    """The server command line for one replica of ``g``, listening on ``host:port``; for a replica of several
    nodes, the one its ``node``-th node runs (0: the first, which answers the requests), or, with ``at``, the one a
    node that learns its place from ``at`` runs (``node`` then only says whether it is the first)."""
    at = at or Nodes(rank=str(node))
    return vllm_command(g, host, port, node, at) if g.engine == Engine.VLLM else sglang_command(g, host, port, node, at)


def node_commands(g: ServeGroup, host: str = "0.0.0.0", port: int = PORT) -> list[list[str]]:
    """The server command of every node of one replica of ``g`` (one for a single-node replica, and one for a vLLM
    replica over Ray, whose other nodes only join the Ray cluster: :func:`uses_ray`)."""
    return [server_command(g, host, port, n) for n in range(1 if uses_ray(g) else g.nodes)]


def node_scripts(g: ServeGroup, at: Nodes, port: int = PORT) -> tuple[str, str]:
    """(the first node's script, every other node's) for one replica of ``g`` over several nodes that learn their
    place from ``at``: the shell lines a launcher runs on each node (a LeaderWorkerSet pod, a SkyPilot ``run``).
    Over Ray, the first node starts the Ray head and the server, which waits for the other nodes' GPUs to join
    (vLLM's Ray executor waits for its placement group), and every other node joins the head, retrying until it
    answers; otherwise each node runs its own server command."""
    if uses_ray(g):
        head = f"{at.head}:{RAY_PORT}"
        first = shell_join(server_command(g, port=port, at=replace(at, rank="0")))
        return (f"ray start --head --port={RAY_PORT}\nexport RAY_ADDRESS={_word(head)}\nexec {first}\n",
                f"until ray start --address={_word(head)} --block; do sleep 5; done\n")
    return (f"exec {shell_join(server_command(g, port=port, at=replace(at, rank='0')))}\n",
            f"exec {shell_join(server_command(g, port=port, node=1, at=at))}\n")


def shell_join(argv: list[str]) -> str:
    """``argv`` as one shell line in which the launcher's variables (``$NAME``, ``$((...))``) expand."""
    return " ".join(_word(a) for a in argv)


def _word(arg: str) -> str:
    return f'"{arg}"' if "$" in arg else shlex.quote(arg)


def uses_ray(g: ServeGroup) -> bool:
    """Whether the replica's nodes form a Ray cluster: vLLM's tensor × pipeline parallelism across nodes (its
    multi-node docs: a Ray head on the first node, the others joining it, ``vllm serve`` on the head with
    ``--distributed-executor-backend ray``); expert-parallel vLLM replicas start every node's own server."""
    return g.engine == Engine.VLLM and g.nodes > 1 and g.ep == 1


def _expert_parallel_vllm(g: ServeGroup, node: int, at: Nodes) -> dict[str, str | None]:
    """vLLM's data-parallel attention with expert parallelism (docs/serving/data_parallel_deployment.md and
    expert_parallel_deployment.md): ``--data-parallel-size`` ranks, ``--enable-expert-parallel`` on every node;
    across nodes, ``--data-parallel-size-local`` ranks per node, the head's address and RPC port, and every other
    node ``--headless`` from its first rank (``--data-parallel-start-rank``)."""
    opts: dict[str, str | None] = {"--data-parallel-size": str(g.ep), "--enable-expert-parallel": None}
    if g.nodes > 1:
        local = GPUS_PER_NODE // (g.tp * g.pp)
        opts |= {"--data-parallel-size-local": str(local), "--data-parallel-address": at.head,
                 "--data-parallel-rpc-port": str(DP_RPC_PORT)}
        if node > 0:
            opts |= {"--headless": None, "--data-parallel-start-rank": at.start_rank(local)}
    return opts


def _expert_parallel_sglang(g: ServeGroup) -> dict[str, str | None]:
    """SGLang's DP attention with expert parallelism (docs/references/deepseek.md: ``--tp`` over every GPU,
    ``--enable-dp-attention --dp-size``, ``--ep-size``)."""
    return {"--enable-dp-attention": None, "--dp-size": str(g.ep), "--ep-size": str(g.ep)}


def _nodes_sglang(g: ServeGroup, at: Nodes) -> dict[str, str | None]:
    """SGLang across nodes (docs/references/multi_node_deployment: the same command on every node with
    ``--nnodes``, its ``--node-rank`` and the first node's ``--dist-init-addr``)."""
    return {"--nnodes": at.count or str(g.nodes), "--node-rank": at.rank,
            "--dist-init-addr": f"{at.head}:{DIST_INIT_PORT}"}


def vllm_command(g: ServeGroup, host: str = "0.0.0.0", port: int = PORT, node: int = 0,
                 at: Nodes | None = None) -> list[str]:
    """``vllm serve`` (vLLM 0.33.0 engine and frontend arguments)."""
    check_format(g.weight_format, g.weight_format, g.model, "vllm")
    opts: dict[str, str | None] = {
        "--tensor-parallel-size": str(g.tp), "--max-model-len": str(g.context_len),
        "--gpu-memory-utilization": f"{g.memory_share:g}", "--max-num-seqs": str(g.max_num_seqs)}
    if g.pp > 1:
        opts["--pipeline-parallel-size"] = str(g.pp)
    if g.ep > 1:
        opts |= _expert_parallel_vllm(g, node, at or Nodes(rank=str(node)))
    if uses_ray(g):
        opts["--distributed-executor-backend"] = "ray"
    if g.weight_format in _QUANT["vllm"]:
        opts["--quantization"] = _QUANT["vllm"][g.weight_format]
    if g.kv_dtype == "fp8":
        opts["--kv-cache-dtype"] = _KV_FP8["vllm"]
    if g.trust_remote_code:  # vLLM refuses a repository with custom code (auto_map) without it
        opts["--trust-remote-code"] = None
    if g.language_model_only:  # without it the vision encoder's weights and profiling take memory the plan gave the KV
        opts["--language-model-only"] = None
    if g.lora_adapters:  # every adapter resident on the GPU (a batch may mix them all) and cached on the CPU
        opts |= {"--enable-lora": None, "--max-loras": str(g.lora_adapters), "--max-lora-rank": str(g.lora_rank),
                 "--max-cpu-loras": str(g.lora_adapters)}
    opts |= {"--host": host, "--port": str(port)}
    check_options("vllm", opts)
    return ["vllm", "serve", g.model, *_argv(opts)]


def sglang_command(g: ServeGroup, host: str = "0.0.0.0", port: int = PORT, node: int = 0,
                   at: Nodes | None = None) -> list[str]:
    """``python -m sglang.launch_server`` (SGLang 0.5.23 server arguments); ``--enable-metrics`` serves the
    Prometheus metrics an autoscaler reads. ``--max-running-requests`` is the replica's: the ranks' caps together
    under DP attention."""
    check_format(g.weight_format, g.weight_format, g.model, "sglang")
    opts: dict[str, str | None] = {
        "--model-path": g.model, "--tp-size": str(g.tp * g.ep), "--context-length": str(g.context_len),
        "--mem-fraction-static": f"{g.memory_share:g}", "--max-running-requests": str(g.max_num_seqs * g.ep)}
    if g.pp > 1:
        opts["--pp-size"] = str(g.pp)
    if g.ep > 1:
        opts |= _expert_parallel_sglang(g)
    if g.nodes > 1:
        opts |= _nodes_sglang(g, at or Nodes(rank=str(node)))
    if g.weight_format in _QUANT["sglang"]:
        opts["--quantization"] = _QUANT["sglang"][g.weight_format]
        if opts["--quantization"] == "bitsandbytes":
            opts["--load-format"] = "bitsandbytes"
    if g.kv_dtype == "fp8":
        opts["--kv-cache-dtype"] = _KV_FP8["sglang"]
    if g.trust_remote_code:
        opts["--trust-remote-code"] = None
    if g.language_model_only:
        opts["--language-model-only"] = None
    if g.lora_adapters:  # slots for every adapter in a batch, on every linear the plan counted
        opts |= {"--enable-lora": None, "--max-loras-per-batch": str(g.lora_adapters),
                 "--max-lora-rank": str(g.lora_rank), "--lora-target-modules": "all"}
    opts |= {"--enable-metrics": None, "--host": host, "--port": str(port)}
    check_options("sglang", opts)
    return ["python", "-m", "sglang.launch_server", *_argv(opts)]


def adapters_to_fill(g: ServeGroup) -> str:
    """The option the user adds for the adapters' files (their names and paths are not part of the plan)."""
    if not g.lora_adapters:
        return ""
    flag = "--lora-modules NAME=PATH" if g.engine == Engine.VLLM else "--lora-paths NAME=PATH"
    return f"add {flag} for each of the {g.lora_adapters} LoRA adapters (rank at most {g.lora_rank})"


def _argv(opts: dict[str, str | None]) -> list[str]:
    out: list[str] = []
    for flag, value in opts.items():
        out += [flag] if value is None else [flag, value]
    return out


def install(g: ServeGroup) -> str:
    """The pip line that installs the pinned server (the version its flags were checked against), with
    bitsandbytes when SGLang quantizes with it (its loader asks for bitsandbytes>=0.44.0)."""
    if g.engine == Engine.VLLM:
        return f"pip install 'vllm=={version('vllm')}'"
    bnb = " 'bitsandbytes>=0.44.0'" if _QUANT["sglang"].get(g.weight_format) == "bitsandbytes" else ""
    return f"pip install 'sglang[all]=={version('sglang')}'{bnb}"


def image(engine: str) -> str:
    """The engine's published container image at the pinned version (Docker Hub tags vX.Y.Z: vLLM's
    vllm/vllm-openai, SGLang's lmsysorg/sglang per sgl-project/sglang docs/docs/get-started/install.mdx
    @7760d5264ac16b85392aefb1bf5c13ce38d9632e)."""
    return f"vllm/vllm-openai:v{version('vllm')}" if engine == Engine.VLLM else \
        f"lmsysorg/sglang:v{version('sglang')}"


# queue-length gauge each server exports on /metrics (vLLM 0.33.0 vllm/v1/metrics/loggers.py
# vllm:num_requests_waiting; SGLang 0.5.23 sglang/srt/observability/metrics_collector.py sglang:num_queue_reqs,
# served with --enable-metrics). Both answer GET /health (vllm/entrypoints/serve/instrumentator/health.py,
# sglang/srt/entrypoints/http_server.py) with 200 once the model is loaded.
QUEUE_METRIC = {"vllm": "vllm:num_requests_waiting", "sglang": "sglang:num_queue_reqs"}
