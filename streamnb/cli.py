"""Moved to :mod:`streamnb.service.cli` (the layout by layer, ARCHITECTURE.md); this old path
stays importable and re-exports its public names."""

import sys

from .service.cli import *  # noqa: F403
from .service.cli import main

if __name__ == "__main__":  # python -m streamnb.cli
    sys.exit(main())
