"""Moved to :mod:`streamnb.integrations.river`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.integrations.river")

from .integrations.river import *  # noqa: F403
