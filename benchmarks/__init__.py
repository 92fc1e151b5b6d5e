"""streamnb benchmark suite: ``python -m benchmarks`` (see ``python -m benchmarks --help``).

One entry point runs every section (throughput, fullstream, ceilings, batch, scaling,
memory, accuracy, tokenizers; ``distributed`` on request) and writes ``results.json``, ``RESULTS.md`` and PNG
plots; ``python -m benchmarks.report`` rebuilds the report and the README's performance
section from ``results.json``. Sections live in ``bench_<name>.py``, each also runnable on
its own (``python -m benchmarks.bench_throughput``); shared helpers are in ``common.py``
(timing, medians, machine info) and ``data.py`` (corpus and synthetic streams).

BLAS thread pools are limited to one thread here, before anything imports numpy: on a
loaded 2-core machine OpenBLAS threads spinning for tiny products were seen to cost
milliseconds per call. Every measurement in the suite is single-threaded anyway.
"""

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
