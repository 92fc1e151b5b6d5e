"""Moved to :mod:`streamnb.filter.plots`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.filter.plots")

from .filter.plots import *  # noqa: F403
