"""Moved to :mod:`streamnb.features.email` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .features.email import *  # noqa: F403
