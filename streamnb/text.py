"""Moved to :mod:`streamnb.features.text`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.features.text")

from .features.text import *  # noqa: F403
