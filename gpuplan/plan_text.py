"""Plans in words and in JSON: the sentences of a plan's notes and explanation, in English or Chinese, and the
JSON form (the same in every language). The planner (:mod:`gpuplan.plan`) returns typed results and notes only;
the CLI, the HTTP API and the web page read them through here."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any

from gpuplan.estimate.frameworks import framework as get_framework
from gpuplan.i18n import lang, using
from gpuplan.listing import price_age, stale_note
from gpuplan.plan.candidates import Candidate, Constraints, Note, PlanResult, hourly_price_of
from gpuplan.plan.costing import token_costs
from gpuplan.plan.ranking import COST_TIE_SHARE, max_seconds
from gpuplan.requests import estimate_options, settings_text
from gpuplan.types import Objective, Task
from gpuplan.units import HOUR, fmt_bytes, fmt_money, fmt_seconds

Sentence = Callable[..., str]

# code → (English, Chinese), each made from the note's values
NOTE_TEXT: dict[str, tuple[Sentence, Sentence]] = {
    "startup": (lambda s: f"incl. {fmt_seconds(s)} start-up", lambda s: f"含 {fmt_seconds(s)} 启动"),
    "uncalibrated": (
        lambda vendor: f"speed fitted on NVIDIA runs only: {vendor} efficiency is not calibrated",
        lambda vendor: f"速度只用 NVIDIA 实测拟合：{vendor} 的效率未经校准"),
    "shared_instance": (
        lambda replicas, instances, gpus, room: f"{replicas} replica(s) on {instances} {gpus}-GPU instance(s), "
                                                f"room for {room}",
        lambda replicas, instances, gpus, room: f"{replicas} 个副本跑在 {instances} 台 {gpus} 卡实例上，"
                                                f"最多可容纳 {room} 个"),
    "large_fleet": (
        lambda gpus, provider: f"{gpus:,} GPUs in all: check that {provider} has the capacity",
        lambda gpus, provider: f"共 {gpus:,} 张卡：请确认 {provider} 有足够库存"),
    "multi_node": (
        lambda nodes, gbps: f"{nodes} nodes joined by an assumed {gbps:.0f} Gb/s per GPU network: check the "
                            "provider's cluster networking",
        lambda nodes, gbps: f"{nodes} 台机器，假定节点间每卡 {gbps:.0f} Gb/s 网络：请核实云厂商的集群网络"),
    "inferred_gpu": (lambda: "GPU inferred from the instance family", lambda: "GPU 型号由实例系列推断"),
    "spot": (lambda share: f"spot: +{share:.0%} expected time for preemptions",
             lambda share: f"竞价实例：预计因抢占多用 {share:.0%} 时间"),
    "commitment": (
        lambda months: f"reserved: a {months}-month commitment, billed for whole terms however short the run",
        lambda months: f"预留价格：需承诺 {months} 个月，无论用多久都按整期计费"),
    "undated": (lambda offer, today: _in("en", price_age, offer, today),
                lambda offer, today: _in("zh", price_age, offer, today)),
    "stale": (lambda offer, today: _in("en", stale_note, offer, today),
              lambda offer, today: _in("zh", stale_note, offer, today)),
    "platform": (
        lambda name, tier, guaranteed: f"{name} {tier}: " + ("guaranteed GPU" if guaranteed else "GPU not guaranteed"),
        lambda name, tier, guaranteed: f"{name} {tier}: " + ("保证有卡" if guaranteed else "不保证有卡")),
    "quota_unpublished": (lambda: "GPU-hour quota not published: assumes one session's worth is available",
                          lambda: "未公布 GPU 时长配额：假定够用一次会话"),
    "weekly_quota": (lambda used, weekly: f"uses {used:.1f} of {weekly:g} GPU-hours per week",
                     lambda used, weekly: f"用掉每周 {weekly:g} GPU 小时配额中的 {used:.1f}"),
    "sessions": (
        lambda hours, times: f"runs longer than one {hours:g} h session: checkpoint and resume {times} times",
        lambda hours, times: f"超过单次 {hours:g} 小时会话：需保存检查点并续跑 {times} 次"),
    "unsupported": (lambda kind, software, gpus, vendors: _unsupported_en(kind, software, gpus, vendors),
                    lambda kind, software, gpus, vendors: _unsupported_zh(kind, software, gpus, vendors)),
}

# the catalog's vendors by the accelerator family it sells (each vendor has one family in gpus.csv)
FAMILY_EN = {"Google": "Google TPU", "Intel": "Intel Gaudi", "Huawei": "Huawei Ascend"}
FAMILY_ZH = {"Google": "Google TPU", "Intel": "Intel Gaudi", "Huawei": "华为昇腾"}


def _software_name(kind: str, software: str, zh: bool = False) -> str:
    if kind == "library":
        return f"{software}（QLoRA 的 4 位基座）" if zh else f"{software} (QLoRA's 4-bit base)"
    return get_framework(software).name if software else ""


def _unsupported_en(kind: str, software: str, gpus: tuple[str, ...], vendors: tuple[tuple[str, int], ...]) -> str:
    who = _software_name(kind, software) or "no listed training framework"
    verb = "runs" if not software else "does not run"
    parts = ", ".join(f"{n} {FAMILY_EN.get(v, v)}" for v, n in vendors)
    return f"{who} {verb} on {len(gpus)} GPU type(s) of the catalog ({parts}): left out (gpuplan/data/runs_on.csv)"


def _unsupported_zh(kind: str, software: str, gpus: tuple[str, ...], vendors: tuple[tuple[str, int], ...]) -> str:
    who = _software_name(kind, software, zh=True) or "没有已列出的训练框架"
    verb = "支持" if not software else " 不支持"
    parts = "、".join(f"{FAMILY_ZH.get(v, v)} {n} 种" for v, n in vendors)
    return f"{who}{verb}目录中的 {len(gpus)} 种加速卡（{parts}），已排除（gpuplan/data/runs_on.csv）"


def _in(language: str, sentence: Callable[[Any, dt.date], str], *values: Any) -> str:
    with using(language):
        return sentence(*values)


def note_text(note: Note, language: str | None = None) -> str:
    """``note`` as a sentence in ``language`` (the current one by default)."""
    en, zh = NOTE_TEXT[note.code]
    return (zh if (language or lang()) == "zh" else en)(*note.values)


def notes_text(x: Candidate, language: str | None = None) -> list[str]:
    return [note_text(n, language) for n in x.notes]


# ---------------------------------------------------------------- explanation


def explain(ranked: tuple[Candidate, ...] | list[Candidate], c: Constraints, language: str | None = None) -> str:
    """One sentence on the pick with the numbers that decided it, and why the runner-up lost."""
    if not ranked:
        return ""
    zh = (language or lang()) == "zh"
    a = ranked[0]
    e = a.estimate
    runner = next((x for x in ranked[1:] if (x.estimate.gpu.name, x.where) != (e.gpu.name, a.where)), None)
    n = {"pick": a.label(), "need": fmt_bytes(e.needed_bytes), "have": fmt_bytes(e.capacity_bytes),
         "headroom": f"{e.margin:.0%}", "cost": fmt_money(a.cost.total, a.cost.currency),
         "time": fmt_seconds(a.time_s), "rate": fmt_money(hourly_price_of(a), a.cost.currency) if a.offer else ""}
    text = _explain_zh(a, n, c) if zh else _explain_en(a, n, c)
    if runner:
        r_cost = runner.cost.total / a.cost.total if a.cost.total else math.inf
        r_time = runner.time_s / max(a.time_s, 1e-9)
        r_value = runner.value_score / a.value_score if a.value_score else math.inf
        ratio = {"cost": r_cost, "time": r_time, "value": r_value}[c.objective]
        cost = fmt_money(runner.cost.total, runner.cost.currency)
        # serving is priced per hour: the runner-up's hourly cost says it all
        detail = [cost + "/h"] if e.job.task is Task.SERVE else [cost, fmt_seconds(runner.time_s)]
        if zh:
            why = {"cost": f"费用是它的 {ratio:.2f} 倍", "time": f"用时是它的 {ratio:.2f} 倍",
                   "value": f"同样的工作要花它的 {ratio:.2f} 倍"}[c.objective]
            text += f"次选 {runner.label()} {why}（{'，'.join(detail)}）。"
        else:
            why = {"cost": f"costs {ratio:.2f}× as much", "time": f"takes {ratio:.2f}× as long",
                   "value": f"pays {ratio:.2f}× as much for the same work"}[c.objective]
            text += f" The runner-up, {runner.label()}, {why} ({', '.join(detail)})."
    return text


def _explain_en(a: Candidate, n: dict[str, str], c: Constraints) -> str:
    what = {"cost": "cheapest", "time": "fastest", "value": "best value (work per money)"}[c.objective]
    spend = (f"costs {n['cost']} per hour" if a.estimate.job.task is Task.SERVE else
             f"takes {n['time']} and costs {n['cost']}")
    k = a.cost.instances
    rate = (f" at {n['rate']}/h" + (f" per instance × {k} instances" if k > 1 else "")) if n["rate"] else ""
    faster = "the lower latency" if a.estimate.job.task is Task.SERVE else "the faster"
    tie = f" (costs within {COST_TIE_SHARE:.0%} tie; {faster} wins)" if c.objective is not Objective.TIME else ""
    return (f"{n['pick']} is the {what} choice{tie}: the job needs {n['need']} per GPU (with a {n['headroom']} "
            f"error margin) of {n['have']}, {spend}{rate}.")


def _explain_zh(a: Candidate, n: dict[str, str], c: Constraints) -> str:
    what = {"cost": "最便宜", "time": "最快", "value": "性价比最高"}[c.objective]
    spend = (f"每小时 {n['cost']}" if a.estimate.job.task is Task.SERVE else f"用时 {n['time']}，费用 {n['cost']}")
    k = a.cost.instances
    rate = (f"（单价 {n['rate']}/小时" + (f"/台 × {k} 台" if k > 1 else "") + "）") if n["rate"] else ""
    faster = "延迟更低的" if a.estimate.job.task is Task.SERVE else "更快的"
    tie = f"（费用相差 {COST_TIE_SHARE:.0%} 以内算持平，取{faster}）" if c.objective is not Objective.TIME else ""
    return (f"{what}的方案是 {n['pick']}{tie}：每卡需要 {n['need']} 显存（含 {n['headroom']} 误差余量），"
            f"可用 {n['have']}；{spend}{rate}。")


def explanation(result: PlanResult, language: str | None = None) -> str:
    """Why the pick, and the notebook platform that also fits."""
    zh = (language or lang()) == "zh"
    text = explain(result.ranked, result.constraints, "zh" if zh else "en")
    if result.platforms:
        f = result.platforms[0]
        money = fmt_money(f.cost.total, f.cost.currency)
        notes = notes_text(f, "zh" if zh else "en")
        text += (f"免费/低价平台也能跑：{f.label()}，{money}（{'；'.join(notes)}）。" if zh
                 else f" A notebook platform also fits: {f.label()} for {money} ({'; '.join(notes)}).")
    for note in result.notes:
        text += ("" if not text else "" if zh else " ") + note_text(note, "zh" if zh else "en") + ("。" if zh else ".")
    return text


# ---------------------------------------------------------------- JSON


def candidate_dict(x: Candidate) -> dict[str, Any]:
    """A candidate as JSON: its estimate, cost, offer or platform, and its notes in English."""
    d: dict[str, Any] = {
        "gpu": x.estimate.gpu.name, "n_gpus": x.estimate.n_gpus, "replicas": x.estimate.replicas,
        "config": x.estimate.describe(), "provider": x.where, "seconds": x.seconds,
        "human_time": fmt_seconds(x.seconds), "calendar_seconds": x.time_s,
        "cost": x.cost.as_dict(), "memory_needed_bytes": x.estimate.needed_bytes,
        "memory_available_bytes": x.estimate.capacity_bytes, "notes": notes_text(x, "en"),
        "estimate": x.estimate.as_dict(), "settings": settings_text(x.estimate),
        "estimate_options": estimate_options(x.estimate),
    }
    if x.offer:
        o = x.offer
        today = dt.date.today()
        d["offer"] = {"provider": o.provider, "instance_type": o.instance_type, "region": o.region,
                      "market": o.market, "pricing": o.pricing, "price_per_hour": o.price_per_hour,
                      "currency": o.currency, "gpu_count": o.gpu_count, "source": o.source,
                      "as_of": o.as_of.isoformat(), "commit_months": o.commit_months, "dated": o.dated,
                      "price_age": _in("en", price_age, o, today), "stale": o.is_stale(today)}
    if x.platform:
        p = x.platform
        d["platform"] = {"platform": p.platform, "tier": p.tier, "weekly_gpu_hours": p.weekly_gpu_hours,
                         "session_max_hours": p.session_max_hours, "source": p.source,
                         "as_of": p.as_of.isoformat()}
    return d


def plan_dict(r: PlanResult) -> dict[str, Any]:
    """A plan as JSON, explained in both languages."""
    return {
        "model": r.model.name, "task": r.job.task, "objective": r.constraints.objective,
        "currency": r.constraints.currency, "pick": r.pick.as_dict() if r.pick else None,
        "ranked": [c.as_dict() for c in r.ranked], "pareto": [c.as_dict() for c in r.pareto],
        "explanation": explanation(r, "en"), "explanation_zh": explanation(r, "zh"),
        "configs_considered": r.considered, "configs_that_fit": r.fitting_configs,
        "nothing_fits": r.nothing_fits or None,
        "suggestions": list(r.suggestions), "alternatives": list(r.alternatives), "assumptions": list(r.assumptions),
        "platforms": [c.as_dict() for c in r.platforms], "max_seconds": max_seconds(r.constraints),
        "notes": [note_text(n, "en") for n in r.notes],
        "skipped_gpus": [{"gpu": gpu, "kind": n.values[0], "software": n.values[1]}
                         for n in r.notes if n.code == "unsupported" for gpu in n.values[2]],
    }


def serving_costs(x: Candidate) -> dict[str, Any]:
    """A one-model serving candidate's cost per hour and per 1M input / output tokens (JSON)."""
    job = x.estimate.job
    per_hour = x.cost.total
    tokens_in = job.rps * HOUR * job.prompt_len
    tokens_out = job.rps * HOUR * job.output_len
    sp = x.estimate.speed
    # split the hourly cost by GPU time: a request's prefill runs alone; its decode shares each step with
    # the other sequences of the batch
    prefill = sp.ttft_s - sp.tpot_s if sp else 0.0
    decode = job.output_len * sp.tpot_s / max(sp.batch, 1) if sp else 0.0
    share_in = prefill / (prefill + decode) if prefill + decode > 0 else 0.5
    per_in, per_out = token_costs(per_hour, tokens_in, tokens_out, share_in)
    return {"config": x.label(), "replicas": x.estimate.replicas, "cost_per_hour": per_hour,
            "currency": x.cost.currency, "cost_per_million_input_tokens": per_in,
            "cost_per_million_output_tokens": per_out}
