"""The HTTP API and the page: a thin skin over the library, like the CLI.

Every endpoint calls the same functions as the matching CLI command and returns the dict its ``--json``
prints (units in the keys); the page at ``/`` only renders what the API returns (datasette's JSON twin).
Errors: every :class:`~gpuplan.errors.GpuplanError` becomes HTTP 400 with ``{"error", "field", "fix"}`` and the
same in Chinese (``error_zh``, ``fix_zh``), request-validation errors take the same shape (400 for a value out of
range or not among the choices, 422 for a wrong type or a missing field), anything else is a 500 with the same
shape; never a traceback.

Field names are the CLI's option names with ``_`` for ``-``; the library names options as the CLI spells
them (``--seq-len``), so :func:`api_words` rewrites those to API field names (``seq_len``) in errors.

Bounded work: :class:`~gpuplan.web.guard.Guard` refuses bodies over 1 MiB (413), every number has the CLI's
range, lists and texts have a length limit (:mod:`gpuplan.web.models`), a plan may take
:data:`PLAN_BUDGET_S` seconds of work (503 past it, saying what to narrow), and errors echo at most 200
characters of a value. Identical plan requests are answered from a cache (:data:`PLAN_CACHE_SIZE` entries,
renewed daily). The OpenAPI document describes the error responses and declares the fields that take
catalog names (GPUs, models, providers, formats, frameworks) as enums of the catalog the server reads.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import re
from collections.abc import Callable, Collection
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi import Path as Path_
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from gpuplan import __version__
from gpuplan.catalog import Catalog, load_catalog
from gpuplan.catalog.models import find_preset
from gpuplan.catalog.schemas import PRICINGS
from gpuplan.errors import (
    ECHO_CHARS,
    BudgetError,
    GpuplanError,
    InputError,
    UnknownNameError,
    clip_echo,
    close_matches,
)
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.frameworks import frameworks
from gpuplan.estimate.job import JobEstimate
from gpuplan.estimate.quant import weight_formats
from gpuplan.i18n import EN, LANGS, TEMPLATES, ZH, using, zh_sentence
from gpuplan.listing import (
    GPU_SORTS,
    OFFER_SORTS,
    gpu_row,
    list_gpus,
    list_offers,
    match_gpus,
    model_detail,
    model_rows,
    resolve_providers,
)
from gpuplan.options import EVERYWHERE, OPTIONS, RANGES, check_range, of_stage, refuse_inapplicable
from gpuplan.plan.buy import electricity_price, ownership
from gpuplan.plan.fitting import compare, fit_table
from gpuplan.plan.guard import names as guard_names
from gpuplan.plan.planner import OBJECTIVES, Constraints, plan, work_budget
from gpuplan.plan.serving import GUARD_MODES
from gpuplan.plan_text import serving_costs
from gpuplan.render import to_jsonable
from gpuplan.requests import estimate_config, make_job
from gpuplan.types import (
    ENGINES,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    RECOMPUTE,
    TASKS,
    Gpu,
    Job,
    ModelSpec,
    Objective,
    Task,
)
from gpuplan.units import CURRENCIES, parse_bytes, parse_count
from gpuplan.web.guard import MAX_BODY_BYTES, Guard
from gpuplan.web.models import (
    MAX_NAMES,
    MAX_TEXT,
    ErrorBody,
    EstimateRequest,
    Market,
    PlanRequest,
    ServeRequestBody,
    Text,
    query_options,
)

STATIC_DIR = Path(__file__).resolve().parent / "static"
Row = dict[str, Any]


# ---------------------------------------------------------------- the app


PLAN_CACHE_SIZE = 512
PLAN_BUDGET_S = 10.0  # wall time one plan request may take; past it the answer is 503 with what to narrow


def create_app(catalog_dirs: tuple[str, ...] = (), allowed_hosts: tuple[str, ...] | None = None,
               token: str | None = None, max_body_bytes: int = MAX_BODY_BYTES,
               plan_budget_s: float = PLAN_BUDGET_S) -> FastAPI:
    """The API under ``/api`` and the page at ``/``; the catalog is read on the first request (cached).
    ``allowed_hosts`` (None: any) and ``token`` (None: none) are checked on every request (``gpuplan web``
    passes the loopback names when it listens on loopback); a plan request may take ``plan_budget_s`` seconds
    of work (503 past it)."""
    app = FastAPI(title="gpuplan", version=__version__, docs_url=None, redoc_url=None,  # those load a CDN
                  description="Which GPU, where, how many, how long, at what cost. See docs/web.md.")
    app.state.catalog_dirs = tuple(catalog_dirs)
    app.state.plans = _plan_cache(tuple(catalog_dirs), plan_budget_s)
    app.state.plan_budget_s = plan_budget_s
    app.include_router(router)
    app.add_exception_handler(BudgetError, _budget_error)
    app.add_exception_handler(GpuplanError, _library_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
    app.add_api_route("/", _index, include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.add_middleware(Guard, allowed_hosts=allowed_hosts, token=token,  # type: ignore[arg-type]
                       max_body_bytes=max_body_bytes)
    app.openapi = functools.partial(_openapi, app)  # type: ignore[method-assign]
    return app


ENV_CATALOG, ENV_HOSTS, ENV_TOKEN = "GPUPLAN_WEB_CATALOG", "GPUPLAN_WEB_HOSTS", "GPUPLAN_WEB_TOKEN"


def app_from_env() -> FastAPI:
    """The app a uvicorn worker process builds (``gpuplan web --workers N``): catalog folders, allowed Host
    names and token from the environment :func:`gpuplan.web.serve` sets."""
    import os

    dirs = tuple(d for d in os.environ.get(ENV_CATALOG, "").split(os.pathsep) if d)
    hosts = tuple(h for h in os.environ.get(ENV_HOSTS, "").split(",") if h) or None
    return create_app(dirs, allowed_hosts=hosts, token=os.environ.get(ENV_TOKEN) or None)


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with the error shape for 400/401/413/422 and the name fields as enums of the
    catalog this server reads (built once, on the first request for it)."""
    if app.openapi_schema is None:
        doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        names = _catalog_names(load_catalog(app.state.catalog_dirs))
        for schema in doc.get("components", {}).get("schemas", {}).values():
            for field, prop in schema.get("properties", {}).items():
                _declare_enum(prop, names.get(field))
        for path, item in doc.get("paths", {}).items():
            for operation in item.values():
                for param in operation.get("parameters", []):
                    choices = _SORTS.get(path) if param["name"] == "sort" else names.get(param["name"])
                    _declare_enum(param.get("schema", {}), choices)
        app.openapi_schema = doc
    return app.openapi_schema


_SORTS = {"/api/gpus": GPU_SORTS, "/api/offers": OFFER_SORTS}


def _catalog_names(cat: Catalog) -> dict[str, tuple[str, ...]]:
    """Field name → the catalog names it takes (GPU fields also take aliases and family names, which the
    document does not list; models also take their Hugging Face repository id)."""
    gpus = tuple(sorted(cat.gpus))
    models = tuple(sorted(cat.models))
    providers = tuple(cat.providers())
    return {"gpu": gpus, "gpus": gpus, "exclude_gpus": gpus, "a": gpus, "b": gpus, "model": models,
            "name": models, "providers": providers, "provider": providers,
            "vendor": tuple(sorted({g.vendor for g in cat.gpus.values()})),
            "quant": tuple(weight_formats()), "framework": tuple(sorted(frameworks())), "guard": guard_names()}


def _declare_enum(schema: dict[str, Any], choices: tuple[str, ...] | None) -> None:
    """Add ``enum`` to the string part of ``schema`` (a string, an array of strings, or either or null)."""
    if not choices:
        return
    for part in [schema, *schema.get("anyOf", [])]:
        if part.get("type") == "string":
            part["enum"] = list(choices)
        elif part.get("type") == "array" and part.get("items", {}).get("type") == "string":
            part["items"]["enum"] = list(choices)


def _index() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html")


def catalog(request: Request) -> Catalog:
    return load_catalog(request.app.state.catalog_dirs)


_ERROR = {"model": ErrorBody}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {**_ERROR, "description": "A value is wrong: out of range, not among the choices, an unknown name, or a "
                                   "combination that cannot work. `field` names it; `fix` says what to send."},
    401: {**_ERROR, "description": "The server was started with a token and the request lacks it."},
    404: {**_ERROR, "description": "No such endpoint (a name in the path with a line break in it matches none)."},
    413: {**_ERROR, "description": f"The body is larger than {MAX_BODY_BYTES // 1024} KiB."},
    422: {**_ERROR, "description": "The body is not JSON, a field has the wrong type, or a required one is missing."},
}
Cat = Annotated[Catalog, Depends(catalog)]
Q = SimpleNamespace  # the table's query parameters of an endpoint (gpuplan.web.models.query_options)


class TwinRoute(APIRoute):
    """A route whose answer is written as the CLI's ``--json`` writes the same result (:func:`gpuplan.render.
    to_jsonable`: a non-finite number is null); the endpoint's return type still describes it in the OpenAPI
    document."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        @functools.wraps(endpoint)
        def written(*args: Any, **kw: Any) -> Any:
            answer = endpoint(*args, **kw)
            return answer if isinstance(answer, Response) else JSONResponse(to_jsonable(answer))

        super().__init__(path, written, **kwargs)


router = APIRouter(prefix="/api", responses=ERROR_RESPONSES, route_class=TwinRoute)


# ---------------------------------------------------------------- listings


@router.get("/gpus")
@query_options("gpus")
def gpus(cat: Cat, q: Q) -> list[Row]:
    """``gpuplan gpus --json``; ``min_memory`` like ``48GB``."""
    memory = parse_bytes(q.min_memory, "--min-memory") if q.min_memory else None
    check_range("--min-memory", memory, f"'{q.min_memory}'")
    found = list_gpus(cat, market=q.market, min_memory_bytes=memory, vendor=q.vendor, segment=q.segment, sort=q.sort)
    return [gpu_row(g) for g in found]


@router.get("/offers")
@query_options("offers")
def offers(cat: Cat, q: Q) -> list[Row]:
    """``gpuplan offers --json``: cheapest per GPU-hour first; ``exact`` matches GPU names without variants."""
    if q.provider:
        resolve_providers(cat, q.provider, "provider")
    views = list_offers(cat, gpus=q.gpu or (), exact=q.exact, market=q.market, currency=q.currency, spot=q.spot,
                        providers=q.provider or (), sort=q.sort, tiers=q.tier or ())
    return [v.row() for v in (views[:q.limit] if q.limit else views)]


@router.get("/models")
def models(cat: Cat, q: Text = "") -> list[Row]:
    """``gpuplan models QUERY --json``."""
    return model_rows(cat, q)


@router.get("/models/{name:path}")
def model_info(cat: Cat, name: Annotated[str, Path_(max_length=MAX_TEXT)]) -> Row:
    """``gpuplan model NAME --json``."""
    return model_detail(cat, preset_model(cat, name, "name").name)


@router.get("/platforms")
@query_options("platforms")
def platforms(cat: Cat, q: Q) -> list[Row]:
    """``gpuplan platforms --json``."""
    return [asdict(p) for p in cat.platforms if q.market is None or p.market == q.market]


@router.get("/history")
@query_options("history")
def history(cat: Cat, q: Q) -> Row:
    """``gpuplan history --json``: per offer, the first, last, lowest and highest refreshed price of ``gpu``."""
    from gpuplan.catalog.schemas import PRICINGS
    from gpuplan.errors import check_choice
    from gpuplan.market.history import series
    from gpuplan.market.overlay import prices_note
    from gpuplan.market.store import history as stored

    gpu, provider, region, tier = q.gpu, q.provider, q.region, q.tier
    check_choice("tier", tier, PRICINGS)
    name = cat.gpu(gpu, "gpu").name
    providers = sorted(resolve_providers(cat, provider, "provider")) if provider else []
    rows = [r for r in stored(name, providers, region or ()) if tier is None or r.tier == tier]
    return {"gpu": name, "prices": prices_note(cat), "series": [s.as_dict() for s in series(rows)]}


@router.get("/meta")
def meta(cat: Cat) -> Row:
    """Version, catalog sizes, calibration date, languages, the choices of each enum field, and the Chinese
    labels and sentence templates of :mod:`gpuplan.i18n`: the one catalogue of the CLI and the page."""
    counts = {"gpus": len(cat.gpus), "offers": len(cat.offers), "providers": len(cat.providers()),
              "models": len(cat.models), "platforms": len(cat.platforms)}
    choices = {"task": TASKS, "method": METHODS, "engine": ENGINES, "precision": PRECISIONS,
               "optimizer": OPTIMIZERS, "recompute": RECOMPUTE, "objective": OBJECTIVES, "market": ("cn", "global"),
               "currency": CURRENCIES, "quant": tuple(weight_formats()), "gpu_sort": GPU_SORTS,
               "offer_sort": OFFER_SORTS, "tier": PRICINGS, "guard": guard_names(), "guard_mode": GUARD_MODES}
    return {"version": __version__, "counts": counts, "calibration": {"fitted_on": fitted().fitted_on},
            "languages": list(LANGS), "labels": {"zh": ZH, "en": EN}, "templates": {"zh": TEMPLATES},
            "choices": choices}


# ---------------------------------------------------------------- computations


@router.post("/estimate")
def estimate(req: EstimateRequest, cat: Cat) -> Row:
    """``gpuplan estimate --json``: memory breakdown, time or speed, band and assumptions."""
    m, g = preset_model(cat, req.model), cat.gpu(req.gpu)
    with using("en"):  # JSON values are English whatever the server's locale
        return config_estimate(req, m, g).as_dict()


@router.post("/plan", responses={503: {**_ERROR, "description": f"The plan needs more than the server's budget "
                                      f"of work per request ({PLAN_BUDGET_S:g} s by default); `fix` says what to "
                                      "narrow. Retry-After is not sent: the same request fails the same way."}})
def plan_job(req: PlanRequest, request: Request) -> Row:
    """``gpuplan plan TASK --json``: ranked choices, Pareto front, explanation, platforms, suggestions."""
    plans: Callable[[str, tuple[str, ...], dt.date], Row] = request.app.state.plans
    return plans(req.model_dump_json(), sent(req), dt.date.today())


def plan_dict(req: PlanRequest, cat: Catalog, budget_s: float | None = None,
              given: Collection[str] | None = None) -> Row:
    """The plan's JSON; with ``budget_s``, BudgetError once planning takes longer than that. ``given``: the
    fields the client sent (default: those ``req`` was made from)."""
    given = sent(req) if given is None else given
    model, job = preset_model(cat, req.model), job_from(req, "plan", given)
    constraints = constraints_from(req, cat, given)
    with work_budget(budget_s) if budget_s else contextlib.nullcontext(), using("en"):  # English JSON values
        result = plan(cat, model, job, constraints, alternatives_too=req.alternatives)
    data = result.as_dict()
    if req.task == Task.SERVE:
        data["serving"] = [serving_costs(x) for x in result.ranked]
    return data


@router.post("/serve", responses={503: {**_ERROR, "description": f"The fleet needs more than the server's budget "
                                        f"of work per request ({PLAN_BUDGET_S:g} s by default); `fix` says what "
                                        "to narrow."}})
def serve_plan(req: ServeRequestBody, cat: Cat, request: Request) -> Row:
    """``gpuplan plan serve --json``: the fleet at peak and at the mean rate, the best single-GPU-type fleet,
    cost per hour and per million tokens, expected availability, routing and assumptions. A request that cannot
    be planned (availability ≥ 100, a p99 target below its p50, an unknown region ...) is a 400 naming the
    field; a request no fleet serves is a 200 with ``fleet`` null and ``nothing_fits`` saying why."""
    from gpuplan.plan.serving import Bucket, Targets, parse_buckets, percentile_buckets, plan_serving, serve_request

    if req.buckets and req.percentiles:
        raise InputError("--percentile", "both --bucket and --percentile were given.",
                         "describe the request sizes one way: buckets or percentiles.")
    buckets = (tuple(Bucket(b.prompt, b.output, b.share) for b in req.buckets) if req.buckets
               else percentile_buckets([(x.percentile, x.prompt, x.output) for x in req.percentiles])
               if req.percentiles else parse_buckets((), req.prompt, req.output))
    targets = Targets(req.ttft_s, req.ttft_p99_s, req.tpot_s, req.tpot_p99_s)
    currency = req.currency or ("CNY" if req.market == Market.CN else "USD")
    r = serve_request(req.rps, req.peak_rps, buckets, targets, req.availability, profile=req.profile,
                      tolerate=req.tolerate,
                      market=req.market, users=req.users, providers=tuple(req.providers), regions=tuple(req.regions),
                      gpus=tuple(req.gpus), exclude_gpus=tuple(req.exclude_gpus), spot=req.spot,
                      allow_marketplace=req.allow_marketplace, tiers=tuple(dict.fromkeys(req.tiers)),
                      prefix_hit=req.prefix_hit, engine=req.engine,
                      quant=req.quant, currency=currency, budget_per_hour=req.budget,
                      max_instances_per_offer=req.max_per_offer, adapters=req.adapters,
                      adapter_rank=req.adapter_rank, guard=req.guard,
                      guard_mode=req.guard_mode)
    with work_budget(request.app.state.plan_budget_s):
        return plan_serving(cat, preset_model(cat, req.model), r).as_dict()


def _plan_cache(catalog_dirs: tuple[str, ...], budget_s: float) -> Callable[[str, tuple[str, ...], dt.date], Row]:
    """Plans by request (its canonical JSON, and the fields sent that the library reads as given: :func:`sent`)
    and day (offer ages change daily): a repeated request is answered without planning again. Errors are not
    cached."""

    @functools.lru_cache(maxsize=PLAN_CACHE_SIZE)
    def cached(body: str, given: tuple[str, ...], day: dt.date) -> Row:
        return plan_dict(PlanRequest.model_validate_json(body), load_catalog(catalog_dirs), budget_s, given)

    return cached


@router.get("/fit/{model:path}")
@query_options("fit")
def fit(cat: Cat, model: Annotated[str, Path_(max_length=MAX_TEXT)], q: Q) -> Row:
    """``gpuplan fit MODEL --json``: smallest configurations per use case."""
    m = preset_model(cat, model)
    pool = [cat.gpus[n] for n in sorted(match_gpus(cat, q.gpus, "gpus"))] if q.gpus else None
    return {"model": m.name, "rows": [r.as_dict() for r in fit_table(cat, m, pool, q.context)]}


@router.get("/compare")
@query_options("compare")
def compare_gpus(cat: Cat, a: Text, b: Text, q: Q) -> Row:
    """``gpuplan compare A B --model M --json``."""
    return compare(cat, cat.gpu(a, "a"), cat.gpu(b, "b"), preset_model(cat, q.model)).as_dict()


@router.get("/buy")
@query_options("buy")  # gpu is required here; the command line can price the GPUs for a model instead
def buy(cat: Cat, gpu: Annotated[list[Annotated[str, Query(max_length=MAX_TEXT)]], Query(min_length=1,
                                                                                          max_length=MAX_NAMES)],
        q: Q) -> list[Row]:
    """``gpuplan buy --json``: own versus rent, and the break-even hours per month."""
    cur = q.currency or ("CNY" if q.market == Market.CN else "USD")
    power = electricity_price(cat, q.electricity, cur)
    return [ownership(cat, cat.gpu(g), q.n_gpus, q.hours_per_month, q.market, cur, q.years, q.pue, power).as_dict()
            for g in gpu]


# ---------------------------------------------------------------- request → library objects


def preset_model(cat: Catalog, name: str, field: str = "model") -> ModelSpec:
    """A bundled (or user-catalog) preset. Paths and Hub ids stay CLI-only: over HTTP they would make the
    server read its files or the network on a client's behalf."""
    entry = find_preset(cat, name)
    if entry is None:
        raise UnknownNameError(field, "model", name, list(cat.models), "gpuplan models")
    return cat.model(entry.name, field)


def count(value: float | str | None, field: str) -> float:
    """A positive count from ``10000`` or ``"10k"``; absent is 0."""
    if value is None:
        return 0.0
    n = parse_count(value, field)
    if n <= 0:
        raise InputError(field, f"{n:g} must be greater than 0.", "give a positive number, e.g. 10k.")
    return n


def sent(req: EstimateRequest | PlanRequest) -> tuple[str, ...]:
    """The fields of ``req`` the client sent that the library reads as given (the job's and the configuration's,
    and those that apply to some tasks only): two requests of one JSON and these plan alike."""
    names = {o.name for o in OPTIONS if {"job", "layout"} & set(o.stages) or (o.stages and o.applies != EVERYWHERE)}
    return tuple(sorted(n for n in names & req.model_fields_set if getattr(req, n) is not None))


def job_from(req: EstimateRequest | PlanRequest, command: str, given: Collection[str]) -> Job:
    """The :class:`Job` the CLI's options make (``gpuplan.requests.make_job``) from the fields the client sent
    (``given``); the rest take ``command``'s defaults (``plan``: those of ``gpuplan plan TASK``)."""
    values = {o.name: getattr(req, o.name) for o in of_stage("job") if o.name in given}
    for o in of_stage("job"):
        if o.form == "COUNT" and o.name in values:
            values[o.name] = count(values[o.name], o.name)
    return make_job(req.task, command=command, **values)


def constraints_from(req: PlanRequest, cat: Catalog, given: Collection[str]) -> Constraints:
    """The :class:`Constraints` of ``cli._constraints``; ``budget`` is in ``budget_currency`` (default: the
    plan's currency, which is CNY for ``market: cn`` and USD otherwise)."""
    refuse_inapplicable("plan", given, task=req.task)  # no engine in training, no deadline in serving
    cur = req.currency or Market(req.market or Market.GLOBAL).currency
    budget = None if req.budget is None else cat.convert(req.budget, req.budget_currency or cur, cur)
    return Constraints(market=req.market, providers=tuple(req.providers), gpus=tuple(req.gpus),
                       exclude_gpus=tuple(req.exclude_gpus), max_gpus=req.max_gpus, budget=budget,
                       deadline_s=req.deadline_s, spot=req.spot, currency=cur, engine=req.engine,
                       quant=req.quant if not req.task.is_training else None,
                       objective=req.objective or Objective.COST, top=req.top,
                       tiers=tuple(dict.fromkeys(req.tiers)))


def config_estimate(req: EstimateRequest, m: ModelSpec, g: Gpu) -> JobEstimate:
    """``gpuplan.requests.estimate_config`` with the fields the client sent (the ``estimate`` command)."""
    given = sent(req)
    layout = {o.name: getattr(req, o.name) for o in of_stage("layout") if o.name in given}
    return estimate_config(m, g, job_from(req, "estimate", given), **layout)


# ---------------------------------------------------------------- errors


def api_field(option: str | None) -> str | None:
    """``--seq-len`` → ``seq_len``; ``--prompt/--output`` → ``prompt``."""
    if not option:
        return None
    name = option.split("/")[0].lstrip("-").replace("-", "_").lower()
    return _API_NAMES.get(name, name) or None


# durations carry their unit in the API; list options are plural there
_API_NAMES = {"ttft": "ttft_s", "tpot": "tpot_s", "deadline": "deadline_s", "ttft_p99": "ttft_p99_s",
              "tpot_p99": "tpot_p99_s", "region": "regions", "bucket": "buckets",
              "percentile": "percentiles"}
_CLI_NAMES = {api: f"--{cli}" for cli, api in _API_NAMES.items()}


def api_words(text: str) -> str:
    """CLI options named in a message or fix, as API fields: ``use --seq-len 2048`` → ``use seq_len 2048``."""
    return re.sub(r"(?<![\w-])--([a-z][a-z0-9-]*)", lambda m: api_field(m.group(0)) or "", text)


def error_response(status: int, message: str, field: str | None, fix: str,
                   chinese: tuple[str, str] | None = None) -> JSONResponse:
    """The error shape, its text in English and (``error_zh``/``fix_zh``) in Chinese: ``chinese``, else the
    catalogue's translation; values the client sent are echoed at most :data:`ECHO_CHARS` characters long."""
    shown = None if field is None else field[:ECHO_CHARS]
    message_zh, fix_zh = chinese or (zh_sentence(message), zh_sentence(fix))
    return JSONResponse({"error": clip_echo(message), "field": shown, "fix": clip_echo(fix),
                         "error_zh": clip_echo(message_zh), "fix_zh": clip_echo(fix_zh)}, status_code=status)


def _budget_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BudgetError)
    return error_response(503, exc.message, None, exc.fix, exc.in_chinese())


def _library_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, GpuplanError)
    option = getattr(exc, "field", None)
    message = exc.message
    message_zh, fix_zh = exc.in_chinese()
    if option and message.startswith(option + ": "):
        message = f"{api_field(option)}: {message[len(option) + 2:]}"
        message_zh = f"{api_field(option)}：{message_zh.removeprefix(option + '：')}"
    return error_response(400, api_words(message), api_field(option), api_words(exc.fix),
                          (api_words(message_zh), api_words(fix_zh)))


# pydantic error types that mean "wrong type or shape" (422); the rest mean "a value out of range" (400)
_SHAPE_ERRORS = ("missing", "json_invalid", "model_type", "model_attributes_type")


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    first = errors[0]
    field = _loc_field(first["loc"])
    shape = first["type"] in _SHAPE_ERRORS or first["type"].endswith(("_type", "_parsing"))
    message = "; ".join(f"{_loc_field(e['loc']) or 'request'}: {e['msg']}" for e in errors)
    message_zh = "；".join(f"{_loc_field(e['loc']) or '请求'}：{_pydantic_zh(e['msg'])}" for e in errors)
    fix, fix_zh = _validation_fix(first, field)
    return error_response(422 if shape else 400, message, field, fix, (message_zh, fix_zh))


def _loc_field(loc: tuple[Any, ...]) -> str | None:
    names = [str(p) for p in loc[1:] if isinstance(p, str)] if loc and loc[0] in ("body", "query", "path") \
        else [str(p) for p in loc if isinstance(p, str)]
    return names[0] if names else None


def _pydantic_zh(msg: str) -> str:
    """A pydantic message in Chinese, the choices it lists (``'full', 'lora' or 'qlora'``, ``0, 1, 2 or 3``) joined
    the Chinese way."""
    listed = re.sub(r"(['\d]), (?=['\d])", r"\1、", zh_sentence(msg))
    return re.sub(r"(?<=['\d]) or (?=['\d])", " 或 ", listed)


def _validation_fix(error: dict[str, Any], field: str | None) -> tuple[str, str]:
    """The fix for a validation error, in English and in Chinese."""
    ctx = error.get("ctx") or {}
    kind = error["type"]
    if kind == "extra_forbidden":
        known = set(EstimateRequest.model_fields) | set(PlanRequest.model_fields) | set(ServeRequestBody.model_fields)
        hint = close_matches(field or "", known, 1)
        fix = f"remove '{field}'" + (f"; did you mean '{hint[0]}'?" if hint else " (see docs/web.md).")
        return fix, zh_sentence(fix)
    fixes = {"literal_error": f"use {ctx.get('expected')}.", "greater_than": f"give a number above {ctx.get('gt')}.",
             "greater_than_equal": f"give {ctx.get('ge')} or more.", "missing": f"add '{field}'.",
             "less_than_equal": f"give {ctx.get('le')} or less.", "string_too_short": "give a non-empty value.",
             "too_short": "give at least one value.", "json_invalid": "send a JSON object."}
    if field is None:
        fix = fixes.get(kind, "send a JSON object with the fields in docs/web.md.")
        return fix, zh_sentence(fix)
    limits = RANGES.get(_CLI_NAMES.get(field, "--" + field.replace("_", "-")))
    if kind in ("greater_than", "greater_than_equal", "less_than_equal") and limits is not None:
        # the two halves translated apart: as one sentence, "give a number above {gt}." would take the rest as {gt}
        fix = f"{fixes[kind][:-1]}: {field} takes {limits.text()}."
        return fix, f"{zh_sentence(fixes[kind]).removesuffix('。')}：{field} 的取值为 {zh_sentence(limits.text())}。"
    if kind in fixes:
        return fixes[kind], _pydantic_zh(fixes[kind])
    fix = f"check '{field}': {error['msg'][:1].lower()}{error['msg'][1:]}."
    return fix, f"请检查 '{field}'：{_pydantic_zh(error['msg'])}。"


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    fix = "see docs/web.md for the endpoints, or GET /openapi.json."
    return error_response(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}", None, fix,
                          (f"{request.method} {request.url.path}：{zh_sentence(str(exc.detail))}", zh_sentence(fix)))


def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    return error_response(500, f"internal error ({type(exc).__name__}) in {request.url.path}: a bug in gpuplan.",
                          None, "please report it with the request that caused it.")


__all__ = ["create_app"]
