"""Test-wide settings.

Hypothesis profiles: ``ci`` (HYPOTHESIS_PROFILE=ci, set by .ci/run) draws the same examples
on every run of a fresh clone, so a red CI always means a change broke something, never a
lucky draw; the default profile explores anew each run and keeps failures in .hypothesis/.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
