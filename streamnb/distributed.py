"""Moved to :mod:`streamnb.integrations.distributed`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.integrations.distributed")

from .integrations.distributed import *  # noqa: F403
