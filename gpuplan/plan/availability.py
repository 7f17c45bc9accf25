"""Availability of a serving fleet: how often its surviving replicas still carry the peak load.

A fleet is a set of replica groups. Each replica fails on its own (hardware interruptions at a rate per GPU-hour,
each costing one recovery time: provisioning + image pull + weight load + warm-up), and whole failure domains
fail together: a zone, a provider region, a spot pool (preemptions are correlated within a pool). With
per-replica unavailability u = rate × recovery, N replicas of which m must be up are available with the binomial
probability Σ_{j ≤ N−m} C(N, j) u^j (1 − u)^(N−j); domain events are rare, so the fleet's availability sums, over
"no domain out", "one domain out" and "two domains out", the chance of that state times the chance that the
replicas left (each failing on its own) still carry the load. States with three or more domains out count as
outages (an error of order q³, on the safe side). The router / load balancer in front caps the result.

Every rate and commitment comes from ``gpuplan/data/availability.csv`` (with its source); recovery reuses the
planner's start-up assumptions (:mod:`gpuplan.plan.costing`).
"""

from __future__ import annotations

import functools
import itertools
import math
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuplan.catalog.csvload import Column, read_table
from gpuplan.plan.costing import STARTUP_SECONDS, WEIGHTS_DOWNLOAD_BYTES_PER_S
from gpuplan.units import HOUR, MONTH

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "availability.csv"
NAMES = ("gpu_interruptions_per_gpu_hour", "instance_sla_pct", "multizone_sla_pct", "lb_sla_pct",
         "spot_interruptions_per_month", "warmup_seconds")
COLUMNS = (Column("name", "enum", True, NAMES), Column("scope", required=True),
           Column("value", "float", True, positive=True, max=1e6), Column("unit", required=True),
           Column("source", required=True), Column("as_of", "date", True), Column("notes"))
MINUTES_PER_MONTH = MONTH / 60


@dataclass(frozen=True, slots=True)
class Figure:
    """One assumption of ``availability.csv``: a value for a scope (a provider, an engine, or ``default``)."""

    name: str
    scope: str
    value: float
    unit: str
    source: str
    as_of: str
    notes: str = ""


@functools.cache
def figures(path: Path = DATA_FILE) -> Mapping[tuple[str, str], Figure]:
    """The assumptions by (name, scope), read and validated once."""
    rows = read_table(path, COLUMNS, ["name", "scope"], "availability.csv")
    out = {}
    for r in rows:
        v = r.values
        if v["name"].endswith("_pct") and not 0 < v["value"] < 100:
            from gpuplan.errors import CatalogError

            raise CatalogError("availability.csv", r.line, "value", str(v["value"]), "a percentage is below 100.",
                               "give the commitment as a percent, e.g. 99.9.")
        out[(v["name"], v["scope"])] = Figure(v["name"], v["scope"], v["value"], v["unit"], v["source"],
                                              v["as_of"].isoformat(), v["notes"] or "")
    for name in NAMES:
        if not any(key[0] == name and key[1] in ("default", "vllm") for key in out):
            from gpuplan.errors import CatalogError

            raise CatalogError("availability.csv", 0, "name", name, "no default row for this assumption.",
                               f"add a row '{name},default,…'.")
    return types.MappingProxyType(out)


def figure(name: str, scope: str = "default") -> Figure:
    """The assumption for ``scope``, else its default (the warm-up defaults to the vLLM measurement)."""
    table = figures()
    return table.get((name, scope)) or table.get((name, "default")) or table[(name, "vllm")]


# ---------------------------------------------------------------- recovery and per-replica unavailability


@dataclass(frozen=True, slots=True)
class Recovery:
    """Seconds from a lost replica to a serving one, by part."""

    provisioning_s: float  # a new instance booted with the environment (image) installed
    weight_load_s: float  # checkpoint bytes / load bandwidth
    warmup_s: float  # engine start: profiling, compilation, CUDA graphs

    @property
    def total_s(self) -> float:
        return self.provisioning_s + self.weight_load_s + self.warmup_s


def recovery(checkpoint_bytes: float, engine: str = "vllm") -> Recovery:
    return Recovery(STARTUP_SECONDS, checkpoint_bytes / WEIGHTS_DOWNLOAD_BYTES_PER_S,
                    figure("warmup_seconds", engine).value)


def replica_unavailability(n_gpus: int, recovery_s: float) -> float:
    """Share of time one replica of ``n_gpus`` GPUs is down: interruptions per hour × hours each costs."""
    rate = figure("gpu_interruptions_per_gpu_hour").value * n_gpus
    down = rate * recovery_s / HOUR
    return down / (1 + down)


def zone_unavailability(sla_pct: float | None) -> float:
    """The chance one zone is out: 1 − the provider's single-instance SLA (providers.csv ``sla_pct``), or the
    default commitment of availability.csv where the provider publishes none."""
    return 1 - (sla_pct if sla_pct is not None else figure("instance_sla_pct").value) / 100


def region_unavailability(sla_multi_zone_pct: float | None) -> float:
    """The chance a whole region is out: 1 − the provider's multi-zone SLA, or the default."""
    return 1 - (sla_multi_zone_pct if sla_multi_zone_pct is not None else figure("multizone_sla_pct").value) / 100


def router_availability(provider: str) -> float:
    return figure("lb_sla_pct", provider).value / 100


def spot_pool_unavailability(recovery_s: float) -> float:
    """Share of time a spot pool is out: preemptions per month × the recovery each costs."""
    return figure("spot_interruptions_per_month").value * recovery_s / MONTH


# ---------------------------------------------------------------- the maths


def binomial_available(n: int, need: int, u: float) -> float:
    """P(at least ``need`` of ``n`` independent replicas are up), each down with probability ``u``."""
    if need <= 0:
        return 1.0
    return math.fsum(itertools.islice(binomial_pmf(n, u), max(0, n - need + 1)))


def binomial_pmf(n: int, u: float) -> Iterator[float]:
    """P(j of ``n`` down) for j = 0, 1, …, n, each down with probability ``u``, by the recurrence
    p(j+1) = p(j) · (n − j)/(j + 1) · u/(1 − u) (no huge binomial coefficients for large fleets)."""
    if u <= 0:
        yield 1.0
        yield from (0.0 for _ in range(n))
        return
    if u >= 1:
        yield from (0.0 for _ in range(n))
        yield 1.0
        return
    p, ratio = (1 - u) ** n, u / (1 - u)
    for j in range(n + 1):
        yield p
        p *= (n - j) / (j + 1) * ratio


@dataclass(frozen=True, slots=True)
class Group:
    """``n`` replicas that each carry ``capacity`` (requests/s of the plan's mix) and fail with probability
    ``u`` on their own, all of them lost when any domain in ``domains`` is out."""

    n: int
    capacity: float
    u: float
    domains: frozenset[str]


def fleet_availability(groups: Sequence[Group], domain_q: Mapping[str, float], demand: float) -> float:
    """P(the replicas up carry ``demand``), domain events independent with probabilities ``domain_q``."""
    used = sorted({d for g in groups for d in g.domains})
    q = {d: domain_q.get(d, 0.0) for d in used}
    none_out = math.prod(1 - q[d] for d in used)
    total = 0.0
    for k in range(0, min(2, len(used)) + 1):
        for out in itertools.combinations(used, k):
            p_state = none_out * math.prod(q[d] / (1 - q[d]) for d in out) if none_out > 0 else 0.0
            if p_state <= 0:
                continue
            left = [g for g in groups if not g.domains.intersection(out)]
            total += p_state * carries(left, demand)
    return min(1.0, total)


def carries(groups: Iterable[Group], demand: float, floor: float = 1e-15) -> float:
    """P(the sum of the capacities of the replicas up is at least ``demand``), replicas failing on their own.

    A distribution of the capacity lost is built group by group; losses beyond the slack are outages and
    dropped, as are states less likely than ``floor``."""
    groups = list(groups)
    slack = sum(g.n * g.capacity for g in groups) - demand
    if slack < -1e-9:
        return 0.0
    from gpuplan.plan.budget import check_budget  # the HTTP API's per-request work bound (a large fleet's
    # distribution of lost capacity has many states)

    lost: dict[float, float] = {0.0: 1.0}
    for g in groups:
        nxt: dict[float, float] = {}
        for already, p in lost.items():
            check_budget()
            for j, pj in enumerate(binomial_pmf(g.n, g.u)):
                x = already + j * g.capacity
                if x > slack + 1e-9 or (pj < floor and j > g.n * g.u):
                    break  # beyond the slack, or past the mode where the terms only shrink
                if p * pj >= floor:
                    nxt[x] = nxt.get(x, 0.0) + p * pj
        lost = nxt
    return sum(lost.values())


def violation_minutes_per_month(availability: float) -> float:
    return (1 - availability) * MINUTES_PER_MONTH
