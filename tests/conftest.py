"""Shared fixtures: the bundled catalog, a runner for the real command line, and data-file readers.

The tests assert on the *bundled* data (scenario tests, whose expected pick depends on prices, on a frozen copy of
its market tables: ``frozen_catalog``), so a ``GPUPLAN_CATALOG`` set in the developer's shell is removed for
this process (tests that exercise it set it themselves with ``monkeypatch``), and the price store is an empty
folder of the test run's own.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from gpuplan.catalog import BUNDLED_DIR, Catalog, load_catalog

os.environ.pop("GPUPLAN_CATALOG", None)
# ... and prices refreshed into the developer's own price store never reach them: an empty data folder
os.environ["GPUPLAN_DATA_DIR"] = tempfile.mkdtemp(prefix="gpuplan-test-data-")
# ... and the catalogs cached between processes are this run's own (the first CLI process builds one)
os.environ["GPUPLAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpuplan-test-cache-")
os.environ["GPUPLAN_OFFLINE"] = "1"  # no test uses the network: 'gpuplan refresh' refuses, Hub ids are refused

REPO = Path(__file__).resolve().parent.parent
# torchtune's export tests run in an interpreter of their own, with torchao on its path (test_export_frameworks.py)
collect_ignore = [] if os.environ.get("GPUPLAN_TORCHTUNE") else ["isolated_torchtune"]
TESTS_DATA = Path(__file__).resolve().parent / "data"
# a copy of the bundled market tables (offers, providers, platforms, purchase prices, FX), frozen: its README
MARKET_SNAPSHOT = Path(__file__).resolve().parent / "fixtures" / "market_snapshot"


@pytest.fixture(autouse=True)
def _language_of_the_process() -> Any:
    """Each test starts with no language chosen: a command invoked in-process sets it for the process, as a CLI
    process does (``--json`` and ``--csv`` choose English, ``--lang`` its language), and a test after it must not
    read that choice."""
    from gpuplan import i18n

    token = i18n._lang.set("")
    yield
    i18n._lang.reset(token)


# Estimators are pure and fast, but the first call of a run loads the catalog; no per-example deadline.
# HYPOTHESIS_PROFILE=thorough runs many more examples when hunting for a rare counterexample.
settings.register_profile("gpuplan", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", settings.get_profile("gpuplan"), max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gpuplan"))


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f))


MODEL_INDEX = read_csv(BUNDLED_DIR / "models" / "index.csv")
PRESET_NAMES = [row["name"] for row in MODEL_INDEX]


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def calibration_cases() -> tuple[list[Any], list[Any]]:
    """bench/calib.py's ``all_cases()``: the calibration cases and the rows it could not map, built once for the
    run (building them reads every calibration table, about 8 s of CPU, and five test modules read them)."""
    bench = str(REPO / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    from calib import all_cases

    return all_cases()


@pytest.fixture(scope="session")
def frozen_catalog() -> Catalog:
    """The bundled GPUs and models with the frozen market snapshot's prices: for scenario tests, whose expected
    pick depends on prices, so that an update of the bundled prices cannot change it."""
    return load_catalog(market=MARKET_SNAPSHOT)


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m gpuplan ARGS`` in a fresh interpreter, as a user runs it (exit status, stdout, stderr)."""
    base = {k: v for k, v in os.environ.items() if k not in ("GPUPLAN_CATALOG", "COLUMNS")}
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], capture_output=True, text=True,
                          env={**base, **(env or {})}, cwd=REPO, timeout=120)


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """With GPUPLAN_FAIL_ON_SKIP=1 (scripts/test.sh sets it) a skipped test fails: a check that CI cannot run
    because a dependency is missing must not pass silently."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("GPUPLAN_FAIL_ON_SKIP") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped, which counts as a failure in the full check: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    """The same for a whole module skipped while it is collected (``pytest.skip(..., allow_module_level=True)``, as
    the browser tests do without chromium): under GPUPLAN_FAIL_ON_SKIP=1 it is a collection error, not a skip."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("GPUPLAN_FAIL_ON_SKIP") == "1" and report.skipped:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"{collector.nodeid} skipped, which counts as a failure in the full check: {reason}"
