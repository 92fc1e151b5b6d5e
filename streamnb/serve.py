"""Moved to :mod:`streamnb.service.serve` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .service.serve import *  # noqa: F403
