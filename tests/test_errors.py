"""The error tree fits Python (issue 10, part 4): each error is also the built-in it stands for, so ``except
ValueError`` or ``except LookupError`` catches it, and each pickles (a web worker or a process pool hands it back)
with its class, message, fix and fields."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from gpuplan.errors import (
    BudgetError,
    CatalogError,
    GpuplanError,
    InfeasibleError,
    InputError,
    ModelConfigError,
    OfflineError,
    UnknownNameError,
)
from gpuplan.market.http import MissingKeyError, ProviderError
from gpuplan.market.store import StoreError

# (the error, the built-ins it must also be, what its str() reads)
ERRORS = [
    (InputError("--batch", "-1 is out of range.", "give --batch 0 or more."), (ValueError,),
     "--batch: -1 is out of range. To fix: give --batch 0 or more."),
    (UnknownNameError("--gpu", "GPU", "h10", ["H100", "H200", "L4"], "gpuplan gpus"), (ValueError, LookupError),
     "--gpu: unknown GPU 'h10'. Did you mean 'H100' or 'H200'? To fix: run 'gpuplan gpus' to list them."),
    (InfeasibleError("--tp", "3 does not divide 32 heads.", "give --tp 1, 2, 4 or 8."), (ValueError,),
     "--tp: 3 does not divide 32 heads. To fix: give --tp 1, 2, 4 or 8."),
    (CatalogError("gpus.csv", 7, "tdp_w", "-5", "must be above 0.", "fix the row."), (ValueError,),
     "gpus.csv:7: column 'tdp_w' value '-5': must be above 0. To fix: fix the row."),
    (ModelConfigError("config.json lacks hidden_size.", "give a full config.json."), (ValueError,),
     "config.json lacks hidden_size. To fix: give a full config.json."),
    (BudgetError(10.0), (TimeoutError,), None),
    (OfflineError("'a/b' needs the Hub, and gpuplan is offline.", "pass a config.json."), (ConnectionError,),
     "'a/b' needs the Hub, and gpuplan is offline. To fix: pass a config.json."),
    (ProviderError("aws", "HTTP 503.", "try again later."), (OSError,), "aws: HTTP 503. To fix: try again later."),
    (MissingKeyError("gcp", "GPUPLAN_GCP_API_KEY is not set.", "set it."), (OSError, LookupError),
     "gcp: GPUPLAN_GCP_API_KEY is not set. To fix: set it."),
    (StoreError(Path("prices.sqlite"), "is locked.", "wait."), (OSError,),
     "price store prices.sqlite: is locked. To fix: wait."),
]


@pytest.mark.parametrize(("err", "builtins", "text"), ERRORS, ids=[type(e).__name__ for e, _, _ in ERRORS])
def test_an_error_is_the_builtin_it_stands_for(err: GpuplanError, builtins: tuple[type, ...], text: str | None) -> None:
    assert isinstance(err, GpuplanError)
    for kind in builtins:
        assert isinstance(err, kind), kind
    if text is not None:
        assert str(err) == text


@pytest.mark.parametrize(("err", "builtins", "text"), ERRORS, ids=[type(e).__name__ for e, _, _ in ERRORS])
def test_an_error_pickles_with_its_message_fix_and_fields(err: GpuplanError, builtins: tuple[type, ...],
                                                          text: str | None) -> None:
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert (str(back), back.message, back.fix, back.args) == (str(err), err.message, err.fix, err.args)
    assert vars(back) == vars(err)  # field, suggestions, path and line ... as they were
    assert back.in_chinese() == err.in_chinese()


def test_except_the_builtin_catches_a_budget_overrun() -> None:
    with pytest.raises(TimeoutError, match="10 s of work"):
        raise BudgetError(10.0)


def test_a_corrupt_price_store_is_an_oserror_that_pickles_with_its_path(tmp_path: Path) -> None:
    from gpuplan.market import store

    path = tmp_path / "prices.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(OSError, match="move the file aside") as caught:  # as a file that cannot be opened is
        store.history("H100", path=path)
    back = pickle.loads(pickle.dumps(caught.value))
    assert isinstance(back, StoreError) and back.path == path and back.fix == caught.value.fix


def test_a_provider_answering_503_is_an_oserror_that_pickles_with_the_provider() -> None:
    import httpx

    from gpuplan.market.http import Fetcher

    client = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(503, text="busy")))
    fetcher = Fetcher("aws", client, sleep=lambda seconds: None)
    with pytest.raises(OSError, match=r"aws: .* answered HTTP 503") as caught:
        fetcher.json("GET", "https://pricing.example/offers.json")
    back = pickle.loads(pickle.dumps(caught.value))
    assert isinstance(back, ProviderError) and (back.provider, str(back)) == ("aws", str(caught.value))
