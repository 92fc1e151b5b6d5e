"""Moved to :mod:`streamnb.filter.calibrate` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .filter.calibrate import *  # noqa: F403
