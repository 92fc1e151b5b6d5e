"""Moved to :mod:`streamnb.filter.evaluate` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .filter.evaluate import *  # noqa: F403
