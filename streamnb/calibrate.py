"""Moved to :mod:`streamnb.filter.calibrate`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.filter.calibrate")

from .filter.calibrate import *  # noqa: F403
