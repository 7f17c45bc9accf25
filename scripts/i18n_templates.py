"""List the sentences gpuplan builds in English at run time (error messages and fixes, assumption values) as
templates, and which of them the Chinese catalogue (``gpuplan.i18n.TEMPLATES``) lacks.

A template is the sentence's source text with each interpolated expression written as ``{expression}``: the f-string
``f"'{value}' is not one of: {', '.join(options)}."`` is the template ``'{value}' is not one of: {', '.join(options)}.``
The catalogue keys are these templates, so the English and its Chinese sit side by side and a test
(``tests/test_i18n_complete.py``) fails when a sentence has no Chinese form.

    python scripts/i18n_templates.py            # the templates with no Chinese form, by file
    python scripts/i18n_templates.py --all      # every template
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the error classes (and the one result type) whose text arguments are sentences, and the positions of those
SENTENCE_ARGS = {"InputError": (1, 2), "InfeasibleError": (1, 2), "GpuplanError": (0, 1), "ModelConfigError": (0, 1),
                 "OfflineError": (0, 1), "CatalogError": (4, 5), "ProviderError": (1, 2), "MissingKeyError": (1, 2),
                 "StoreError": (1, 2), "FileProblem": (0, 1), "Assumption": (1,)}
KEYWORDS = {"message", "fix", "problem", "value"}


def template(node: ast.expr) -> str | None:
    """The template of a literal string or f-string (implicitly concatenated parts included); None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            else:
                assert isinstance(part, ast.FormattedValue)
                out.append("{" + ast.unparse(part.value) + "}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = template(node.left), template(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def sites(root: Path = ROOT / "gpuplan") -> Iterator[tuple[str, int, str | None]]:
    """(file, line, template or None where the sentence is not literal) for every sentence argument."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _callee(node) not in SENTENCE_ARGS:
                continue
            args = [node.args[i] for i in SENTENCE_ARGS[_callee(node)] if i < len(node.args)]
            args += [k.value for k in node.keywords if k.arg in KEYWORDS]
            for arg in args:
                for branch in _branches(arg):
                    if not (isinstance(branch, ast.Constant) and branch.value == ""):
                        yield rel, arg.lineno, template(branch)


def _branches(node: ast.expr) -> list[ast.expr]:
    """The sentences an argument can be: both sides of ``a if c else b``, each in turn."""
    if isinstance(node, ast.IfExp):
        return _branches(node.body) + _branches(node.orelse)
    return [node]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    missing = 0
    for rel, line, text in sites():
        known = text is not None and translated(text)
        if "--all" in argv or not known:
            print(f"{rel}:{line}: {'ok ' if known else '-- '}{text!r}")
            missing += not known
    print(f"{missing} without a Chinese form", file=sys.stderr)
    return 1 if missing else 0


def translated(text: str) -> bool:
    """A template has a Chinese form (its own entry, or one whose pattern it matches), or needs none."""
    from gpuplan.i18n import zh_sentence

    return _plain(text) or zh_sentence(text) != text


def _plain(text: str) -> bool:
    """A template with no words to translate (only expressions, numbers and punctuation)."""
    import re

    return not re.search(r"[A-Za-z]{2,}", re.sub(r"\{[^{}]*\}", "", text))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
