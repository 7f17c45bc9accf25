"""Render estimates, plans, fit tables, comparisons and rent-vs-buy results for people (tables) and machines
(JSON, CSV). Every number shown comes with its unit; estimates come with their band and assumptions."""

from __future__ import annotations

import datetime as dt
import sys
from typing import Any

from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.job import JobEstimate
from gpuplan.estimate.quant import weight_format
from gpuplan.estimate.result import Estimate, KvCapacity
from gpuplan.i18n import say, tr, translate
from gpuplan.listing import price_age
from gpuplan.plan_text import note_text, notes_text, serving_costs
from gpuplan.render import Col, emit, paragraph, table, to_csv, to_json
from gpuplan.requests import settings_text
from gpuplan.types import Engine, InferSetup, Recompute, Task
from gpuplan.units import HOUR, fmt_bytes, fmt_count, fmt_money, fmt_seconds


def _out(text: str) -> None:
    """A sentence or paragraph for people: wrapped to the terminal (never use it for JSON or CSV)."""
    _raw(paragraph(text))


def _raw(text: str) -> None:
    sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))


def _assumption_rows(e: Estimate) -> list[dict[str, str]]:
    """The assumptions table's rows: name and value in the language of the moment, the source as cited."""
    return [{"name": tr(a.name), "value": translate(a.value), "source": translate(a.source)} for a in e.assumptions]


def _show_breakdown(e: Estimate, title: str, fmt: Any) -> None:
    total = e.total or 1.0
    rows = [{"part": tr(k), "value": fmt(v), "share": f"{100 * v / total:.0f} %"} for k, v in e.breakdown.parts if v]
    rows.append({"part": tr("Total"), "value": fmt(e.total), "share": "100 %"})
    rows.append({"part": tr("Band (p10–p90)"), "value": f"{fmt(e.low)} – {fmt(e.high)}",
                 "share": f"n={e.band.n_rows}"})
    held = e.band.held_around(e.total)
    if held:
        rows.append({"part": tr("Held-out band"), "value": f"{fmt(held[0])} – {fmt(held[1])}", "share": ""})
    table(rows, [Col(tr("Part"), "part"), Col(tr("Value"), "value", None, "right"),
                 Col(tr("Share"), "share", None, "right")], title,
          say(f"band: {e.band.cls}, p10–p90 of true/estimated on the calibration rows; held-out: the same "
              "with each source left out of the fit, to expect for setups unlike any calibrated "
              "(docs/accuracy.md)",
              f"误差带：{e.band.cls}，校准数据上 实际/估计 的 p10–p90；留出误差带：每个来源都不参与拟合时的同一分位，"
              "适用于与校准数据不同的配置（docs/accuracy.md）"))


def show_estimate(e: JobEstimate, json_out: bool) -> None:
    if json_out:
        _raw(to_json(e.as_dict()))
        return
    state = tr("fits") if e.fits else tr("does not fit")
    needed, capacity = fmt_bytes(e.needed_bytes), fmt_bytes(e.capacity_bytes)
    _show_breakdown(e.memory, say(f"{tr('Memory per GPU')}: {e.model.name} on {e.describe()} — {state} ({needed} "
                                  f"with a {e.margin:.0%} margin of {capacity})",
                                  f"{tr('Memory per GPU')}：{e.model.name}，{e.describe()} — {state}"
                                  f"（含 {e.margin:.0%} 余量需要 {needed}，可用 {capacity}）"), fmt_bytes)
    if not e.fits:
        hints = say("; ", "；").join(_fit_hints(e))
        _out(say(f"Does not fit: {hints}. 'gpuplan plan' searches these for you.",
                 f"装不下：{hints}。'gpuplan plan' 会替你搜索这些改动。"))
    if e.memory.capacity is not None and isinstance(e.setup, InferSetup):
        _out(_kv_line(e, e.memory.capacity))
    if e.job.task in (Task.INFER, Task.SERVE) and not e.speed and not e.gpu.memory_bandwidth_bytes_per_s:
        _out(say(f"No speed or time: {e.gpu.name}'s memory bandwidth is not in the catalog (no source was found); "
                 "'gpuplan gpus --json' shows what is known.",
                 f"没有速度和时间：目录里没有 {e.gpu.name} 的显存带宽（未找到来源）；"
                 "'gpuplan gpus --json' 列出已知规格。"))
    if e.time:
        # a setup that does not fit never runs: its time is what it would take with the memory it lacks
        _show_breakdown(e.time, f"{tr('Time')}: {fmt_seconds(e.time.total)}" if e.fits else
                        say(f"Time if it fit: {fmt_seconds(e.time.total)}",
                            f"若能装下，时间：{fmt_seconds(e.time.total)}"), fmt_seconds)
        t = e.time.rate
        if t is not None:
            _out(say(f"{t.tokens_per_s:,.0f} tokens/s, MFU {t.mfu:.0%}, {t.gpu_hours:,.1f} GPU-hours.",
                     f"{t.tokens_per_s:,.0f} token/秒，MFU {t.mfu:.0%}，{t.gpu_hours:,.1f} 卡时。"))
    if e.speed:
        s = e.speed
        band = translate(s.band.describe()) if s.band else ""
        line = say(f"TTFT {fmt_seconds(s.ttft_s)}, TPOT {s.tpot_s * 1000:.1f} ms ({1 / s.tpot_s:,.0f} tokens/s per "
                   f"sequence), {s.output_tokens_per_s:,.0f} output tokens/s at batch {s.batch} ({s.bound}-bound)."
                   + (f" TTFT and TPOT band: {band} of the estimate." if band else ""),
                   f"TTFT {fmt_seconds(s.ttft_s)}，TPOT {s.tpot_s * 1000:.1f} ms"
                   f"（每条序列 {1 / s.tpot_s:,.0f} token/秒），批大小 {s.batch} 时共输出 "
                   f"{s.output_tokens_per_s:,.0f} token/秒（受{'显存带宽' if s.bound == 'memory' else '算力'}限制）。"
                   + (f"TTFT 与 TPOT 误差带：估计值的 {band}。" if band else ""))
        # a setup that does not fit never runs: its speed is what it would reach with the memory it lacks
        _out(line if e.fits else say(f"If it fit: {line}", f"若能装下：{line}"))
        if e.job.task is Task.SERVE and e.job.rps and e.replicas:
            _out(say(f"Replicas for {e.job.rps:g} req/s: {e.replicas} ({e.total_gpus} GPUs).",
                     f"每秒 {e.job.rps:g} 个请求需要 {e.replicas} 个副本（{e.total_gpus} 张卡）。"))
        elif e.job.task is Task.SERVE and e.fits and not e.replicas:
            _out(say("No concurrency meets the latency targets on this configuration.",
                     "这个配置上没有任何并发度能满足延迟目标。"))
    rows = _assumption_rows(e.memory) + (_assumption_rows(e.time) if e.time else [])
    table(rows, [Col("", "name"), Col(tr("Value"), "value"), Col(tr("Source"), "source")], tr("Assumptions"))


def _kv_line(e: JobEstimate, x: KvCapacity) -> str:
    """What a pre-allocating engine reserves, how much KV cache that leaves, and the longest context."""
    s = e.setup
    assert isinstance(s, InferSetup)
    eng = get_engine(s.engine)
    cap = s.max_num_seqs or eng.max_num_seqs
    util = s.gpu_memory_utilization or eng.gpu_memory_utilization
    reserved = x.engine_reserved_bytes
    tokens, seqs = f"{x.kv_capacity_tokens:,}", f"{x.max_concurrent_seqs:,}"
    longest = f"{x.max_context_tokens:,}"
    en = (f"{eng.name} reserves {fmt_bytes(reserved)} per GPU up front (gpu_memory_utilization {util:g}); the table "
          "is what the workload uses of it. " if reserved else "")
    en += (f"KV cache capacity: {tokens} tokens; {seqs} sequences of {s.context_len:,} tokens fit"
           + (f" (the engine runs at most {cap:,} at once)" if cap else "")
           + f"; longest context at batch {s.batch}: {longest} tokens.")
    zh = (f"{eng.name} 启动时每卡预留 {fmt_bytes(reserved)}（gpu_memory_utilization {util:g}），"
          "上表是负载实际用掉的部分。" if reserved else "")
    zh += (f"KV 缓存容量：{tokens} 个 token；可容纳 {seqs} 条 {s.context_len:,} token 的序列"
           + (f"（引擎最多同时运行 {cap:,} 条）" if cap else "")
           + f"；批大小 {s.batch} 时最长上下文 {longest} 个 token。")
    return say(en, zh)


def _fit_hints(e: JobEstimate) -> list[str]:
    """The usual knobs, given what this estimate used."""
    from gpuplan.types import TrainSetup

    s = e.setup
    short = say(f"short by {fmt_bytes(e.shortfall_bytes)}", f"差 {fmt_bytes(e.shortfall_bytes)}")
    if isinstance(s, TrainSetup):
        hints = [short]
        parts = e.memory.breakdown
        # what every step holds whatever the batch: recomputation and smaller micro-batches cannot help there
        states = sum(parts.get(k) for k in ("weights", "master_weights", "optimizer"))
        if states * (1 + e.margin) < e.capacity_bytes:
            if s.recompute == Recompute.NONE:
                hints.append(say("try --recompute full", "试试 --recompute full"))
            if s.micro_batch > 1:
                hints.append(say("a smaller --micro-batch", "更小的 --micro-batch"))
        else:
            hints.append(say(f"weights and optimizer states alone take {fmt_bytes(states)}",
                             f"仅权重和优化器状态就占 {fmt_bytes(states)}"))
        if s.method.trains_every_weight:
            hints.append(say("--method lora or qlora", "--method lora 或 qlora"))
        if s.parallel.n_gpus == 1:
            hints.append(say("more GPUs with --n-gpus and --zero 3", "用 --n-gpus 加卡并配合 --zero 3"))
        elif s.parallel.zero < 3 and s.parallel.dp > 1:
            hints.append(say("--zero 3 to shard weights, gradients and optimizer states over the GPUs",
                             "用 --zero 3 把权重、梯度和优化器状态切分到各卡"))
        return hints
    bits = weight_format(s.weight_format).bits_per_weight
    llamacpp = s.engine == Engine.LLAMACPP  # GGUF files, layers split over GPUs (no tensor parallelism)
    formats = ("gguf-q8_0", "gguf-q4_k_m") if llamacpp else ("int8-wo", "awq-int4")
    smaller = [q for q in formats if weight_format(q).bits_per_weight < bits - 1]
    quant = [say(f"--quant {' or '.join(reversed(smaller))}", f"--quant {' 或 '.join(reversed(smaller))}")
             ] if smaller else []
    more = say("more GPUs with --pp", "用 --pp 加卡") if llamacpp else say("more GPUs with --tp", "用 --tp 加卡")
    return [short, say("a smaller --batch or context", "更小的 --batch 或上下文"), *quant, more]


# ---------------------------------------------------------------- plans


def _plan_row(x: Any, rank: int) -> dict[str, Any]:
    e = x.estimate
    row = {
        "rank": rank, "config": e.describe(), "settings": settings_text(e), "where": x.label().split(" on ", 1)[1],
        "time": fmt_seconds(x.time_s),
        "cost": fmt_money(x.cost.total, x.cost.currency), "memory": f"{fmt_bytes(e.needed_bytes)} / "
                                                                   f"{fmt_bytes(e.capacity_bytes)}",
        "notes": "; ".join(notes_text(x)),
    }
    if e.job.task is Task.SERVE and e.speed:  # per hour: what a user sees is the latency at the planned load
        row.update(cost=fmt_money(x.cost.total, x.cost.currency) + "/h", batch=e.speed.batch,
                   latency=f"{fmt_seconds(e.speed.ttft_s)} / {fmt_seconds(e.speed.tpot_s)}")
    return row


def _plan_cols(task: str) -> list[Col]:
    if task == Task.SERVE:
        middle = [Col(tr("TTFT / TPOT"), "latency", None, "right"),
                  Col(tr("Seqs/replica"), "batch", None, "right"), Col(tr("Cost"), "cost", None, "right")]
    else:
        middle = [Col(tr("Time"), "time", None, "right"), Col(tr("Cost"), "cost", None, "right")]
    return [Col("#", "rank", None, "right"), Col(tr("Config"), "config"), Col(tr("Settings"), "settings"),
            Col(tr("Provider"), "where"), *middle,
            Col(tr("Memory needed"), "memory", None, "right"), Col(tr("notes"), "notes")]


def show_plan(catalog: Any, result: Any, fmt: str, compare_buy: bool = False,
              hours_per_month: float | None = None) -> None:
    if fmt == "json":
        data = result.as_dict()
        if compare_buy:
            data["rent_vs_buy"] = [o.as_dict() for o in _buy_rows(catalog, result, hours_per_month)]
        if result.job.task is Task.SERVE:
            data["serving"] = [serving_costs(x) for x in result.ranked]
        _raw(to_json(data))
        return
    if fmt == "csv":
        # --top rows: the rented plans ranked, then notebook platforms in the rows left (pricing "platform")
        rows = [*result.ranked, *result.platforms][:result.constraints.top]
        sys.stdout.write(to_csv([_csv_row(i, x) for i, x in enumerate(rows, 1)]))
        return
    job = result.job
    if not result.ranked:
        prefix = say("No rental plan: ", "没有可租用的方案：") if result.platforms else say("No plan: ", "没有方案：")
        _out(prefix + translate(result.nothing_fits or "nothing fits."))
        for note in result.notes:
            _out(note_text(note))
        if result.platforms:
            _platforms_table(result)
        if result.suggestions:
            table([{"change": translate(s["change"]), "pick": s["pick"], "cost": fmt_money(s["cost"], s["currency"]),
                    "time": fmt_seconds(s["seconds"])} for s in result.suggestions],
                  [Col(tr("Change"), "change"), Col(tr("Pick"), "pick"), Col(tr("Cost"), "cost", None, "right"),
                   Col(tr("Time"), "time", None, "right")], tr("Changes that would make it fit"))
        return
    rows = [_plan_row(x, i) for i, x in enumerate(result.ranked, 1)]
    cols = _plan_cols(job.task)
    lengths = f"{job.prompt_len}+{job.output_len}"
    what = {"finetune": f"{job.method} {tr('fine-tune')}, {fmt_count(job.train_tokens)} tokens",
            "pretrain": f"{tr('pretraining')}, {fmt_count(job.train_tokens)} tokens",
            "infer": f"{tr('batch inference')}, {fmt_count(job.requests)} × {lengths} tokens",
            "serve": f"{tr('serving')} {job.rps:g} req/s × {lengths} tokens"}[job.task]
    objective = tr({"cost": "cheapest", "time": "fastest", "value": "best value"}[result.constraints.objective])
    table(rows, cols, f"{tr('Plans')}: {result.model.name}, {what} — {objective}",
          say(f"{result.fitting_configs} configurations fit of {result.considered} considered; ",
              f"{result.considered} 种配置中 {result.fitting_configs} 种装得下；") + _limit_note(result)
          + _band(result.pick.estimate))
    if job.task is Task.SERVE:
        s = serving_costs(result.pick)
        cur = s["currency"]
        reps, hourly = result.pick.estimate.replicas, fmt_money(s['cost_per_hour'], cur)
        per_in = fmt_money(s['cost_per_million_input_tokens'], cur)
        per_out = fmt_money(s['cost_per_million_output_tokens'], cur)
        _out(say(f"Serving: {reps} replica(s), {hourly}/h, {per_in} per million input tokens, {per_out} per million "
                 "output tokens (the hourly cost split by the GPU time prefill and decode take).",
                 f"服务：{reps} 个副本，每小时 {hourly}；每百万输入 token {per_in}，每百万输出 token {per_out}"
                 "（按预填充与解码所占 GPU 时间拆分每小时费用）。"))
    _out(tr("Why") + ": " + result.explanation)
    if result.alternatives:
        _alternatives_table(result)
    front = [{"config": x.label(), "time": fmt_seconds(x.time_s),
              "cost": fmt_money(x.cost.total, x.cost.currency)} for x in result.pareto[:8]]
    if len(front) > 1 and job.task is not Task.SERVE:
        table(front, [Col(tr("Config"), "config"), Col(tr("Time"), "time", None, "right"),
                      Col(tr("Cost"), "cost", None, "right")], tr("Pareto front (cost vs time)"))
    if result.platforms:
        _platforms_table(result)
    if compare_buy:
        show_buy(_buy_rows(catalog, result, hours_per_month), False)


def _alternatives_table(result: Any) -> None:
    """Priced changes that would run a plan that fits for less, the largest saving first."""
    per = "/h" if result.job.task is Task.SERVE else ""
    rows = [{"change": translate(a["change"]), "saving": f"−{a['saving']:.0%}", "pick": a["pick"],
             "cost": fmt_money(a["cost"], a["currency"]) + per, "time": fmt_seconds(a["seconds"])}
            for a in result.alternatives]
    first = result.alternatives[0]
    _out(say(f"Cheaper: {first['change']} would cost {first['saving']:.0%} less.",
             f"更省钱：{translate(first['change'])}可省 {first['saving']:.0%}。"))
    cols = [Col(tr("Change"), "change"), Col(tr("Saving"), "saving", None, "right"), Col(tr("Pick"), "pick"),
            Col(tr("Cost"), "cost", None, "right")]
    if result.job.task is not Task.SERVE:
        cols.append(Col(tr("Time"), "time", None, "right"))
    table(rows, cols, tr("Cheaper alternatives"))


def _platforms_table(result: Any) -> None:
    rows = [{"where": x.label(), "time": fmt_seconds(x.calendar_seconds), "notes": "; ".join(notes_text(x)),
             "cost": fmt_money(x.cost.total, x.cost.currency)} for x in result.platforms]
    table(rows, [Col(tr("Platform"), "where"), Col(tr("Time"), "time", None, "right"),
                 Col(tr("Cost"), "cost", None, "right"), Col(tr("notes"), "notes")], tr("Free and cheap platforms"))


def _csv_row(rank: int, x: Any) -> dict[str, Any]:
    """One plan as flat cells (no JSON inside a cell)."""
    o = x.offer
    return {
        "rank": rank, "gpu": x.estimate.gpu.name, "n_gpus": x.estimate.n_gpus, "replicas": x.estimate.replicas,
        "config": x.estimate.describe(), "settings": settings_text(x.estimate), "provider": x.where,
        "instance_type": o.instance_type if o else "",
        "region": o.region if o else "", "pricing": o.pricing if o else "platform",
        "price_per_hour": o.price_per_hour if o else "", "price_currency": o.currency if o else "",
        "seconds": round(x.seconds, 1), "calendar_seconds": round(x.time_s, 1),
        "cost_total": round(x.cost.total, 4), "cost_compute": round(x.cost.compute, 4),
        "cost_storage": round(x.cost.storage, 4), "currency": x.cost.currency,
        "memory_needed_bytes": round(x.estimate.needed_bytes),
        "memory_available_bytes": round(x.estimate.capacity_bytes),
        "source": o.source if o else (x.platform.source if x.platform else ""),
        "as_of": o.as_of.isoformat() if o else "", "dated": o.dated if o else "",
        "price_age": price_age(o, dt.date.today()) if o else "", "stale": o.is_stale(dt.date.today()) if o else "",
        "commit_months": (o.commit_months or "") if o else "", "notes": "; ".join(notes_text(x, "en")),
    }


def _limit_note(result: Any) -> str:
    """How many plans the default longest run left out (a ranking by money without --deadline)."""
    from gpuplan.plan.ranking import DEFAULT_MAX_SECONDS

    if not result.too_long:
        return ""
    days, n = DEFAULT_MAX_SECONDS / 86400, result.too_long
    return say(f"{n} plans over {days:g} days left out (--deadline sets another limit); ",
               f"{n} 个超过 {days:g} 天的方案未列出（可用 --deadline 另设上限）；")


def _band(e: JobEstimate) -> str:
    if e.time is None:  # serving: the latency model's band (measured/predicted, p10–p90)
        from gpuplan.estimate.calibration import fitted

        return say("band on latency: ", "延迟误差带：") + translate(fitted().band("inference_latency").describe())
    return say("band on time: ", "时间误差带：") + translate(e.time.band.describe())


def _buy_rows(catalog: Any, result: Any, hours_per_month: float | None) -> list[Any]:
    from gpuplan.errors import GpuplanError
    from gpuplan.plan.buy import ownership

    out = []
    seen = set()
    for x in result.ranked:
        key = (x.estimate.gpu.name, x.estimate.n_gpus)
        if key in seen:
            continue
        seen.add(key)
        hours = hours_per_month if hours_per_month is not None else min(
            744.0, x.time_s / HOUR)
        try:
            out.append(ownership(catalog, x.estimate.gpu, x.estimate.n_gpus, hours,
                                 result.constraints.market or "global", result.constraints.currency))
        except GpuplanError:
            continue
    return out


# ---------------------------------------------------------------- fit / compare / buy


def show_fit(model: Any, rows: list[Any], json_out: bool) -> None:
    if json_out:
        _raw(to_json({"model": model.name, "rows": [r.as_dict() for r in rows]}))
        return
    out = []
    for r in rows:
        opts = [f"{e.describe()} ({fmt_bytes(e.needed_bytes)})" for e in r.options]
        out.append({"use": translate(r.use_case), "fit": say("; ", "；").join(opts) or tr("nothing up to 8 GPUs"),
                    "settings": translate(r.settings)})
    table(out, [Col(tr("Use case"), "use"), Col(tr("Smallest fit"), "fit"), Col(tr("Settings"), "settings")],
          say(f"{model.name}: smallest GPU configurations that fit (memory per GPU incl. headroom)",
              f"{model.name}：装得下的最小显卡配置（单卡显存，含余量）"))


def show_compare(c: Any, a: str, b: str, json_out: bool) -> None:
    if json_out:
        _raw(to_json(c.as_dict()))
        return
    rows = []
    for r in c.rows:
        rows.append({"measure": translate(r["measure"]), "a": _num(r[a]), "b": _num(r[b]),
                     "ratio": f"{r['ratio']:.2f}×" if r["ratio"] else "—",
                     "configs": f"{r[a + '_config']} | {r[b + '_config']}"})
    table(rows, [Col(tr("Measure"), "measure"), Col(a, "a", None, "right"), Col(b, "b", None, "right"),
                 Col(f"{b} / {a}", "ratio", None, "right"), Col(tr("Configurations"), "configs")],
          say(f"{b} vs {a} on {c.model} (gpuplan estimates; bands in docs/accuracy.md)",
              f"{c.model} 上 {b} 对比 {a}（gpuplan 估计；误差带见 docs/accuracy.md）"))


def _num(v: float | None) -> str:
    return "—" if v is None else f"{v:,.0f}"


def show_buy(rows: list[Any], json_out: bool) -> None:
    if json_out:
        _raw(to_json([r.as_dict() for r in rows]))
        return
    out = []
    month = say("/month", "/月")
    for o in rows:
        be = o.break_even_hours_per_month
        out.append({
            "gpu": f"{o.n_gpus}× {o.gpu.name}", "buy": fmt_money(o.purchase, o.currency, 0),
            "own": fmt_money(o.own_per_month, o.currency, 0) + month,
            "rent": "—" if o.rent_per_month is None else fmt_money(o.rent_per_month, o.currency, 0) + month,
            "break_even": "—" if be is None else (say("never", "永不回本") if be == float("inf") else
                                                  say(f"{be:,.0f} h/month", f"每月 {be:,.0f} 小时")),
            "verdict": translate(o.verdict),
        })
    table(out, [Col(tr("GPU"), "gpu"), Col(tr("Purchase (incl. host)"), "buy", None, "right"),
                Col(tr("Own"), "own", None, "right"), Col(tr("Rent"), "rent", None, "right"),
                Col(tr("Break-even"), "break_even", None, "right"), Col(tr("Verdict"), "verdict")], tr("Rent vs buy"),
          say(f"{rows[0].years:g}-year depreciation, PUE {rows[0].pue:g}, power at TDP; prices and sources in --json",
              f"按 {rows[0].years:g} 年折旧，PUE {rows[0].pue:g}，功耗按 TDP；价格与来源见 --json")
          if rows else None)


__all__ = ["emit", "show_buy", "show_compare", "show_estimate", "show_fit", "show_plan"]
