"""Moved to :mod:`streamnb.filter.trec`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.filter.trec")

from .filter.trec import *  # noqa: F403
