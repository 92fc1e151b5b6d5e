"""Moved to :mod:`streamnb.service.journal` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

from .service.journal import *  # noqa: F403
# documented under this path, though not in the module's __all__:
from .service.journal import LEARN as LEARN, journal_path as journal_path, replay as replay
