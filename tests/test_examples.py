"""The README's Python examples run as written, and the example scripts write only where asked (issue 28)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_the_readme_has_python_examples():
    assert len(SNIPPETS) >= 2


@pytest.mark.parametrize("number", range(len(SNIPPETS)))
def test_a_readme_example_runs_verbatim(number, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example may save a file
    exec(compile(SNIPPETS[number], f"README.md python example {number + 1}", "exec"), {})


@pytest.mark.skipif(not os.environ.get("STREAMNB_SPAMASSASSIN"), reason="STREAMNB_SPAMASSASSIN is not set")
def test_the_decision_example_writes_plots_only_where_asked(tmp_path):
    script = ROOT / "examples" / "decision_spamassassin.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = subprocess.run([sys.executable, str(script), "--limit", "400"], cwd=tmp_path, env=env,
                           capture_output=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written in the working folder
    asked = subprocess.run([sys.executable, str(script), "--limit", "400", "--out", str(tmp_path / "png")],
                           cwd=tmp_path, env=env, capture_output=True, timeout=300)
    assert asked.returncode == 0, asked.stderr
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == ["learning_curve.png", "reliability.png", "roc.png"]
