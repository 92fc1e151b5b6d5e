"""Moved to :mod:`streamnb.features.text` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .features.text import *  # noqa: F403
