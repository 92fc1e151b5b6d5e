"""The soak of benchmarks/serve_soak.py (issue 28), short: 32 clients for 9 seconds after 8 of
warm-up, the journals folded every second; the full run (10 minutes) is ``python -m
benchmarks.serve_soak``."""

from __future__ import annotations

from benchmarks import serve_soak


def test_a_short_soak_keeps_memory_files_and_lessons_in_order():
    figures = serve_soak.run(minutes=0.15, clients=32, users=8, pool_size=100, warmup=8.0, window=6.0, every=0.5,
                             snapshot_seconds=1.0)
    assert figures["errors"] == 0, figures["first_errors"]
    assert figures["checks"] > 500 and figures["tells"] > 20  # it did serve, both kinds
    assert figures["rss_growth"] <= 0.05, (figures["rss_kib_warm"], figures["rss_kib_end"])
    assert figures["open_files_idle_after"] <= figures["open_files_idle_before"] + 8
    assert figures["exit_code"] == 0 and figures["model_problems"] == []
    assert figures["passed"]
