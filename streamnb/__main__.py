"""``python -m streamnb``: the streamnb command (see streamnb.cli)."""

import sys

from .cli import main

sys.exit(main())
