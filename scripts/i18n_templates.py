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
# sentences passed on from where they were made (and translated there, or checked by a test of the running CLI):
# expression as written -> where its text comes from
PASSED_ON = {
    "err.fix.replace(option, name)": "an InputError's fix, with the CLI's option name put as the API's field",
    "err.message.split(': ', 1)[-1].replace(option, name)": "an InputError's message, likewise",
    "'; '.join(parts) + '.'": "csvload's literal 'missing columns'/'unknown columns' parts (in the catalogue)",
    "_fix(col)": "csvload._fix: literal fixes (in the catalogue)",
    "problem.problem": "a FileProblem's problem (its literal sites are checked)",
    "problem.fix": "a FileProblem's fix (its literal sites are checked)",
    "str(exc)": "csvload's parsers' ValueError texts (test_i18n_complete runs a bad catalog file)",
    "fw.describe()": "Framework.describe (the running-CLI assumption tests, --framework)",
    "fw.describe(quantized)": "Framework.describe for a quantized base, likewise",
    "describe_stack(m, s)": "memory.describe_stack's literal phrases (the running-CLI assumption tests)",
    "loss.case.held": "LossCase.held: one literal text per case (in the catalogue; tests/test_memory_loss.py)",
    "fmt_bytes(framework)": "a size, no words", "fmt_bytes(overhead)": "a size, no words",
    "par.describe()": "Parallel.describe: TP2 DP4 ZeRO-3 … (the running-CLI assumption tests)",
    "self.name": "an Assumption's own name (checked where it is made)",
    "INTERFERENCE": "plan.guard.INTERFERENCE, a literal constant (in the catalogue; test_guard's assumptions in zh)",
    "SERVICE_LATENCY[r.guard_mode]": "plan.guard.SERVICE_LATENCY's two literal values (in the catalogue)",
    "self.value": "an Assumption's own value (checked where it is made)",
    "_limit_text(c)": "planner._limit_text: its texts are in the catalogue (test_i18n_complete checks them)",
    "cal.fitted_on or 'fitted parameters'": "the calibration's description (a data file's)",
    "price_age(offer, today)": "listing.price_age builds both languages with say()",
    "stale": "listing.stale_note builds both languages with say()",
    "tr(a.name)": "translated here", "translate(a.value)": "translated here",
    "translate(a['name'])": "translated here", "translate(a['value'])": "translated here",
}


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
    """(file, line, template; None for a sentence :data:`PASSED_ON` from elsewhere; ``<not literal> EXPR`` for one
    that is neither) for every sentence: the text arguments of
    the error classes and ``Assumption``, the ``name`` and ``value`` of an assumption written as a dict, and every
    note added to a ``notes`` tuple or list. A local variable is followed to the text assigned to it."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(root.parent))
        for scope in ast.walk(tree):
            if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            local = _assigned(scope)
            for arg in _sentences(scope):
                for branch in _branches(arg, local):
                    if not (isinstance(branch, ast.Constant) and branch.value == ""):
                        yield rel, arg.lineno, template(branch) or _opaque(branch)


def _opaque(node: ast.expr) -> str | None:
    """None for a sentence made elsewhere and passed on (:data:`PASSED_ON` says where it is translated), else
    the expression as written, which the catalogue cannot hold: a test fails on it."""
    text = ast.unparse(node)
    return None if text in PASSED_ON else "<not literal> " + text


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` outside the functions defined in it (each function is a scope of its own)."""
    for child in ast.iter_child_nodes(scope):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child
            yield from _own_nodes(child)


def _assigned(scope: ast.AST) -> dict[str, ast.expr]:
    """Local names bound once to a text in ``scope`` (``fix = f"..."``)."""
    found: dict[str, list[ast.expr]] = {}
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.setdefault(node.targets[0].id, []).append(node.value)
    return {name: values[0] for name, values in found.items() if len(values) == 1}


def _is_notes(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == "notes" or name.endswith("_notes")


def _sentences(scope: ast.AST) -> Iterator[ast.expr]:
    for node in _own_nodes(scope):
        if isinstance(node, ast.Call) and _callee(node) in SENTENCE_ARGS:
            yield from (node.args[i] for i in SENTENCE_ARGS[_callee(node)] if i < len(node.args))
            yield from (k.value for k in node.keywords if k.arg in KEYWORDS)
        elif isinstance(node, ast.Dict) and {"name", "value"} <= {k.value for k in node.keys
                                                                 if isinstance(k, ast.Constant)}:
            yield from (v for k, v in zip(node.keys, node.values, strict=True)
                        if isinstance(k, ast.Constant) and k.value in ("name", "value"))
        elif (isinstance(node, ast.AugAssign) and _is_notes(node.target)
              and isinstance(node.value, ast.Tuple | ast.List)):
            yield from node.value.elts
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
              and _is_notes(node.func.value) and node.args):
            yield node.args[0]


def _branches(node: ast.expr, local: dict[str, ast.expr]) -> list[ast.expr]:
    """The sentences an argument can be: both sides of ``a if c else b``, each in turn (also as the right-hand
    part of ``text + (a if c else b)``); a local name as the text assigned to it."""
    if isinstance(node, ast.Name) and node.id in local:
        return _branches(local[node.id], {k: v for k, v in local.items() if k != node.id})
    if isinstance(node, ast.IfExp):
        return _branches(node.body, local) + _branches(node.orelse, local)
    # checked where it is built: say(en, zh), a typed Note (both languages in gpuplan.plan_text), an error
    if isinstance(node, ast.Call) and _callee(node) in ("say", "Note", *SENTENCE_ARGS):
        return []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        rights = _branches(node.right, local)
        if len(rights) > 1:
            return [ast.BinOp(left, ast.Add(), right) for left in _branches(node.left, local) for right in rights]
    return [node]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    missing = 0
    for rel, line, text in sites():
        known = text is None or translated(text)
        if "--all" in argv or not known:
            print(f"{rel}:{line}: {'ok ' if known else '-- '}{text!r}")
            missing += not known
    print(f"{missing} without a Chinese form", file=sys.stderr)
    return 1 if missing else 0


def translated(text: str) -> bool:
    """A template has a Chinese form (its own entry, or one whose pattern it matches), or needs none."""
    from gpuplan.i18n import zh_sentence

    return not text.startswith("<not literal>") and (_plain(text) or zh_sentence(text) != text)


def _plain(text: str) -> bool:
    """A template with no words to translate (only expressions, numbers and punctuation)."""
    import re

    return not re.search(r"[A-Za-z]{2,}", re.sub(r"\{[^{}]*\}", "", text))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
