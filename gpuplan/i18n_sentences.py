"""Chinese forms of the sentences the library builds with values in them (:data:`gpuplan.i18n.TEMPLATES`).

Each key is the English as written in the source, every interpolated expression as ``{expression}``; each value
the Chinese with the same holes (``{expression|t}``: that value is translated too). ``scripts/i18n_templates.py``
lists the sentences of the source that have no entry; ``tests/test_i18n_complete.py`` fails on one.
"""

from __future__ import annotations

TEMPLATES: dict[str, str] = {
}
