"""``python -m benchmarks.trec_speed``: the trec section's speed figure alone (the default filter
against the numpy baseline, CPU, taking turns 1,000 messages at a time), without the classic
filters' hour-long runs. Needs ``STREAMNB_TREC07P`` (research use only, never in the repository).
"""

from __future__ import annotations

import os
import statistics
import sys

from . import bench_trec


def main() -> int:
    if not os.environ.get(bench_trec.TREC_ENV):
        print(f"{bench_trec.TREC_ENV} is not set (the TREC 2007 corpus, research use only)", file=sys.stderr)
        return 2
    from streamnb.filter.decision import SpamFilter
    from streamnb.filter.trec import load_trec

    messages = load_trec(os.environ[bench_trec.TREC_ENV])
    raws, labels = [m.raw for m in messages], [m.label for m in messages]
    rows = bench_trec.run_interleaved({"default": bench_trec.filter_step(SpamFilter()),
                                       "numpy": bench_trec.numpy_step()}, raws, labels, print)
    turns = [numpy / default for default, numpy in zip(rows["default"]["chunk_cpu"], rows["numpy"]["chunk_cpu"])]
    print(f"the default filter's speed over the numpy baseline's: {statistics.median(turns):.3f}x (median of "
          f"{len(turns)} turns of {bench_trec.CHUNK:,} messages; CPU {rows['default']['cpu_seconds']:.1f} s against "
          f"{rows['numpy']['cpu_seconds']:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
