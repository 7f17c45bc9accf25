"""The HTTP API and the page: a thin skin over the library, like the CLI.

Every endpoint calls the same functions as the matching CLI command and returns the dict its ``--json``
prints (units in the keys); the page at ``/`` only renders what the API returns (datasette's JSON twin).
Errors: every :class:`~gpuplan.errors.GpuplanError` becomes HTTP 400 with ``{"error", "field", "fix"}``,
request-validation errors take the same shape (400 for a value out of range or not among the choices, 422
for a wrong type or a missing field), anything else is a 500 with the same shape; never a traceback.

Field names are the CLI's option names with ``_`` for ``-``; the library names options as the CLI spells
them (``--seq-len``), so :func:`api_words` rewrites those to API field names (``seq_len``) in errors.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from gpuplan import __version__
from gpuplan.catalog import Catalog, load_catalog
from gpuplan.catalog.models import find_preset
from gpuplan.errors import GpuplanError, InputError, UnknownNameError, close_matches
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.job import JobEstimate
from gpuplan.estimate.quant import weight_formats
from gpuplan.i18n import LANGS, ZH
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
from gpuplan.plan.buy import ownership
from gpuplan.plan.fitting import compare, fit_table
from gpuplan.plan.planner import OBJECTIVES, Constraints, plan
from gpuplan.present import serving_costs
from gpuplan.requests import FOR_INFERENCE, estimate_config, make_job, refuse_given
from gpuplan.types import ENGINES, METHODS, OPTIMIZERS, PRECISIONS, RECOMPUTE, TASKS, Gpu, Job, ModelSpec
from gpuplan.units import CURRENCIES, parse_bytes, parse_count
from gpuplan.web.models import Currency, EstimateRequest, JobFields, Market, PlanRequest, Segment

STATIC_DIR = Path(__file__).resolve().parent / "static"
Row = dict[str, Any]


# ---------------------------------------------------------------- the app


def create_app(catalog_dirs: tuple[str, ...] = ()) -> FastAPI:
    """The API under ``/api`` and the page at ``/``; the catalog is read on the first request (cached)."""
    app = FastAPI(title="gpuplan", version=__version__, docs_url=None, redoc_url=None,  # those load a CDN
                  description="Which GPU, where, how many, how long, at what cost. See docs/web.md.")
    app.state.catalog_dirs = tuple(catalog_dirs)
    app.include_router(router)
    app.add_exception_handler(GpuplanError, _library_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
    app.add_api_route("/", _index, include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def _index() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html")


def catalog(request: Request) -> Catalog:
    return load_catalog(request.app.state.catalog_dirs)


Cat = Annotated[Catalog, Depends(catalog)]
Names = Annotated[list[str] | None, Query()]
router = APIRouter(prefix="/api")


# ---------------------------------------------------------------- listings


@router.get("/gpus")
def gpus(cat: Cat, market: Market | None = None, min_memory: str | None = None, vendor: str | None = None,
         segment: Segment | None = None, sort: str = "name") -> list[Row]:
    """``gpuplan gpus --json``; ``min_memory`` like ``48GB``."""
    memory = parse_bytes(min_memory, "min_memory") if min_memory else None
    found = list_gpus(cat, market=market, min_memory_bytes=memory, vendor=vendor, segment=segment, sort=sort)
    return [gpu_row(g) for g in found]


@router.get("/offers")
def offers(cat: Cat, gpu: Names = None, exact: bool = False, market: Market | None = None,
           currency: Currency | None = None, spot: bool | None = None, provider: Names = None,
           sort: str = "gpu-price", limit: Annotated[int, Query(ge=0, description="0: all")] = 40) -> list[Row]:
    """``gpuplan offers --json``: cheapest per GPU-hour first; ``exact`` matches GPU names without variants."""
    if provider:
        resolve_providers(cat, provider, "provider")
    views = list_offers(cat, gpus=gpu or (), exact=exact, market=market, currency=currency, spot=spot,
                        providers=provider or (), sort=sort)
    return [v.row() for v in (views[:limit] if limit else views)]


@router.get("/models")
def models(cat: Cat, q: str = "") -> list[Row]:
    """``gpuplan models QUERY --json``."""
    return model_rows(cat, q)


@router.get("/models/{name:path}")
def model_info(cat: Cat, name: str) -> Row:
    """``gpuplan model NAME --json``."""
    return model_detail(cat, preset_model(cat, name, "name").name)


@router.get("/platforms")
def platforms(cat: Cat, market: Market | None = None) -> list[Row]:
    """``gpuplan platforms --json``."""
    return [asdict(p) for p in cat.platforms if market is None or p.market == market]


@router.get("/meta")
def meta(cat: Cat) -> Row:
    """Version, catalog sizes, calibration date, languages, the choices of each enum field, and the Chinese
    labels of :mod:`gpuplan.i18n` (the page uses them for breakdown parts)."""
    counts = {"gpus": len(cat.gpus), "offers": len(cat.offers), "providers": len(cat.providers()),
              "models": len(cat.models), "platforms": len(cat.platforms)}
    choices = {"task": TASKS, "method": METHODS, "engine": ENGINES, "precision": PRECISIONS,
               "optimizer": OPTIMIZERS, "recompute": RECOMPUTE, "objective": OBJECTIVES, "market": ("cn", "global"),
               "currency": CURRENCIES, "quant": tuple(weight_formats()), "gpu_sort": GPU_SORTS,
               "offer_sort": OFFER_SORTS}
    return {"version": __version__, "counts": counts, "calibration": {"fitted_on": fitted().fitted_on},
            "languages": list(LANGS), "labels": {"zh": ZH}, "choices": choices}


# ---------------------------------------------------------------- computations


@router.post("/estimate")
def estimate(req: EstimateRequest, cat: Cat) -> Row:
    """``gpuplan estimate --json``: memory breakdown, time or speed, band and assumptions."""
    m, g = preset_model(cat, req.model), cat.gpu(req.gpu)
    return config_estimate(req, m, g).as_dict()


@router.post("/plan")
def plan_job(req: PlanRequest, cat: Cat) -> Row:
    """``gpuplan plan TASK --json``: ranked choices, Pareto front, explanation, platforms, suggestions."""
    extra = {"rps": req.rps or 0.0, "ttft_s": req.ttft_s, "tpot_s": req.tpot_s, "global_batch": req.global_batch}
    result = plan(cat, preset_model(cat, req.model), job_from(req, req.task, **extra), constraints_from(req, cat))
    data = result.as_dict()
    if req.task == "serve":
        data["serving"] = [serving_costs(x) for x in result.ranked]
    return data


@router.get("/fit/{model:path}")
def fit(cat: Cat, model: str, context: Annotated[int, Query(gt=0)] = 2048, gpus: Names = None) -> Row:
    """``gpuplan fit MODEL --json``: smallest configurations per use case."""
    m = preset_model(cat, model)
    pool = [cat.gpus[n] for n in sorted(match_gpus(cat, gpus, "gpus"))] if gpus else None
    return {"model": m.name, "rows": [r.as_dict() for r in fit_table(cat, m, pool, context)]}


@router.get("/compare")
def compare_gpus(cat: Cat, a: str, b: str, model: str = "Llama-3.1-8B") -> Row:
    """``gpuplan compare A B --model M --json``."""
    return compare(cat, cat.gpu(a, "a"), cat.gpu(b, "b"), preset_model(cat, model)).as_dict()


@router.get("/buy")
def buy(cat: Cat, gpu: Annotated[list[str], Query(min_length=1)], n_gpus: Annotated[int, Query(gt=0)] = 1,
        hours_per_month: float = 200, market: Market = "global", currency: Currency | None = None) -> list[Row]:
    """``gpuplan buy --json``: own versus rent, and the break-even hours per month."""
    cur = currency or ("CNY" if market == "cn" else "USD")
    return [ownership(cat, cat.gpu(g), n_gpus, hours_per_month, market, cur).as_dict() for g in gpu]


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


def job_from(req: JobFields, task: str, **extra: Any) -> Job:
    """The :class:`Job` the CLI's options make (``gpuplan.requests.make_job``), from request fields."""
    sizes: dict[str, Any] = {"prompt": req.prompt, "output": req.output, "batch": req.batch,
                             "framework": req.framework}
    return make_job(task, method=req.method or "full", samples=count(req.samples, "samples"),
                    tokens_per_sample=count(req.tokens_per_sample, "tokens_per_sample"), epochs=req.epochs,
                    tokens=count(req.tokens, "tokens"), requests=count(req.requests, "requests"),
                    seq_len=req.seq_len, quant=req.quant, lora_rank=req.lora_rank, lora_targets=req.lora_targets,
                    **{k: v for k, v in sizes.items() if v is not None}, **extra)


def constraints_from(req: PlanRequest, cat: Catalog) -> Constraints:
    """The :class:`Constraints` of ``cli._constraints``; ``budget`` is in ``budget_currency`` (default: the
    plan's currency, which is CNY for ``market: cn`` and USD otherwise)."""
    if req.task == "serve" and req.deadline_s is not None:
        raise InputError("deadline_s", "serving runs continuously; a deadline does not apply.",
                         "leave deadline_s out; use ttft_s and tpot_s for latency targets.")
    inference = req.task in ("infer", "serve")
    if not inference:  # the CLI's training plans have no --engine; the API's request model has the field
        refuse_given((("engine", req.engine, "vllm"),), FOR_INFERENCE, f"to task {req.task}")
    cur = req.currency or ("CNY" if req.market == "cn" else "USD")
    budget = None if req.budget is None else cat.convert(req.budget, req.budget_currency or cur, cur)
    return Constraints(market=req.market, providers=tuple(req.providers), gpus=tuple(req.gpus),
                       exclude_gpus=tuple(req.exclude_gpus), max_gpus=req.max_gpus, budget=budget,
                       deadline_s=req.deadline_s, spot=req.spot, currency=cur, engine=req.engine,
                       quant=req.quant if inference else None, objective=req.objective or "cost", top=req.top)


def config_estimate(req: EstimateRequest, m: ModelSpec, g: Gpu) -> JobEstimate:
    """``gpuplan.requests.estimate_config`` with the request's fields (the ``estimate`` command)."""
    return estimate_config(m, g, job_from(req, req.task), tp=req.tp, pp=req.pp, n_gpus=req.n_gpus, zero=req.zero,
                           micro_batch=req.micro_batch, grad_accum=req.grad_accum, recompute=req.recompute,
                           precision=req.precision, optimizer=req.optimizer, framework=req.framework,
                           engine=req.engine,
                           kv_dtype=req.kv_dtype)


# ---------------------------------------------------------------- errors


def api_field(option: str | None) -> str | None:
    """``--seq-len`` → ``seq_len``; ``--prompt/--output`` → ``prompt``."""
    if not option:
        return None
    name = option.split("/")[0].lstrip("-").replace("-", "_").lower()
    return _API_NAMES.get(name, name) or None


_API_NAMES = {"ttft": "ttft_s", "tpot": "tpot_s", "deadline": "deadline_s"}  # durations carry their unit in the API


def api_words(text: str) -> str:
    """CLI options named in a message or fix, as API fields: ``use --seq-len 2048`` → ``use seq_len 2048``."""
    return re.sub(r"(?<![\w-])--([a-z][a-z0-9-]*)", lambda m: api_field(m.group(0)) or "", text)


def error_response(status: int, message: str, field: str | None, fix: str) -> JSONResponse:
    return JSONResponse({"error": message, "field": field, "fix": fix}, status_code=status)


def _library_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, GpuplanError)
    option = getattr(exc, "field", None)
    message = exc.message
    if option and message.startswith(option + ": "):
        message = f"{api_field(option)}: {message[len(option) + 2:]}"
    return error_response(400, api_words(message), api_field(option), api_words(exc.fix))


# pydantic error types that mean "wrong type or shape" (422); the rest mean "a value out of range" (400)
_SHAPE_ERRORS = ("missing", "json_invalid", "model_type", "model_attributes_type")


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    first = errors[0]
    field = _loc_field(first["loc"])
    shape = first["type"] in _SHAPE_ERRORS or first["type"].endswith(("_type", "_parsing"))
    message = "; ".join(f"{_loc_field(e['loc']) or 'request'}: {e['msg']}" for e in errors)
    return error_response(422 if shape else 400, message, field, _validation_fix(first, field))


def _loc_field(loc: tuple[Any, ...]) -> str | None:
    names = [str(p) for p in loc[1:] if isinstance(p, str)] if loc and loc[0] in ("body", "query", "path") \
        else [str(p) for p in loc if isinstance(p, str)]
    return names[0] if names else None


def _validation_fix(error: dict[str, Any], field: str | None) -> str:
    ctx = error.get("ctx") or {}
    kind = error["type"]
    if kind == "extra_forbidden":
        known = set(EstimateRequest.model_fields) | set(PlanRequest.model_fields)
        hint = close_matches(field or "", known, 1)
        return f"remove '{field}'" + (f"; did you mean '{hint[0]}'?" if hint else " (see docs/web.md).")
    fixes = {"literal_error": f"use {ctx.get('expected')}.", "greater_than": f"give a number above {ctx.get('gt')}.",
             "greater_than_equal": f"give {ctx.get('ge')} or more.", "missing": f"add '{field}'.",
             "less_than_equal": f"give {ctx.get('le')} or less.", "string_too_short": "give a non-empty value.",
             "too_short": "give at least one value.", "json_invalid": "send a JSON object."}
    if field is None:
        return fixes.get(kind, "send a JSON object with the fields in docs/web.md.")
    return fixes.get(kind, f"check '{field}': {error['msg'][:1].lower()}{error['msg'][1:]}.")


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}", None,
                          "see docs/web.md for the endpoints, or GET /openapi.json.")


def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    return error_response(500, f"internal error ({type(exc).__name__}) in {request.url.path}: a bug in gpuplan.",
                          None, "please report it with the request that caused it.")


__all__ = ["create_app"]
