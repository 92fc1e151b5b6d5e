"""Moved to :mod:`streamnb.filter.decision`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.filter.decision")

from .filter.decision import *  # noqa: F403
