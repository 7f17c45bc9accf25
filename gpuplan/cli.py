"""Command-line interface: parse options, call the library, render, and turn errors into messages.

Nothing here computes anything; see ``gpuplan.listing``, ``gpuplan.estimate`` and ``gpuplan.plan``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from gpuplan import i18n
from gpuplan.errors import GpuplanError
from gpuplan.i18n import tr
from gpuplan.render import Col, emit
from gpuplan.units import fmt_count, fmt_money, parse_bytes

app = typer.Typer(
    name="gpuplan", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="Which GPU, where, how many, how long, at what cost — for LLM training, fine-tuning and serving. "
         "Offline; every number with its source, assumptions and error band.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@dataclass
class Options:
    catalog_dirs: tuple[str, ...] = ()


CatalogOpt = Annotated[list[str] | None, typer.Option(
    "--catalog", help="Extra catalog folder laid out like gpuplan/data (repeatable; also GPUPLAN_CATALOG).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (base units, unit-suffixed keys).")]
CsvOpt = Annotated[bool, typer.Option("--csv", help="Print CSV.")]


@app.callback()
def _root(ctx: typer.Context, catalog: CatalogOpt = None,
          lang: Annotated[str, typer.Option("--lang", help="Language of tables and explanations: en or zh.")] = "",
          ) -> None:
    if lang and lang not in i18n.LANGS:
        raise typer.BadParameter("use en or zh.", param_hint="--lang")
    if lang:
        i18n.set_lang(lang)
    ctx.obj = Options(tuple(catalog or ()))


def _catalog(ctx: typer.Context) -> Any:
    from gpuplan.catalog import load_catalog

    opts: Options = ctx.obj or Options()
    return load_catalog(opts.catalog_dirs)


def _fmt(json_out: bool, csv_out: bool) -> str:
    if json_out and csv_out:
        raise typer.BadParameter("choose one of --json and --csv.", param_hint="--json/--csv")
    return "json" if json_out else "csv" if csv_out else "table"


def _num(digits: int = 0, suffix: str = "") -> Any:
    return lambda v: "—" if v is None else f"{v:,.{digits}f}{suffix}"


# ---------------------------------------------------------------- gpus


@app.command()
def gpus(
    ctx: typer.Context,
    market: Annotated[str | None, typer.Option(help="cn: parts legally sold or offered in mainland China.")] = None,
    min_memory: Annotated[str | None, typer.Option(help="Smallest memory, e.g. 48GB.")] = None,
    vendor: Annotated[str | None, typer.Option(help="NVIDIA, AMD, Intel, Google, Huawei.")] = None,
    segment: Annotated[str | None, typer.Option(
        help="datacenter, workstation, consumer, tpu or npu.")] = None,
    sort: Annotated[str, typer.Option(help="name, memory, bandwidth, bf16, fp8, year or tdp.")] = "name",
    json_out: JsonOpt = False, csv_out: CsvOpt = False,
) -> None:
    """List accelerators with memory, bandwidth, dense tensor TFLOPS and China export status."""
    from gpuplan.listing import gpu_row, list_gpus

    _check_choice("--market", market, ("cn", "global"))
    _check_choice("--segment", segment, ("datacenter", "workstation", "consumer", "tpu", "npu"))
    cat = _catalog(ctx)
    found = list_gpus(cat, market=market, vendor=vendor, segment=segment, sort=sort,
                      min_memory_bytes=parse_bytes(min_memory, "--min-memory") if min_memory else None)
    rows = [gpu_row(g) for g in found]
    cols = [
        Col(tr("GPU"), "name"), Col(tr("Vendor"), "vendor"), Col(tr("Architecture"), "architecture"),
        Col(tr("Form"), "form_factor"), Col(tr("Memory"), "memory_nominal_gb", _num(0, " GB"), "right"),
        Col(tr("Usable"), "memory_usable_gib", _num(1, " GiB"), "right"),
        Col(tr("Bandwidth"), "memory_bandwidth_gb_s", _num(0, " GB/s"), "right"),
        Col(tr("BF16/FP16"), "bf16_tflops", None, "right"), Col(tr("FP8"), "fp8_tflops", None, "right"),
        Col(tr("Link"), "interconnect"), Col(tr("TDP"), "tdp_w", _num(0, " W"), "right"),
        Col(tr("Year"), "launch_year"), Col(tr("China export"), "export_status"),
    ]
    for row in rows:
        row["bf16_tflops"] = row["bf16_tflops"] or row["fp16_tflops"]
    caption = "TFLOPS are dense tensor rates; 'Usable' is the driver-visible capacity where published."
    emit(rows if _fmt(json_out, csv_out) == "table" else [gpu_row(g) for g in found], cols,
         _fmt(json_out, csv_out), f"{tr('Accelerators')} ({len(rows)})", caption)


def _check_choice(field: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise typer.BadParameter(f"'{value}' is not one of: {', '.join(choices)}.", param_hint=field)


# ---------------------------------------------------------------- offers


@app.command()
def offers(
    ctx: typer.Context,
    gpu: Annotated[list[str] | None, typer.Option(
        "--gpu", help="GPU name; a family (A100) also matches its variants (A100-80GB). Repeatable.")] = None,
    exact: Annotated[bool, typer.Option(help="Match --gpu names exactly, without variants.")] = False,
    market: Annotated[str | None, typer.Option(help="cn or global.")] = None,
    currency: Annotated[str | None, typer.Option(help="Show prices in USD or CNY (dated FX table).")] = None,
    spot: Annotated[bool | None, typer.Option("--spot/--no-spot", help="Only spot, or no spot.")] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", help="Provider (repeatable).")] = None,
    min_gpus: Annotated[float | None, typer.Option(help="At least this many GPUs per instance.")] = None,
    sort: Annotated[str, typer.Option(help="gpu-price, price, gpus, age or provider.")] = "gpu-price",
    limit: Annotated[int, typer.Option(help="Show at most this many rows (0 = all).")] = 40,
    json_out: JsonOpt = False, csv_out: CsvOpt = False,
) -> None:
    """List cloud GPU offers, cheapest per GPU-hour first, with the age of each price."""
    from gpuplan.listing import list_offers
    from gpuplan.units import parse_currency

    _check_choice("--market", market, ("cn", "global"))
    cur = parse_currency(currency, "--currency") if currency else None
    cat = _catalog(ctx)
    views = list_offers(cat, gpus=gpu or (), exact=exact, market=market, currency=cur, spot=spot,
                        providers=provider or (), min_gpus=min_gpus, sort=sort)
    shown = views[:limit] if limit > 0 else views
    rows = [v.row() for v in shown]
    money = lambda key: lambda r: fmt_money(r[key], r["currency"])  # noqa: E731
    for row in rows:
        row["_price"] = money("price_per_hour")(row)
        row["_gpu_price"] = money("price_per_gpu_hour")(row)
        row["_age"] = f"{row['age_days']} d" + ("*" if row["undated_source"] else "")
        row["_gpu"] = row["gpu"] + ("†" if row["gpu_mapping"] == "inferred" else "")
    cols = [
        Col(tr("Provider"), "provider"), Col(tr("Instance"), "instance_type"), Col(tr("GPU"), "_gpu"),
        Col(tr("GPUs"), "gpu_count", _plain_count, "right"), Col(tr("Region"), "region"),
        Col(tr("Pricing"), "pricing"), Col(tr("Price/h"), "_price", None, "right"),
        Col(tr("Per GPU-h"), "_gpu_price", None, "right"), Col(tr("Age"), "_age", None, "right"),
    ]
    fmt = _fmt(json_out, csv_out)
    if fmt != "table":
        rows = [v.row() for v in shown]
    if not views and fmt == "table":
        typer.echo(tr("no offers match") + ". Try fewer filters, or 'gpuplan offers' to see all.")
        return
    more = f" — showing {len(shown)} of {len(views)}; --limit 0 shows all" if len(shown) < len(views) else ""
    emit(rows, cols, fmt, f"{tr('Cloud offers')} ({len(views)}){more}",
         "Age = days since the price was published. * undated source: age counts from the day it was read. "
         "† GPU inferred from the instance family. --json shows each row's source.")


def _plain_count(v: Any) -> str:
    return f"{v:g}"


# ---------------------------------------------------------------- models


@app.command()
def models(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Part of a name, repository or family (e.g. qwen, 70b).")] = "",
    json_out: JsonOpt = False, csv_out: CsvOpt = False,
) -> None:
    """Search the bundled model presets (Hugging Face config.json files with their source)."""
    from gpuplan.listing import model_rows

    rows = model_rows(_catalog(ctx), query)
    cols = [
        Col(tr("Model"), "name"), Col(tr("Family"), "family"), Col(tr("Params"), "params", fmt_count, "right"),
        Col(tr("Active"), "active_params", fmt_count, "right"), Col(tr("Layers"), "layers", None, "right"),
        Col(tr("Hidden"), "hidden", None, "right"), Col(tr("Heads"), "heads", None, "right"),
        Col(tr("KV heads"), "kv_heads", None, "right"), Col(tr("Experts"), "experts", None, "right"),
        Col(tr("Context"), "max_positions", None, "right"),
    ]
    emit(rows, cols, _fmt(json_out, csv_out), f"{tr('Model presets')} ({len(rows)})")


@app.command()
def model(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Preset name, path to a config.json (or its folder), or a Hub id "
                                             "(online only).")],
    json_out: JsonOpt = False,
) -> None:
    """Show one model's architecture and its parameter breakdown (total and active)."""
    from gpuplan.listing import model_detail

    detail = model_detail(_catalog(ctx), name)
    if json_out:
        emit([], [], "json", payload=detail)
        return
    arch = [{"k": k, "v": v} for k, v in detail["architecture"].items() if v not in (None, 0, False)]
    emit(arch, [Col("", "k"), Col("", "v", None, "right")], "table", f"{detail['name']}",
         f"source: {detail['source']}")
    total = detail["params"]["total"]
    rows = [{"part": k, "n": v, "share": f"{100 * v / total:.1f} %"} for k, v in detail["params"].items()
            if v and k not in ("total", "active")]
    rows += [{"part": "total", "n": total, "share": "100 %"},
             {"part": "active per token", "n": detail["params"]["active"], "share": ""}]
    emit(rows, [Col(tr("Part"), "part"), Col(tr("Params"), "n", lambda v: f"{v:,}", "right"),
                Col(tr("Share"), "share", None, "right")], "table", tr("Parameter breakdown"),
         "; ".join(detail["notes"]) or None)


# ---------------------------------------------------------------- platforms


@app.command()
def platforms(ctx: typer.Context, market: Annotated[str | None, typer.Option(help="cn or global.")] = None,
              json_out: JsonOpt = False, csv_out: CsvOpt = False) -> None:
    """List free and cheap notebook platforms (Kaggle, Colab, AutoDL, ...) with their quotas."""
    _check_choice("--market", market, ("cn", "global"))
    cat = _catalog(ctx)
    rows = []
    for p in cat.platforms:
        if market and p.market != market:
            continue
        rows.append({
            "platform": p.platform, "tier": p.tier, "market": p.market, "gpu": p.gpu, "gpu_count": p.gpu_count,
            "price_per_month": p.price_per_month, "price_per_hour": p.price_per_hour, "currency": p.currency,
            "weekly_gpu_hours": p.weekly_gpu_hours, "session_max_hours": p.session_max_hours,
            "idle_timeout_min": p.idle_timeout_min, "guaranteed": p.guaranteed, "source": p.source,
            "as_of": p.as_of.isoformat(), "notes": p.notes,
        })
    for r in rows:
        r["_price"] = ("free" if not r["price_per_month"] and not r["price_per_hour"] else
                       fmt_money(r["price_per_month"], r["currency"]) + "/month" if r["price_per_month"] else
                       fmt_money(r["price_per_hour"], r["currency"]) + "/h")
        r["_quota"] = f"{r['weekly_gpu_hours']:g} GPU-h/week" if r["weekly_gpu_hours"] else "—"
        r["_session"] = f"{r['session_max_hours']:g} h" if r["session_max_hours"] else "—"
    cols = [Col(tr("Platform"), "platform"), Col(tr("Tier"), "tier"), Col(tr("GPU"), "gpu"),
            Col(tr("GPUs"), "gpu_count", _plain_count, "right"), Col(tr("Price"), "_price", None, "right"),
            Col(tr("Quota"), "_quota"), Col(tr("Session"), "_session", None, "right"),
            Col("guaranteed", "guaranteed")]
    fmt = _fmt(json_out, csv_out)
    if fmt != "table":
        rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    emit(rows, cols, fmt, f"{tr('Free and cheap platforms')} ({len(rows)})")


# ---------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> None:
    """Console entry point: library errors become a message and exit status 2, never a traceback."""
    try:
        app(args=argv, prog_name="gpuplan")
    except GpuplanError as err:
        typer.secho(f"error: {err.message}", fg="red", err=True)
        if err.fix:
            typer.echo(f"To fix: {err.fix}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
