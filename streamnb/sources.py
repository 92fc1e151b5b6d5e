"""Moved to :mod:`streamnb.filter.sources`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.filter.sources")

from .filter.sources import *  # noqa: F403
