"""Moved to :mod:`streamnb.service.serve`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.service.serve")

from .service.serve import *  # noqa: F403
