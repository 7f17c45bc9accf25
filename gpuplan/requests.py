"""What the CLI and the HTTP API share between "options the user gave" and library objects: building and
validating a :class:`Job`, and estimating one configuration from user-level options.

Field names in errors are the CLI's option names (``--samples``); the HTTP API maps them to its own.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from gpuplan.errors import InputError, check_choice
from gpuplan.estimate.frameworks import framework as get_framework
from gpuplan.estimate.job import JobEstimate, estimate_inference, estimate_training, inference_setup, training_setup
from gpuplan.estimate.quant import weight_format
from gpuplan.estimate.runners import engine_choice, runners, served_format
from gpuplan.options import LORA_TARGETS, check_ranges, option, refuse_inapplicable, with_defaults
from gpuplan.types import (
    KV_DTYPES,
    METHODS,
    OPTIMIZERS,
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

MIN_PRETRAIN_TOKENS = 1e6  # below this a --tokens value lost its unit (1.4 for 1.4T)


def make_job(task: str, *, command: str = "estimate", **given: Any) -> Job:
    """A validated job from the options the user ``given`` (names of :data:`gpuplan.options.OPTIONS`' ``job``
    stage; None is not given); the rest take ``command``'s defaults (``plan finetune`` trains LoRA). Sequences
    default to the tokens per sample, at most 4,096; ``framework`` (training only) names the framework whose
    defaults apply (data/frameworks.csv); ``train_embeddings`` (LoRA and QLoRA) also trains the embedding and
    output layer, as when tokens are added to the vocabulary.

    An option given where it does not apply is refused, even at its default value (``--method full
    --lora-rank 16``): the user meant something the estimate would not show."""
    check_choice("--task", task, TASKS)
    given = {k: v for k, v in given.items() if v is not None}
    o = with_defaults("job", f"{command} {task}", given)
    method = str(o["method"]).lower()
    check_choice("--method", method, METHODS)
    check_choice("--lora-targets", o["lora_targets"], LORA_TARGETS)
    _check_applies(Task(task), Method(method), given)
    if o["framework"] is not None:
        o["framework"] = get_framework(o["framework"]).framework
    for field, count in (("--batch", o["batch"]), ("--global-batch", o["global_batch"])):  # 0: gpuplan chooses
        if count < 0:
            raise InputError(field, f"{count} is negative.", f"give a positive {field}, or 0 to let gpuplan choose.")
    check_ranges("job", o)
    for field, value in (("--tokens-per-sample", o["tokens_per_sample"]), ("--tokens", o["tokens"])):
        if 0 < value < 1:  # a sequence of 0 tokens: every per-token rate would divide by zero
            raise InputError(field, f"{value:g} is less than one token.",
                             f"give {field} as a count of tokens, e.g. 512.")
    if task == Task.PRETRAIN and o["tokens"] and o["tokens"] < MIN_PRETRAIN_TOKENS:
        raise InputError("--tokens", f"{o['tokens']:g} tokens is not a pretraining run.",
                         "give the count with its unit, e.g. 100B or 1.4T.")
    # counts parsed from "2.01k" carry float noise (2009.9999…): round what is whole to within a millionth
    requests, samples = (round(x) if abs(x - round(x)) < 1e-6 * max(1.0, x) else x
                         for x in (o["requests"], o["samples"]))
    for field, whole in (("--requests", requests), ("--samples", samples)):
        if whole and whole != math.floor(whole):
            raise InputError(field, f"{whole:g} is not a whole number.", f"give a whole number of {field[2:]}.")
    if samples and o["tokens"]:
        raise InputError("--tokens", "the training data is given twice: as samples and as tokens.",
                         "give either --samples with --tokens-per-sample, or --tokens.")
    if samples and not o["tokens_per_sample"]:
        raise InputError("--tokens-per-sample", "--samples needs the tokens in each sample.",
                         "add --tokens-per-sample, e.g. 512.")
    tps, seq_len = o["tokens_per_sample"], o["seq_len"]
    seq = seq_len or (int(min(tps, 4096)) if tps else 2048)
    return Job(task=Task(task), method=Method(method), samples=samples, tokens_per_sample=tps,
               epochs=o["epochs"], tokens=o["tokens"], seq_len=seq, prompt_len=o["prompt"], output_len=o["output"],
               batch=o["batch"], requests=requests, rps=o["rps"], ttft_s=o["ttft_s"], tpot_s=o["tpot_s"],
               weight_format=o["quant"], lora_rank=o["lora_rank"], lora_targets=o["lora_targets"],
               global_batch=o["global_batch"], base_quant=_base_quant(method, o["quant"]),
               seq_len_auto=seq_len is None, framework=o["framework"], train_embeddings=o["train_embeddings"])


def _check_applies(task: Task, method: Method, given: Collection[str]) -> None:
    """The options of ``given`` apply to ``task`` and ``method`` (:data:`gpuplan.options.OPTIONS` says where
    each does); --method and --quant, which apply by their value, are checked here."""
    refuse_inapplicable("job", given, task=task)
    if task is not Task.FINETUNE and method is not Method.FULL:
        raise InputError("--method", f"--method {method} is a fine-tuning method; --task {task} trains (or runs) "
                         "every weight.", "use --task finetune, or drop --method.")
    refuse_inapplicable("job", given, method=method)
    if task.is_training and "quant" in given:
        if method is Method.QLORA:
            raise InputError("--quant", "QLoRA's frozen base is NF4 by definition.",
                             "drop --quant, or use --method lora --quant int8 (or int4) for another base format.")
        if method is Method.DORA:
            raise InputError("--quant", "QDoRA (DoRA on a quantized base) is not modelled: PEFT's DoRA dequantizes "
                             "each quantized weight to 16-bit in every forward to take the column norm of W + s·BA, "
                             "and reuses the quantized matmul's output for the magnitude's product, both of which "
                             "gpuplan does not size yet.", "drop --quant for DoRA on a 16-bit base, or use --method "
                             "qlora for a 4-bit base.")
        if method is Method.ADALORA:  # PEFT has 8- and 4-bit AdaLoRA layers (peft/tuners/adalora/bnb.py)
            raise InputError("--quant", "AdaLoRA on a quantized base is not modelled: gpuplan sizes its adapters and "
                             "rank allocator over a 16-bit base.", "drop --quant for AdaLoRA on a 16-bit base, or "
                             "use --method qlora for a 4-bit base.")
        if not method.takes_base_quant:
            raise InputError("--quant", f"--quant sets the frozen base of LoRA, P-tuning and LLaMA-Adapter; --method "
                             f"{method} trains 16-bit weights.", "drop --quant, or use --method lora, ptuning or "
                             "adapter.")


def _base_quant(method: str, quant: str | None) -> str | None:
    """The frozen base's format for P-tuning, LoRA and LLaMA-Adapter with --quant (ChatGLM's quantize(4)/(8) are
    weight-only)."""
    if not Method(method).takes_base_quant or not quant:
        return None
    return {"int8": "int8-wo", "int4": "int4-wo"}.get(quant.lower(), weight_format(quant, "--quant").name)


def estimate_config(m: ModelSpec, gpu: Gpu, job: Job, **given: Any) -> JobEstimate:
    """Estimate ``job`` on one configuration from the layout options the user ``given`` (the ``estimate``
    command; names of :data:`gpuplan.options.OPTIONS`' ``layout`` stage, None not given), the rest at their
    defaults. ``framework`` (a name of data/frameworks.csv) applies that framework's defaults for what is not
    given; ``recompute`` and ``optimizer`` not given mean the framework's default (none and adamw without one)."""
    job = job.for_model(m)
    given = {k: v for k, v in given.items() if v is not None}
    o = with_defaults("layout", "estimate", given)
    check_ranges("layout", o)
    # every choice is checked whatever the task, so a typo never passes as "ignored"
    check_choice("--recompute", o["recompute"], RECOMPUTE)
    check_choice("--optimizer", o["optimizer"], OPTIMIZERS)
    check_choice("--zero", str(o["zero"]), option("zero").choices)
    check_choice("--precision", o["precision"], option("precision").choices)
    if o["framework"] is not None:
        o["framework"] = get_framework(o["framework"]).framework
    check_choice("--kv-dtype", o["kv_dtype"], KV_DTYPES)
    o["engine"] = engine_choice(o["engine"])  # an engine, or a local runner of one (gpuplan.estimate.runners)
    refuse_inapplicable("layout", given, task=job.task)
    refuse_inapplicable("layout", given, method=job.method)
    if job.is_training:
        return _training(m, gpu, job, o)
    tp, pp, n_gpus = o["tp"], o["pp"], o["n_gpus"]
    if n_gpus and n_gpus != tp * pp:
        raise InputError("--n-gpus", f"inference uses TP × PP GPUs per replica ({tp * pp}), not {n_gpus}.",
                         f"use --tp {n_gpus}, or leave --n-gpus out.")
    fmt = weight_format(job.weight_format or served_format(o["engine"], m.native_dtype)).name
    setup = inference_setup(job, tp, o["engine"], fmt, kv_dtype=o["kv_dtype"], pp=pp)
    return estimate_inference(m, gpu, job, setup)


def _training(m: ModelSpec, gpu: Gpu, job: Job, o: dict[str, Any]) -> JobEstimate:
    """The training estimate of the layout options ``o`` (every one, defaults filled in)."""
    tp, pp, micro_batch, grad_accum = o["tp"], o["pp"], o["micro_batch"], o["grad_accum"]
    n = o["n_gpus"] or tp * pp
    if n % (tp * pp):
        raise InputError("--n-gpus", f"{n} GPUs do not split into TP {tp} × PP {pp}.",
                         f"use a multiple of {tp * pp} GPUs.")
    overrides: dict[str, object] = dict(grad_accum=grad_accum, prefix_len=o["prefix_len"], mtp_layers=o["mtp_layers"])
    if o["optimizer"] is not None:
        overrides["optimizer"] = o["optimizer"]
    job = replace(job, framework=o["framework"])
    if o["precision"] != "auto":  # auto: what training_setup picks for the method and the GPU
        overrides["precision"] = o["precision"]
    dp = n // (tp * pp)
    if o["zero"] and dp == 1:
        raise InputError("--zero", f"ZeRO shards over data-parallel ranks; {n} GPU(s) at TP {tp} × PP {pp} make "
                         "only one.", f"use --n-gpus {2 * tp * pp} or more, or --zero 0.")
    job = replace(job, global_batch=dp * micro_batch * grad_accum)  # the batch these options make
    setup = training_setup(job, Parallelism(tp=tp, pp=pp, dp=dp, zero=o["zero"]), micro_batch, o["recompute"],
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
        if Method(s.method).low_rank:
            opts.update({"--lora-rank": s.lora_rank, "--lora-targets": s.lora_targets,
                         "--train-embeddings": s.train_embeddings or None})
        if s.method == Method.PTUNING:
            opts["--prefix-len"] = s.prefix_len
        if s.mtp_layers:
            opts["--mtp-layers"] = s.mtp_layers
        opts["--quant"] = s.base_quant if s.method != Method.QLORA else None
    else:
        engine = s.launcher if s.launcher in runners() else s.engine  # a local runner is typed by its name
        opts.update({"--tp": s.tp, "--pp": s.pp, "--engine": engine, "--quant": s.weight_format,
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
    parts = [s.launcher if s.launcher in runners() else s.engine, s.weight_format, f"batch {s.batch}"]
    if s.kv_dtype != "bf16":
        parts.append(f"KV {s.kv_dtype}")
    return " · ".join(parts)
