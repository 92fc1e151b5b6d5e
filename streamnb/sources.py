"""Moved to :mod:`streamnb.filter.sources` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .filter.sources import *  # noqa: F403
