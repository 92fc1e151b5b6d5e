"""Moved to :mod:`streamnb.filter.plots` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .filter.plots import *  # noqa: F403
