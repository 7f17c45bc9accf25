"""Local runners: applications that run an engine's kernels with defaults of their own (``data/runners.csv``).

Ollama runs GGML, llama.cpp's kernels (through llama.cpp's runner or its own Go engine built on the same GGML
library); LM Studio runs llama.cpp for GGUF files and, on Apple silicon, MLX for MLX files. Their speed is the
engine's: no constant is fitted for a runner. What differs is what they start the engine with: the context the KV
cache is allocated for (Ollama's ``num_ctx``), the KV cache's type, Flash Attention and the quantization its library
ships. ``--engine ollama`` is the engine ``llamacpp`` with ``InferSetup.launcher`` set to the runner, and
:func:`with_runner_defaults` applies the runner's defaults to the setup before it is sized.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from types import MappingProxyType

from gpuplan import types
from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import InputError
from gpuplan.estimate.engines import engine, engine_name, engines, release
from gpuplan.estimate.quant import GGUF_OF_NATIVE, native_format
from gpuplan.estimate.result import Assumption
from gpuplan.units import GiB

_COLUMNS = (
    Column("runner", required=True), Column("name", required=True),
    Column("engine", "enum", True, ("llamacpp",)), Column("from_release", required=True),
    Column("min_vram_gib", "float", True, min=0), Column("num_ctx", "int", min=1),
    Column("num_parallel", "int", min=1), Column("lowers_ctx", "bool"), Column("num_batch", "int", min=1),
    Column("kv_cache_type", "enum", False, ("f16",)), Column("flash_attention", "enum", False, ("off", "auto")),
    Column("default_format"), Column("mlx_runtime", "bool", True),
    Column("decode_readout"), Column("prefill_readout"),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"),
)


@dataclass(frozen=True, slots=True)
class RunnerDefaults:
    """What one release of a runner starts its engine with on a machine of at least ``min_vram_gib`` of GPU
    memory (a row of ``runners.csv``); None: the runner's default was not read, the engine's own applies."""

    runner: str
    name: str
    engine: str  # the engine that runs GGUF files; MLX files run on MLX where ``mlx_runtime``
    from_release: str
    min_vram_gib: float
    num_ctx: int | None  # tokens the KV cache is allocated for, a sequence (Ollama's num_ctx)
    num_parallel: int | None  # sequences it is allocated for where they fit (then one: Ollama's defaultParallel)
    lowers_ctx: bool | None  # a default num_ctx that does not fit is lowered to the lower tiers' in turn
    num_batch: int | None
    kv_cache_type: str | None
    flash_attention: str | None  # off: only when asked for; auto: on where the GPU and the model support it
    default_format: str | None  # the quantization the runner's library serves by default
    mlx_runtime: bool
    decode_readout: str | None  # what the runner calls its batch-1 decode rate (Ollama's "eval rate")
    prefill_readout: str | None  # and its prefill rate ("prompt eval rate")
    source: str
    notes: str


@cache
def _rows() -> tuple[RunnerDefaults, ...]:
    rows = read_table(BUNDLED_DIR / "runners.csv", _COLUMNS, ["runner", "from_release", "min_vram_gib"],
                      "gpuplan/data/runners.csv")
    return tuple(RunnerDefaults(**{k: v for k, v in r.values.items() if k != "as_of"} | {"notes": r.values["notes"]
                                                                                          or ""}) for r in rows)


# the names users type for a runner
_ALIASES = MappingProxyType({"ollama": "ollama", "lmstudio": "lmstudio", "lm studio": "lmstudio",
                             "lm-studio": "lmstudio", "lms": "lmstudio"})


@cache
def runners() -> Mapping[str, str]:
    """Each runner's key and display name."""
    return MappingProxyType({r.runner: r.name for r in _rows()})


def runner_key(name: str) -> str | None:
    """The runner ``name`` stands for ("Ollama", "LM Studio"), or None when it names none."""
    key = _ALIASES.get(" ".join(name.lower().split()))
    return key if key in runners() else None


def engine_choice(name: str, field: str = "--engine") -> str:
    """The runner ``name`` stands for, else the engine (``"ollama"``, ``"llamacpp"``); an InputError naming
    ``field`` and every choice otherwise."""
    runner = runner_key(name)
    if runner is not None:
        return runner
    try:
        return engine(name, field).engine
    except InputError:
        options = (*engines(), *runners())
        raise InputError(field, f"unknown engine '{name}'.", f"use one of: {', '.join(options)}.") from None


def defaults(runner: str, runner_release: str, vram_bytes: float) -> RunnerDefaults:
    """The row of ``runner`` that its release (``""``: the newest) starts with on ``vram_bytes`` of GPU memory in
    all: the newest ``from_release`` at or before the release, then the largest memory tier the machine reaches."""
    rows = [r for r in _rows() if r.runner == runner]
    wanted = release(runner_release) or (999, 0, 0)
    known = [r for r in rows if (release(r.from_release) or (0, 0, 0)) <= wanted] or rows
    newest = max(release(r.from_release) or (0, 0, 0) for r in known)
    tiers = [r for r in known if release(r.from_release) == newest]
    reached = [r for r in tiers if r.min_vram_gib * GiB <= vram_bytes] or tiers
    return max(reached, key=lambda r: r.min_vram_gib)


def runner_engine(runner: str, weight_format: str) -> types.Engine:
    """The engine ``runner`` runs a model of this format on: MLX for MLX files where it has an MLX runtime."""
    row = defaults(runner, "", 0.0)
    if row.mlx_runtime and weight_format.startswith("mlx"):
        return types.Engine.MLX
    return types.Engine(row.engine)


def kernel_engine(name: str, weight_format: str) -> types.Engine:
    """The engine whose kernels run a model of this format under ``name``, an engine or a local runner."""
    runner = runner_key(name)
    return runner_engine(runner, weight_format) if runner is not None else engine_name(name)


def runner_format(runner: str) -> str | None:
    """The weight format the runner's library serves when the user names none (Ollama: Q4_K_M)."""
    return defaults(runner, "", 0.0).default_format


def served_format(name: str | None, native_dtype: str) -> str:
    """The weight format engine or local runner ``name`` (None: any) serves a model of ``native_dtype`` in when the
    user names none: under llama.cpp or its runners the GGUF :data:`GGUF_OF_NATIVE` gives the model's own format,
    else a runner's library format (Ollama: Q4_K_M), else the model's own (:func:`~gpuplan.estimate.quant.
    native_format`)."""
    native = native_format(native_dtype)
    runner = runner_key(name) if name else None
    if name and native in GGUF_OF_NATIVE and kernel_engine(name, native) == types.Engine.LLAMACPP:
        return GGUF_OF_NATIVE[native]
    return (runner and runner_format(runner)) or native


def with_runner_defaults(m: types.ModelSpec, s: types.InferSetup, gpu: types.Gpu,
                         choice: tuple[int, int] | None = None) -> types.InferSetup:
    """``s`` as ``s.launcher``'s runner starts it on ``s.n_gpus`` of ``gpu``: the KV cache allocated for its
    default context (at most the model's trained context, as Ollama caps it) times the sequences it allocates for;
    ``choice`` = (num_ctx, sequences), one of :func:`context_choices` (None: the first); or for prompt + output where
    those need more than one sequence's context (the user then has to raise it: OLLAMA_CONTEXT_LENGTH / num_ctx);
    f16 KV; Flash Attention off where the release leaves it off. A setup of no runner is returned as it is."""
    if s.launcher not in runners():
        return s
    row = runner_defaults(s, gpu)
    changes: dict[str, object] = {}
    if row.num_ctx is not None:
        num_ctx, sequences = choice or context_choices(s, gpu)[0]
        per_sequence = min(num_ctx, m.max_positions)
        changes["max_model_len"] = (s.context_len if s.context_len > per_sequence else per_sequence * sequences)
    if row.kv_cache_type == "f16" and s.kv_dtype == "bf16":
        changes["kv_dtype"] = "fp16"
    if row.flash_attention == "off":
        changes["flash_attention"] = False
    return replace(s, **changes) if changes else s  # type: ignore[arg-type]


def context_choices(s: types.InferSetup, gpu: types.Gpu) -> tuple[tuple[int, int], ...]:
    """(num_ctx, sequences) the runner allocates its KV cache for, tried in turn until the model fits: Ollama before
    v0.10.0 tries ``defaultParallel`` sequences, then one; from v0.30.0 a default num_ctx that does not fit is lowered
    to each lower memory tier's. One choice where the runner has no default context."""
    if s.launcher not in runners():
        return ((0, 1),)
    row = runner_defaults(s, gpu)
    if row.num_ctx is None:
        return ((0, 1),)
    choices = [(row.num_ctx, n) for n in dict.fromkeys((row.num_parallel or 1, 1))]
    if row.lowers_ctx:
        lower = {r.num_ctx for r in _rows() if r.runner == row.runner and r.from_release == row.from_release
                 and r.num_ctx is not None and r.num_ctx < row.num_ctx}
        choices += [(ctx, 1) for ctx in sorted(lower, reverse=True)]
    return tuple(choices)


def runner_defaults(s: types.InferSetup, gpu: types.Gpu) -> RunnerDefaults:
    """The row ``s``'s runner and release start with on its GPUs (Ollama's memory tiers count all of them)."""
    return defaults(s.launcher, s.runner_release, gpu.memory_bytes * s.n_gpus)


def runner_assumptions(m: types.ModelSpec, s: types.InferSetup, gpu: types.Gpu) -> tuple[Assumption, ...]:
    """What the runner of ``s`` (none: nothing) started its engine with, and what its speed readouts measure."""
    if s.launcher not in runners():
        return ()
    row = runner_defaults(s, gpu)
    name, kernels = row.name, engine(s.engine).name
    said = [Assumption("runner", f"{name} runs {kernels}'s kernels with its own defaults; no constant is fitted "
                       "for it", row.source)]
    ctx = s.max_model_len
    if row.num_ctx is None:
        said.append(Assumption("context", f"{name}'s default context length was not read from a source: the KV "
                               "cache is sized for prompt + output (set its context length to at least that)",
                               row.notes))
    elif s.context_len > min(row.num_ctx, m.max_positions):
        said.append(Assumption("context", f"prompt + output ({ctx} tokens) exceed {name}'s default num_ctx "
                               f"({row.num_ctx} tokens), which would cut the prompt: sized for num_ctx {ctx} "
                               "(set OLLAMA_CONTEXT_LENGTH or num_ctx)", row.source))
    elif ctx is not None and ctx < min(row.num_ctx, m.max_positions):
        said.append(Assumption("context", f"KV cache allocated at load for num_ctx {ctx} tokens: {name}'s default "
                               f"{row.num_ctx} does not fit, so it lowers num_ctx", row.source))
    elif ctx is not None and ctx > min(row.num_ctx, m.max_positions):
        per = min(row.num_ctx, m.max_positions)
        said.append(Assumption("context", f"KV cache allocated at load for {ctx // per} sequences of num_ctx {per} "
                               f"tokens, {name}'s default where they fit (OLLAMA_NUM_PARALLEL unset)", row.source))
    else:
        said.append(Assumption("context", f"KV cache allocated at load for num_ctx {ctx} tokens, {name}'s default "
                               f"on {gpu.name} x {s.n_gpus} (at most the model's trained context)", row.source))
    if row.kv_cache_type or row.flash_attention:
        # the library's own file of this model: its native GGUF where it has one (gpt-oss: MXFP4_MOE), else the
        # runner's usual quantization
        library = served_format(s.launcher, m.native_dtype)
        said.append(Assumption("runner defaults", f"KV cache {row.kv_cache_type}, Flash Attention "
                               f"{row.flash_attention}, library quantization {library}", row.source))
    said.append(Assumption("partial offload", f"a model larger than the GPU memory is split by layers with the CPU "
                           f"by {name} (far slower): sized on the GPU alone, it is reported as not fitting",
                           row.source))
    if row.decode_readout and row.prefill_readout:
        said.append(Assumption("readout", f"{name}'s '{row.decode_readout}' is the batch-1 decode rate and its "
                               f"'{row.prefill_readout}' the prefill rate", row.notes))
    return tuple(said)
