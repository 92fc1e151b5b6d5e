"""``python -m benchmarks``: see benchmarks.suite."""

from .suite import main

raise SystemExit(main())
