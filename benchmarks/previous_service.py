"""The release before the fusion became the spam filter's default, served as it was.

Issue 35 asks for one client's latency through spamc "back to the previous default's (2.3 ms)":
the figure of ``streamnb serve`` as it stood at :data:`COMMIT` (the merge of issue 28, the last
commit whose default model is EmailNB), on a quieter machine. Absolute times drift with the
machine's load, so the serve section measures that release itself in the same rounds as
today's service, message by message. This module builds it from this repository's history
(``git archive``) into a venv of its own under ``benchmarks/_cache/`` (never committed), once;
trains its default model with its own code on the messages given; and its service is started
with :class:`benchmarks.service.Service` (``python=``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .service import ROOT

#: The last commit whose default model is EmailNB (the next one, e324c8d, made the fusion the default).
COMMIT = "8d167f4"
CACHE = ROOT / "benchmarks" / "_cache" / f"release-{COMMIT}"
#: Trains the release's default model (its ``streamnb train`` defaults) on the messages of an
#: index ("label path" lines), in order, and saves it: run by the release's interpreter.
TRAIN = """
import sys
from streamnb import cli
index, out = sys.argv[1], sys.argv[2]
model = cli.build_model(cli.build_parser().parse_args(["train", "unused"]))
for line in open(index):
    label, path = line.rstrip("\\n").split(" ", 1)
    with open(path, "rb") as message:
        model.learn_one(message.read(), label)
model.save(out)
print(type(model).__name__)
"""


def build(log: Callable[[str], None]) -> Path:
    """The interpreter of a venv with the release installed: built the first time (a few
    minutes: its Rust core is compiled), then taken from the cache. RuntimeError, saying why,
    when it cannot be (no git, a clone without that commit, a failed build)."""
    python = CACHE / "venv" / "bin" / "python"
    if (CACHE / "built").exists() and python.exists():
        return python
    shutil.rmtree(CACHE, ignore_errors=True)
    source = CACHE / "src"
    source.mkdir(parents=True)
    log(f"  building the release at {COMMIT} (the previous default) into {CACHE} ...")
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", COMMIT], capture_output=True)
    except OSError as error:
        raise RuntimeError(f"git cannot be run: {error}") from None
    if archive.returncode:
        raise RuntimeError(f"git archive {COMMIT} failed: {archive.stderr.decode(errors='replace').strip()}")
    for step in (["tar", "-x", "-C", str(source)], [sys.executable, "-m", "venv", str(CACHE / "venv")],
                 [str(python), "-m", "pip", "install", "--quiet", str(source)]):
        done = subprocess.run(step, input=archive.stdout if step[0] == "tar" else None, capture_output=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(step[:3])} failed: {done.stderr.decode(errors='replace').strip()[-500:]}")
    (CACHE / "built").touch()
    return python


def train(python: Path, messages: Sequence, model: Path, scratch: Path) -> str:
    """The release's default model learned from ``messages`` (each with ``raw`` and
    ``label``), in order, saved at ``model``; returns its class name."""
    scratch.mkdir(parents=True)
    index = scratch / "index"
    with index.open("w") as lines:
        for i, message in enumerate(messages):
            path = scratch / f"{i:05d}.eml"
            path.write_bytes(message.raw)
            lines.write(f"{message.label} {path}\n")
    # run outside this tree, so that the release's own streamnb is the one imported
    done = subprocess.run([str(python), "-c", TRAIN, str(index), str(model)], capture_output=True, text=True,
                          cwd=scratch)
    if done.returncode:
        raise RuntimeError(f"the release could not train its model: {done.stderr.strip()[-500:]}")
    return done.stdout.strip()
