"""Moved to :mod:`streamnb.features.weighting` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .features.weighting import *  # noqa: F403
# documented under this path, though not in the module's __all__:
from .features.weighting import QUANTUM_BITS as QUANTUM_BITS
