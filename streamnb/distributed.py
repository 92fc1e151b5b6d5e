"""Moved to :mod:`streamnb.integrations.distributed` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .integrations.distributed import *  # noqa: F403
