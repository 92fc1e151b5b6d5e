"""Moved to :mod:`streamnb.features.email`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.features.email")

from .features.email import *  # noqa: F403
