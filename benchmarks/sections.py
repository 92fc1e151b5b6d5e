"""The sections of the suite, in the order they run.

A section is a module ``benchmarks/bench_<name>.py`` with:

- ``NAME`` (used by ``--only``), ``TITLE``, ``DEFAULT`` (run without ``--only``?), and
  optionally ``REPEATED = False`` for a deterministic section measured once;
- ``run(ctx: common.Context) -> dict``: measure, return JSON-serialisable data;
- ``markdown(data) -> list[str]``: its part of RESULTS.md;
- optionally ``targets(data) -> list[dict]`` (``{"id", "what", "value", "op", "threshold",
  "unit"}``, judged by the report) and ``plots(data, out_dir) -> list[str]`` (PNG names).

Adding a section (e.g. ``bench_persist``) is one module and one line below.
"""

from __future__ import annotations

from types import ModuleType

from . import (
    bench_accuracy,
    bench_batch,
    bench_ceilings,
    bench_classic,
    bench_corrections,
    bench_distributed,
    bench_feedback,
    bench_fullstream,
    bench_logistic,
    bench_memory,
    bench_scaling,
    bench_serve,
    bench_site,
    bench_smoothing,
    bench_store,
    bench_throughput,
    bench_tokenizers,
    bench_trec,
)

SECTIONS: dict[str, ModuleType] = {module.NAME: module for module in (
    bench_throughput,
    bench_fullstream,
    bench_ceilings,
    bench_batch,
    bench_scaling,
    bench_memory,
    bench_accuracy,
    bench_tokenizers,
    bench_corrections,
    bench_distributed,
    bench_classic,
    bench_serve,
    bench_site,
    bench_store,
    bench_logistic,
    bench_trec,
    bench_feedback,
    bench_smoothing,
)}


def default_sections() -> list[str]:
    return [name for name, module in SECTIONS.items() if module.DEFAULT]
