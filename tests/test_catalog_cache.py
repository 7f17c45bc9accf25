"""The catalog cached between processes is the catalog the tables make, and never a stale or broken one: an
edited, added or removed file, a new day or a damaged cache file builds it again; a cache that cannot be
written is no error."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from types import MappingProxyType

import pytest

from gpuplan.catalog import BUNDLED_DIR, Catalog
from gpuplan.catalog import cache as catalog_cache
from gpuplan.catalog.store import _build, catalog_dirs
from gpuplan.errors import CatalogError


class Builds:
    """``_build`` of the given folders, counting how often the tables are really read."""

    def __init__(self, dirs: tuple[Path, ...]) -> None:
        self.dirs, self.count = dirs, 0

    def __call__(self) -> Catalog:
        self.count += 1
        return _build(self.dirs)


@pytest.fixture()
def user_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    (folder / "offers").mkdir(parents=True)
    shutil.copy(BUNDLED_DIR / "offers" / "lambda.csv", folder / "offers" / "lambda.csv")
    return folder


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(catalog_cache.ENV_DIR, str(folder))
    return folder


def test_a_cached_catalog_equals_the_one_the_tables_make_and_stays_read_only(user_dir: Path,
                                                                              cache_dir: Path) -> None:
    dirs = catalog_dirs([user_dir])
    build = Builds(dirs)
    first = catalog_cache.cached(dirs, build)
    again = catalog_cache.cached(dirs, build)
    assert build.count == 1  # the second came from the file
    assert again == first == _build(dirs)
    assert isinstance(again.gpus, MappingProxyType) and isinstance(again.models, MappingProxyType)
    with pytest.raises(TypeError):
        again.gpus["H100"] = again.gpus["A100"]  # type: ignore[index]


def test_an_edited_added_or_removed_file_builds_the_catalog_again(user_dir: Path, cache_dir: Path) -> None:
    dirs = catalog_dirs([user_dir])
    build = Builds(dirs)
    before = catalog_cache.cached(dirs, build)
    path = user_dir / "offers" / "lambda.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    row = lines[1].split(",")
    price_col = lines[0].split(",").index("price_per_hour")
    row[price_col] = "0.01"
    path.write_text(lines[0] + ",".join(row) + "".join(lines[2:]), encoding="utf-8")
    edited = catalog_cache.cached(dirs, build)
    assert build.count == 2
    assert min(o.price_per_hour for o in edited.offers if o.provider == "Lambda") == 0.01
    assert edited != before
    shutil.copy(path, user_dir / "offers" / "lambda2.csv")  # a file added: its rows repeat lambda.csv's
    with pytest.raises(CatalogError, match=r"lambda2\.csv"):
        catalog_cache.cached(dirs, build)  # read, not hidden by the cached catalog
    (user_dir / "offers" / "lambda2.csv").unlink()
    assert catalog_cache.cached(dirs, build) == edited


def test_a_new_day_builds_the_catalog_again(user_dir: Path, cache_dir: Path) -> None:
    # the tables' date checks (a price dated in the future) depend on the day
    dirs = catalog_dirs([user_dir])
    today = dt.date.today()
    assert catalog_cache.signature(dirs, today) != catalog_cache.signature(dirs, today + dt.timedelta(days=1))


def test_a_damaged_cache_file_is_rebuilt_not_an_error(user_dir: Path, cache_dir: Path) -> None:
    dirs = catalog_dirs([user_dir])
    build = Builds(dirs)
    good = catalog_cache.cached(dirs, build)
    (cached_file,) = cache_dir.glob("catalog-*.pickle")
    for damage in (b"", b"not a pickle", cached_file.read_bytes()[:1000]):
        cached_file.write_bytes(damage)
        assert catalog_cache.cached(dirs, build) == good
    assert build.count == 4
    assert not list(cache_dir.glob(".catalog-*"))  # no temporary file left behind


def test_no_cache_when_it_is_turned_off_or_cannot_be_written(user_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    dirs = catalog_dirs([user_dir])
    monkeypatch.setenv(catalog_cache.ENV_DIR, "")
    build = Builds(dirs)
    catalog_cache.cached(dirs, build)
    catalog_cache.cached(dirs, build)
    assert build.count == 2
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(catalog_cache.ENV_DIR, str(blocker / "cache"))  # cannot be made: a file is in the way
    assert catalog_cache.cached(dirs, build) == _build(dirs)


def test_the_signature_lists_every_entry_below_a_folder_in_path_order(tmp_path: Path) -> None:
    for rel in ("a/y.csv", "a-b/x.csv", "__pycache__/z.pyc", "a/__pycache__/w.pyc"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("12345")
    text = catalog_cache.signature((tmp_path,), dt.date(2026, 1, 2))
    assert text is not None
    listed = [line.split("|")[0] for line in text.split(f"dir {tmp_path}\n", 1)[1].split("\n")]
    # by the paths' parts, as sorted(Path.rglob("*")) gives them: "a" and what is in it before "a-b" (as text,
    # "a-b/x.csv" < "a/y.csv"); no __pycache__
    assert listed == ["a", "a/y.csv", "a-b", "a-b/x.csv"]
    assert f"a/y.csv|5|{(tmp_path / 'a' / 'y.csv').stat().st_mtime_ns}" in text
    assert catalog_cache.signature((tmp_path / "gone",), dt.date(2026, 1, 2)) is None  # cannot be listed: no cache
