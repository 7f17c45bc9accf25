"""The validated catalog kept between processes: reading and checking the bundled tables takes each CLI process
about 65 ms (2 cores), reading this copy back about 30 ms, the look at every file's size and time included.

A cached catalog is used only when everything it was built from is unchanged: the same gpuplan version and Python,
the same code that defines and reads the rows (``CODE``), the same day (the tables' date checks depend on it), and
every file under every catalog folder with the same path, size and modification time. Anything else (a file edited,
added or removed, a folder that cannot be listed, a cache that cannot be read) builds the catalog from the tables
again; the cache is an optimisation and never an error. It is written atomically (a temporary file renamed into
place), so a reader sees a whole file or none. It lives in ``$GPUPLAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpuplan``
(``~/.cache/gpuplan``); setting ``GPUPLAN_CACHE_DIR`` to an empty string turns it off. Like any cache under the
user's home it is trusted as the user's own file (pickle runs what it holds): it is written with the user's
permissions only.
"""

from __future__ import annotations

import datetime as dt
import os
import pickle
import sys
import zlib
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplan.catalog.store import Catalog

ENV_DIR = "GPUPLAN_CACHE_DIR"
FORMAT = 1  # bump when the pickled shape changes
_PACKAGE = Path(__file__).resolve().parent.parent
CODE = (*sorted((_PACKAGE / "catalog").glob("*.py")), _PACKAGE / "types.py", _PACKAGE / "units.py",
        _PACKAGE / "errors.py")  # the rows' classes and their readers: an edit makes old pickles stale


def cache_dir() -> Path | None:
    """The cache folder, or None when ``GPUPLAN_CACHE_DIR`` is set empty (no cache)."""
    if ENV_DIR in os.environ:
        return Path(os.environ[ENV_DIR]).expanduser() if os.environ[ENV_DIR] else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "gpuplan"


def signature(dirs: tuple[Path, ...], today: dt.date, market: Path | None = None) -> str | None:
    """What a catalog built from ``dirs`` (and the market snapshot ``market``) today depends on, as one text (the
    cache holds it and compares it whole); None when a folder cannot be listed."""
    parts = [f"{FORMAT}|{_version()}|{sys.version}|{today.isoformat()}"]
    try:
        for path in CODE:
            st = path.stat()
            parts.append(f"code {path.name}|{st.st_size}|{st.st_mtime_ns}")
        for kind, d in [*(("dir", d) for d in dirs), *([("market", market)] if market is not None else [])]:
            parts.append(f"{kind} {d}")
            parts += [f"{'/'.join(rel)}|{st.st_size}|{st.st_mtime_ns}" for rel, st in _files(d)]
    except OSError:
        return None
    return "\n".join(parts)


def _files(root: Path) -> list[tuple[tuple[str, ...], os.stat_result]]:
    """Every file and folder under ``root`` but ``__pycache__``, as its path's parts below ``root`` with its
    ``stat``, in the order of the paths' parts (``sorted(root.rglob("*"))``'s, in a third of its time: no path
    objects); an OSError when a folder cannot be listed."""
    found: list[tuple[tuple[str, ...], os.stat_result]] = []

    def walk(folder: str, rel: tuple[str, ...]) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name != "__pycache__":
                    found.append(((*rel, entry.name), entry.stat()))
                    if entry.is_dir(follow_symlinks=False):
                        walk(entry.path, (*rel, entry.name))

    walk(os.fspath(root), ())
    return sorted(found, key=lambda item: item[0])


def cached(dirs: tuple[Path, ...], build: Callable[[], Catalog], market: Path | None = None) -> Catalog:
    """The catalog of ``dirs`` (and ``market``): from the cache when its signature matches, else ``build()`` (and
    cache it)."""
    folder = cache_dir()
    key = signature(dirs, dt.date.today(), market) if folder is not None else None
    if folder is None or key is None:
        return build()
    path = folder / f"catalog-{zlib.crc32(key.encode()):08x}.pickle"  # one file per folder list and day
    found = _read(path, key)
    if found is not None:
        return found
    catalog = build()
    _write(path, key, catalog)
    return catalog


def _read(path: Path, key: str) -> Catalog | None:
    from gpuplan.catalog.store import Catalog

    try:
        with path.open("rb") as f:
            state = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None
    if not isinstance(state, dict) or state.get("signature") != key:
        return None
    try:
        values: dict[str, Any] = {k: MappingProxyType(v) if k in state["mappings"] else v
                                  for k, v in state["fields"].items()}
        return Catalog(**values)
    except (KeyError, TypeError):
        return None


def _write(path: Path, key: str, catalog: Catalog) -> None:
    """Write the cache atomically; any failure (a read-only home, an unpicklable row) leaves no file behind."""
    values: dict[str, Any] = {}
    mappings: list[str] = []
    for name in (f.name for f in fields(catalog)):
        value = getattr(catalog, name)
        if isinstance(value, MappingProxyType):
            value = dict(value)
            mappings.append(name)
        values[name] = value
    import tempfile

    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".catalog-", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            pickle.dump({"signature": key, "fields": values, "mappings": mappings}, out, pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        tmp = None
        _prune(path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _prune(keep: Path, most: int = 8) -> None:
    """Keep the newest ``most`` cached catalogs (one per folder list and day is made)."""
    files = sorted(keep.parent.glob("catalog-*.pickle"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in files[most:]:
        if old != keep:
            old.unlink(missing_ok=True)


def _version() -> str:
    from gpuplan import __version__

    return __version__


__all__ = ["cache_dir", "cached", "signature"]
