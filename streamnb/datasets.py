"""Moved to :mod:`streamnb.filter.datasets`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.filter.datasets")

from .filter.datasets import *  # noqa: F403
