"""Moved to :mod:`streamnb.filter.datasets` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .filter.datasets import *  # noqa: F403
