"""The local price store: one SQLite file with every refreshed price and FX rate ever fetched.

Each refresh of one provider is one *batch*, written in one transaction together with the row count it
promises, so a refresh killed at any moment leaves either the whole batch or none of it, and never touches an
earlier batch. The file lives in ``$GPUPLAN_DATA_DIR`` or else ``$XDG_DATA_HOME/gpuplan`` (``~/.local/share``).

    batch(id, provider, fetched_at, n_rows, n_fx, source_url)
    price(batch_id, provider, instance_type, gpu, gpu_count, vcpus, ram_gib, region, market, tier,
          unit, price_per_hour, currency, source_url, fetched_at, zone)  unit: instance | gpu-only
                                                                         zone: '' unless priced per zone
    fx(batch_id, date, base, quote, rate, source)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from gpuplan.errors import GpuplanError
from gpuplan.market.paths import ENV_DIR, store_path
from gpuplan.types import FxRate

if TYPE_CHECKING:
    import sqlite3

SCHEMA_VERSION = 2  # 2 added price.zone (a schema-1 store is migrated on its next write)
UNITS = ("instance", "gpu-only")
NO_CAPACITY = "(no capacity now)"  # the region of a type listed with capacity in no region

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batch (
    id INTEGER PRIMARY KEY, provider TEXT NOT NULL, fetched_at TEXT NOT NULL,
    n_rows INTEGER NOT NULL, n_fx INTEGER NOT NULL, source_url TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS price (
    batch_id INTEGER NOT NULL REFERENCES batch(id), provider TEXT NOT NULL, instance_type TEXT NOT NULL,
    gpu TEXT NOT NULL, gpu_count REAL NOT NULL, vcpus REAL, ram_gib REAL, region TEXT NOT NULL,
    market TEXT NOT NULL, tier TEXT NOT NULL, unit TEXT NOT NULL, price_per_hour REAL NOT NULL,
    currency TEXT NOT NULL, source_url TEXT NOT NULL, fetched_at TEXT NOT NULL, zone TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS fx (
    batch_id INTEGER NOT NULL REFERENCES batch(id), date TEXT NOT NULL, base TEXT NOT NULL,
    quote TEXT NOT NULL, rate REAL NOT NULL, source TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS price_by_gpu ON price (gpu, provider, fetched_at);
CREATE INDEX IF NOT EXISTS price_by_batch ON price (batch_id);
"""


class StoreError(GpuplanError, OSError):
    """The price store cannot be read or written (corrupt, locked, from a newer gpuplan): an ``OSError``, as a
    file that cannot be opened is one."""

    def __init__(self, path: Path, problem: str, fix: str) -> None:
        super().__init__(f"price store {path}: {problem}", fix)
        self.path = path
        self.detail = problem

    def _where_zh(self) -> str:
        return f"价格库 {self.path}："


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
    zone: str = ""  # the zone within ``region`` where the provider prices per zone (Tencent Cloud)

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


def _columns(con: sqlite3.Connection) -> str:
    """The price columns to select (a schema-1 store, read before its first new write, has no zone)."""
    if con.execute("PRAGMA user_version").fetchone()[0] >= 2:
        return _PRICE_COLUMNS
    return _PRICE_COLUMNS.replace(", zone", ", '' AS zone")


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


LOCK_WAIT_S = 5.0  # how long a write waits for another writer (a refresh in another terminal) to finish


@contextmanager
def _connect(path: Path, create: bool) -> Iterator[sqlite3.Connection]:
    """A connection for writing (``create``: made if missing, write-ahead log) or, else, a read-only one that
    never writes to the file (no journal-mode change), so a store on read-only media can be read."""
    import sqlite3  # here: a plan whose catalog has no price store never opens one (3-5 ms of a process's start)

    if not create and not path.is_file():
        raise FileNotFoundError(path)
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(path, timeout=LOCK_WAIT_S, isolation_level=None)  # transactions are explicit
        else:
            con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=LOCK_WAIT_S,
                                  isolation_level=None)
        with closing(con):
            if create:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA synchronous=FULL")
            _check_version(con, path, create)
            yield con
    except sqlite3.DatabaseError as exc:
        raise _problem(path, exc, create) from None
    except PermissionError as exc:
        raise _read_only(path, str(exc)) from None


def _problem(path: Path, exc: sqlite3.DatabaseError, writing: bool) -> StoreError:
    """The store's problem named by kind: locked, read-only, or unreadable (corrupt), each with its own fix."""
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreError(path, f"is locked by another process ({exc}; waited {LOCK_WAIT_S:g} s).",
                          "wait for the other gpuplan refresh (or the program holding the file) to finish, then "
                          "run the command again; the file itself is fine.")
    if name.startswith("SQLITE_READONLY") or (writing and name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM",
                                                                             "SQLITE_AUTH"))):
        return _read_only(path, str(exc))
    return StoreError(path, f"cannot be read ({exc}).",
                      f"move the file aside (e.g. mv '{path}' '{path}.broken') and run 'gpuplan refresh' "
                      "again; until then gpuplan uses the bundled prices only.")


def _read_only(path: Path, why: str) -> StoreError:
    return StoreError(path, f"cannot be written ({why}).",
                      f"make {path.parent} writable, or point {ENV_DIR} at a writable folder; the prices already "
                      "stored are still read.")


def check_writable(path: Path | None = None) -> None:
    """Raise the store's :class:`StoreError` unless a batch could be written now (refresh asks before it
    fetches anything, so a store it could not write is named before any download)."""
    with _connect(path or store_path(), create=True) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")  # a real write (BEGIN alone writes nothing)
        finally:
            con.execute("ROLLBACK")


def _check_version(con: sqlite3.Connection, path: Path, create: bool) -> None:
    version = con.execute("PRAGMA user_version").fetchone()[0]
    if version == 0 and create:
        con.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
    elif version == 0 and not con.execute("SELECT name FROM sqlite_master WHERE name='batch'").fetchone():
        if not con.execute("SELECT 1 FROM sqlite_master").fetchone():
            # made but never committed to (the first refresh was stopped before its schema): no store yet
            raise FileNotFoundError(path)
        import sqlite3

        raise sqlite3.DatabaseError("it has no price tables")
    elif version == 1 and create:
        con.executescript("BEGIN IMMEDIATE; ALTER TABLE price ADD COLUMN zone TEXT NOT NULL DEFAULT ''; "
                          f"PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
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
            con.executemany(f"INSERT INTO price (batch_id, {_PRICE_COLUMNS}) VALUES (?{',?' * len(fields(PriceRow))})",
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
    """What the store holds now: the newest batch of each provider, the rows of the newest batch that priced
    each (provider, region), and every FX rate."""

    batches: tuple[Batch, ...]
    rows: tuple[PriceRow, ...]
    fx: tuple[FxRate, ...]


def latest(path: Path | None = None) -> Snapshot:
    """Per provider and region the rows of the newest batch that priced that region, so refreshing one region
    keeps the refreshed prices of the others and a type gone from a region's newest fetch is gone (empty when
    there is no store yet)."""
    path = path or store_path()
    try:
        with _connect(path, create=False) as con:
            batches = [Batch(*r) for r in con.execute(
                "SELECT id, provider, fetched_at, n_rows, n_fx, source_url FROM batch WHERE id IN "
                "(SELECT max(id) FROM batch GROUP BY provider) ORDER BY provider")]
            rows = [PriceRow(*r) for r in con.execute(
                f"WITH newest AS (SELECT provider, region, max(batch_id) AS id FROM price GROUP BY provider, region) "
                f"SELECT {_columns(con)} FROM price JOIN newest USING (provider, region) WHERE batch_id = newest.id")]
            fx = [FxRate(dt.date.fromisoformat(d), b, q, rate, s)
                  for d, b, q, rate, s in con.execute("SELECT date, base, quote, rate, source FROM fx ORDER BY rowid")]
    except FileNotFoundError:
        return Snapshot((), (), ())
    return Snapshot(tuple(batches), tuple(rows), tuple(fx))


def history(gpu: str, providers: Sequence[str] = (), regions: Sequence[str] = (),
            path: Path | None = None) -> list[PriceRow]:
    """Every stored price of ``gpu`` (canonical name), oldest first."""
    path = path or store_path()
    sql = "SELECT {columns} FROM price WHERE gpu = ?"
    args: list[str] = [gpu]
    for column, values in (("provider", providers), ("region", regions)):
        if values:
            sql += f" AND {column} IN ({','.join('?' * len(values))})"
            args += list(values)
    try:
        with _connect(path, create=False) as con:
            sql += " ORDER BY fetched_at, batch_id, provider, instance_type"
            return [PriceRow(*r) for r in con.execute(sql.format(columns=_columns(con)), args)]
    except FileNotFoundError:
        return []


def check(path: Path | None = None) -> list[str]:
    """Problems found in the store: SQLite's own integrity check, and batches whose rows are not all there."""
    path = path or store_path()
    try:
        with _connect(path, create=False) as con:
            problems = [r[0] for r in con.execute("PRAGMA integrity_check") if r[0] != "ok"]
            for b_id, want, want_fx, got, got_fx in con.execute(
                    "SELECT b.id, b.n_rows, b.n_fx, (SELECT count(*) FROM price p WHERE p.batch_id = b.id), "
                    "(SELECT count(*) FROM fx f WHERE f.batch_id = b.id) FROM batch b"):
                if (want, want_fx) != (got, got_fx):
                    problems.append(f"batch {b_id}: {got}/{want} price rows, {got_fx}/{want_fx} FX rows")
    except FileNotFoundError:  # no store, or one whose first refresh never committed: nothing to check
        return []
    return problems
