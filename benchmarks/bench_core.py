"""The core benchmark of issue 2, now sections of the suite (kept so the old command still works).

``python -m benchmarks.bench_core [options]`` is ``python -m benchmarks --only
throughput,scaling,memory [options]``: prequential speed against river (throughput),
predict_one cost against |V| (scaling), memory of the trained state against river (memory).
"""

import sys

from .suite import main

if __name__ == "__main__":
    raise SystemExit(main(["--only", "throughput,scaling,memory", *sys.argv[1:]]))
