"""Moved to :mod:`streamnb.service.journal`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.service.journal")

from .service.journal import *  # noqa: F403

# documented under this path, though not in the module's __all__:
from .service.journal import LEARN as LEARN
from .service.journal import journal_path as journal_path
from .service.journal import replay as replay
