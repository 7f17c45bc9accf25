"""A function whose one parameter stands for a command's options from the table (:data:`gpuplan.options.OPTIONS`):
:func:`spliced` puts the options' parameters in its place, for a skin that reads a function's signature (typer for
the command line, FastAPI for the HTTP API's query parameters), and hands the function the values as one
namespace."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, TypeVar, get_type_hints

F = TypeVar("F", bound=Callable[..., Any])
NAMED = inspect.Parameter.KEYWORD_ONLY


def spliced(func: F, placeholder: str, params: list[inspect.Parameter]) -> F:
    """``func`` with its parameter ``placeholder`` replaced by ``params`` (those after them are named); called, it
    receives their values as one namespace, ``placeholder``. Annotations are resolved here, so a skin reading the
    signature needs none of ``func``'s module's names."""
    hints = get_type_hints(func, include_extras=True)
    names = [p.name for p in params]
    out: list[inspect.Parameter] = []
    for p in inspect.signature(func).parameters.values():
        if p.name == placeholder:
            out += params
            continue
        kind = NAMED if out and out[-1].kind is NAMED else p.kind  # after the table's: by name
        out.append(p.replace(annotation=hints.get(p.name, p.annotation), kind=kind))

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        values = SimpleNamespace(**{n: kwargs.pop(n) for n in names})
        return func(*args, **{placeholder: values}, **kwargs)

    returns = hints.get("return", inspect.Signature.empty)  # FastAPI's response model
    run.__signature__ = inspect.Signature(out, return_annotation=returns)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in out}
    return run  # type: ignore[return-value]
