"""The local price store: one SQLite file with every refreshed price and FX rate ever fetched.

Each refresh of one provider is one *batch*, written in one transaction together with the row count it
promises, so a refresh killed at any moment leaves either the whole batch or none of it, and never touches an
earlier batch. The file lives in ``$GPUPLAN_DATA_DIR`` or else ``$XDG_DATA_HOME/gpuplan`` (``~/.local/share``).

    batch(id, provider, fetched_at, n_rows, n_fx, source_url)
    price(batch_id, provider, instance_type, gpu, gpu_count, vcpus, ram_gib, region, market, tier,
          unit, price_per_hour, currency, source_url, fetched_at)        unit: instance | gpu-only
    fx(batch_id, date, base, quote, rate, source)
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import astuple, dataclass, fields
from pathlib import Path

from gpuplan.errors import GpuplanError
from gpuplan.types import FxRate

ENV_DIR = "GPUPLAN_DATA_DIR"
FILE_NAME = "prices.sqlite"
SCHEMA_VERSION = 1
UNITS = ("instance", "gpu-only")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batch (
    id INTEGER PRIMARY KEY, provider TEXT NOT NULL, fetched_at TEXT NOT NULL,
    n_rows INTEGER NOT NULL, n_fx INTEGER NOT NULL, source_url TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS price (
    batch_id INTEGER NOT NULL REFERENCES batch(id), provider TEXT NOT NULL, instance_type TEXT NOT NULL,
    gpu TEXT NOT NULL, gpu_count REAL NOT NULL, vcpus REAL, ram_gib REAL, region TEXT NOT NULL,
    market TEXT NOT NULL, tier TEXT NOT NULL, unit TEXT NOT NULL, price_per_hour REAL NOT NULL,
    currency TEXT NOT NULL, source_url TEXT NOT NULL, fetched_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fx (
    batch_id INTEGER NOT NULL REFERENCES batch(id), date TEXT NOT NULL, base TEXT NOT NULL,
    quote TEXT NOT NULL, rate REAL NOT NULL, source TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS price_by_gpu ON price (gpu, provider, fetched_at);
CREATE INDEX IF NOT EXISTS price_by_batch ON price (batch_id);
"""


class StoreError(GpuplanError):
    """The price store cannot be read or written (corrupt, locked, from a newer gpuplan)."""

    def __init__(self, path: Path, problem: str, fix: str) -> None:
        super().__init__(f"price store {path}: {problem}", fix)
        self.path = path


@dataclass(frozen=True, slots=True)
class PriceRow:
    """One fetched price: an instance (or, ``unit='gpu-only'``, one GPU's share billed on top of a VM)."""

    provider: str
    instance_type: str
    gpu: str
    gpu_count: float
    vcpus: float | None
    ram_gib: float | None
    region: str
    market: str  # cn | global
    tier: str  # on-demand | spot | reserved | marketplace
    unit: str  # instance | gpu-only
    price_per_hour: float
    currency: str
    source_url: str
    fetched_at: str  # ISO 8601 UTC, seconds

    @property
    def fetched_date(self) -> dt.date:
        return dt.date.fromisoformat(self.fetched_at[:10])


@dataclass(frozen=True, slots=True)
class Batch:
    id: int
    provider: str
    fetched_at: str
    n_rows: int
    n_fx: int
    source_url: str


_PRICE_COLUMNS = ", ".join(f.name for f in fields(PriceRow))


def data_dir() -> Path:
    """Where gpuplan keeps user data: ``$GPUPLAN_DATA_DIR``, else ``$XDG_DATA_HOME/gpuplan``."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "gpuplan"


def store_path() -> Path:
    return data_dir() / FILE_NAME


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@contextmanager
def _connect(path: Path, create: bool) -> Iterator[sqlite3.Connection]:
    if not create and not path.is_file():
        raise FileNotFoundError(path)
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = sqlite3.connect(path, timeout=30, isolation_level=None)  # transactions are explicit
        with closing(con):
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=FULL")
            _check_version(con, path, create)
            yield con
    except sqlite3.DatabaseError as exc:
        raise StoreError(path, f"cannot be read ({exc}).",
                         f"move the file aside (e.g. mv '{path}' '{path}.broken') and run 'gpuplan refresh' "
                         "again; until then gpuplan uses the bundled prices only.") from None


def _check_version(con: sqlite3.Connection, path: Path, create: bool) -> None:
    version = con.execute("PRAGMA user_version").fetchone()[0]
    if version == 0 and create:
        con.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
    elif version == 0 and not con.execute("SELECT name FROM sqlite_master WHERE name='batch'").fetchone():
        raise sqlite3.DatabaseError("it has no price tables")
    elif version > SCHEMA_VERSION:
        raise StoreError(path, f"was written by a newer gpuplan (schema {version}, this one reads "
                         f"{SCHEMA_VERSION}).", "upgrade gpuplan, or point GPUPLAN_DATA_DIR elsewhere.")


def write_batch(provider: str, rows: Sequence[PriceRow], fx: Sequence[FxRate] = (), source_url: str = "",
                fetched_at: str | None = None, path: Path | None = None) -> int:
    """Store one provider's fetch as one batch in one transaction; returns the batch id."""
    path = path or store_path()
    when = fetched_at or now_utc()
    with _connect(path, create=True) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            cur = con.execute("INSERT INTO batch (provider, fetched_at, n_rows, n_fx, source_url) VALUES (?,?,?,?,?)",
                              (provider, when, len(rows), len(fx), source_url))
            batch_id = int(cur.lastrowid or 0)
            con.executemany(f"INSERT INTO price (batch_id, {_PRICE_COLUMNS}) VALUES (?{',?' * 14})",
                            [(batch_id, *astuple(r)) for r in rows])
            con.executemany("INSERT INTO fx (batch_id, date, base, quote, rate, source) VALUES (?,?,?,?,?,?)",
                            [(batch_id, r.date.isoformat(), r.base, r.quote, r.rate, r.source) for r in fx])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return batch_id


@dataclass(frozen=True)
class Snapshot:
    """What the store holds now: the newest batch of each provider with its rows, and every FX rate."""

    batches: tuple[Batch, ...]
    rows: tuple[PriceRow, ...]
    fx: tuple[FxRate, ...]


def latest(path: Path | None = None) -> Snapshot:
    """The newest batch per provider (empty when there is no store yet)."""
    path = path or store_path()
    try:
        with _connect(path, create=False) as con:
            batches = [Batch(*r) for r in con.execute(
                "SELECT id, provider, fetched_at, n_rows, n_fx, source_url FROM batch WHERE id IN "
                "(SELECT max(id) FROM batch GROUP BY provider) ORDER BY provider")]
            ids = [b.id for b in batches if b.n_rows]
            rows = [PriceRow(*r) for r in con.execute(
                f"SELECT {_PRICE_COLUMNS} FROM price WHERE batch_id IN ({','.join('?' * len(ids))})", ids)]
            fx = [FxRate(dt.date.fromisoformat(d), b, q, rate, s)
                  for d, b, q, rate, s in con.execute("SELECT date, base, quote, rate, source FROM fx ORDER BY rowid")]
    except FileNotFoundError:
        return Snapshot((), (), ())
    return Snapshot(tuple(batches), tuple(rows), tuple(fx))


def history(gpu: str, providers: Sequence[str] = (), regions: Sequence[str] = (),
            path: Path | None = None) -> list[PriceRow]:
    """Every stored price of ``gpu`` (canonical name), oldest first."""
    path = path or store_path()
    sql = f"SELECT {_PRICE_COLUMNS} FROM price WHERE gpu = ?"
    args: list[str] = [gpu]
    for column, values in (("provider", providers), ("region", regions)):
        if values:
            sql += f" AND {column} IN ({','.join('?' * len(values))})"
            args += list(values)
    try:
        with _connect(path, create=False) as con:
            sql += " ORDER BY fetched_at, batch_id, provider, instance_type"
            return [PriceRow(*r) for r in con.execute(sql, args)]
    except FileNotFoundError:
        return []


def check(path: Path | None = None) -> list[str]:
    """Problems found in the store: SQLite's own integrity check, and batches whose rows are not all there."""
    path = path or store_path()
    with _connect(path, create=False) as con:
        problems = [r[0] for r in con.execute("PRAGMA integrity_check") if r[0] != "ok"]
        for b_id, want, want_fx, got, got_fx in con.execute(
                "SELECT b.id, b.n_rows, b.n_fx, (SELECT count(*) FROM price p WHERE p.batch_id = b.id), "
                "(SELECT count(*) FROM fx f WHERE f.batch_id = b.id) FROM batch b"):
            if (want, want_fx) != (got, got_fx):
                problems.append(f"batch {b_id}: {got}/{want} price rows, {got_fx}/{want_fx} FX rows")
    return problems
