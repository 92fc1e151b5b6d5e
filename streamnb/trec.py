"""Moved to :mod:`streamnb.filter.trec` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .filter.trec import *  # noqa: F403
