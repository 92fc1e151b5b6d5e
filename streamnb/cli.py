"""Moved to :mod:`streamnb.service.cli`: this old path warns (DeprecationWarning) and re-exports it."""

import sys

from ._moved import warn_moved

warn_moved(__name__, "streamnb.service.cli")

from .service.cli import *  # noqa: F403
from .service.cli import main

if __name__ == "__main__":  # python -m streamnb.cli
    sys.exit(main())
