"""The job commands' options on the command line, made from their rows of :data:`gpuplan.options.OPTIONS`: flag
and aliases, what typer reads (text for a text form or an enum's choice, the library checks it), the command's
default, whether it is required, and its help (whose Chinese :mod:`gpuplan.i18n_help` takes from the same row).

A command declares the table's options as one parameter, ``opts``; :func:`table_options` puts them in its place,
in the order :data:`gpuplan.options.COMMANDS` gives, and the command reads them as ``opts.samples`` ... (named by
:attr:`~gpuplan.options.Option.arg`, the Python API's keyword)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from enum import StrEnum
from types import SimpleNamespace
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

from gpuplan.options import Option, default, of_command, option

F = TypeVar("F", bound=Callable[..., Any])
_NAMED = inspect.Parameter.KEYWORD_ONLY


def read_as(o: Option) -> Any:
    """What typer reads the option as: text for a text form (``10k``, ``2s``) and for an enum's choice (the library
    checks it and names the choices), strings for a repeatable option, else the option's kind."""
    if o.form or (isinstance(o.kind, type) and issubclass(o.kind, StrEnum)):
        return str
    return list[str] if o.kind is list else o.kind


def shown_default(o: Option, command: str) -> Any:
    """The option's default on ``command``'s line: None where the library chooses, a count as its text."""
    if command in o.unset_in:
        return None
    value = default(o.name, command)
    if o.form == "COUNT" and value is not None:
        return f"{value:g}" if value else None  # 0 is "not given"
    return value


def cli_option(name: str, command: str) -> Any:
    """The typer annotation of option ``name`` on ``command``'s line (also for commands outside the table's:
    ``fit --gpus``)."""
    o = option(name)
    required = command in o.required_in
    kind = read_as(o) if required or shown_default(o, command) is not None else read_as(o) | None
    return Annotated[kind, typer.Option(*(o.typed or (o.flag,)), help=o.help_for(command))]


def _parameter(o: Option, command: str) -> inspect.Parameter:
    value = inspect.Parameter.empty if command in o.required_in else shown_default(o, command)
    return inspect.Parameter(o.arg, _NAMED, annotation=cli_option(o.name, command), default=value)


def table_options(command: str) -> Callable[[F], F]:
    """Give the decorated function's parameter ``opts`` the options of ``command`` (``plan serve``) as typer
    parameters in its place; the function receives them as one namespace, ``opts``."""
    rows = of_command(command)

    def decorate(func: F) -> F:
        hints = get_type_hints(func, include_extras=True)
        params: list[inspect.Parameter] = []
        for p in inspect.signature(func).parameters.values():
            if p.name == "opts":
                params += [_parameter(o, command) for o in rows]
                continue
            kind = _NAMED if params and params[-1].kind is _NAMED else p.kind  # after the table's: by name
            params.append(p.replace(annotation=hints.get(p.name, p.annotation), kind=kind))

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            opts = SimpleNamespace(**{o.arg: kwargs.pop(o.arg) for o in rows})
            return func(*args, opts=opts, **kwargs)

        run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run  # type: ignore[return-value]

    return decorate
