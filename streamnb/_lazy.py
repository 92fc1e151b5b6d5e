"""numpy and scipy.sparse, imported on first use.

``streamnb classify`` starts one interpreter per message: importing numpy costs more than
reading the model and classifying, and that command's path never needs it (the model file
is read without numpy, the core does the counting, ``filter.combining`` combines with ``math``).
Modules write ``from ._lazy import numpy as np``; the first attribute looked up on ``np``
imports numpy and copies its namespace in, so later lookups cost what a module's do.
``tests/service/test_cli.py::test_classify_imports_only_what_it_needs`` checks that a
classification imports neither.
"""

from __future__ import annotations

import importlib
import types
from typing import Any


class LazyModule(types.ModuleType):
    """Stands for module ``name``; the first attribute lookup imports it."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)  # probes (copy, pickle, inspect) must not import it
        real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, attribute)


numpy = LazyModule("numpy")
scipy_sparse = LazyModule("scipy.sparse")
