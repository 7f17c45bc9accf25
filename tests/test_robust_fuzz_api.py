"""Schemathesis over the HTTP API's own OpenAPI document, in-process (ASGI, no network): requests generated
from each operation's schema never get a 5xx, and every response has a documented status and conforms to the
documented schema (the error shape for 400/401/413/422, enums of the catalog's names).

CI runs ``GPUPLAN_FUZZ_EXAMPLES`` (default 150) examples per operation from a fixed seed, so a CI run is
repeatable; ``GPUPLAN_FUZZ_RANDOM=1`` draws new inputs each run, which is how the long search runs:
``GPUPLAN_FUZZ_RANDOM=1 GPUPLAN_FUZZ_EXAMPLES=12000 python -m pytest -s tests/test_robust_fuzz_api.py`` (``-s``
prints how many requests were sent per operation and their statuses: an operation with few inputs, such as a GET
without parameters, is exhausted by far fewer).

A 503 is the documented answer of a plan that needs more than the request's work budget (3 s here): on a slow or
busy machine any large plan may get it, so it is accepted when its body is that answer; every other 5xx fails
with the request that caused it."""

from __future__ import annotations

import importlib.util
import os
import warnings
from collections import Counter
from collections.abc import Iterator

import pytest

if importlib.util.find_spec("schemathesis") is None or importlib.util.find_spec("fastapi") is None:
    pytest.skip("API fuzzing needs schemathesis and fastapi (pip install -e '.[test,web]')", allow_module_level=True)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import schemathesis
    from hypothesis import HealthCheck, settings
    from schemathesis import Case, CheckContext, Response
    from schemathesis.checks import (
        content_type_conformance,
        not_a_server_error,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

from gpuplan.web.app import create_app

EXAMPLES = int(os.environ.get("GPUPLAN_FUZZ_EXAMPLES", "150"))
RANDOM = os.environ.get("GPUPLAN_FUZZ_RANDOM") == "1"
BUDGET_S = 3.0
# a budget well inside the client's 10 s read timeout, so a bounded request answers 503 before the client gives up
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(plan_budget_s=BUDGET_S))


SENT: Counter[tuple[str, int]] = Counter()  # (operation, status) of every request sent, reported at the end


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    by_op: Counter[str] = Counter()
    for (op, _), n in SENT.items():
        by_op[op] += n
    statuses: Counter[int] = Counter()
    for (_, status), n in SENT.items():
        statuses[status] += n
    print(f"\nAPI fuzz: {sum(SENT.values())} requests, statuses {dict(sorted(statuses.items()))}; per operation "
          f"{dict(sorted(by_op.items()))}")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not RANDOM,
          suppress_health_check=list(HealthCheck))
def test_no_server_error_and_every_response_as_documented(case: Case) -> None:
    # not "positive data acceptance": a schema-valid request may still be refused with a 400 that names the
    # field (a count without its unit, a combination that cannot work); the 400 is documented and checked
    response = case.call_and_validate(checks=CHECKS)
    SENT[(f"{case.method.upper()} {case.path}", response.status_code)] += 1


def no_server_error_but_the_budget(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """Schemathesis's ``not_a_server_error``, except the documented 503 of a plan past its work budget."""
    if response.status_code == 503 and "s of work a request may take here" in response.json().get("error", ""):
        return True
    return not_a_server_error(ctx, response, case)


CHECKS = [no_server_error_but_the_budget, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]
