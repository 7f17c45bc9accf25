"""Vocabularies are enums (issue 10, part 3): outside the estimators and the planner, whose comparisons are left
to their own change, no code compares a method, recomputation, engine, task, market or objective with a string
literal (``s.recompute == "selective"``): it names the enum's member (``Recompute.SELECTIVE``), so a typo is an
AttributeError at once instead of a branch that never runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gpuplan

VOCABULARIES = ("method", "recompute", "engine", "task", "market", "objective", "users")
PACKAGE = Path(gpuplan.__file__).parent
LEFT_FOR_LATER = ("estimate", "plan")  # the estimators' and the planner's comparisons


def _named(node: ast.AST) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def _is_text(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_is_text(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def string_comparisons(source: str) -> list[str]:
    """Each comparison of a vocabulary's field or variable with a string (or a tuple of strings), as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            pair = (node.left, node.comparators[0])
            if any(_named(a) in VOCABULARIES and _is_text(b) for a, b in (pair, pair[::-1])):
                found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize(("source", "expected"), [
    ('if s.recompute == "selective": pass', ['s.recompute == "selective"'.replace('"', "'")]),
    ('ok = job.task in ("infer", "serve")', ["job.task in ('infer', 'serve')"]),
    ('if "lora" != method: pass', ["'lora' != method"]),
    ("if s.recompute == Recompute.SELECTIVE: pass", []),
    ('if fmt == "vllm": pass', []),  # an export format, not a vocabulary of the table
])
def test_the_scan_finds_string_comparisons(source: str, expected: list[str]) -> None:
    assert string_comparisons(source) == expected


def test_no_module_compares_a_vocabulary_with_a_string() -> None:
    offenders = [f"{path.relative_to(PACKAGE.parent)}: {c}" for path in sorted(PACKAGE.rglob("*.py"))
                 if path.relative_to(PACKAGE).parts[0] not in LEFT_FOR_LATER
                 for c in string_comparisons(path.read_text(encoding="utf-8"))]
    assert offenders == []
