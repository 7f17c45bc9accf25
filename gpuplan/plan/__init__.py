"""Planning: ``planner`` runs the stages ``enumeration`` → ``pricing`` (money in ``costing``) → ``ranking`` into a
frozen ``candidates.PlanResult``; serving fleets (``serving``, ``guard``, ``availability``), fit tables
(``fitting``), rent or buy (``buy``).

``gpuplan.plan(...)`` — this package called as a function — is the Python API's plan (:func:`gpuplan.api.plan`),
so that ``import gpuplan; gpuplan.plan(...)`` works while ``import gpuplan.plan.planner`` stays the planner.
"""

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from gpuplan.api import plan

        return plan(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
