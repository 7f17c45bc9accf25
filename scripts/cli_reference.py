"""Write docs/cli.md: every gpuplan command with its arguments and options, from the CLI itself.

    python scripts/cli_reference.py          # rewrite docs/cli.md
    python scripts/cli_reference.py --check  # fail if docs/cli.md is out of date (tests run this)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from gpuplan.cli import EXIT_CODES, app

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _commands(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if path and not getattr(cmd, "commands", None):
        yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(p: Any) -> str:
    if getattr(p, "is_flag", False) and not p.secondary_opts:
        return ""
    value = p.default
    if value is None or value == () or callable(value):
        return ""
    if isinstance(value, bool):
        return f"`{p.opts[0] if value else p.secondary_opts[0]}`" if p.secondary_opts else ""
    return f"`{value}`"


def render() -> str:
    root = typer.main.get_command(app)
    lines = ["# Command reference", "",
             "Generated from the CLI by `python scripts/cli_reference.py` (do not edit by hand); "
             "`gpuplan COMMAND --help` prints the same. With `--lang zh` (before or after the command; or "
             "`GPUPLAN_LANG=zh`, a `zh_CN` locale) "
             "the help, tables, assumptions, explanations and error messages are in Chinese; option names, choices "
             "and units stay as typed, and `--json`/`--csv` stay English.", "",
             "Global options (before the command):", "",
             *(f"- `{' / '.join(p.opts + p.secondary_opts)}`: {_cell(getattr(p, 'help', '') or '')}"
               for p in root.params if p.name != "help"), ""]
    for path, cmd in _commands(root):
        lines += [f"## `gpuplan {' '.join(path)}`", "", _cell((cmd.help or "").split("\n\n")[0]), ""]
        # typer ships its own copy of click: tell parameters apart by their kind, not their class
        args = [p for p in cmd.params if p.param_type_name == "argument"]
        opts = [p for p in cmd.params if p.param_type_name == "option" and p.name != "help"]
        if args or opts:
            lines += ["| argument or option | default | meaning |", "|---|---|---|"]
            for p in args:
                need = "required" if p.required else ""
                lines.append(f"| `{p.name.upper()}` | {need} | {_cell(getattr(p, 'help', '') or '')} |")
            for p in opts:
                names = " / ".join(f"`{o}`" for o in p.opts + p.secondary_opts)
                lines.append(f"| {names} | {_default(p)} | {_cell(p.help or '')} |")
            lines.append("")
    lines += ["## Exit status", "", "Every command ends with one of these (`gpuplan.cli.EXIT_CODES`):", "",
              "| status | meaning |", "|---|---|", *(f"| {code} | {meaning} |" for code, meaning in EXIT_CODES.items()),
              ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if docs/cli.md is out of date")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print("docs/cli.md is out of date: run python scripts/cli_reference.py", file=sys.stderr)
            return 1
        print("docs/cli.md is up to date")
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
