"""Moved to :mod:`streamnb.filter.decision` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .filter.decision import *  # noqa: F403
