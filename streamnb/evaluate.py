"""Moved to :mod:`streamnb.filter.evaluate`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.filter.evaluate")

from .filter.evaluate import *  # noqa: F403
