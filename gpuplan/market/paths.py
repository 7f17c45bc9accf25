"""Where the local price store lives, and whether it has changed: all a plan needs of the store when there is none
(the store and its overlay, with their row classes, are imported only when there is one to read)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_DIR = "GPUPLAN_DATA_DIR"
FILE_NAME = "prices.sqlite"


def data_dir() -> Path:
    """Where gpuplan keeps user data: ``$GPUPLAN_DATA_DIR``, else ``$XDG_DATA_HOME/gpuplan``."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "gpuplan"


def store_path() -> Path:
    return data_dir() / FILE_NAME


def store_signature() -> tuple[Path, tuple[int, ...]]:
    """The store's path and (size, mtime) of it and its write-ahead log; () when there is no store."""
    path = store_path()
    stamp: list[int] = []
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            st = p.stat()
        except OSError:
            continue
        stamp += [st.st_size, st.st_mtime_ns]
    return path, tuple(stamp)
