"""The ComplementNB benchmark, now sections of the suite (kept so the old command still works).

``python -m benchmarks.bench_complement [options]`` is ``python -m benchmarks --only
throughput,scaling,accuracy [options]``: CNB and CNB norm against river's ComplementNB on
the stream (throughput), their cost against |V| and K (scaling), and the accuracy of CNB,
CNB norm and TWCNB (online TF-IDF + norm) next to the other models (accuracy).
"""

import sys

from .suite import main

if __name__ == "__main__":
    raise SystemExit(main(["--only", "throughput,scaling,accuracy", *sys.argv[1:]]))
