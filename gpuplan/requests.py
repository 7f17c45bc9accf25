"""What the CLI and the HTTP API share between "options the user gave" and library objects: building and
validating a :class:`Job`, and estimating one configuration from user-level options.

Field names in errors are the CLI's option names (``--samples``); the HTTP API maps them to its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpuplan.errors import InputError, check_choice
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.frameworks import framework as get_framework
from gpuplan.estimate.job import JobEstimate, estimate_inference, estimate_training, inference_setup, training_setup
from gpuplan.estimate.quant import native_format, weight_format
from gpuplan.types import (
    KV_DTYPES,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    RECOMPUTE,
    TASKS,
    Gpu,
    Job,
    Method,
    ModelSpec,
    Parallelism,
    Task,
    TrainSetup,
)
from gpuplan.units import fmt_bytes

LORA_TARGETS = ("all-linear", "attention", "qv", "mlp")


@dataclass(frozen=True, slots=True)
class Range:
    """The numbers an option accepts: ``low`` to ``high`` inclusive, or above ``low`` when ``above``."""

    low: float
    high: float
    above: bool = False
    zero: str = ""  # what 0 means where 0 is accepted as a choice ("all", "gpuplan chooses")
    hint: str = ""  # what the number is, where the range alone does not say
    unit: str = ""  # the unit the number is in ("seconds"), or a formatter for the bounds
    fmt: Callable[[float], str] | None = None

    def contains(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return (value > self.low if self.above else value >= self.low) and value <= self.high

    def text(self) -> str:
        """``1 to 100,000``, ``more than 0 and at most 50 years``, ``0 to 1,000,000 (0: all)``."""
        show = self.fmt or _shown
        unit = f" {self.unit}" if self.unit else ""
        span = (f"more than {show(self.low)} and at most {show(self.high)}{unit}" if self.above
                else f"{show(self.low)} to {show(self.high)}{unit}")
        return span + (f" (0: {self.zero})" if self.zero else "")


# Every number a user gives, by the CLI's option name (the HTTP API uses the same ranges for its fields, in the
# same units: seconds for durations, the plan's currency for money). Beyond these a request is a typo, not a
# plan: the largest published runs are ~15T tokens on ~100k GPUs with 1M-token contexts.
RANGES: dict[str, Range] = {
    # the work
    "--samples": Range(0, 1e12, above=True), "--tokens-per-sample": Range(0, 1e7, above=True),
    "--tokens": Range(0, 1e15, above=True), "--dataset-tokens": Range(0, 1e15, above=True),
    "--requests": Range(0, 1e12, above=True), "--rps": Range(0, 1e6, above=True),
    "--epochs": Range(0, 1e4, above=True), "--prompt": Range(1, 1e7), "--output": Range(1, 1e7),
    "--batch": Range(0, 1e6, zero="as many as fit"), "--seq-len": Range(1, 1e7), "--context": Range(1, 1e8),
    "--lora-rank": Range(1, 1e5), "--global-batch": Range(0, 1e8, zero="gpuplan chooses"),
    "--prefix-len": Range(1, 1e5),
    # one configuration
    "--n-gpus": Range(1, 100_000), "--tp": Range(1, 1024), "--pp": Range(1, 1024), "--zero": Range(0, 3),
    "--micro-batch": Range(1, 1e5), "--grad-accum": Range(1, 1e6),
    # plan constraints
    "--max-gpus": Range(1, 100_000), "--top": Range(1, 1000), "--budget": Range(0, 1e12, above=True),
    "--deadline": Range(0, 10 * 365 * 86400, above=True, unit="seconds (10 years)"),
    "--ttft": Range(0, 3600, above=True, unit="seconds"), "--tpot": Range(0, 60, above=True, unit="seconds"),
    # serving that stays up (gpuplan.plan.serving)
    "--peak-rps": Range(0, 1e6, above=True), "--ttft-p99": Range(0, 3600, above=True, unit="seconds"),
    "--tpot-p99": Range(0, 60, above=True, unit="seconds"),
    "--availability": Range(0, 100, above=True, unit="percent", hint="a percentage below 100, e.g. 99.9"),
    "--prefix-hit": Range(0, 0.99, hint="share of prompt tokens found in the prefix cache"),
    "--max-per-offer": Range(1, 100_000),
    "--adapters": Range(0, 10_000, zero="none"), "--adapter-rank": Range(1, 512),
    # listings
    "--limit": Range(0, 1e6, zero="all"), "--min-gpus": Range(0, 1e5, above=True),
    "--min-memory": Range(0, 2**50, above=True, fmt=lambda n: fmt_bytes(n, 0)),
    # rent or buy
    "--hours-per-month": Range(0, 744, unit="hours"), "--years": Range(0, 50, above=True, unit="years"),
    "--electricity": Range(0, 100, unit="per kWh"),
    "--pue": Range(1, 4, hint="facility power over IT power: 1.0 at a desk, 1.1-1.6 in a data center"),
    # the server
    "--port": Range(1, 65535), "--workers": Range(1, 64),
}


def check_range(field: str, value: float | None, shown: str | None = None) -> None:
    """``value`` (None: not given) lies in the range :data:`RANGES` states for ``field``; ``shown`` is the text
    the user typed, when that differs from the number (``2d`` for 172800 seconds)."""
    if value is None or isinstance(value, bool):
        return
    r = RANGES[field]
    if r.contains(value):
        return
    given = shown if shown is not None else _shown(value)
    raise InputError(field, f"{given} is out of range: {field} takes {r.text()} ({r.hint})." if r.hint else
                     f"{given} is out of range: {field} takes {r.text()}.",
                     f"give {field} {r.text()}; check its unit." if r.high > 1e6 else f"give {field} {r.text()}.")


def _shown(value: float) -> str:
    """A number for a message: a huge integer as its digit count, not as all its digits."""
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"a {len(str(abs(value)))}-digit number"
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


MIN_PRETRAIN_TOKENS = 1e6  # below this a --tokens value lost its unit (1.4 for 1.4T)


def _positive(field: str, value: float | None) -> None:
    check_range(field, value)


def make_job(task: str, *, method: str = "full", samples: float = 0.0, tokens_per_sample: float = 0.0,
             epochs: float = 1.0, tokens: float = 0.0, seq_len: int | None = None, prompt: int = 1024,
             output: int = 256, batch: int = 0, requests: float = 0.0, rps: float = 0.0,
             ttft_s: float | None = None, tpot_s: float | None = None, quant: str | None = None,
             lora_rank: int = 16, lora_targets: str = "all-linear", global_batch: int = 0,
             framework: str | None = None, train_embeddings: bool = False,
             given: Collection[str] | None = None) -> Job:
    """A validated job; sequences default to the tokens per sample, at most 4,096; ``framework`` (training
    only) names the framework whose defaults apply (data/frameworks.csv); ``train_embeddings`` (LoRA and
    QLoRA) also trains the embedding and output layer, as when tokens are added to the vocabulary.

    ``given``: the parameters the user set (the CLI's options, the request's fields). An option set where it does
    not apply is refused even at its default value (``--method full --lora-rank 16``); without ``given``, a value
    other than the default counts as set."""
    check_choice("--task", task, TASKS)
    method = method.lower()
    check_choice("--method", method, METHODS)
    check_choice("--lora-targets", lora_targets, LORA_TARGETS)
    _check_applies(task, method, given, samples=samples, tokens_per_sample=tokens_per_sample, epochs=epochs,
                   tokens=tokens, seq_len=seq_len, prompt=prompt, output=output, batch=batch, requests=requests,
                   rps=rps, ttft_s=ttft_s, tpot_s=tpot_s, quant=quant, lora_rank=lora_rank, lora_targets=lora_targets,
                   global_batch=global_batch, framework=framework, train_embeddings=train_embeddings)
    if framework is not None:
        framework = get_framework(framework).framework
    for field, count in (("--batch", batch), ("--global-batch", global_batch)):  # 0: gpuplan chooses
        if count < 0:
            raise InputError(field, f"{count} is negative.", f"give a positive {field}, or 0 to let gpuplan choose.")
    for field, value in (("--prompt", prompt), ("--output", output), ("--batch", batch or None), ("--epochs", epochs),
                         ("--lora-rank", lora_rank), ("--samples", samples or None),
                         ("--tokens-per-sample", tokens_per_sample or None), ("--tokens", tokens or None),
                         ("--requests", requests or None), ("--seq-len", seq_len), ("--ttft", ttft_s),
                         ("--tpot", tpot_s), ("--rps", rps or None), ("--global-batch", global_batch or None)):
        _positive(field, value)
    for field, value in (("--tokens-per-sample", tokens_per_sample), ("--tokens", tokens)):
        if 0 < value < 1:  # a sequence of 0 tokens: every per-token rate would divide by zero
            raise InputError(field, f"{value:g} is less than one token.",
                             f"give {field} as a count of tokens, e.g. 512.")
    if task == "pretrain" and tokens and tokens < MIN_PRETRAIN_TOKENS:
        raise InputError("--tokens", f"{tokens:g} tokens is not a pretraining run.",
                         "give the count with its unit, e.g. 100B or 1.4T.")
    # counts parsed from "2.01k" carry float noise (2009.9999…): round what is whole to within a millionth
    requests, samples = (round(x) if abs(x - round(x)) < 1e-6 * max(1.0, x) else x for x in (requests, samples))
    for field, whole in (("--requests", requests), ("--samples", samples)):
        if whole and whole != math.floor(whole):
            raise InputError(field, f"{whole:g} is not a whole number.", f"give a whole number of {field[2:]}.")
    if samples and tokens:
        raise InputError("--tokens", "the training data is given twice: as samples and as tokens.",
                         "give either --samples with --tokens-per-sample, or --tokens.")
    if samples and not tokens_per_sample:
        raise InputError("--tokens-per-sample", "--samples needs the tokens in each sample.",
                         "add --tokens-per-sample, e.g. 512.")
    seq = seq_len or (int(min(tokens_per_sample, 4096)) if tokens_per_sample else 2048)
    return Job(task=Task(task), method=Method(method), samples=samples, tokens_per_sample=tokens_per_sample,
               epochs=epochs, tokens=tokens, seq_len=seq, prompt_len=prompt, output_len=output, batch=batch,
               requests=requests, rps=rps, ttft_s=ttft_s, tpot_s=tpot_s, weight_format=quant, lora_rank=lora_rank,
               lora_targets=lora_targets, global_batch=global_batch,
               base_quant=_base_quant(method, quant), seq_len_auto=seq_len is None, framework=framework,
               train_embeddings=train_embeddings)


# Options that only mean something for some tasks or methods, with the value that means "not given". An option
# given where it does not apply is refused, not ignored: the user meant something the estimate would not show.
_Unset = tuple[tuple[str, str, object], ...]  # (option, job field, the value that means "not given")
_Given = tuple[tuple[str, object, object], ...]  # (option, value, the value that means "not given")
_INFERENCE_ONLY: _Unset = (("--prompt", "prompt", 1024), ("--output", "output", 256), ("--batch", "batch", 0),
                   ("--requests", "requests", 0.0), ("--rps", "rps", 0.0), ("--ttft", "ttft_s", None),
                   ("--tpot", "tpot_s", None))
_TRAINING_ONLY: _Unset = (("--samples", "samples", 0.0), ("--tokens-per-sample", "tokens_per_sample", 0.0),
                  ("--epochs", "epochs", 1.0), ("--tokens", "tokens", 0.0), ("--seq-len", "seq_len", None),
                  ("--global-batch", "global_batch", 0), ("--framework", "framework", None))
_LORA_ONLY: _Unset = (("--lora-rank", "lora_rank", 16), ("--lora-targets", "lora_targets", "all-linear"),
                      ("--train-embeddings", "train_embeddings", False))


# the same for the layout options of ``estimate``
_ESTIMATE_TRAINING_ONLY: _Unset = (
    ("--zero", "zero", 0), ("--micro-batch", "micro_batch", 1), ("--grad-accum", "grad_accum", 1),
    ("--recompute", "recompute", None), ("--precision", "precision", "auto"), ("--optimizer", "optimizer", None),
    ("--framework", "framework", None))
_ESTIMATE_INFERENCE_ONLY: _Unset = (("--engine", "engine", "vllm"), ("--kv-dtype", "kv_dtype", "bf16"))
_PTUNING_ONLY: _Unset = (("--prefix-len", "prefix_len", 128),)

FOR_TRAINING = "training (--task finetune or pretrain)"
FOR_INFERENCE = "inference (--task infer or serve)"


def refuse_given(options: _Given, applies_to: str, here: str) -> None:
    """Refuse the first of ``options`` that was given (is not at its "not given" value): it applies to
    ``applies_to``, not ``here``."""
    for option, value, unset in options:
        if value != unset:
            raise InputError(option, f"{option} applies to {applies_to}, not {here}.", f"drop {option}.")


_SET = object()  # stands for "the user set it", whatever its value


def _given(table: _Unset, values: Mapping[str, object], names: Collection[str] | None) -> _Given:
    if names is None:
        return tuple((option, values[key], unset) for option, key, unset in table)
    return tuple((option, _SET if key in names else unset, unset) for option, key, unset in table)


def _check_applies(task: str, method: str, names: Collection[str] | None, **given: object) -> None:
    training = task in ("finetune", "pretrain")
    refuse_given(_given(_INFERENCE_ONLY if training else _TRAINING_ONLY, given, names),
                  FOR_INFERENCE if training else FOR_TRAINING, f"to --task {task}")
    if task == "infer":  # a batch job has no request rate or latency targets
        for field, key in (("--rps", "rps"), ("--ttft", "ttft_s"), ("--tpot", "tpot_s")):
            if given[key]:
                raise InputError(field, f"{field} applies to --task serve; a batch-inference job runs its requests "
                                 "as fast as it can.", f"drop {field}, or use --task serve.")
    if task == "serve" and given["requests"]:
        raise InputError("--requests", "serving is sized by a request rate, not a request count.",
                         "use --task infer for a batch of requests.")
    if task != "finetune" and method != "full":
        raise InputError("--method", f"--method {method} is a fine-tuning method; --task {task} trains (or runs) "
                         "every weight.", "use --task finetune, or drop --method.")
    if method not in ("lora", "qlora"):
        refuse_given(_given(_LORA_ONLY, given, names), "--method lora or qlora", method)
    if training and given["quant"]:
        if method == "qlora":
            raise InputError("--quant", "QLoRA's frozen base is NF4 by definition.",
                             "drop --quant, or use --method lora --quant int8 (or int4) for another base format.")
        if method not in ("lora", "ptuning"):
            raise InputError("--quant", f"--quant sets the frozen base of LoRA and P-tuning; --method {method} "
                             "trains 16-bit weights.", "drop --quant, or use --method lora or ptuning.")


def _base_quant(method: str, quant: str | None) -> str | None:
    """The frozen base's format for P-tuning and LoRA with --quant (ChatGLM's quantize(4)/(8) are weight-only)."""
    if method not in ("ptuning", "lora") or not quant:
        return None
    return {"int8": "int8-wo", "int4": "int4-wo"}.get(quant.lower(), weight_format(quant, "--quant").name)


def estimate_config(m: ModelSpec, gpu: Gpu, job: Job, *, tp: int = 1, pp: int = 1, n_gpus: int | None = None,
                    zero: int = 0, micro_batch: int = 1, grad_accum: int = 1, recompute: str | None = None,
                    precision: str = "auto", optimizer: str | None = None, framework: str | None = None,
                    prefix_len: int = 128, engine: str = "vllm", kv_dtype: str = "bf16",
                    given: Collection[str] | None = None) -> JobEstimate:
    """Estimate ``job`` on one configuration given at the user's level (the ``estimate`` command).

    ``framework`` (a name of data/frameworks.csv) applies that framework's defaults for what is not given;
    ``recompute`` and ``optimizer`` None mean the framework's default (none and adamw without one). ``given``: the
    parameters the user set, as :func:`make_job` reads it."""
    job = job.for_model(m)
    for field, value in (("--tp", tp), ("--pp", pp), ("--micro-batch", micro_batch), ("--grad-accum", grad_accum),
                         ("--prefix-len", prefix_len), ("--n-gpus", n_gpus)):
        _positive(field, value)
    # every choice is checked whatever the task, so a typo never passes as "ignored"
    if recompute is not None:
        check_choice("--recompute", recompute, RECOMPUTE)
    if optimizer is not None:
        check_choice("--optimizer", optimizer, OPTIMIZERS)
    check_choice("--zero", str(zero), ("0", "1", "2", "3"))
    if precision != "auto":
        check_choice("--precision", precision, PRECISIONS)
    if framework is not None:
        framework = get_framework(framework).framework
    check_choice("--kv-dtype", kv_dtype, KV_DTYPES)
    engine = get_engine(engine).engine
    values = {"zero": zero, "micro_batch": micro_batch, "grad_accum": grad_accum, "recompute": recompute,
              "precision": precision, "optimizer": optimizer, "framework": framework, "engine": engine,
              "kv_dtype": kv_dtype, "prefix_len": prefix_len}
    if job.is_training:
        refuse_given(_given(_ESTIMATE_INFERENCE_ONLY, values, given), FOR_INFERENCE, f"to --task {job.task}")
    else:
        refuse_given(_given(_ESTIMATE_TRAINING_ONLY, values, given), FOR_TRAINING, f"to --task {job.task}")
    if job.method != "ptuning":
        refuse_given(_given(_PTUNING_ONLY, values, given), "--method ptuning", job.method)
    if job.is_training:
        return _training(m, gpu, job, tp, pp, n_gpus, zero, micro_batch, grad_accum, recompute, precision,
                         optimizer, framework, prefix_len)
    if n_gpus and n_gpus != tp * pp:
        raise InputError("--n-gpus", f"inference uses TP × PP GPUs per replica ({tp * pp}), not {n_gpus}.",
                         f"use --tp {n_gpus}, or leave --n-gpus out.")
    fmt = weight_format(job.weight_format or native_format(m.native_dtype)).name
    setup = inference_setup(job, tp, get_engine(engine).engine, fmt, kv_dtype=kv_dtype, pp=pp)
    return estimate_inference(m, gpu, job, setup)


def _training(m: ModelSpec, gpu: Gpu, job: Job, tp: int, pp: int, n_gpus: int | None, zero: int, micro_batch: int,
              grad_accum: int, recompute: str | None, precision: str, optimizer: str | None, framework: str | None,
              prefix_len: int) -> JobEstimate:
    n = n_gpus or tp * pp
    if n % (tp * pp):
        raise InputError("--n-gpus", f"{n} GPUs do not split into TP {tp} × PP {pp}.",
                         f"use a multiple of {tp * pp} GPUs.")
    overrides: dict[str, object] = dict(grad_accum=grad_accum, prefix_len=prefix_len)
    if optimizer is not None:
        overrides["optimizer"] = optimizer
    job = replace(job, framework=framework)
    if precision != "auto":  # auto: what training_setup picks for the method and the GPU
        overrides["precision"] = precision
    dp = n // (tp * pp)
    if zero and dp == 1:
        raise InputError("--zero", f"ZeRO shards over data-parallel ranks; {n} GPU(s) at TP {tp} × PP {pp} make "
                         "only one.", f"use --n-gpus {2 * tp * pp} or more, or --zero 0.")
    job = replace(job, global_batch=dp * micro_batch * grad_accum)  # the batch these options make
    setup = training_setup(job, Parallelism(tp=tp, pp=pp, dp=dp, zero=zero), micro_batch, recompute,
                           gpu=gpu, **overrides)
    return estimate_training(m, gpu, job, setup)


# ---------------------------------------------------------------- the way back: an estimate's options


def estimate_options(e: JobEstimate) -> dict[str, Any]:
    """The ``estimate`` options (CLI names) that reproduce ``e``: ``gpuplan estimate MODEL`` with them prices the
    same memory and time as the plan row ``e`` came from (a test checks it row by row)."""
    job, s = e.job, e.setup
    opts: dict[str, Any] = {"--task": job.task, "--gpu": e.gpu.name}
    if isinstance(s, TrainSetup):
        par = s.parallel
        opts.update({"--method": s.method, "--n-gpus": par.n_gpus, "--tp": par.tp, "--pp": par.pp, "--zero": par.zero,
                     "--micro-batch": s.micro_batch, "--grad-accum": s.grad_accum, "--recompute": s.recompute,
                     "--precision": s.precision, "--optimizer": s.optimizer, "--framework": job.framework,
                     "--tokens": job.train_tokens, "--seq-len": s.seq_len})
        if s.method in ("lora", "qlora"):
            opts.update({"--lora-rank": s.lora_rank, "--lora-targets": s.lora_targets,
                         "--train-embeddings": s.train_embeddings or None})
        if s.method == "ptuning":
            opts["--prefix-len"] = s.prefix_len
        opts["--quant"] = s.base_quant if s.method != "qlora" else None
    else:
        opts.update({"--tp": s.tp, "--pp": s.pp, "--engine": s.engine, "--quant": s.weight_format,
                     "--kv-dtype": s.kv_dtype, "--prompt": s.prompt_len, "--output": s.output_len, "--batch": s.batch})
        if job.task is Task.INFER:
            opts["--requests"] = job.requests
    return {k: v for k, v in opts.items() if v is not None}


def estimate_argv(model: str, e: JobEstimate) -> list[str]:
    """``gpuplan estimate`` as an argument list that reproduces ``e`` (flags without a value when true)."""
    argv = ["estimate", model]
    for flag, value in estimate_options(e).items():
        if value is True:
            argv.append(flag)
        else:
            argv += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return argv


def settings_text(e: JobEstimate) -> str:
    """The settings a plan row priced, compactly: ``mb 4 × ga 8 · recompute full · bf16`` (training) or
    ``vllm · awq-int4 · batch 64`` (inference); the layout is in the row's config."""
    s = e.setup
    if isinstance(s, TrainSetup):
        parts = [f"mb {s.micro_batch} × ga {s.grad_accum}", f"recompute {s.recompute}", s.precision]
        if s.optimizer != "adamw":
            parts.append(s.optimizer)
        if s.base_quant:
            parts.append(f"base {s.base_quant}")
        return " · ".join(parts)
    parts = [s.engine, s.weight_format, f"batch {s.batch}"]
    if s.kv_dtype != "bf16":
        parts.append(f"KV {s.kv_dtype}")
    return " · ".join(parts)
