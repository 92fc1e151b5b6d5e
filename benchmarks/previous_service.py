"""The service as it served the previous default, built from this repository's history.

Issue 35 asks for one client's latency through spamc "back to the previous default's (2.3 ms)":
the figure of ``streamnb serve`` as it stood at :data:`COMMIT` (the merge of issue 28, the last
commit whose default model is EmailNB; the next one made the fusion the default), on a quieter
machine. Absolute times drift with the machine's load, so the serve section measures that code
itself in the same rounds as today's service, message by message. This module builds it
(``git archive``) into a venv of its own under ``benchmarks/_cache/`` (never committed; one per
commit and Python version), once; trains its default model with its own code on the messages
given; and its service is started with :class:`benchmarks.service.Service` (``python=``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .service import ROOT, outside_env

#: The last commit whose default model is EmailNB (its successor, e324c8d, made the fusion the default).
COMMIT = "8d167f4d4ecfdadcd8c1098cb72cda53cb2bef2e"
SHORT = COMMIT[:7]
#: The model class its default makes (trained by it: anything else means another streamnb was imported).
MODEL = "EmailNB"
CACHE = ROOT / "benchmarks" / "_cache" / f"serve-{SHORT}-py{sys.version_info[0]}.{sys.version_info[1]}"
#: Trains the commit's default model (its ``streamnb train`` defaults) on the messages of an
#: index ("label path" lines), in order, and saves it: run by its own interpreter.
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
    """The interpreter of a venv with the commit installed: built the first time (a few
    minutes: its Rust core is compiled), then taken from the cache. RuntimeError, saying why
    in one line, when it cannot be (no git, a clone without that commit, a failed build)."""
    python = CACHE / "venv" / "bin" / "python"
    if (CACHE / "built").exists() and python.exists():
        return python
    log(f"  building streamnb at {SHORT} (the previous default) into {CACHE} ...")
    try:
        shutil.rmtree(CACHE, ignore_errors=True)
        source = CACHE / "src"
        source.mkdir(parents=True)
        archive = _step(["git", "-C", str(ROOT), "archive", "--format=tar", COMMIT])
        _step(["tar", "-x", "-C", str(source)], archive)
        _step([sys.executable, "-m", "venv", str(CACHE / "venv")])
        _step([str(python), "-m", "pip", "install", "--quiet", str(source)])
        (CACHE / "built").touch()
    except OSError as error:
        raise RuntimeError(f"{type(error).__name__}: {error}") from None
    return python


def train(python: Path, messages: Sequence, model: Path, scratch: Path, expect: str = MODEL) -> str:
    """The commit's default model learned from ``messages`` (each with ``raw`` and ``label``),
    in order, saved at ``model``; returns its class name, RuntimeError unless it is ``expect``."""
    scratch.mkdir(parents=True)
    index = scratch / "index"
    with index.open("w") as lines:
        for i, message in enumerate(messages):
            path = scratch / f"{i:05d}.eml"
            path.write_bytes(message.raw)
            lines.write(f"{message.label} {path}\n")
    # outside this tree and without PYTHONPATH, so that its own streamnb is the one imported
    made = _step([str(python), "-c", TRAIN, str(index), str(model)], cwd=scratch, env=outside_env())
    name = made.decode().strip()
    if name != expect:
        raise RuntimeError(f"the model trained at {SHORT} is a {name!r}, not {expect}: another streamnb was imported")
    return name


def _step(command: list[str], stdin: bytes | None = None, **options) -> bytes:
    """Run a command; its standard output, or RuntimeError with the end of its error output on one line."""
    done = subprocess.run(command, input=stdin, capture_output=True, **options)
    if done.returncode:
        said = " ".join(done.stderr.decode(errors="replace").split())
        raise RuntimeError(f"{' '.join(command[:3])} failed (exit {done.returncode}): {said[-300:]}")
    return done.stdout
