"""The estimators (memory, FLOPs, training time, inference speed): pure functions that return breakdowns.

``gpuplan.estimate(...)`` — this package called as a function — is the Python API's one-configuration
estimate (:func:`gpuplan.api.estimate`), so that ``import gpuplan; gpuplan.estimate(...)`` works while
``import gpuplan.estimate.memory`` stays the estimators' module.
"""

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from gpuplan.api import estimate

        return estimate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
