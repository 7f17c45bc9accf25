"""Render a serving fleet plan (:class:`gpuplan.plan.serving.ServePlan`): a table of replica groups and the
sentences around it for people, or its JSON twin."""

from __future__ import annotations

import datetime as dt
import sys
from typing import Any

from gpuplan.i18n import say, tr, translate
from gpuplan.plan.availability import violation_minutes_per_month
from gpuplan.plan.compliance import DISCLAIMER_EN, DISCLAIMER_ZH, EXPORT_EN, EXPORT_ZH, Checklist
from gpuplan.plan.serving import Fleet, ServePlan
from gpuplan.plan.traffic import DayCost, mean_rate
from gpuplan.render import Col, paragraph, table, to_json
from gpuplan.units import fmt_money, fmt_seconds


def _out(text: str) -> None:
    sys.stdout.write(paragraph(text) + "\n")


def show_serving(p: ServePlan, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(to_json(p.as_dict()) + "\n")
        return
    if p.fleet is None:
        _out(say("No plan: ", "没有方案：") + translate(p.nothing_fits or "nothing fits."))
        _show_checklist(p.checklist)
        return
    r, f, cur = p.request, p.fleet, p.request.currency
    rows = [_row(g, cur) for g in f.groups]
    cols = [Col(tr("Config"), "config"), Col(tr("Provider"), "provider"), Col(tr("Region"), "zone"),
            Col(tr("Pricing"), "pricing"), Col(tr("Replicas"), "replicas", None, "right"),
            Col(tr("Instances"), "instances", None, "right"), Col(tr("Seqs/replica"), "seqs", None, "right"),
            Col(tr("TTFT / TPOT") + " p99", "latency", None, "right"), Col(tr("Price/h"), "cost", None, "right")]
    lengths = ", ".join(f"{b.prompt_len}+{b.output_len} ({b.share:.0%})" for b in r.buckets)
    band = next((g.config.latency_band for g in f.groups if g.config.latency_band), None)
    shown = say(f"; the band on latency is ×{band[0]:.2f}–×{band[1]:.2f} (p10–p90 of measured ÷ estimated)",
                f"；延迟误差带 ×{band[0]:.2f}–×{band[1]:.2f}（实测 ÷ 估计的 p10–p90）") if band else ""
    table(rows, cols, say(f"{tr('Fleet')}: {p.model}, {r.mean_rps:g} req/s mean, {r.peak:g} peak × {lengths}",
                          f"{tr('Fleet')}：{p.model}，平均 {r.mean_rps:g} 请求/秒，峰值 {r.peak:g} × {lengths}"),
          say(f"{p.pools} pools of {len(p.configs)} configurations, {p.scenarios} failure scenarios; "
              f"planned in {p.seconds:.2f} s; TTFT / TPOT p99 at the most a replica is given",
              f"{len(p.configs)} 种配置的 {p.pools} 个资源池，{p.scenarios} 种故障情形；用时 {p.seconds:.2f} 秒；"
              "首字/每字延迟为单副本满载时的 p99"))
    if shown:
        _out(shown.lstrip("；; ").capitalize())
    _out(_summary(p, f, cur))
    if p.day is not None:
        _out(_day(p.day, cur))
    _out(tr("Why") + say(": ", "：") + _why(p, f, cur))
    if len(r.buckets) > 1 or len(f.gpu_types) > 1:
        table([{"config": c, "bucket": f"{r.buckets[b].prompt_len}+{r.buckets[b].output_len}",
                "rate": f"{x:.2f}"} for c, b, x in f.routing],
              [Col(tr("Config"), "config"), Col(tr("Bucket"), "bucket"), Col(tr("req/s"), "rate", None, "right")],
              tr("Routing with nothing lost"))
    if p.guard is not None:
        _show_guard(p, cur)
    for note in p.notes:
        _out(tr("Note") + say(": ", "：") + translate(note))
    rows = [{"name": translate(a["name"]), "value": translate(a["value"]), "source": a["source"]}
            for a in p.assumptions]
    table(rows, [Col(tr("Assumption"), "name"), Col(tr("Value"), "value"),
                                Col(tr("Source"), "source")], tr("Assumptions"))
    _show_checklist(p.checklist)


def _show_checklist(c: Checklist | None) -> None:
    """The China compliance checklist: per rule its authority, dates, what it asks, whether it changes the plan
    and its source (whole, so it can be cited), then the disclaimer."""
    if c is None:
        return
    _out(tr("China compliance checklist") + ":")
    for n, i in enumerate(c.items, 1):
        plan = say("yes: data export rules apply", "是：适用数据出境规则") if c.changes_plan(i) else say("no", "否")
        _out(say(f"{n}. {i.name_en} ({i.authority_en}; issued {i.issued}, in force {i.in_force}). {i.asks_en} "
                 f"Changes the plan: {plan}. Source: {i.source} (checked {i.date_checked}).",
                 f"{n}. {i.name_zh}（{i.authority_zh}；{i.issued} 发布，{i.in_force} 施行）。{i.asks_zh}"
                 f"影响方案：{plan}。来源：{i.source}（{i.date_checked} 核对）。"))
    if c.abroad:
        _out(tr("Note") + ": " + say(EXPORT_EN, EXPORT_ZH) + " (" + ", ".join(c.abroad) + ")")
    _out(say(DISCLAIMER_EN, DISCLAIMER_ZH))


def _row(g: Any, cur: str) -> dict[str, Any]:
    c = g.config
    worst = [(t, p) for t, p, cap in zip(c.ttft_p99_s, c.tpot_p99_s, c.capacity_per_s, strict=True) if cap > 0]
    latency = " / ".join((fmt_seconds(max(t for t, _ in worst)), fmt_seconds(max(p for _, p in worst))))
    term = f" {g.offer.commit_months} mo" if g.offer is not None and g.offer.commit_months else ""
    return {"config": c.describe(), "provider": g.provider, "zone": g.zone, "pricing": g.pricing + term,
            "replicas": g.replicas, "instances": g.instances, "seqs": c.max_num_seqs, "latency": latency,
            "cost": fmt_money(g.cost_per_hour, cur) + (" ⚠" if g.offer and g.offer.is_stale(dt.date.today()) else "")}


def _show_guard(p: ServePlan, cur: str) -> None:
    """The guard: its own fleet's groups (if it has one), the latency it adds, its cost, and why this placement."""
    g = p.guard
    if g.fleet is not None:
        table([_row(x, cur) for x in g.fleet.groups],
              [Col(tr("Config"), "config"), Col(tr("Provider"), "provider"), Col(tr("Region"), "zone"),
               Col(tr("Pricing"), "pricing"), Col(tr("Replicas"), "replicas", None, "right"),
               Col(tr("Instances"), "instances", None, "right"),
               Col(tr("TTFT / TPOT") + " p99", "latency", None, "right"), Col(tr("Price/h"), "cost", None, "right")],
              f"{tr('Guard')}: {g.name} ({g.placement}, {g.mode})")
    peak, avg = fmt_money(g.cost_per_hour_peak, cur), fmt_money(g.cost_per_hour_average, cur)
    if g.kind == "api" and g.service is not None:
        s = g.service
        unit = say("request", "次请求") if s.unit == "request" else say(f"{s.chars_per_unit} characters",
                                                                        f"{s.chars_per_unit} 字符")
        _out(say(f"Guard: the moderation service {s.service} ({s.provider}) checks every prompt and response at "
                 f"{s.price_per_unit:g} {s.currency} per {unit} ({s.source}, {s.as_of}): {peak}/h at peak, {avg}/h "
                 f"at the mean rate. {g.reason}.",
                 f"内容安全：审核服务 {s.service}（{s.provider}）检查每个提示词和回答，每 {unit} {s.price_per_unit:g} "
                 f"{s.currency}（{s.source}，{s.as_of}）：峰值每小时 {peak}，平均每小时 {avg}。{g.reason}。"))
        return
    adds = (f"{fmt_seconds(g.added_ttft_p50_s or 0.0)} / {fmt_seconds(g.added_ttft_p99_s or 0.0)}")
    main = fmt_seconds(g.main_ttft_p99_s) if g.main_ttft_p99_s is not None else "—"
    resp = fmt_seconds(g.response_check_p99_s) if g.response_check_p99_s is not None else "—"
    where = {"colocated": say("beside the main model on one GPU of each replica",
                              "与主模型同卡部署（每个副本的一块 GPU）"),
             "separate": say(f"on its own {g.replicas} replicas ({g.gpus} GPUs)",
                             f"独立部署 {g.replicas} 个副本（{g.gpus} 块 GPU）"),
             "mig": say(f"on {g.replicas} MIG slices ({g.gpus} GPUs)",
                        f"部署在 {g.replicas} 个 MIG 切片上（{g.gpus} 块 GPU）")}[g.placement]
    why = _placement_why(g, cur)
    what = {"prompt": say("prompts", "提示词"), "response": say("responses", "回答"),
            "both": say("prompts and responses", "提示词和回答")}[g.checks]
    _out(say(f"Guard: {g.name} checks {what} {where}; it adds {adds} (p50 / p99) to the first token "
             f"({g.mode}), the main model planned to a p99 TTFT of {main}; the response check takes {resp} (p99) "
             f"after the last token. It costs {peak}/h at peak and {avg}/h at the mean rate"
             + (f", availability {g.availability:.4%}" if g.fleet is not None else "") + f". Why: {why}.",
             f"内容安全：{g.name} 检查{what}，{where}；首字延迟增加 {adds}（p50 / p99，{g.mode}），主模型按 p99 "
             f"首字 {main} 规划；回答检查在最后一个 token 后需 {resp}（p99）。峰值每小时 {peak}，平均每小时 {avg}"
             + (f"，可用性 {g.availability:.4%}" if g.fleet is not None else "") + f"。原因：{why}。"))


def _placement_why(g: Any, cur: str) -> str:
    """Why the guard runs where it does: the placement's cost at peak (main model and guard) and the others'."""
    names = {"colocated": say("co-located", "同卡"), "separate": say("its own fleet", "独立集群"),
             "mig": say("MIG slices", "MIG 切片")}
    best = next(o for o in g.options if o.placement == g.placement)
    others = []
    for o in g.options:
        if o is best:
            continue
        others.append(f"{names[o.placement]} {fmt_money(o.cost_per_hour_peak, cur)}/h" if o.cost_per_hour_peak
                      is not None else say(f"{names[o.placement]} does not fit", f"{names[o.placement]}放不下"))
    cost = fmt_money(best.cost_per_hour_peak or 0.0, cur)
    return say(f"{names[best.placement]} is the cheapest, {cost}/h at peak for both models; " + ", ".join(others),
               f"{names[best.placement]}最便宜，两个模型峰值合计每小时 {cost}；" + "，".join(others))


def _summary(p: ServePlan, f: Fleet, cur: str) -> str:
    peak = fmt_money(p.cost_per_hour_peak or f.cost_per_hour, cur)
    avg = fmt_money(p.cost_per_hour_average, cur) if p.cost_per_hour_average is not None else "—"
    per_in = fmt_money(p.cost_per_m_input, cur) if p.cost_per_m_input is not None else "—"
    per_out = fmt_money(p.cost_per_m_output, cur) if p.cost_per_m_output is not None else "—"
    availability = p.availability if p.availability is not None else f.availability
    minutes = violation_minutes_per_month(availability)
    rec = fmt_seconds(p.recovery.total_s)
    return say(f"{peak}/h at peak, {avg}/h at the mean rate; {per_in} per million input and {per_out} per million "
               f"output tokens. Expected availability {availability:.4%} (target {p.request.availability:.2%}): "
               f"about {minutes:.1f} minutes a month below the targets; a lost replica is back in {rec}.",
               f"峰值每小时 {peak}，平均负载每小时 {avg}；每百万输入 token {per_in}，每百万输出 token {per_out}。"
               f"预计可用性 {availability:.4%}（目标 {p.request.availability:.2%}），每月约 {minutes:.1f} 分钟"
               f"达不到延迟目标；一个副本故障后 {rec} 恢复。")


def _day(d: DayCost, cur: str) -> str:
    auto, fixed = fmt_money(d.autoscaled_per_day, cur), fmt_money(d.fixed_per_day, cur)
    saving = d.fixed_per_day - d.autoscaled_per_day
    share = saving / d.fixed_per_day if d.fixed_per_day else 0.0
    per_auto = fmt_money(d.per_million_tokens(d.autoscaled_per_day), cur)
    per_fixed = fmt_money(d.per_million_tokens(d.fixed_per_day), cur)
    mean, peak = mean_rate(d.hourly_rps), max(d.hourly_rps)
    return say(f"Daily profile ({mean:.2f} req/s mean, {peak:g} at the busiest hour): following it with autoscaling "
               f"(the peak fleet scaled down by groups, hour by hour) costs {auto}/day, against {fixed}/day for the "
               f"peak fleet all day: {fmt_money(saving, cur)} ({share:.0%}) less; {per_auto} against {per_fixed} per "
               "million tokens (input and output) at the profile's mean.",
               f"日流量曲线（平均 {mean:.2f} 请求/秒，最忙时 {peak:g}）：按小时自动缩放（峰值机群按组缩减）"
               f"每天 {auto}，峰值机群全天运行每天 {fixed}：省 {fmt_money(saving, cur)}（{share:.0%}）；"
               f"按曲线平均计每百万 token（输入加输出）{per_auto}，固定机群 {per_fixed}。")


def _why(p: ServePlan, f: Fleet, cur: str) -> str:
    domain = {"zone": say("any one zone or spot pool", "任一可用区或竞价资源池"),
              "region": say("any one region or spot pool", "任一区域或竞价资源池"),
              "none": say("nothing", "不考虑故障")}[p.request.tolerate]
    text = say(f"the cheapest mix that still meets the latency targets at peak (+{f.headroom:.0%} headroom) with "
               f"{domain} lost.",
               f"在峰值（+{f.headroom:.0%} 余量）下失去{domain}后仍满足延迟目标的最便宜组合。")
    s = p.single_type
    if s is not None and s is not f and len(f.gpu_types) > 1 and p.saving_per_hour is not None:
        save = fmt_money(p.saving_per_hour, cur)
        share = p.saving_per_hour / s.cost_per_hour if s.cost_per_hour else 0.0
        text += say(f" The best single-GPU-type fleet ({', '.join(s.gpu_types)}) costs "
                    f"{fmt_money(s.cost_per_hour, cur)}/h: the mix saves {save}/h ({share:.0%}).",
                    f" 最好的单一型号方案（{', '.join(s.gpu_types)}）每小时 {fmt_money(s.cost_per_hour, cur)}："
                    f"混合方案每小时省 {save}（{share:.0%}）。")
    return text
