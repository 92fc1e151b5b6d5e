"""Moved to :mod:`streamnb.integrations.river` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .integrations.river import *  # noqa: F403
