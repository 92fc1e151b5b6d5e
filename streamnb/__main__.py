"""``python -m streamnb``: the streamnb command (see streamnb.service.cli)."""

import sys

from .service.cli import main

sys.exit(main())
