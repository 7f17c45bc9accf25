"""Command-line interface: parse options, call the library, render, and turn errors into messages.

Nothing here computes anything; see ``gpuplan.listing``, ``gpuplan.estimate`` and ``gpuplan.plan``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gc
import io
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Annotated, Any

import typer
import typer.core

from gpuplan import i18n
from gpuplan.cli_options import table_options
from gpuplan.errors import GpuplanError, InputError, check_choice, check_path, clip_echo
from gpuplan.i18n import tr
from gpuplan.memo import collector_paused
from gpuplan.options import SEGMENTS
from gpuplan.render import Col, emit
from gpuplan.types import MARKETS, STALE_AFTER_DAYS, Market, Task
from gpuplan.units import fmt_count, fmt_money, parse_bytes

Opts = SimpleNamespace  # the table's options of a command (gpuplan.cli_options.table_options)


@dataclass
class Options:
    """What the root command's options leave for the command it runs (``ctx.obj``)."""

    catalog_dirs: tuple[str, ...] = ()
    noticed: bool = False  # the notice of replaced bundled rows was printed


# Exit status of every command (docs/cli.md lists them): scripts tell "nothing fits" from "you typed it wrong".
EXIT_CODES = {0: "success (also the help)", 1: "it does not fit: no plan fits the job and its constraints, or the "
                                            "estimated configuration does not fit in memory (or, serving, meets "
                                            "no latency target); the output says why",
              2: "the input is wrong (an option, argument, file or catalog row); the message names it and the fix",
              3: "an internal error: a bug in gpuplan (please report it with the command line)",
              4: "refresh: at least one price source failed; the others were stored and the output names each failure",
              130: "interrupted (Ctrl-C)"}


def _choices(name: str, command: str) -> tuple[str, ...] | None:
    """The values choice option ``name`` of ``command`` accepts: the table's (:data:`gpuplan.options.OPTIONS`),
    else the vocabularies the library checks (each imported only when its option is shown)."""
    from gpuplan import types
    from gpuplan.options import flag_choices
    from gpuplan.units import CURRENCIES

    fixed = {"--market": types.MARKETS, "--currency": CURRENCIES,
             "--segment": SEGMENTS,
             "--export": ("skypilot", "vllm", "sglang", "k8s"), "--lang": i18n.LANG_NAMES, "--users": types.MARKETS,
             "--task": types.TASKS}
    if name in fixed:
        return fixed[name]
    if name == "--sort":
        from gpuplan.listing import GPU_SORTS, OFFER_SORTS

        return GPU_SORTS if command == "gpus" else OFFER_SORTS
    return flag_choices(name)


def _metavar(flag: str) -> str | None:
    """What a text option takes, where it is not a choice (help shows it instead of the parameter's Python
    type): the table's form (COUNT, DURATION, MONEY, SIZE, FORMAT), else FILE or FOLDER."""
    from gpuplan.options import flag_form

    return flag_form(flag) or {"--out": "FILE", "--catalog": "FOLDER"}.get(flag)


def label_params(params: list[Any], command: str) -> None:
    """Help shows each option's real values: ``[cn|global]`` for a choice, COUNT/DURATION/... for text, none for
    a flag, NAME for other text, INTEGER or NUMBER for numbers."""
    for p in params:
        if p.param_type_name != "option" or p.metavar is not None:
            continue
        name, kind = p.opts[0], getattr(getattr(p, "type_descriptor", None), "annotation", str)
        choices = _choices(name, command)
        if choices:
            p.metavar = "[" + "|".join(choices) + "]"
            p._custom_shell_complete = _completer(choices)  # the shell completes the values too
        elif getattr(p, "is_flag", False):
            p.metavar = ""
        else:
            p.metavar = _metavar(name) or {int: "INTEGER", float: "NUMBER"}.get(kind, "NAME")
    for p in params:
        if p.param_type_name == "argument":  # typer shows an argument's Python type; it is text the help explains
            p.display_type_rich = lambda ctx: "TEXT"


def _completer(choices: tuple[str, ...]) -> Any:
    return lambda ctx, param, incomplete: [c for c in choices if c.startswith(incomplete)]


class LocalUsage:
    """The usage line in the language of the moment: ``用法：gpuplan plan [选项] 命令 [参数]...`` in Chinese (names
    of commands, arguments and options stay as they are typed)."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None and option.help:
            option.help = tr(option.help)
        return option

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        pieces = [tr(p) for p in self.collect_usage_pieces(ctx)]  # type: ignore[attr-defined]
        formatter.write_usage(ctx.command_path, " ".join(pieces), prefix=tr("Usage: "))


def quick_coercion(params: list[Any]) -> None:
    """Let each parameter keep a value already of its type as it is, as typer's coercion would return it.

    typer (0.29 on) coerces every parameter's value, a default or an option not given included, through a pydantic
    ``TypeAdapter`` it builds for the parameter on first use: building them imports pydantic's schema machinery and
    made a command cost about as much again as importing typer, rich and pydantic (bench/speed.py). Here a default,
    a text option's string or a repeated option's strings pass as they are (the adapter returns them unchanged); any
    other value (a number typed on the command line) goes to typer's own coercion, built then, so its checks and
    messages stay typer's. Older typers coerce with click types and have no such step: nothing to do."""
    quick = _quick_param_class()
    if quick is None:
        return
    for p in params:
        descriptor = getattr(p, "type_descriptor", None)
        if descriptor is not None and getattr(p, "_runtime_param", 0) is None and quick.handles(descriptor):
            p._runtime_param = quick(descriptor.parameter_info, descriptor.annotation, descriptor)


# numbers typed as plain digits (an optional minus, a decimal point for a float): int() and float() read them as
# pydantic does; anything else (1e3, inf, 1_000, spaces) is left to typer's coercion and its messages
_PLAIN_NUMBER = {int: re.compile(r"-?[0-9]+"), float: re.compile(r"-?[0-9]+(\.[0-9]+)?")}


@functools.cache
def _quick_param_class() -> Any:
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:
        return None

    @dataclass(frozen=True)
    class QuickParam(RuntimeParam):  # type: ignore[misc]
        """A parameter of a plain type whose value is converted without typer's general coercion."""

        descriptor: Any = None

        @staticmethod
        def handles(descriptor: Any) -> bool:
            info = descriptor.parameter_info
            return (descriptor.annotation in (str, int, float, bool, list[str]) and descriptor.file_annotation is None
                    and info.parser is None and info.min is None and info.max is None and not info.clamp)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            kind = self.annotation
            if type(value) is kind:
                return value
            if kind in (int, float) and type(value) is str and _PLAIN_NUMBER[kind].fullmatch(value):
                return kind(value)  # what pydantic's lax mode makes of plain digits; others get its checks
            if kind == list[str] and isinstance(value, (list, tuple)) and all(type(v) is str for v in value):
                return list(value)
            return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    return QuickParam


class RootGroup(LocalUsage, typer.core.TyperGroup):
    """The ``gpuplan`` group, its global options (typer's completion ones too) labelled as the commands' are."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        label_params(params, "gpuplan")
        quick_coercion(params)
        return params


class RangedCommand(LocalUsage, typer.core.TyperCommand):
    """A command whose numeric options are checked against :data:`gpuplan.requests.RANGES` before it runs (one
    table for the CLI and the HTTP API), and whose help states each range and each option's values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from gpuplan.options import RANGES

        super().__init__(*args, **kwargs)
        for param in self.params:  # text options with a range (--deadline 3d) are checked where they are parsed
            if isinstance(param, typer.core.TyperOption) and param.opts[0] in RANGES:
                param.help = f"{param.help or ''} Range: {RANGES[param.opts[0]].text()}.".strip()

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        label_params(params, self.name or "")
        quick_coercion(params)
        return params

    def invoke(self, ctx: Any) -> Any:
        from gpuplan.options import check_range

        for param in self.params:
            if _range_of(param) is not None:
                check_range(param.opts[0], ctx.params.get(param.name or ""))
        return super().invoke(ctx)


def _range_of(param: Any) -> Any:
    """The range of an int or float option (None for other parameters); an unlisted one is a bug (a test
    checks that every numeric option has a range)."""
    from gpuplan.options import RANGES

    kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)  # typer's own parameter types
    if param.param_type_name != "option" or kind not in (int, float):
        return None
    return RANGES[param.opts[0]]


app = typer.Typer(
    name="gpuplan", cls=RootGroup, no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False,
    help="Which GPU, where, how many, how long, at what cost — for LLM training, fine-tuning and serving. "
         "Offline; every number with its source, assumptions and error band.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


CatalogOpt = Annotated[list[str] | None, typer.Option(
    "--catalog", help="Extra catalog folder laid out like gpuplan/data (repeatable; also GPUPLAN_CATALOG).")]

def _machine_output(value: bool) -> bool:
    """JSON and CSV are an interface: their values are English whatever --lang or the locale says."""
    if value:
        i18n.set_lang("en")
    return value


JsonOpt = Annotated[bool, typer.Option("--json", callback=_machine_output,
                                       help="Print JSON (base units, unit-suffixed keys; English values).")]
CsvOpt = Annotated[bool, typer.Option("--csv", callback=_machine_output, help="Print CSV.")]


def _show_version(value: bool) -> None:
    if value:
        from gpuplan import __version__

        typer.echo(f"gpuplan {__version__}")
        raise typer.Exit()


@app.callback()
def _root(ctx: typer.Context, catalog: CatalogOpt = None,
          lang: Annotated[str, typer.Option("--lang", help="Language of tables, explanations, help and errors: en "
                                            "or zh (zh-CN), before or after the command (gpuplan plan … --lang "
                                            "zh); default: GPUPLAN_LANG, else LANG (zh_CN.UTF-8 is Chinese). JSON "
                                            "and CSV stay English.")] = "",
          version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_show_version,
                                                help="Print the version and exit.")] = False,
          ) -> None:
    if lang:
        i18n.set_lang(i18n.parse_lang(lang, "--lang"))
    ctx.obj = Options(tuple(catalog or ()))


def _catalog(ctx: typer.Context) -> Any:
    from gpuplan.catalog import load_catalog

    opts: Options = ctx.obj or Options()
    cat = load_catalog(opts.catalog_dirs)
    if not opts.noticed:
        opts.noticed = True
        for note in _catalog_notes(cat):
            typer.echo(note, err=True)
    return cat


def _catalog_notes(cat: Any) -> list[str]:
    """Which prices are in use (bundled, refreshed), a store that cannot be read, rows a user catalog replaces."""
    notes = []
    if cat.refreshed:  # the overlay is imported only when a refreshed price is in use
        from gpuplan.market.overlay import prices_note

        notes.append(f"note: {prices_note(cat)}")
    if cat.store_problem:
        notes.append(f"warning: {clip_echo(cat.store_problem)}")
    notes = [*notes, replaced_notice(cat.replaced)] if cat.replaced else notes
    return [i18n.translate(n) for n in notes]


def replaced_notice(replaced: tuple[str, ...], shown: int = 20) -> str:
    """``note: …`` naming the bundled rows a user catalog replaces (the first ``shown`` of them)."""
    more = f"; and {len(replaced) - shown} more" if len(replaced) > shown else ""
    return (f"note: your catalog replaces {len(replaced)} bundled row(s): " + "; ".join(replaced[:shown]) + more
            + ".")


def _min_memory(text: str | None) -> float | None:
    from gpuplan.options import check_range

    if text is None:
        return None
    n_bytes = parse_bytes(text, "--min-memory")
    check_range("--min-memory", n_bytes, f"'{text}'")
    return n_bytes


def _fmt(json_out: bool, csv_out: bool) -> str:
    if json_out and csv_out:
        raise InputError("--json/--csv", "both output formats were asked for.", "choose one of --json and --csv.")
    return "json" if json_out else "csv" if csv_out else "table"


def _num(digits: int = 0, suffix: str = "") -> Any:
    return lambda v: "—" if v is None else f"{v:,.{digits}f}{suffix}"


# ---------------------------------------------------------------- gpus


@app.command(cls=RangedCommand)
@table_options("gpus")
def gpus(ctx: typer.Context, opts: Opts, json_out: JsonOpt = False, csv_out: CsvOpt = False) -> None:
    """List accelerators with memory, bandwidth, dense tensor TFLOPS and China export status."""
    from gpuplan.listing import gpu_row, list_gpus

    market, segment, wide = opts.market, opts.segment, opts.wide
    check_choice("--market", market, MARKETS)
    check_choice("--segment", segment, SEGMENTS)
    cat = _catalog(ctx)
    found = list_gpus(cat, market=market, vendor=opts.vendor, segment=segment, sort=opts.sort,
                      min_memory_bytes=_min_memory(opts.min_memory))
    rows = [gpu_row(g) for g in found]
    narrow = [  # fits 100 columns; --wide adds the descriptive ones (JSON and CSV always carry every field)
        Col(tr("GPU"), "name"), Col(tr("Vendor"), "vendor"),
        Col(tr("Memory"), "memory_nominal_gb", _num(0, " GB"), "right"),
        Col(tr("Bandwidth"), "memory_bandwidth_gb_s", _num(0, " GB/s"), "right"),
        Col(tr("BF16/FP16"), "bf16_tflops", None, "right"), Col(tr("FP8"), "fp8_tflops", None, "right"),
        Col(tr("TDP"), "tdp_w", _num(0, " W"), "right"), Col(tr("Year"), "launch_year"),
        Col(tr("China export"), "export_status"),
    ]
    extra = [Col(tr("Architecture"), "architecture"), Col(tr("Form"), "form_factor"),
             Col(tr("Usable"), "memory_usable_gib", _num(1, " GiB"), "right"), Col(tr("Link"), "interconnect")]
    cols = narrow[:2] + extra[:2] + narrow[2:3] + extra[2:3] + narrow[3:6] + extra[3:] + narrow[6:] if wide else narrow
    for row in rows:
        row["bf16_tflops"] = row["bf16_tflops"] or row["fp16_tflops"]
    caption = "TFLOPS are dense tensor rates" + ("; 'Usable' is the driver-visible capacity where published."
                                                 if wide else "; --wide shows architecture, usable memory, links.")
    emit(rows if _fmt(json_out, csv_out) == "table" else [gpu_row(g) for g in found], cols,
         _fmt(json_out, csv_out), f"{tr('Accelerators')} ({len(rows)})", i18n.translate(caption))


# ---------------------------------------------------------------- offers


@app.command(cls=RangedCommand)
@table_options("offers")
def offers(ctx: typer.Context, opts: Opts, json_out: JsonOpt = False, csv_out: CsvOpt = False) -> None:
    """List cloud GPU offers, cheapest per GPU-hour first, with the age of each price."""
    from gpuplan.listing import list_offers
    from gpuplan.units import parse_currency

    check_choice("--market", opts.market, MARKETS)
    cur = parse_currency(opts.currency, "--currency") if opts.currency else None
    cat = _catalog(ctx)
    views = list_offers(cat, gpus=opts.gpu or (), exact=opts.exact, market=opts.market, currency=cur,
                        spot=opts.spot, providers=opts.provider or (), min_gpus=opts.min_gpus, sort=opts.sort,
                        tiers=opts.tier or ())
    shown = views[:opts.limit] if opts.limit > 0 else views
    rows = [v.row() for v in shown]
    money = lambda key: lambda r: fmt_money(r[key], r["currency"])  # noqa: E731
    for row in rows:
        row["_price"] = money("price_per_hour")(row)
        row["_gpu_price"] = money("price_per_gpu_hour")(row)
        row["_age"] = row["price_age"] + (" ⚠" if row["stale"] else "")
        row["_pricing"] = row["pricing"] + (f" {row['commit_months']} mo" if row["commit_months"] else "")
        row["_gpu"] = row["gpu"] + ("†" if row["gpu_mapping"] == "inferred" else "")
    cols = [
        Col(tr("Provider"), "provider"), Col(tr("Instance"), "instance_type"), Col(tr("GPU"), "_gpu"),
        Col(tr("GPUs"), "gpu_count", _plain_count, "right"), Col(tr("Region"), "region"),
        Col(tr("Pricing"), "_pricing"), Col(tr("Price/h"), "_price", None, "right"),
        Col(tr("Per GPU-h"), "_gpu_price", None, "right"), Col(tr("Age"), "_age", None, "right"),
    ]
    fmt = _fmt(json_out, csv_out)
    if fmt != "table":
        rows = [v.row() for v in shown]
    if not views and fmt == "table":
        typer.echo(i18n.translate("no offers match. Try fewer filters, or 'gpuplan offers' to see all."))
        return
    more = f" — showing {len(shown)} of {len(views)}; --limit 0 shows all" if len(shown) < len(views) else ""
    emit(rows, cols, fmt, f"{tr('Cloud offers')} ({len(views)}){i18n.translate(more)}",
         i18n.translate(f"Age = days since the price was published; 'undated' = the source states no date. ⚠ older "
                        f"than {STALE_AFTER_DAYS} days: check the price. reserved rows need the commitment shown (mo = "
                        "months). † GPU inferred from the instance family. --json shows each row's source."))


def _plain_count(v: Any) -> str:
    return f"{v:g}"


# ---------------------------------------------------------------- refresh, history


# Every source of gpuplan.market.refresh.PROVIDERS with its key variable (a test keeps this list complete); kept
# literal so that the command line starts without importing the HTTP client.
_REFRESH_HELP = (
    "Fetch current GPU prices and FX rates from the providers' public price APIs into the local price store, each "
    "provider on its own: one failing leaves the others and its earlier prices intact. With no PROVIDER, all of "
    "them; those whose key is not set are skipped. Sources: aws (AWS price list bulk API); azure (Azure retail "
    "prices API); gcp (Cloud Billing catalog, key GPUPLAN_GCP_API_KEY); runpod (GraphQL gpuTypes, key "
    "RUNPOD_API_KEY); vastai (marketplace search, key VAST_API_KEY optional); lambda (instance types, key "
    "LAMBDA_API_KEY); tencent (CVM DescribeZoneInstanceConfigInfos, keys TENCENTCLOUD_SECRET_ID and "
    "TENCENTCLOUD_SECRET_KEY); aliyun (ECS DescribePrice, keys ALIBABA_CLOUD_ACCESS_KEY_ID and "
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET); ecb (ECB euro reference rates: EUR/USD, EUR/CNY). The store is "
    "prices.sqlite in $GPUPLAN_DATA_DIR (default $XDG_DATA_HOME/gpuplan, i.e. ~/.local/share/gpuplan); plans and "
    "listings then use the newest refreshed prices over the bundled ones. Exit status 4 when a source failed; "
    "with GPUPLAN_OFFLINE set (to anything but 0, false, no or off) it refuses to run.")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


@app.command(cls=RangedCommand, help=_REFRESH_HELP)
@table_options("refresh")
def refresh(
    ctx: typer.Context, opts: Opts,
    provider: Annotated[list[str] | None, typer.Argument(
        help="Price sources to refresh (see above); none: all.", show_default=False)] = None,
    json_out: JsonOpt = False,
) -> None:
    from gpuplan.catalog import load_catalog
    from gpuplan.market.refresh import refresh as run_refresh
    from gpuplan.market.store import store_path

    settings: Options = ctx.obj or Options()
    outcomes = run_refresh(load_catalog(settings.catalog_dirs, refreshed=False), provider or (), opts.region or ())
    rows = [{"source": o.key, "provider": o.provider, "status": o.status, "n_rows": o.n_rows, "n_fx": o.n_fx,
             "batch_id": o.batch_id, "n_unmapped": len(o.unmapped), "unmapped": o.unmapped,
             "n_not_offered": len(o.not_offered), "not_offered": o.not_offered, "clashes": o.clashes,
             "message": o.message, "fix": o.fix} for o in outcomes]
    if json_out:
        emit(rows, [], "json", payload={"store": str(store_path()), "sources": rows})
    else:
        for row, o in zip(rows, outcomes, strict=True):
            row["_what"] = (_count(o.n_rows, "price") + (f", {_count(o.n_fx, 'FX rate')}" if o.n_fx else "")
                            if o.status == "stored" else "nothing (why: below)")
        emit(rows, [Col("Source", "source"), Col("Provider", "provider"), Col("Status", "status"),
                    Col("Stored", "_what"), Col("Unmapped SKUs", "n_unmapped", None, "right"),
                    Col("Not offered", "n_not_offered", None, "right")], "table",
             f"Refresh into {store_path()}", "Unmapped SKUs name a GPU gpuplan does not know, or none at all; "
             "they are listed below and not stored (add an alias to gpu_aliases.csv to map one). Not offered: "
             "catalog types the provider says it does not sell in a region asked about.")
        for o in outcomes:
            if o.unmapped:
                shown = "; ".join(f"{sku} ({what})" for sku, what in list(o.unmapped.items())[:8])
                more = f"; and {len(o.unmapped) - 8} more" if len(o.unmapped) > 8 else ""
                typer.echo(f"unmapped ({o.provider}): {shown}{more}", err=True)
            if o.clashes:
                shown = "; ".join(f"{offer} ({prices})" for offer, prices in o.clashes.items())
                typer.echo(f"different prices for one offer in one answer ({o.provider}; the lowest is stored): "
                           f"{shown}", err=True)
            if o.not_offered:
                shown = "; ".join(f"{sku} ({why})" for sku, why in list(o.not_offered.items())[:8])
                more = f"; and {len(o.not_offered) - 8} more" if len(o.not_offered) > 8 else ""
                typer.echo(f"not offered in region ({o.provider}): {shown}{more}", err=True)
            if o.status != "stored":
                typer.echo(f"{o.status}: {clip_echo(o.message)} To fix: {o.fix}", err=True)
    if any(o.status == "failed" for o in outcomes):
        raise typer.Exit(4)


@app.command(cls=RangedCommand)
@table_options("history")
def history(ctx: typer.Context, opts: Opts, json_out: JsonOpt = False, csv_out: CsvOpt = False) -> None:
    """Show how refreshed prices of a GPU moved: per offer the first, last, lowest and highest price stored by
    'gpuplan refresh' (--points: every fetch)."""
    from dataclasses import asdict

    from gpuplan.catalog.schemas import PRICINGS
    from gpuplan.listing import resolve_providers
    from gpuplan.market import history as trend
    from gpuplan.market.store import history as stored

    gpu, provider, region, tier = opts.gpu, opts.provider, opts.region, opts.tier
    check_choice("--tier", tier, PRICINGS)
    cat = _catalog(ctx)
    name = cat.gpu(gpu).name
    providers = sorted(resolve_providers(cat, provider, "--provider")) if provider else []
    found = [r for r in stored(name, providers, region or ()) if tier is None or r.tier == tier]
    fmt = _fmt(json_out, csv_out)
    if not found and fmt == "table":
        typer.echo(i18n.translate(f"no refreshed prices of {name} stored yet" + (
            " for these filters" if provider or region or tier else "")
            + ". Run 'gpuplan refresh' (see 'gpuplan refresh --help') to fetch current prices."))
        return
    if opts.points:
        rows = [asdict(r) for r in found]
        for row in rows if fmt == "table" else []:
            row["_price"] = fmt_money(row["price_per_hour"], row["currency"])
        emit(rows, [Col("Fetched", "fetched_at"), Col("Provider", "provider"), Col("Instance", "instance_type"),
                    Col("Region", "region"), Col("Zone", "zone"), Col("Tier", "tier"), Col("Unit", "unit"),
                    Col("Price/h", "_price", None, "right")],
             fmt, f"{name}: {len(rows)} stored prices", "Prices as the provider states them (its currency).")
        return
    series = trend.series(found)
    rows = [s.as_dict() for s in series]
    for row in rows if fmt == "table" else []:
        money = lambda key, r=row: fmt_money(r[key], r["currency"])  # noqa: E731
        row.update(_first=money("first_price_per_hour"), _last=money("last_price_per_hour"),
                   _last_gpu=money("last_price_per_gpu_hour"),
                   _range=f"{money('min_price_per_hour')}–{money('max_price_per_hour')}",
                   _change=f"{row['change_fraction']:+.1%}", _span=f"{row['first_at'][:10]} → {row['last_at'][:10]}")
    emit(rows, [Col("Provider", "provider"), Col("Instance", "instance_type"), Col("Region", "region"),
                Col("Zone", "zone"), Col("Tier", "tier"), Col("Unit", "unit"),
                Col("Fetches", "n_points", None, "right"), Col("From → to", "_span"),
                Col("First/h", "_first", None, "right"), Col("Last/h", "_last", None, "right"),
                Col("Last/GPU-h", "_last_gpu", None, "right"),
                Col("Range", "_range", None, "right"), Col("Change", "_change", None, "right")],
         fmt, f"{name}: price trend of {len(rows)} offers", "Sorted by currency, then last price per GPU-hour. "
         "Refreshed prices only (see 'gpuplan offers' for the "
         "bundled ones); GPU-only prices (unit gpu-only) exclude the VM they attach to. --points shows every fetch.")


# ---------------------------------------------------------------- models


@app.command(cls=RangedCommand)
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


@app.command(cls=RangedCommand)
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
         i18n.translate(f"source: {detail['source']}"))
    total = detail["params"]["total"]
    rows = [{"part": k, "n": v, "share": f"{100 * v / total:.1f} %"} for k, v in detail["params"].items()
            if v and k not in ("total", "active")]
    rows += [{"part": i18n.translate("total"), "n": total, "share": "100 %"},
             {"part": i18n.translate("active per token"), "n": detail["params"]["active"], "share": ""}]
    emit(rows, [Col(tr("Part"), "part"), Col(tr("Params"), "n", lambda v: f"{v:,}", "right"),
                Col(tr("Share"), "share", None, "right")], "table", tr("Parameter breakdown"),
         "; ".join(detail["notes"]) or None)


# ---------------------------------------------------------------- platforms


@app.command(cls=RangedCommand)
@table_options("platforms")
def platforms(ctx: typer.Context, opts: Opts, json_out: JsonOpt = False, csv_out: CsvOpt = False) -> None:
    """List free and cheap notebook platforms (Kaggle, Colab, AutoDL, ...) with their quotas."""
    market = opts.market
    check_choice("--market", market, MARKETS)
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
        r["_price"] = _platform_price(r)
        r["_quota"] = f"{r['weekly_gpu_hours']:g} GPU-h/week" if r["weekly_gpu_hours"] else "—"
        r["_session"] = f"{r['session_max_hours']:g} h" if r["session_max_hours"] else "—"
    cols = [Col(tr("Platform"), "platform"), Col(tr("Tier"), "tier"), Col(tr("GPU"), "gpu"),
            Col(tr("GPUs"), "gpu_count", _plain_count, "right"), Col(tr("Price"), "_price", None, "right"),
            Col(tr("Quota"), "_quota"), Col(tr("Session"), "_session", None, "right"),
            Col(tr("Guaranteed"), "guaranteed")]
    fmt = _fmt(json_out, csv_out)
    if fmt != "table":
        rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    emit(rows, cols, fmt, f"{tr('Free and cheap platforms')} ({len(rows)})")


def _platform_price(r: dict[str, Any]) -> str:
    """Free only where the data says 0; an empty price is unknown (Colab's pay-as-you-go compute units have no
    published hourly rate), never free."""
    month, hour, cur = r["price_per_month"], r["price_per_hour"], r["currency"]
    if month is None and hour is None:
        return tr("pay per use, rate not published")
    if month:
        return fmt_money(month, cur) + "/month"
    return fmt_money(hour, cur) + "/h" if hour else tr("free")


# ---------------------------------------------------------------- shared job options

ModelArg = Annotated[str, typer.Argument(help="Preset name (see 'gpuplan models'), path to a config.json, or a Hub id "
                                              "(online only).")]


def _duration(text: str, field: str) -> float:
    """A duration with its unit, in range: on the command line a bare number (is 50 seconds or milliseconds?)
    is refused, whatever its form (``50``, ``1e308``, the ``30`` of ``1h30``)."""
    from gpuplan.options import check_range
    from gpuplan.units import parse_seconds

    seconds = parse_seconds(text, field, require_unit=True)
    check_range(field, seconds, f"'{text}'")
    return seconds


def _given(ctx: typer.Context, opts: Opts, *args: str, **values: Any) -> dict[str, Any]:
    """Those of options ``args`` of ``opts`` and of ``values`` (read from them) the user set, on the command line or
    by environment, named and read as the library takes them (:data:`gpuplan.options.OPTIONS`: ``--ttft 2s`` is
    ``ttft_s=2.0``, ``--samples 10k`` is ``samples=10000``); what was left at its default is not passed."""
    from gpuplan.options import option_of_arg
    from gpuplan.units import parse_count

    def set_by_user(name: str) -> bool:
        source = ctx.get_parameter_source(name)
        return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")

    out: dict[str, Any] = {}
    for arg, value in ({a: getattr(opts, a) for a in args} | values).items():
        o = option_of_arg(arg)
        if not set_by_user(arg if arg in ctx.params else _SOURCES[arg]) or value is None:
            continue
        if o.form == "COUNT":
            value = parse_count(value, o.flag) if value else 0.0
        elif o.form == "DURATION":
            value = _duration(value, o.flag)
        out[o.name] = value
    return out


_SOURCES = {"tokens": "dataset_tokens"}  # plan finetune's --dataset-tokens gives the tokens (times the epochs)


def _job(ctx: typer.Context, task: str, command: str, opts: Opts, *args: str, **values: Any) -> Any:
    """The validated job from what the user gave of options ``args`` (and ``values``); the rest take ``command``'s
    defaults."""
    from gpuplan.requests import make_job

    return make_job(task, command=command, **_given(ctx, opts, *args, **values))


# ---------------------------------------------------------------- estimate


@app.command(cls=RangedCommand)
@table_options("estimate")
def estimate(ctx: typer.Context, model: ModelArg, opts: Opts, json_out: JsonOpt = False) -> None:
    """Memory per GPU (breakdown), time or speed, error band and assumptions for one configuration."""
    from gpuplan.requests import estimate_config

    cat = _catalog(ctx)
    m = cat.model(model)
    g = cat.gpu(opts.gpu)
    job = _job(ctx, opts.task, "estimate", opts, "method", "samples", "tokens_per_sample", "epochs", "tokens",
               "seq_len", "prompt", "output", "batch", "requests", "quant", "lora_rank", "lora_targets",
               "train_embeddings")
    e = estimate_config(m, g, job, **_given(ctx, opts, "tp", "pp", "n_gpus", "zero", "micro_batch", "grad_accum",
                                            "recompute", "precision", "optimizer", "framework", "prefix_len",
                                            "mtp_layers", "engine", "kv_dtype"))
    from gpuplan.present import show_estimate

    show_estimate(e, json_out)
    if not e.fits or (e.job.task is Task.SERVE and not e.replicas):
        raise typer.Exit(1)  # as a plan that finds nothing: scripts see that this configuration cannot run it


# ---------------------------------------------------------------- plan

plan_app = typer.Typer(cls=RootGroup, no_args_is_help=True,
                       help="Rank GPU + offer choices for a job by cost, time or value.")
app.add_typer(plan_app, name="plan")

# the table's options, as fit and buy take them
CsvOut = Annotated[bool, typer.Option("--csv", callback=_machine_output, help="Print the ranked plans as CSV.")]
ExportOpt = Annotated[str | None, typer.Option("--export", help="Also write the pick as skypilot (task YAML), vllm or "
                                                               "sglang (server command) or k8s (manifest).")]
OutOpt = Annotated[str | None, typer.Option("--out", help="File for --export (default: print it); for plan serve, "
                                                       "an existing folder gets one file per fleet group.")]


def _constraints(opts: Opts, engine: str = "vllm", quant: str | None = None) -> Any:
    """The plan's constraints from the options of ``opts`` (a plan command's)."""
    from gpuplan.estimate.runners import engine_choice
    from gpuplan.listing import parse_tiers
    from gpuplan.plan.planner import Constraints
    from gpuplan.types import Market, Objective, choice
    from gpuplan.units import parse_currency, parse_money

    market, currency, budget, deadline = opts.market, opts.currency, opts.budget, opts.deadline
    where = choice(Market, market, "--market") if market else None
    cur = parse_currency(currency, "--currency") if currency else (where or Market.GLOBAL).currency
    budget_amount = None
    if budget:
        from gpuplan.options import check_range

        amount, unit = parse_money(budget, "--budget")
        check_range("--budget", amount, f"'{budget}'")
        budget_amount = amount if unit in (None, cur) else _catalog_convert(amount, unit, cur)
    return Constraints(market=where, providers=tuple(opts.providers or ()), gpus=tuple(opts.gpus or ()),
                       exclude_gpus=tuple(opts.exclude_gpus or ()), max_gpus=opts.max_gpus, budget=budget_amount,
                       deadline_s=_duration(deadline, "--deadline") if deadline else None, spot=opts.spot,
                       currency=cur, engine=engine_choice(engine), quant=quant,
                       objective=choice(Objective, opts.objective, "--objective"), top=opts.top,
                       tiers=parse_tiers(opts.tier or ()))


def _catalog_convert(amount: float, unit: str, to: str) -> float:
    from gpuplan.catalog import load_catalog

    return load_catalog().convert(amount, unit, to)


def _run_plan(ctx: typer.Context, model: str, job: Any, c: Any, json_out: bool, csv_out: bool,
              compare_buy: bool = False, hours_per_month: float | None = None, export: str | None = None,
              out: str | None = None) -> None:
    from gpuplan.plan.planner import plan
    from gpuplan.present import show_plan

    if out is not None and not export:
        raise InputError("--out", "--out names the file --export writes, and no --export was given.",
                         "add --export skypilot (or vllm, sglang, k8s), or drop --out.")
    if out is not None:
        check_path("--out", out)
    cat = _catalog(ctx)
    m = cat.model(model)
    result = plan(cat, m, job, c)
    if not export:
        show_plan(cat, result, _fmt(json_out, csv_out), compare_buy, hours_per_month)
        if result.pick is None and not result.platforms:
            raise typer.Exit(1)  # no plan: the output says why; scripts see a failure
        return
    exported = _export(cat, model, result, export, out)
    if json_out:  # one JSON document on stdout: the plan, and the export inside it
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            show_plan(cat, result, "json", compare_buy, hours_per_month)
        from gpuplan.render import to_json

        sys.stdout.write(to_json({**json.loads(buf.getvalue()), "export": exported}) + "\n")
        return
    if out is None:  # the export is the output (`--export skypilot > task.yaml`), the plan goes to stderr
        with contextlib.redirect_stdout(sys.stderr):
            show_plan(cat, result, _fmt(json_out, csv_out), compare_buy, hours_per_month)
        sys.stdout.write(exported["text"])
        return
    show_plan(cat, result, _fmt(json_out, csv_out), compare_buy, hours_per_month)


def _export(cat: Any, model: str, result: Any, fmt: str, out: str | None) -> dict[str, Any]:
    """The pick (or the best plan ``fmt`` can express) as files engines run: format, plan, text and the same as
    data; written to ``out`` atomically (a temporary file renamed into place) when given."""
    from gpuplan.catalog.models import hub_repo
    from gpuplan.export import document, exportable, render

    if result.pick is None:
        raise InputError("--export", "there is no plan to export.", "relax the constraints until a plan fits.")
    clouds = cat.skypilot_clouds()
    chosen = exportable(result.ranked, fmt, clouds)
    hf_repo = hub_repo(cat, model)
    if chosen is None:  # the reason: the best plan SkyPilot launches (its framework or layout), else the pick's
        from gpuplan.export import skypilot

        reason = next((c for c in result.ranked if skypilot.launchable(c, clouds)), result.pick)
        render(reason if fmt == "skypilot" else result.pick, fmt, hf_repo, clouds)
        raise InputError("--export", f"none of the {len(result.ranked)} plans is one SkyPilot launches.",
                         f"add --provider with one of: {', '.join(sorted(clouds))}.")
    if chosen is not result.pick:
        try:
            render(result.pick, fmt, hf_repo, clouds)
            why = ""
        except InputError as err:
            why = f" ({err.message.removeprefix('--export: ')})"
        typer.echo(i18n.translate(f"note: the pick ({result.pick.label()}) cannot be exported to SkyPilot as "
                                  f"planned{why}; exporting the best plan that can: {chosen.label()}"), err=True)
    text = render(chosen, fmt, hf_repo, clouds)
    exported: dict[str, Any] = {"format": fmt, "plan": chosen.label(), "text": text,
                                "document": document(chosen, fmt, hf_repo, clouds)}
    if out is not None:
        _write_atomic(out, text)
        exported["path"] = out
    return exported


def _write_atomic(out: str, text: str) -> None:
    import os
    import tempfile
    from pathlib import Path

    target = Path(out)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError("--out", f"the folder '{folder}' does not exist.", "create it first, or write elsewhere.")
    if target.is_dir():
        raise InputError("--out", f"'{target}' is a folder.", "give a file name, e.g. task.yaml.")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gpuplan-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)  # atomic: a reader never sees half a file
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError("--out", f"cannot write '{target}' ({exc.strerror}).",
                         "check the path and its permissions.") from None
    typer.echo(i18n.translate(f"wrote {target}"), err=True)


@plan_app.command("finetune", cls=RangedCommand)
@table_options("plan finetune")
def plan_finetune(ctx: typer.Context, model: ModelArg, opts: Opts, export: ExportOpt = None, out: OutOpt = None,
                  json_out: JsonOpt = False, csv_out: CsvOut = False) -> None:
    """Plan a fine-tuning run from the dataset size (samples × tokens per sample × epochs)."""
    if opts.dataset_tokens and (opts.samples or opts.tokens_per_sample):
        raise InputError("--dataset-tokens", "give the dataset either as tokens or as samples × tokens per sample, "
                         "not both.", "drop --dataset-tokens, or --samples and --tokens-per-sample.")
    hours_per_month = opts.hours_per_month
    if hours_per_month is not None and not opts.compare_buy:
        raise InputError("--hours-per-month", "it sets the use assumed by rent-vs-buy.",
                         "add --compare-buy, or drop --hours-per-month.")
    if hours_per_month is not None:
        from gpuplan.plan.buy import check_hours_per_month

        check_hours_per_month(hours_per_month)
    job = _job(ctx, "finetune", "plan", opts, "method", "samples", "tokens_per_sample", "epochs", "seq_len",
               "lora_rank", "lora_targets", "quant", "global_batch", "framework", "train_embeddings",
               tokens=_scaled(opts.dataset_tokens, opts.epochs))
    _run_plan(ctx, model, job, _constraints(opts), json_out, csv_out, opts.compare_buy, hours_per_month, export, out)


def _scaled(tokens: str | None, epochs: float) -> str | None:
    if not tokens:
        return None
    from gpuplan.options import check_range
    from gpuplan.units import parse_count

    n_tokens = parse_count(tokens, "--dataset-tokens")
    check_range("--dataset-tokens", n_tokens, f"'{tokens}'")
    return str(n_tokens * epochs)


@plan_app.command("pretrain", cls=RangedCommand)
@table_options("plan pretrain")
def plan_pretrain(ctx: typer.Context, model: ModelArg, opts: Opts, export: ExportOpt = None, out: OutOpt = None,
                  json_out: JsonOpt = False, csv_out: CsvOut = False) -> None:
    """Plan pretraining on a token budget (multi-node: NVLink inside a node, an assumed 400 Gb/s per GPU between)."""
    job = _job(ctx, "pretrain", "plan", opts, "tokens", "seq_len", "global_batch", "framework")
    _run_plan(ctx, model, job, _constraints(opts), json_out, csv_out, export=export, out=out)


@plan_app.command("infer", cls=RangedCommand)
@table_options("plan infer")
def plan_infer(ctx: typer.Context, model: ModelArg, opts: Opts, export: ExportOpt = None, out: OutOpt = None,
               json_out: JsonOpt = False, csv_out: CsvOut = False) -> None:
    """Plan a batch-inference job: requests × (prompt + output) tokens, continuously batched."""
    job = _job(ctx, "infer", "plan", opts, "prompt", "output", "batch", "requests", "quant")
    _run_plan(ctx, model, job, _constraints(opts, opts.engine, opts.quant), json_out, csv_out, export=export, out=out)


@plan_app.command("serve", cls=RangedCommand)
@table_options("plan serve")
def plan_serve(ctx: typer.Context, model: ModelArg, opts: Opts, export: ExportOpt = None, out: OutOpt = None,
               json_out: JsonOpt = False) -> None:
    """Plan a serving fleet that stays up: the cheapest mix of GPU types, zones and on-demand/spot that meets the
    latency targets at peak with the largest failure domain lost, its expected availability and cost per token."""
    from gpuplan.listing import parse_tiers
    from gpuplan.plan.serving import Targets, parse_buckets, parse_percentiles, plan_serving, serve_request
    from gpuplan.plan.traffic import parse_profile
    from gpuplan.present_serving import show_serving

    if out is not None and not export:
        raise InputError("--out", "--out names the file --export writes, and no --export was given.",
                         "add --export skypilot (or vllm, sglang, k8s), or drop --out.")
    check_choice("--market", opts.market, ("cn", "global"))
    check_choice("--users", opts.users, ("cn", "global"))
    cur = _currency(opts.currency, opts.market)
    targets = Targets(*(_duration(text, flag) if text else None for text, flag in (
        (opts.ttft, "--ttft"), (opts.ttft_p99, "--ttft-p99"), (opts.tpot, "--tpot"), (opts.tpot_p99, "--tpot-p99"))))
    if opts.bucket and opts.percentile:
        raise InputError("--percentile", "both --bucket and --percentile were given.",
                         "describe the request sizes one way: buckets or percentiles.")
    sizes = (parse_percentiles(opts.percentile) if opts.percentile
             else parse_buckets(opts.bucket or (), opts.prompt, opts.output))
    request = serve_request(
        opts.rps, opts.peak_rps, sizes, targets, opts.availability,
        profile=parse_profile(opts.profile) if opts.profile is not None else None, tolerate=opts.tolerate,
        market=opts.market, users=opts.users, providers=tuple(opts.providers or ()), regions=tuple(opts.region or ()),
        gpus=tuple(opts.gpus or ()), exclude_gpus=tuple(opts.exclude_gpus or ()), spot=opts.spot,
        allow_marketplace=opts.allow_marketplace, tiers=parse_tiers(opts.tier or ()), prefix_hit=opts.prefix_hit,
        engine=opts.engine, quant=opts.quant, currency=cur, budget_per_hour=_money(opts.budget, "--budget", cur),
        max_instances_per_offer=opts.max_per_offer, adapters=opts.adapters, adapter_rank=opts.adapter_rank,
        guard=opts.guard, guard_mode=opts.guard_mode)
    cat = _catalog(ctx)
    m = cat.model(model)
    result = plan_serving(cat, m, request)
    if out is not None:
        check_path("--out", out)
    if not export:
        show_serving(result, "json" if json_out else "table")
        if result.fleet is None:
            raise typer.Exit(1)
        return
    exported, result = _serve_export(cat, model, result, export, out, json_out)
    if json_out:  # one JSON document on stdout: the fleet and the export of every group
        from gpuplan.render import to_json

        sys.stdout.write(to_json({**result.as_dict(), "export": exported}) + "\n")
        return
    if out is None:  # the export is the output (`--export skypilot > task.yaml`), the plan goes to stderr
        with contextlib.redirect_stdout(sys.stderr):
            show_serving(result, "table")
        sys.stdout.write(exported["text"])
        return
    show_serving(result, "table")


def _currency(currency: str | None, market: str | None) -> str:
    from gpuplan.units import parse_currency

    return parse_currency(currency, "--currency") if currency else ("CNY" if market == Market.CN else "USD")


def _money(text: str | None, field: str, currency: str) -> float | None:
    from gpuplan.options import check_range
    from gpuplan.units import parse_money

    if not text:
        return None
    amount, unit = parse_money(text, field)
    check_range(field, amount, f"'{text}'")
    return amount if unit in (None, currency) else _catalog_convert(amount, unit, currency)


SKYPILOT_REPLANS = 3  # rounds of planning the fleet again without what SkyPilot cannot launch


def _serve_export(cat: Any, model: str, result: Any, fmt: str, out: str | None, json_out: bool
                  ) -> tuple[dict[str, Any], Any]:
    """Export every group of the fleet (gpuplan.export.fleet): (the export, the plan exported). For skypilot, a
    fleet with a group SkyPilot cannot launch is planned again on the providers SkyPilot has clouds for, with a
    note; when that fleet cannot be written either, the reason is the error."""
    from gpuplan.catalog.models import hub_repo
    from gpuplan.export import fleet

    if result.fleet is None:
        raise InputError("--export", "there is no fleet to export.", "relax the constraints until a fleet fits.")
    m = cat.model(model)
    ref = hub_repo(cat, model) or m.name
    clouds = cat.skypilot_clouds()
    try:
        exported = fleet.export(result, m, ref, fmt, clouds, cat)
    except InputError as err:
        if fmt != "skypilot":
            raise
        result = _skypilot_fleet(cat, m, result, clouds, err)
        exported = fleet.export(result, m, ref, fmt, clouds, cat)
    exported = _with_guard(cat, result, exported, fmt)
    _write_export(exported, fmt, out, json_out)
    return exported, result


def _with_guard(cat: Any, result: Any, exported: dict[str, Any], fmt: str) -> dict[str, Any]:
    """The export with the guard model's server command (gpuplan.export.guard): ``guard`` in the JSON; one more
    file (a second command) for the server formats. The YAML ones run the guard in their documents (a second
    container or server of every replica, or the guard fleet's own groups); where they cannot (MIG slices on
    SkyPilot) its command is a comment after the last group."""
    from gpuplan.export.guard import append_to_text, guard_export, guard_file

    guard = guard_export(cat, result)
    if guard is None:
        return exported
    files = [dict(f) for f in exported["files"]]
    if fmt in ("vllm", "sglang"):
        files.append(guard_file(guard))
    elif not exported.get("guard_in_documents"):
        files[-1]["text"] = append_to_text(files[-1]["text"], fmt, guard)
    return {**exported, "files": files, "guard": guard}


def _skypilot_fleet(cat: Any, m: Any, result: Any, clouds: Any, err: InputError) -> Any:
    """The fleet planned again without what SkyPilot cannot launch: providers it has no cloud for, and GPUs its
    registry lists on none of the clouds the fleet used (a few rounds, each leaving out what the last fleet
    needed and SkyPilot lacks)."""
    from dataclasses import replace

    from gpuplan.export import registry
    from gpuplan.plan.serving import plan_serving

    r = result.request
    again = result
    providers = tuple(p for p in clouds if not r.providers or p in r.providers)
    excluded = tuple(r.exclude_gpus)
    def groups(plan: Any) -> list[Any]:  # the main fleet's groups and a guard fleet's (its own SkyServe services)
        own = plan.guard.fleet.groups if plan.guard is not None and plan.guard.fleet is not None else ()
        return [*plan.fleet.groups, *own]

    for _ in range(SKYPILOT_REPLANS):
        bad = {g.config.gpu for g in groups(again) if g.provider in clouds and
               registry.skypilot_accelerator(g.config.gpu, clouds[g.provider]) is None}
        excluded += tuple(sorted(bad))
        again = plan_serving(cat, m, replace(r, providers=providers, exclude_gpus=excluded))
        if again.fleet is None:
            raise err
        if all(g.provider in clouds and registry.skypilot_accelerator(g.config.gpu, clouds[g.provider])
               for g in groups(again)):
            break
    was, now = fmt_money(result.fleet.cost_per_hour, r.currency), fmt_money(again.fleet.cost_per_hour, r.currency)
    typer.echo(i18n.translate(f"note: the fleet cannot be exported to SkyPilot as planned "
                              f"({err.message.removeprefix('--export: ')}); exporting the cheapest fleet SkyPilot "
                              f"launches instead: {now}/h (was {was}/h)"), err=True)
    return again


def _write_export(exported: dict[str, Any], fmt: str, out: str | None, json_out: bool) -> None:
    """``text`` (the whole export on standard output, or in ``out``) or, when ``out`` is a folder, one file per
    group (``paths``). SkyPilot's ``sky serve up`` loads one service per file, so a fleet of several SkyPilot
    groups is written to a folder (or read from the JSON's ``files``)."""
    from pathlib import Path

    files = exported["files"]
    ext = ".yaml" if fmt in ("k8s", "skypilot") else ".sh"
    if out is not None and Path(out).is_dir():
        exported["paths"] = []
        for f in files:
            target = str(Path(out) / (f["name"] + ext))
            _write_atomic(target, f["text"])
            exported["paths"].append(target)
        exported["text"] = ("---\n" if fmt == "skypilot" else "\n").join(f["text"] for f in files)
        return
    if fmt == "skypilot" and len(files) > 1 and (out is not None or not json_out):
        raise InputError("--out", f"the fleet has {len(files)} groups, and `sky serve up` loads one service per "
                         "file (a file of several YAML documents is a pipeline, which it refuses).",
                         "give --out an existing folder: one file per group is written there (or add --json).")
    between = "---\n" if fmt == "skypilot" else "\n"  # a YAML stream of the services (the JSON's text)
    exported["text"] = between.join(f["text"] for f in files)
    if out is not None:
        _write_atomic(out, exported["text"])
        exported["path"] = out


# ---------------------------------------------------------------- fit, compare, buy


@app.command(cls=RangedCommand)
@table_options("fit")
def fit(ctx: typer.Context, model: ModelArg, opts: Opts, json_out: JsonOpt = False) -> None:
    """Which card for this model: the smallest GPU configurations per use case (inference 16/8/4-bit, LoRA,
    QLoRA, full fine-tuning), with the memory each needs."""
    from gpuplan.listing import match_gpus
    from gpuplan.plan.fitting import fit_table
    from gpuplan.present import show_fit

    cat = _catalog(ctx)
    pool = [cat.gpus[n] for n in sorted(match_gpus(cat, opts.gpus))] if opts.gpus else None
    show_fit(cat.model(model), fit_table(cat, cat.model(model), pool, opts.context), json_out)


@app.command(cls=RangedCommand)
@table_options("compare")
def compare(ctx: typer.Context, gpu_a: Annotated[str, typer.Argument(help="First GPU.")],
            gpu_b: Annotated[str, typer.Argument(help="Second GPU.")], opts: Opts, json_out: JsonOpt = False) -> None:
    """Relative training and inference speed of two GPUs for a model, from the estimators."""
    from gpuplan.plan.fitting import compare as run_compare
    from gpuplan.present import show_compare

    cat = _catalog(ctx)
    a, b = cat.gpu(gpu_a, "GPU_A"), cat.gpu(gpu_b, "GPU_B")
    show_compare(run_compare(cat, a, b, cat.model(opts.model)), a.name, b.name, json_out)


@app.command(cls=RangedCommand)
@table_options("buy")
def buy(ctx: typer.Context, opts: Opts,
        model: Annotated[str | None, typer.Argument(help="Optional model: price the smallest rentable GPUs that "
                                                         "fine-tune it with LoRA and serve it in 16-bit.")] = None,
        json_out: JsonOpt = False) -> None:
    """Rent or buy: owning cost per month, renting cost per month, and the break-even hours per month."""
    from gpuplan.plan.buy import electricity_price, ownership
    from gpuplan.present import show_buy
    from gpuplan.types import Market, choice
    from gpuplan.units import parse_currency

    market, currency, n_gpus = opts.market, opts.currency, opts.n_gpus
    where = choice(Market, market, "--market") if market else None
    cur = parse_currency(currency, "--currency") if currency else (where or Market.GLOBAL).currency
    cat = _catalog(ctx)
    price = electricity_price(cat, opts.electricity, cur)
    configs = [(cat.gpu(g), n_gpus) for g in opts.gpu or ()]
    if model:
        configs += _buy_configs(cat, cat.model(model), market)
    if not configs:
        raise InputError("--gpu", "nothing to price.", "give --gpu NAME (repeatable) or a MODEL.")
    rows = [ownership(cat, g, n, opts.hours_per_month, market, cur, opts.years, opts.pue, price) for g, n in configs]
    show_buy(rows, json_out)


def _buy_configs(cat: Any, m: Any, market: str) -> list[tuple[Any, int]]:
    """Smallest configurations that LoRA-fine-tune and serve ``m`` in 16-bit, among parts sold in the market
    and with a purchase price."""
    from gpuplan.plan.fitting import fit_table

    priced = {p.gpu for p in cat.purchase_prices}
    pool = [g for g in cat.gpus.values() if g.name in priced and (market != Market.CN or g.sold_in_china)]
    out: list[tuple[Any, int]] = []
    for row in fit_table(cat, m, pool, per_case=2):
        if row.use_case in ("LoRA fine-tune", "inference 16-bit"):
            out += [(e.gpu, e.n_gpus) for e in row.options if (e.gpu, e.n_gpus) not in out]
    return out


@app.command(cls=RangedCommand)
@table_options("web")
def web(ctx: typer.Context, opts: Opts) -> None:
    """Serve the HTTP API (/api/...) and the web page with charts (needs: pip install 'gpuplan\\[web]')."""
    from gpuplan.web import check_serve_options, serve

    host, token = opts.host, opts.token
    settings: Options = ctx.obj or Options()
    warning = check_serve_options(host, token)
    _catalog(ctx)  # a bad --catalog is reported now, and rows it replaces are named
    if warning:
        typer.secho(f"warning: {warning}", fg="yellow", err=True)
    # a server lives on: its requests' garbage is the collector's to free (main() pauses it); a caller that had it
    # off gets it back off when the server stops
    was_on = gc.isenabled()
    gc.enable()
    try:
        serve(host, opts.port, settings.catalog_dirs, token, opts.workers)
    finally:
        if not was_on:
            gc.disable()


# ---------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> None:
    """Console entry point: library errors and usage errors become ``error: …`` / ``To fix: …`` on stderr
    and exit status 2, anything unexpected an ``internal error`` line and status 3; never a traceback
    (``GPUPLAN_DEBUG=1`` shows it). :data:`EXIT_CODES` lists every status."""
    # the click that typer runs on (typer vendors its own copy): its exception classes
    clicks = sys.modules[typer.BadParameter.__module__]
    no_args = getattr(clicks, "NoArgsIsHelpError", ())
    # the language is known before click parses anything: help and usage errors are in it, and so are error
    # lines of --json and --csv (whose output is English)
    args = sys.argv[1:] if argv is None else argv
    lang = i18n.lang_of_argv(args)
    try:
        args = lang_first(args)
        # the collector held off while the command runs: what a command imports and builds lives until it ends
        # (modules, classes, the catalog, estimates), so its passes free nothing (~1 % of a plan's process CPU)
        with collector_paused(), i18n.using(lang), help_in(lang, args) as command:
            result = command.main(args=args, prog_name="gpuplan", standalone_mode=False)
    except GpuplanError as err:
        with i18n.using(lang):
            _fail(*err.in_language())
    except no_args as err:  # bare `gpuplan` or `gpuplan plan`: the help, as a successful run
        err.show()
        sys.exit(0)
    except clicks.UsageError as err:
        path = err.ctx.command_path if err.ctx else "gpuplan"
        with i18n.using(lang):
            _fail(i18n.translate(err.format_message()), i18n.translate(f"see '{path} --help' for the options."))
    except (getattr(clicks, "Abort", KeyboardInterrupt), KeyboardInterrupt):
        sys.exit(130)
    except BrokenPipeError:  # `gpuplan … | head`: the reader left; nothing to report
        _silence_stdout()
        sys.exit(0)
    except clicks.ClickException as err:
        with i18n.using(lang):
            _fail(i18n.translate(err.format_message()), "")
    except Exception as err:  # a bug: say so in one line, with what to do
        import os

        if os.environ.get("GPUPLAN_DEBUG"):
            raise
        with i18n.using(lang):
            _fail(i18n.translate(f"internal error ({type(err).__name__}: {err}); this is a bug in gpuplan."),
                  i18n.translate("please report it with the command line; GPUPLAN_DEBUG=1 shows the traceback."),
                  status=3)
    if isinstance(result, int) and result:
        sys.exit(result)


def lang_first(argv: Sequence[str]) -> list[str]:
    """``argv`` with every ``--lang X`` / ``--lang=X`` moved before the command: ``--lang`` is an option of
    ``gpuplan`` itself, given anywhere on the line (``gpuplan plan finetune … --lang zh``); the last one wins, as
    for any repeated option. Nothing after ``--`` is touched."""
    found: list[str] = []
    rest: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg == "--lang":
            if i + 1 == len(args):
                raise InputError("--lang", "the option needs a language.", "use --lang en or --lang zh (zh-CN).")
            found = args[i:i + 2]
            i += 2
            continue
        if arg.startswith("--lang="):
            found = [arg]
        else:
            rest.append(arg)
        i += 1
    return found + rest


_ROOT_VALUED = ("--catalog", "--lang")  # the root options that take a value


def _named(typer_app: typer.Typer, name: str) -> typer.Typer | None:
    """``typer_app`` with only its command or group ``name`` (None when it has no such one)."""
    commands = [c for c in typer_app.registered_commands
                if (c.name or typer.main.get_command_name(c.callback.__name__ if c.callback else "")) == name]
    groups = [g for g in typer_app.registered_groups if g.name == name]
    if not commands and not groups:
        return None
    pruned = copy.copy(typer_app)
    pruned.registered_commands, pruned.registered_groups = commands, groups
    return pruned


def command_tree(argv: Sequence[str]) -> typer.Typer:
    """The app to build for ``argv``: with only the command it names (``plan finetune``: the plan group with only
    finetune), since typer builds every command's options and help before click parses the line (a third of a
    millisecond each, 60 functions); the whole app when no command is named exactly (``--help``, a misspelt command:
    the help lists them all, the error suggests one)."""
    words = []
    args = iter(argv)
    for arg in args:
        if arg == "--":
            break
        if arg in _ROOT_VALUED:
            next(args, None)
        elif not arg.startswith("-"):
            words.append(arg)
            if len(words) == 2:
                break
    pruned = _named(app, words[0]) if words else None
    if pruned is None:
        return app
    if pruned.registered_groups and len(words) == 2:
        group = pruned.registered_groups[0]
        sub = _named(group.typer_instance, words[1]) if group.typer_instance else None
        if sub is not None:
            pruned.registered_groups = [copy.copy(group)]
            pruned.registered_groups[0].typer_instance = sub
    return pruned


@contextlib.contextmanager
def help_in(lang: str, argv: Sequence[str] = ()) -> Iterator[Any]:
    """The click command tree of ``gpuplan`` (of the command ``argv`` names, when it names one:
    :func:`command_tree`) with every command's and option's help in ``lang``, and the words typer puts around them
    (panel titles, [default: …], [required]) in it while the block runs (restored after it)."""
    command = typer.main.get_command(command_tree(argv) if argv else app)
    if lang != "zh":
        yield command
        return
    import typer.rich_utils as rich_help  # 0.1 s of imports (rich's markdown): only for Chinese help

    names = ("ARGUMENTS_PANEL_TITLE", "OPTIONS_PANEL_TITLE", "COMMANDS_PANEL_TITLE", "ERRORS_PANEL_TITLE",
             "DEFAULT_STRING", "REQUIRED_LONG_STRING", "ENVVAR_STRING", "DEPRECATED_STRING", "ABORTED_TEXT",
             "_make_rich_text")
    saved = {name: getattr(rich_help, name) for name in names}
    with i18n.using(lang):
        for name in names[:-1]:
            setattr(rich_help, name, tr(saved[name]))
        rich_help._make_rich_text = _folding(saved["_make_rich_text"])  # type: ignore[attr-defined]
        translate_help(command)
    try:
        yield command
    finally:
        for name, value in saved.items():
            setattr(rich_help, name, value)


def _folding(make: Any) -> Any:
    """typer's help text, folded where a line has no space to break at (Chinese), rather than cut with '…'."""

    def folded(**kwargs: Any) -> Any:
        text = make(**kwargs)
        if hasattr(text, "overflow"):
            text.overflow = "fold"
        return text

    return folded


def translate_help(command: Any) -> None:
    """Put the help of ``command``, its options and its subcommands in the current language, in place."""
    command.help = i18n.help_text(command.help)
    command.short_help = i18n.help_text(command.short_help)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = i18n.help_text(param.help)
    for sub in getattr(command, "commands", {}).values():
        translate_help(sub)


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _fail(message: str, fix: str, status: int = 2) -> None:
    colon = i18n.say(": ", "：")
    typer.secho(f"{tr('error')}{colon}{clip_echo(message)}", fg="red", err=True)
    if fix:
        typer.echo(f"{tr('To fix')}{colon}{clip_echo(fix)}", err=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
