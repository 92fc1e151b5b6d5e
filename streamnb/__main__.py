"""``python -m streamnb``: the streamnb command (see streamnb.cli)."""

import sys

from .service.cli import main

sys.exit(main())
