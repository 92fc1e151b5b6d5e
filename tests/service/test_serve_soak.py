"""The soak of benchmarks/serve_soak.py (issue 28), short: 32 clients for 18 seconds after 10
of warm-up, the journals folded every second; the full run (10 minutes, RSS growth <= 5%
after warm-up) is ``python -m benchmarks.serve_soak``.

RSS is compared between the median samples of a 6-second window at the end of the warm-up
and one at the end of the run: a fold of a user's model holds a second copy of it for a
moment (spikes of 10 MB seen here), which a median passes over while a leak moves it. The
bound here is 10% (the 5% goal is the 10-minute run's): so short a run on a shared 2-core
machine still moves in allocator steps, and a leak of a few KB a request (about 12,000-23,000
requests measured here) still fails it."""

from __future__ import annotations

from benchmarks import serve_soak


def test_a_short_soak_keeps_memory_files_and_lessons_in_order():
    figures = serve_soak.run(minutes=0.3, clients=32, users=8, pool_size=100, warmup=10.0, window=6.0, every=0.5,
                             snapshot_seconds=1.0, max_rss_growth=0.10)
    assert figures["errors"] == 0, figures["first_errors"]
    assert figures["checks"] > 500 and figures["tells"] > 20  # it did serve, both kinds
    assert figures["rss_growth"] <= 0.10, (figures["rss_kib_warm"], figures["rss_kib_end"])
    assert figures["open_files_idle_after"] <= figures["open_files_idle_before"] + 8
    assert figures["exit_code"] == 0 and figures["model_problems"] == []
    assert figures["passed"]
