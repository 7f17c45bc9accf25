"""A content-safety guard in a serving plan: a guard model sized as a second model, or a moderation service.

A guard model checks every prompt (the input check) and every response (the output check), as its model card
says (``gpuplan/data/guards.csv``). Each check is a prefill of the text and the guard's prompt template and a
verdict of a few tokens, so the guard's traffic is a set of request-size buckets — one per check and main
bucket — planned with the same load model (:mod:`gpuplan.estimate.load`) and the same fleet planner
(:func:`gpuplan.plan.serving.plan_fleet`) as the main model. Three placements are priced and the cheapest
is kept:

- ``separate``: the guard's own fleet on any offer, under the same failure domain and N+k rules;
- ``mig``: the guard's own fleet on MIG slices of A100/H100/H200 GPUs (``gpuplan/data/mig_profiles.csv``,
  NVIDIA's MIG user guide): a slice has its profile's share of the SMs (of 7), and of the memory and its
  bandwidth (of 8);
- ``colocated``: the guard runs beside the main model on one GPU of each main replica. Its memory
  (weights and the KV cache of ``COLOCATED_GUARD_SEQS`` sequences) leaves the main model less KV cache, so the
  main replica's capacity is recomputed on the smaller GPU; its prefills take GPU time from the main model,
  which shares its time linearly (as in the mix): capacity = 1 / (1 / c_main + Σ_checks 1 / c_guard). It is
  priced on the GPU types the main model alone ranks cheapest.

Latency: ``serial`` (the default) checks the prompt before the main prefill, so the main model's TTFT targets
shrink by the guard's verdict time; the guard is given ``GUARD_TTFT_SHARE`` of the TTFT targets. ``parallel``
runs the input check alongside the main prefill and holds the first token until the verdict: the guard gets
the whole TTFT target and TTFT is the larger of the two. With its own fleet the guard is a second service the
request needs, so each of the two is planned to the square root of the availability target (their product
meets it); a co-located guard fails with its replica.

``api`` prices a moderation service (``gpuplan/data/moderation_apis.csv``) per request or per characters
instead; for users in mainland China a mainland service is preferred (data residency).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gpuplan.catalog import Catalog
from gpuplan.catalog.csvload import Column, read_table
from gpuplan.errors import InputError, close_matches
from gpuplan.estimate.calibration import Calibration
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.job import inference_setup
from gpuplan.estimate.memory import inference_memory
from gpuplan.plan import compliance
from gpuplan.plan import serving as sv
from gpuplan.plan.costing import metered_cost, per_request_per_hour, token_costs
from gpuplan.types import Gpu, Market, ModelSpec
from gpuplan.units import HOUR, MiB

DATA = Path(__file__).resolve().parent.parent / "data"
GUARD_TTFT_SHARE = 0.25  # of the TTFT targets the serial guard is planned to: gpuplan's split, not a measurement
CHARS_PER_TOKEN = 4.0  # OpenAI's rule of thumb for English text ("1 token ≈ 4 characters"), to price per characters
COLOCATED_GUARD_SEQS = 8  # sequences a co-located guard's engine holds (--max-num-seqs): its KV cache is sized for them
SHARE_STEP = 0.001  # a co-located guard's memory share is written with three decimals, rounded up to this step
# What the services' pages leave out: none of moderation_apis.csv's services publishes a latency, so the plan counts
# none, per mode (serial: the check precedes the main prefill; parallel: it runs beside it)
SERVICE_LATENCY = {
    "serial": "none published, so the plan counts 0 s: the check's round trip adds to every TTFT; measure it and lower "
              "--ttft/--ttft-p99 by it, or use --guard-mode parallel",
    "parallel": "none published, so the plan counts 0 s: the check runs beside the main prefill, and the first token "
                "waits only for what its round trip takes beyond the prefill",
}
# Two servers on one GPU without MPS do not run kernels at once: the GPU switches between their contexts (NVIDIA MPS
# docs), the time sharing the co-located split assumes; what the switching and their contention cost is not known
INTERFERENCE = ("the two servers time-share the GPU (no MPS), as the linear split assumes; the context switches "
                "between them and their contention for caches and memory bandwidth are not modelled, so the "
                "co-located capacity and verdict times err fast")
INTERFERENCE_SOURCE = ("NVIDIA Multi-Process Service docs, https://docs.nvidia.com/deploy/mps/index.html (without "
                       "MPS, processes sharing a GPU swap their scheduling resources on and off it), read 2026-12-01")
CHECKS = ("prompt", "response", "both")
PLACEMENTS = ("colocated", "separate", "mig")

GUARD_COLUMNS = (Column("name", required=True), Column("checks", "enum", True, CHECKS),
                 Column("response_input", "enum", True, ("conversation", "response")),
                 Column("verdict_tokens", "int", True, min=1, max=64),
                 Column("template_tokens", "int", True, min=0, max=100_000),
                 Column("base_model", required=True), Column("source", required=True),
                 Column("as_of", "date", True), Column("notes"))
API_COLUMNS = (Column("service", required=True), Column("provider", required=True),
               Column("mainland", "bool", True), Column("unit", "enum", True, ("request", "characters")),
               Column("chars_per_unit", "int", min=1), Column("price_per_unit", "float", True, min=0),
               Column("currency", required=True), Column("source", required=True), Column("as_of", "date", True),
               Column("verification", "enum", True, ("read-at-source", "secondhand")), Column("notes"))
MIG_COLUMNS = (Column("gpu", required=True), Column("profile", required=True),
               Column("sm_sevenths", "int", True, min=1, max=7), Column("memory_eighths", "int", True, min=1, max=8),
               Column("instances_per_gpu", "int", True, min=1, max=7), Column("source", required=True),
               Column("as_of", "date", True), Column("notes"))


# ---------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class Preset:
    """A guard model: what it checks, its verdict length and prompt template (a row of ``guards.csv``)."""

    name: str
    checks: str  # prompt | response | both
    response_input: str  # conversation: the output check reads prompt and response; response: the response only
    verdict_tokens: int
    template_tokens: int
    base_model: str
    source: str
    as_of: str
    notes: str = ""

    @property
    def kinds(self) -> tuple[str, ...]:
        """The checks of one request, in order: "input" (the prompt) and/or "output" (the response)."""
        return {"prompt": ("input",), "response": ("output",), "both": ("input", "output")}[self.checks]

    def buckets(self, main: Sequence[sv.Bucket]) -> tuple[sv.Bucket, ...]:
        """The guard's traffic: for each main bucket, one bucket per check (the text and the template read, the
        verdict written), its share the main bucket's share over the checks of a request."""
        out = []
        for b in main:
            for kind in self.kinds:
                text = b.prompt_len if kind == "input" else b.output_len + (
                    b.prompt_len if self.response_input == "conversation" else 0)
                out.append(sv.Bucket(text + self.template_tokens, self.verdict_tokens, b.share / len(self.kinds)))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Service:
    """A cloud moderation service and its price (a row of ``moderation_apis.csv``)."""

    service: str
    provider: str
    mainland: bool
    unit: str  # request | characters
    chars_per_unit: int | None
    price_per_unit: float
    currency: str
    source: str
    as_of: str
    verification: str
    notes: str = ""

    def units(self, chars: float) -> int:
        """Billed units of one call that sends ``chars`` characters."""
        if self.unit == "request":
            return 1
        return max(1, math.ceil(chars / (self.chars_per_unit or 1)))


@dataclass(frozen=True, slots=True)
class MigProfile:
    gpu: str
    profile: str
    sm_sevenths: int
    memory_eighths: int
    instances_per_gpu: int
    source: str
    as_of: str
    notes: str = ""


def _rows(file: str, columns: Sequence[Column], key: list[str]) -> list[dict[str, Any]]:
    rows = read_table(DATA / file, columns, key, file)
    return [{**r.values, "as_of": r.values["as_of"].isoformat(), "notes": r.values.get("notes") or ""}
            for r in rows]


@functools.cache
def presets() -> Mapping[str, Preset]:
    return MappingProxyType({v["name"]: Preset(**v) for v in _rows("guards.csv", GUARD_COLUMNS, ["name"])})


@functools.cache
def services() -> Mapping[str, Service]:
    return MappingProxyType({v["service"]: Service(**v) for v in _rows("moderation_apis.csv", API_COLUMNS,
                                                                       ["service"])})


@functools.cache
def mig_profiles() -> tuple[MigProfile, ...]:
    return tuple(MigProfile(**v) for v in _rows("mig_profiles.csv", MIG_COLUMNS, ["gpu", "profile"]))


def names() -> tuple[str, ...]:
    """Every value ``--guard`` takes."""
    return ("none", "api", *(f"api:{s}" for s in services()), *presets())


def check_guard(name: str) -> None:
    """Refuse a guard gpuplan does not know, naming the close matches and the list."""
    if name in names():
        return
    hint = close_matches(name, names())
    did = f" Did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""
    raise InputError("--guard", f"unknown guard '{name}'.{did}",
                     f"use one of: {', '.join(names())} (guard presets are in gpuplan/data/guards.csv).")


def mig_gpu(gpu: Gpu, p: MigProfile) -> Gpu:
    """One MIG slice of ``gpu`` as a GPU of its own: the profile's share of SMs (tensor rates), memory and
    memory bandwidth (NVIDIA MIG user guide: a slice has its memory slices' share of the bandwidth)."""
    sm, mem = p.sm_sevenths / 7, p.memory_eighths / 8

    def part(x: float | None, share: float) -> float | None:
        return x * share if x is not None else None

    return replace(gpu, memory_visible_mib=gpu.memory_bytes * mem / MiB,
                   memory_bandwidth_bytes_per_s=part(gpu.memory_bandwidth_bytes_per_s, mem),
                   fp32_flops_per_s=part(gpu.fp32_flops_per_s, sm), tf32_flops_per_s=part(gpu.tf32_flops_per_s, sm),
                   fp16_flops_per_s=part(gpu.fp16_flops_per_s, sm), bf16_flops_per_s=part(gpu.bf16_flops_per_s, sm),
                   fp8_flops_per_s=part(gpu.fp8_flops_per_s, sm), int8_ops_per_s=part(gpu.int8_ops_per_s, sm),
                   fp4_flops_per_s=part(gpu.fp4_flops_per_s, sm), interconnect="none",
                   interconnect_bytes_per_s=None)


# ---------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Option:
    """One placement, priced: the service's cost per hour at peak (main model and guard), or why none fits."""

    placement: str
    cost_per_hour_peak: float | None
    guard_cost_per_hour_peak: float | None
    verdict_p99_s: float | None
    why_not: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"placement": self.placement, "cost_per_hour_peak": self.cost_per_hour_peak,
                "guard_cost_per_hour_peak": self.guard_cost_per_hour_peak, "verdict_p99_s": self.verdict_p99_s,
                "why_not": self.why_not or None}


@dataclass(frozen=True, slots=True)
class GuardPlan:
    """The guard of a serving plan. Costs are what the guard adds to the main fleet's (0 when co-located:
    the main fleet then carries it); latencies are the input check's verdict (the TTFT it adds) and the
    output check's (after the last token)."""

    name: str
    kind: str  # model | api
    mode: str  # serial | parallel
    placement: str  # colocated | separate | mig | api
    checks: str
    fleet: sv.Fleet | None
    average: sv.Fleet | None
    cost_per_hour_peak: float
    cost_per_hour_average: float
    availability: float  # 1.0 when it fails with the main replicas (co-located) or is a service
    verdict_p50_s: float | None
    verdict_p99_s: float | None
    added_ttft_p50_s: float | None
    added_ttft_p99_s: float | None
    response_check_p99_s: float | None
    main_ttft_p50_s: float | None  # the TTFT targets the main model was planned to
    main_ttft_p99_s: float | None
    options: tuple[Option, ...]
    reason: str
    assumptions: tuple[dict[str, str], ...]
    service: Service | None = None
    memory_bytes_per_gpu: float | None = None  # a co-located guard's share of one GPU of each replica
    max_num_seqs: int | None = None
    memory_shares: tuple[tuple[str, float, float], ...] = ()  # co-located: (GPU, guard share, main model's share)

    @property
    def replicas(self) -> int:
        return sum(g.replicas for g in self.fleet.groups) if self.fleet else 0

    @property
    def gpus(self) -> int:
        """GPUs the guard's own fleet rents (a MIG fleet's GPUs hold several replicas each)."""
        if self.fleet is None:
            return 0
        return sum(math.ceil(g.replicas / g.config.slices_per_gpu) if g.config.mig else g.replicas * g.config.n_gpus
                   for g in self.fleet.groups)

    def as_dict(self) -> dict[str, Any]:
        s = self.service
        return {"model": self.name if self.kind == "model" else None, "service": s.service if s else None,
                "kind": self.kind, "mode": self.mode, "placement": self.placement, "checks": self.checks,
                "replicas": self.replicas, "gpus": self.gpus,
                "groups": [g.as_dict() for g in self.fleet.groups] if self.fleet else [],
                "cost_per_hour_peak": self.cost_per_hour_peak, "cost_per_hour_average": self.cost_per_hour_average,
                "availability": self.availability,
                "verdict_p50_s": self.verdict_p50_s, "verdict_p99_s": self.verdict_p99_s,
                "added_latency_p50_s": self.added_ttft_p50_s, "added_latency_p99_s": self.added_ttft_p99_s,
                "response_check_p99_s": self.response_check_p99_s,
                "main_ttft_p50_s": self.main_ttft_p50_s, "main_ttft_p99_s": self.main_ttft_p99_s,
                "memory_bytes_per_gpu": self.memory_bytes_per_gpu, "max_num_seqs": self.max_num_seqs,
                "memory_shares": {gpu: {"guard": g, "main": m} for gpu, g, m in self.memory_shares},
                "options": [o.as_dict() for o in self.options], "reason": self.reason,
                "price": ({"provider": s.provider, "mainland": s.mainland, "unit": s.unit,
                           "chars_per_unit": s.chars_per_unit, "price_per_unit": s.price_per_unit,
                           "currency": s.currency, "source": s.source, "as_of": s.as_of,
                           "verification": s.verification, "notes": s.notes or None} if s else None),
                "assumptions": list(self.assumptions)}


# ---------------------------------------------------------------- latency


def _verdict(c: sv.ReplicaConfig, j: int, v: int) -> tuple[float, float]:
    """(p50, p99) seconds from a check's arrival to its verdict on ``c`` at the most it is given: the
    prefill's TTFT and the rest of the verdict's tokens."""
    p50 = c.ttft_p50_s[j] + (v - 1) * c.tpot_mean_s[j]
    p99 = c.ttft_p99_s[j] + (v - 1) * c.tpot_p99_s[j]
    return p50, p99


def _fleet_verdicts(f: sv.Fleet, p: Preset, kind: str) -> tuple[float, float] | None:
    """The worst (p50, p99) verdict of the ``kind`` checks over the fleet's groups; None when it has none."""
    idx = [j for j in range(len(f.groups[0].config.capacity_per_s)) if p.kinds[j % len(p.kinds)] == kind]
    worst = [_verdict(g.config, j, p.verdict_tokens) for g in f.groups for j in idx
             if g.config.capacity_per_s[j] > 0]
    if not worst:
        return None
    return max(w[0] for w in worst), max(w[1] for w in worst)


def _guard_targets(t: sv.Targets, mode: str) -> sv.Targets:
    """The guard's TTFT targets: a share of the main ones (serial) or all of them (parallel)."""
    share = GUARD_TTFT_SHARE if mode == "serial" else 1.0
    return sv.Targets(t.ttft_p50_s * share if t.ttft_p50_s is not None else None,
                      t.ttft_p99_s * share if t.ttft_p99_s is not None else None)


def _main_targets(t: sv.Targets, mode: str, p50: float, p99: float) -> sv.Targets | None:
    """The main model's targets with a serial guard's verdict taken from its TTFT; None when nothing is left."""
    if mode == "parallel":
        return t
    ttft50 = t.ttft_p50_s - p50 if t.ttft_p50_s is not None else None
    ttft99 = t.ttft_p99_s - p99 if t.ttft_p99_s is not None else None
    if (ttft50 is not None and ttft50 <= 0) or (ttft99 is not None and ttft99 <= 0):
        return None
    return replace(t, ttft_p50_s=ttft50, ttft_p99_s=ttft99)


# ---------------------------------------------------------------- placements


@dataclass(frozen=True, slots=True)
class _Placed:
    """A placement's plans: the main model's and (own fleet) the guard's."""

    placement: str
    main: sv.ServePlan | None
    guard: sv.ServePlan | None
    verdict: tuple[float, float] | None
    response: float | None  # the output check's p99 verdict
    why_not: str = ""
    memory_bytes: float | None = None
    shares: tuple[tuple[str, float, float], ...] = ()  # co-located: (GPU, guard share, main share)

    @property
    def cost(self) -> float | None:
        if self.main is None or self.main.fleet is None:
            return None
        extra = self.guard.fleet.cost_per_hour if self.guard and self.guard.fleet else 0.0
        return self.main.fleet.cost_per_hour + extra


def _own_fleet(catalog: Catalog, m: ModelSpec, gm: ModelSpec, p: Preset, r: sv.ServeRequest, gr: sv.ServeRequest,
               cal: Calibration, placement: str) -> _Placed:
    """The guard on its own fleet (any offer, or MIG slices), then the main model with what TTFT it leaves."""
    configure = _mig_configure() if placement == "mig" else None
    g = sv.plan_fleet(catalog, gm, gr, cal, configure)
    if g.fleet is None:
        why = g.nothing_fits or "no guard fleet fits"
        if placement == "mig" and not g.configs:
            why = "no offered A100, H100 or H200 (MIG GPUs in gpuplan/data/mig_profiles.csv) serves it on a slice"
        return _Placed(placement, None, g, None, None, why)
    verdict = _fleet_verdicts(g.fleet, p, "input") or (0.0, 0.0)
    out = _fleet_verdicts(g.fleet, p, "output")
    response = out[1] if out else None
    targets = _main_targets(r.targets.effective(), r.guard_mode, *verdict)
    if targets is None:
        return _Placed(placement, None, g, verdict, response,
                       f"the guard's verdict ({verdict[1]:.2f} s at p99) takes the whole TTFT target")
    main_r = replace(r, guard="none", targets=targets, availability=math.sqrt(r.availability))
    main = sv.plan_fleet(catalog, m, main_r, cal)
    why = "" if main.fleet else (main.nothing_fits or "the main model fits nowhere with the TTFT the guard leaves")
    return _Placed(placement, main, g, verdict, response, why)


def _mig_configure() -> sv.Configure:
    def configure(m: ModelSpec, gpus: Sequence[Gpu], r: sv.ServeRequest, multinode: set[str], cal: Calibration,
                  unit_price: Any) -> tuple[list[sv.ReplicaConfig], list[sv.Miss]]:
        out: list[sv.ReplicaConfig] = []
        misses: list[sv.Miss] = []
        by_gpu = {g.name: g for g in gpus}
        for prof in mig_profiles():
            gpu = by_gpu.get(prof.gpu)
            if gpu is None:
                continue
            c = sv.one_gpu_config(m, mig_gpu(gpu, prof), r, cal, misses)
            if c is not None:
                out.append(replace(c, mig=prof.profile, slices_per_gpu=prof.instances_per_gpu))
        return out, misses

    return configure


def _colocated(catalog: Catalog, m: ModelSpec, gm: ModelSpec, p: Preset, r: sv.ServeRequest, gr: sv.ServeRequest,
               cal: Calibration) -> _Placed:
    """The guard on one GPU of every main replica: the main model keeps the memory and time the guard leaves."""
    budget = gr.targets
    guard_cfg: dict[str, sv.ReplicaConfig | None] = {}
    need: dict[str, float] = {}

    def guard_on(g: Gpu) -> sv.ReplicaConfig | None:
        if g.name not in guard_cfg:
            c = sv.one_gpu_config(gm, g, gr, cal, [])
            guard_cfg[g.name] = c if c is not None and all(x > 0 for x in c.capacity_per_s) else None
            need[g.name] = guard_bytes(gm, g, gr, cal)
        return guard_cfg[g.name]

    candidates: list[str] = []

    def configure(mm: ModelSpec, gpus: Sequence[Gpu], rr: sv.ServeRequest, multinode: set[str], cc: Calibration,
                  unit_price: Any) -> tuple[list[sv.ReplicaConfig], list[sv.Miss]]:
        # the GPU types worth pricing are those the main model alone ranks cheapest (co-location takes a similar
        # share from each): the guard is sized on those only, not on every GPU offered
        if not candidates:
            candidates.extend(dict.fromkeys(c.gpu for c in sv.configurations(mm, gpus, rr, multinode, cc,
                                                                              unit_price)[0]))
        smaller = [main_gpu(g, need[g.name], rr.engine) for g in gpus
                   if g.name in candidates and guard_on(g) is not None and need[g.name] < 0.5 * g.memory_bytes]
        configs, misses = sv.configurations(mm, smaller, rr, multinode, cc, unit_price)
        return [share_time(c, guard_cfg[c.gpu], len(p.kinds)) for c in configs], misses

    t = r.targets.effective()

    def main_plan(v50: float, v99: float) -> tuple[sv.ServePlan | None, str]:
        targets = _main_targets(t, r.guard_mode, v50, v99)
        if targets is None:
            return None, f"the guard's verdict ({v99:.2f} s at p99) takes the whole TTFT target"
        return sv.plan_fleet(catalog, m, replace(r, guard="none", targets=targets), cal, configure), ""

    def verdicts(main: sv.ServePlan) -> tuple[tuple[float, float], float | None]:
        """The worst input-check verdict (p50, p99) and output-check p99 on the GPU types the fleet uses."""
        used = [guard_cfg[g.config.gpu] for g in main.fleet.groups] if main.fleet else []
        runs = [(p.kinds[j % len(p.kinds)], _verdict(c, j, p.verdict_tokens)) for c in used if c
                for j in range(len(c.capacity_per_s))]
        inputs = [v for kind, v in runs if kind == "input"]
        outputs = [v[1] for kind, v in runs if kind == "output"]
        worst = (max(v[0] for v in inputs), max(v[1] for v in inputs)) if inputs else (0.0, 0.0)
        return worst, max(outputs) if outputs else None

    # first with the guard's TTFT budget taken from the main model's, then (when the verdict's last tokens
    # run past it) with the verdict the guard reaches on the GPUs the fleet uses
    main, why = main_plan(budget.ttft_p50_s or 0.0, budget.ttft_p99_s or 0.0)
    verdict, response = verdicts(main) if main else ((0.0, 0.0), None)
    if main and main.fleet and r.guard_mode == "serial" and (
            verdict[1] > (budget.ttft_p99_s or math.inf) or verdict[0] > (budget.ttft_p50_s or math.inf)):
        main, why = main_plan(*verdict)
        verdict, response = verdicts(main) if main else (verdict, response)
    if main is None:
        return _Placed("colocated", None, None, verdict, None, why)
    if main.fleet is None:
        why = ("no GPU holds the main model beside the guard within the targets" if any(guard_cfg.values())
               else "the guard fits on no GPU of the main model's offers")
        return _Placed("colocated", main, None, verdict, None, why)
    mem = max(need[g.config.gpu] for g in main.fleet.groups)
    used = dict.fromkeys(g.config.gpu for g in main.fleet.groups)
    shares = tuple((name, *memory_shares(need[name], catalog.gpus[name].memory_bytes, r.engine)) for name in used)
    return _Placed("colocated", main, None, verdict, response, "", mem, shares)


def memory_shares(guard_bytes: float, gpu_bytes: float, engine: str) -> tuple[float, float]:
    """(guard, main model) shares of one GPU's memory, as the two servers' ``--gpu-memory-utilization`` (SGLang
    ``--mem-fraction-static``): the guard's memory rounded up to ``SHARE_STEP`` of the GPU, the main server the
    share its engine reserves (engines.csv) less that, so the two add up to what the plan reserved."""
    share = get_engine(engine).gpu_memory_utilization or 1.0
    guard = math.ceil(guard_bytes / gpu_bytes / SHARE_STEP - 1e-9) * SHARE_STEP
    return round(guard, 3), round(share - guard, 3)


def main_gpu(g: Gpu, guard_need: float, engine: str) -> Gpu:
    """``g`` as the main model sees it beside a co-located guard: memory such that its engine's share of it is
    the main server's share of the whole GPU (:func:`memory_shares`)."""
    share = get_engine(engine).gpu_memory_utilization or 1.0
    _, main = memory_shares(guard_need, g.memory_bytes, engine)
    return replace(g, memory_visible_mib=g.memory_bytes * main / share / MiB)


def guard_bytes(gm: ModelSpec, g: Gpu, gr: sv.ServeRequest, cal: Calibration) -> float:
    """Memory a co-located guard takes of one GPU: its weights, the KV cache of ``COLOCATED_GUARD_SEQS``
    sequences of its longest check, its activations and its own engine's overhead."""
    _, fmt, engine, job = sv._basics(gm, gr)
    s = replace(inference_setup(job, 1, engine, fmt), batch=COLOCATED_GUARD_SEQS)
    return float(inference_memory(gm, g, s, cal).total)


def share_time(c: sv.ReplicaConfig, g: sv.ReplicaConfig | None, k: int) -> sv.ReplicaConfig:
    """``c`` with the guard's checks taking their time from it: a main request of bucket b brings one check of
    each kind, each taking 1 / c_guard of the GPU, so capacity_b = 1 / (1 / c_b + Σ_checks 1 / c_guard)."""
    if g is None:
        return replace(c, capacity_per_s=tuple(0.0 for _ in c.capacity_per_s))
    caps = []
    for b, cap in enumerate(c.capacity_per_s):
        guard_s = sum(1 / g.capacity_per_s[b * k + i] for i in range(k))
        caps.append(1 / (1 / cap + guard_s) if cap > 0 else 0.0)
    return replace(c, capacity_per_s=tuple(caps))


# ---------------------------------------------------------------- the plan


def guard_request(r: sv.ServeRequest, p: Preset) -> sv.ServeRequest:
    """What the guard serves: every check of every request (``len(p.kinds)`` per request, so that many times the
    rate), in the checks' buckets, to its share of the TTFT targets, and (with its own fleet) to the square root of
    the availability target; a daily profile scales with the rate; the main model's quantization, prefix cache,
    LoRA adapters and budget are not the guard's."""
    k = len(p.kinds)
    return replace(r, mean_rps=r.mean_rps * k, peak_rps=r.peak * k if r.peak_rps is not None else None,
                   profile=tuple(x * k for x in r.profile), buckets=p.buckets(r.buckets),
                   targets=_guard_targets(r.targets.effective(), r.guard_mode),
                   availability=math.sqrt(r.availability), quant=None, prefix_hit=0.0, budget_per_hour=None,
                   adapters=0, guard="none")


def plan_guarded(catalog: Catalog, m: ModelSpec, r: sv.ServeRequest, cal: Calibration) -> sv.ServePlan:
    """The serving plan of ``m`` for ``r`` with its guard: a moderation service, or the guard model at its
    cheapest placement (the others priced in ``options``)."""
    check_guard(r.guard)
    if r.guard.startswith("api"):
        return _with_service(catalog, sv.plan_fleet(catalog, m, replace(r, guard="none"), cal), r)
    p = presets()[r.guard]
    gm = catalog.model(p.name, "--guard")
    gr = guard_request(r, p)
    placed = [_colocated(catalog, m, gm, p, r, gr, cal), _own_fleet(catalog, m, gm, p, r, gr, cal, "separate"),
              _own_fleet(catalog, m, gm, p, r, gr, cal, "mig")]
    options = tuple(Option(x.placement, x.cost,
                           (x.guard.fleet.cost_per_hour if x.guard and x.guard.fleet else (0.0 if x.cost else None)),
                           x.verdict[1] if x.verdict else None, x.why_not) for x in placed)
    feasible = [x for x in placed if x.cost is not None]
    if not feasible:
        return _refusal(catalog, m, r, cal, p, options)
    best = min(feasible, key=lambda x: x.cost or math.inf)
    return _assemble(r, p, best, options)


def _refusal(catalog: Catalog, m: ModelSpec, r: sv.ServeRequest, cal: Calibration, p: Preset,
             options: Sequence[Option]) -> sv.ServePlan:
    base = sv.plan_fleet(catalog, m, replace(r, guard="none"), cal)
    if base.fleet is None:
        return replace(base, request=r)
    why = "; ".join(f"{o.placement}: {o.why_not}" for o in options)
    return replace(base, request=r, fleet=None, average=None, single_type=None, cost_per_m_input=None,
                   cost_per_m_output=None, notes=(),
                   nothing_fits=(f"the guard {p.name} fits nowhere ({why}). The main model alone fits: drop --guard "
                                 "or use --guard api, try a smaller guard, --guard-mode parallel, a looser --ttft-p99, "
                                 "or allow more GPUs."))


def _assemble(r: sv.ServeRequest, p: Preset, best: _Placed, options: Sequence[Option]) -> sv.ServePlan:
    main, g = best.main, best.guard
    assert main is not None and main.fleet is not None  # only placements that fit are assembled
    fleet = main.fleet
    own = g is not None and g.fleet is not None
    verdict = best.verdict or (0.0, 0.0)
    t = main.request.targets
    if r.guard_mode == "serial":
        added = verdict
    else:  # the first token waits for the later of the two
        main_ttft = max(max(x for x, cap in zip(grp.config.ttft_p99_s, grp.config.capacity_per_s, strict=True)
                            if cap > 0) for grp in fleet.groups)
        added = (max(0.0, verdict[0] - main_ttft), max(0.0, verdict[1] - main_ttft))
    peak = g.fleet.cost_per_hour if own and g and g.fleet else 0.0
    avg = g.average.cost_per_hour if own and g and g.average else 0.0
    gp = GuardPlan(p.name, "model", r.guard_mode, best.placement, p.checks, g.fleet if own and g else None,
                   g.average if own and g else None, peak, avg,
                   g.fleet.availability if own and g and g.fleet else 1.0, verdict[0], verdict[1], added[0], added[1],
                   best.response, t.ttft_p50_s, t.ttft_p99_s, tuple(options),
                   _reason(best, options, r.currency), _assumptions(p, r, best),
                   memory_bytes_per_gpu=best.memory_bytes,
                   max_num_seqs=COLOCATED_GUARD_SEQS if best.placement == "colocated" else None,
                   memory_shares=best.shares)
    cost_in, cost_out = _token_costs(main, r, p, avg)
    places = [(x.market, f"{x.provider} {x.region}") for x in fleet.groups]
    places += [(x.market, f"{x.provider} {x.region}") for x in (gp.fleet.groups if gp.fleet else ())]
    notes = main.notes + tuple(f"guard: {n}" for n in (g.notes if own and g else ()))
    return replace(main, request=r, guard=gp, cost_per_m_input=cost_in, cost_per_m_output=cost_out,
                   notes=notes, seconds=main.seconds + (g.seconds if g else 0.0),
                   assumptions=main.assumptions + gp.assumptions,
                   checklist=compliance.checklist(r.market, r.users, places))


def _reason(best: _Placed, options: Sequence[Option], currency: str) -> str:
    """Why this placement: its cost at peak (main model and guard) and the others' or why they do not fit."""
    parts = []
    for o in options:
        if o.placement == best.placement:
            continue
        if o.cost_per_hour_peak is None:
            parts.append(f"{o.placement} does not fit ({o.why_not})")
        else:
            parts.append(f"{o.placement} {o.cost_per_hour_peak:.2f} {currency}/h")
    return (f"{best.placement} is the cheapest at {best.cost or 0.0:.2f} {currency}/h at peak for the main model and "
            "the guard together; " + "; ".join(parts))


def _token_costs(main: sv.ServePlan, r: sv.ServeRequest, p: Preset, guard_avg: float
                 ) -> tuple[float | None, float | None]:
    """The main plan's cost per million input and output tokens, plus the guard fleet's mean-rate cost split by
    the tokens its input and output checks read."""
    if main.cost_per_m_input is None or main.cost_per_m_output is None:
        return main.cost_per_m_input, main.cost_per_m_output
    split = {kind: sum(b.share * b.prompt_len for i, b in enumerate(p.buckets(r.buckets))
                       if p.kinds[i % len(p.kinds)] == kind) for kind in ("input", "output")}
    return _add_split(main, r, guard_avg, split["input"], split["output"])


def _add_split(main: sv.ServePlan, r: sv.ServeRequest, per_hour: float, w_in: float, w_out: float
               ) -> tuple[float | None, float | None]:
    if main.cost_per_m_input is None or main.cost_per_m_output is None:
        return main.cost_per_m_input, main.cost_per_m_output
    tokens_in = r.mean_rps * HOUR * sum(b.share * b.prompt_len for b in r.buckets)
    tokens_out = r.mean_rps * HOUR * sum(b.share * b.output_len for b in r.buckets)
    total = w_in + w_out
    if total <= 0 or per_hour <= 0:
        return main.cost_per_m_input, main.cost_per_m_output
    guard_in, guard_out = token_costs(per_hour, tokens_in, tokens_out, w_in / total)
    return main.cost_per_m_input + guard_in, main.cost_per_m_output + guard_out


def _assumptions(p: Preset, r: sv.ServeRequest, best: _Placed) -> tuple[dict[str, str], ...]:
    out = [{"name": "guard checks", "value": f"{p.name} checks the {p.checks} ({' and '.join(p.kinds)} check"
            f"{'s' if len(p.kinds) > 1 else ''}); a check reads the text and a {p.template_tokens}-token template "
            f"and writes a {p.verdict_tokens}-token verdict",
            "source": f"gpuplan/data/guards.csv: {p.source}, {p.as_of}"},
           {"name": "guard latency", "value": (f"serial: the guard is planned to {GUARD_TTFT_SHARE:.0%} of the TTFT "
                                               "targets and the main model to the rest"
                                               if r.guard_mode == "serial" else
                                               "parallel: the guard has the whole TTFT target; the first token waits "
                                               "for the later of the verdict and the main prefill"),
            "source": "gpuplan.plan.guard.GUARD_TTFT_SHARE (a planning split, not a measurement)"}]
    if best.placement == "colocated":
        out.append({"name": "co-located guard", "value": f"one guard engine (TP 1, {COLOCATED_GUARD_SEQS} sequences) "
                    "on one GPU of each replica; its memory leaves every GPU of the replica that much less for KV "
                    "cache; its prefills take GPU time from the main model (capacity 1 / (1/c + Σ 1/c_guard)); its "
                    "verdict time is its own at that load",
                    "source": "gpuplan.plan.guard.COLOCATED_GUARD_SEQS; Griggs et al. 2024 (time sharing)"})
        out.append({"name": "co-located interference", "value": INTERFERENCE, "source": INTERFERENCE_SOURCE})
    else:
        out.append({"name": "availability split", "value": f"main fleet and guard fleet each planned to "
                    f"{math.sqrt(r.availability):.5%} (√ of {r.availability:.3%}): a request needs both",
                    "source": "gpuplan.plan.guard"})
    if best.placement == "mig":
        out.append({"name": "MIG slices", "value": "a slice has its profile's share of SMs (of 7) and of memory "
                    "and memory bandwidth (of 8)", "source": "gpuplan/data/mig_profiles.csv (NVIDIA MIG user guide)"})
    return tuple(out)


# ---------------------------------------------------------------- moderation services


def pick_service(r: sv.ServeRequest) -> tuple[Service, str]:
    """The service ``r.guard`` names, or for ``api`` the cheapest one — among mainland services when the
    users or the market are in mainland China — and why."""
    all_ = services()
    if r.guard.startswith("api:"):
        return all_[r.guard[4:]], "named by --guard"
    cn = r.users == Market.CN or r.market == Market.CN
    pool = [s for s in all_.values() if s.mainland] if cn else list(all_.values())
    if not pool:
        pool = list(all_.values())
    best = min(pool, key=lambda s: (_per_request_usd_guess(s), s.service))
    why = ("the cheapest mainland-China service (data stays in mainland China)" if cn and best.mainland
           else "the cheapest service")
    return best, why


def _per_request_usd_guess(s: Service) -> float:
    """A ranking key: the price of one call of 1000 characters (currencies compared as given; the mainland
    pool is one currency)."""
    return metered_cost(s.units(1000.0), s.price_per_unit)


def _with_service(catalog: Catalog, main: sv.ServePlan, r: sv.ServeRequest) -> sv.ServePlan:
    """``main`` with a moderation service checking every prompt and every response, priced at its rate."""
    s, why = pick_service(r)
    price = catalog.convert(s.price_per_unit, s.currency, r.currency)
    per_in = metered_cost(sum(b.share * s.units(b.prompt_len * CHARS_PER_TOKEN) for b in r.buckets), price)
    per_out = metered_cost(sum(b.share * s.units(b.output_len * CHARS_PER_TOKEN) for b in r.buckets), price)
    peak = per_request_per_hour(per_in + per_out, r.peak)
    avg = per_request_per_hour(per_in + per_out, r.mean_rps)
    t = r.targets.effective()
    assumptions = ({"name": "moderation price", "value": f"{s.price_per_unit:g} {s.currency} per "
                    f"{'request' if s.unit == 'request' else f'{s.chars_per_unit} characters'}; the prompt and the "
                    "response are each one call", "source": f"gpuplan/data/moderation_apis.csv: {s.source}, {s.as_of} "
                    f"({s.verification})"},
                   {"name": "characters per token", "value": f"{CHARS_PER_TOKEN:g} (English text; Chinese runs fewer "
                    "characters a token, so a per-character price errs high there)",
                    "source": "OpenAI's rule of thumb, gpuplan.plan.guard.CHARS_PER_TOKEN"},
                   {"name": "service latency", "value": SERVICE_LATENCY[r.guard_mode],
                    "source": f"{s.source} (no latency published; gpuplan.plan.guard.SERVICE_LATENCY)"})
    opts = (Option("api", (main.fleet.cost_per_hour + peak) if main.fleet else None, peak, None),)
    gp = GuardPlan(s.service, "api", r.guard_mode, "api", "both", None, None, peak, avg, 1.0, None, None, None, None,
                   None, t.ttft_p50_s, t.ttft_p99_s, opts, f"{s.service} ({s.provider}): {why}", assumptions, s)
    cost_in, cost_out = _add_split(main, r, avg, per_in, per_out)
    places = [(x.market, f"{x.provider} {x.region}") for x in (main.fleet.groups if main.fleet else ())]
    if not s.mainland:
        places.append(("global", f"{s.provider} moderation service"))
    notes = main.notes
    if (r.users == Market.CN or r.market == Market.CN) and not s.mainland:
        notes += (f"{s.service} runs outside mainland China: the users' prompts and responses leave the country "
                  "(data-export rules apply); --guard api picks a mainland service for --users cn",)
    if s.notes and "lower bound" in s.notes:
        notes += (f"{s.service}: the price covers the detection metering only, so the moderation cost is a lower "
                  "bound",)
    return replace(main, request=r, guard=gp, cost_per_m_input=cost_in, cost_per_m_output=cost_out, notes=notes,
                   assumptions=main.assumptions + assumptions,
                   checklist=compliance.checklist(r.market, r.users, places) if main.fleet else main.checklist)
