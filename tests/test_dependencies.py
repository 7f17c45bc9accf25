"""What a plain ``pip install gpuplan`` (the README's demo) brings is enough for every command but ``web``: each
third-party package a gpuplan module imports when it loads is a core dependency in pyproject.toml, or (for
gpuplan.web only) one of the ``web`` extra. ``plan serve`` once needed scipy, which only the test extra had."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parent.parent
# import name -> distribution name, where they differ
DISTRIBUTION = {"yaml": "PyYAML"}
# what the core dependencies bring themselves (typer's parameter coercion is built on pydantic)
BROUGHT_BY_CORE = {"pydantic", "click"}


def _requirement_names(specs: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", s, maxsplit=1)[0].lower() for s in specs}


def _module_level_imports(path: Path) -> set[str]:
    """Top-level package names imported when the module loads (not inside a function or TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, ast.Import):
                found |= {a.name.split(".")[0] for a in sub.names}
            elif isinstance(sub, ast.ImportFrom) and sub.level == 0 and sub.module:
                found.add(sub.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "gpuplan"}


def test_every_module_level_import_is_a_declared_dependency() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = _requirement_names(project["dependencies"]) | BROUGHT_BY_CORE
    web = core | _requirement_names(project["optional-dependencies"]["web"]) | {"starlette"}
    missing = []
    for path in sorted((REPO / "gpuplan").rglob("*.py")):
        allowed = web if "web" in path.relative_to(REPO / "gpuplan").parts else core
        for module in _module_level_imports(path):
            if DISTRIBUTION.get(module, module).lower() not in allowed:
                missing.append(f"{path.relative_to(REPO)} imports {module}")
    assert not missing, missing
