"""Moved to :mod:`streamnb.features.ngrams` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .features.ngrams import *  # noqa: F403
