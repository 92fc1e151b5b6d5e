"""Test-wide settings.

Hypothesis profiles: ``ci`` (HYPOTHESIS_PROFILE=ci, set by .ci/run) draws the same examples
on every run of a fresh clone, so a red CI always means a change broke something, never a
lucky draw; the default profile explores anew each run and keeps failures in .hypothesis/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.served import Served

settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def serve(tmp_path):
    """Start servers (``serve(models, *options)``); any still running at the end is stopped."""
    started: list[Served] = []

    def start(models: Path | None = None, *options: str, faults: tuple[str, ...] = ()) -> Served:
        server = Served(models or tmp_path / "models", *options, faults=faults)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.alive():
            server.kill()
