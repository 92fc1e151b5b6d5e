"""Moved to :mod:`streamnb.features.ngrams`: this old path warns (DeprecationWarning) and re-exports it."""

from ._moved import warn_moved

warn_moved(__name__, "streamnb.features.ngrams")

from .features.ngrams import *  # noqa: F403
