"""Moved to :mod:`streamnb.features.weighting`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.features.weighting")

from .features.weighting import *  # noqa: F403

# documented under this path, though not in the module's __all__:
from .features.weighting import QUANTUM_BITS as QUANTUM_BITS
