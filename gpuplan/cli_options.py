"""The commands' options on the command line, made from their rows of :data:`gpuplan.options.OPTIONS`: flag
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
from typing import Annotated, Any, cast

import typer

from gpuplan.options import Option, default, of_command, option
from gpuplan.signatures import NAMED, F, spliced


def read_as(o: Option, command: str) -> Any:
    """What typer reads the option as in ``command``: text for a text form (``10k``, ``2s``) and for an enum's
    choice (the library checks it and names the choices), strings for a repeatable option, else its kind."""
    kind = o.kind_for(command)
    if o.form or (isinstance(kind, type) and issubclass(kind, StrEnum)):
        return str
    return list[str] if kind is list else kind


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
    kind = read_as(o, command)
    kind = kind if required or shown_default(o, command) is not None else kind | None
    return Annotated[kind, typer.Option(*(o.typed or (o.flag,)), help=o.help_for(command), envvar=o.env or None,
                                        show_envvar=False)]


def _parameter(o: Option, command: str) -> inspect.Parameter:
    value = inspect.Parameter.empty if command in o.required_in else shown_default(o, command)
    return inspect.Parameter(o.arg, NAMED, annotation=cli_option(o.name, command), default=value)


def table_options(command: str) -> Callable[[F], F]:
    """Give the decorated function's parameter ``opts`` the options of ``command`` (``plan serve``, ``offers``) as
    typer parameters in its place; the function receives them as one namespace, ``opts``. The parameters are made
    when the signature is first read (:class:`TableCommand`)."""

    def decorate(func: F) -> F:
        return cast(F, TableCommand(func, command))

    return decorate


class TableCommand:
    """A command's function with the table's options in place of ``opts``, made when typer first reads its
    signature or the command runs: typer reads only the signatures of the commands it builds, one for a command line
    (``gpuplan.cli.command_tree``), so a process does not make the other commands' ~150 parameters (18 ms of CPU on
    a loaded 2-core machine)."""

    def __init__(self, func: Callable[..., Any], command: str) -> None:
        self.__wrapped__ = func
        self.__name__, self.__qualname__ = func.__name__, func.__qualname__
        self.__module__, self.__doc__ = func.__module__, func.__doc__
        self.command = command

    @functools.cached_property
    def spliced(self) -> Callable[..., Any]:
        return spliced(self.__wrapped__, "opts", [_parameter(o, self.command) for o in of_command(self.command)])

    @property
    def __signature__(self) -> inspect.Signature:
        return cast(inspect.Signature, self.spliced.__signature__)  # type: ignore[attr-defined]

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]  # typing.get_type_hints reads them
        return self.spliced.__annotations__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.spliced(*args, **kwargs)
