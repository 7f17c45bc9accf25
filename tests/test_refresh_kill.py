"""A refresh killed with SIGKILL at random moments, many times over, loses no committed row and leaves no
half-written batch (issue 13, part 5). Each run forks a child that refreshes every source in a loop against
the recorded responses; the parent kills it after a random delay and then checks the store: SQLite's
integrity check, every batch holding exactly the rows it promised with the prices of the recorded answers,
and every batch of the earlier runs still there, row for row."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from gpuplan.catalog import load_catalog
from gpuplan.market import store
from gpuplan.market.refresh import refresh

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "refresh"))
import serve

RUNS = 100
MAX_DELAY_S = 0.25
REGIONS: tuple[str, ...] = ()  # each provider's default regions

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")


def _refresh_forever(path: Path) -> None:
    catalog = load_catalog(refreshed=False)
    while True:
        refresh(catalog, regions=REGIONS, client=serve.client(), env=serve.ENV, path=path, sleep=lambda s: None)


def _batches(path: Path) -> dict[int, tuple[str, frozenset[tuple[object, ...]]]]:
    if not path.exists():
        return {}
    with sqlite3.connect(path) as con:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'batch'").fetchone():
            return {}  # killed while the first refresh made the file, before its schema committed
        providers = dict(con.execute("SELECT id, provider FROM batch"))
        rows: dict[int, set[tuple[object, ...]]] = {b: set() for b in providers}
        for b, *row in con.execute("SELECT batch_id, instance_type, region, tier, price_per_hour FROM price"):
            rows[b].add(tuple(row))
        for b, *row in con.execute("SELECT batch_id, date, base, quote, rate FROM fx"):
            rows[b].add(tuple(row))
    return {b: (providers[b], frozenset(r)) for b, r in rows.items()}


def test_sigkill_at_random_points_loses_no_committed_row_and_leaves_no_partial_batch(tmp_path: Path) -> None:
    reference = tmp_path / "reference.sqlite"
    refresh(load_catalog(refreshed=False), regions=REGIONS, client=serve.client(), env=serve.ENV, path=reference,
            sleep=lambda s: None)
    expected = {provider: rows for provider, rows in _batches(reference).values()}
    assert len(expected) == 9

    path, rng = tmp_path / "prices.sqlite", random.Random(13)
    before: dict[int, tuple[str, frozenset[tuple[object, ...]]]] = {}
    grew = 0
    for _ in range(RUNS):
        pid = os.fork()
        if pid == 0:  # the child: refresh until killed
            try:
                _refresh_forever(path)
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0, MAX_DELAY_S))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL

        after = _batches(path)
        assert not store.check(path)
        store.latest(path)  # readable after any kill: a store is never left looking corrupt
        assert all(after.get(b) == content for b, content in before.items())  # nothing committed was lost
        assert all(rows == expected[provider] for provider, rows in after.values())  # no partial batch
        grew += len(after) > len(before)
        before = after
    assert grew > 0 and len(before) >= grew  # the check is not vacuous: runs did commit batches before dying
