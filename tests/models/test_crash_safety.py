"""Crash safety of save: a process saving a growing model is killed (SIGKILL) at random
moments, over and over; after every kill the file on disk must load, and be one of the
models the process saved (the old one or the new one), never a broken mix."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy  # noqa: F401  (streamnb imports numpy and its models on first use: forked savers start with them)

import streamnb
import streamnb.models.multinomial  # noqa: F401

STEP = 40  # documents learned between two saves
KILLS = 120


def document(i: int) -> dict[str, int]:
    """The i-th document of a deterministic stream (a vocabulary of about 4000 words)."""
    return {f"w{(i * 7 + j * 131) % 4000}": 1 + (i + j) % 3 for j in range(25)}


def label(i: int) -> str:
    return "ham" if i % 3 == 0 else "spam"


def save_forever(path: str, loaded=None) -> None:
    """Continue the model on disk (if any): learn STEP documents, save, repeat. ``loaded``
    (an Event) is set once the model is read, so a kill's delay counts from the saving loop."""
    model = streamnb.load(path) if os.path.exists(path) else streamnb.MultinomialNB()
    if loaded is not None:
        loaded.set()
    i = model.n_learned
    while True:
        for _ in range(STEP):
            model.learn_one(document(i), label(i))
            i += 1
        model.save(path)


def check_prefix(model, n: int) -> None:
    """The model is exactly the one trained on the first n documents of the stream."""
    assert model.n_learned == n and n % STEP == 0
    ham = sum(1 for i in range(n) if label(i) == "ham")
    assert model.class_counts == ({"ham": float(ham), "spam": float(n - ham)} if n else {})
    last = n - 1
    expected = sum(1 for i in range(n) if "w0" in document(i) and label(i) == label(last))
    assert model.feature_doc_counts("w0").get(label(last), 0.0) == expected


def test_a_killed_saver_never_leaves_a_broken_file(tmp_path):
    path = str(tmp_path / "model.snb")
    context = multiprocessing.get_context("fork")  # the parent's imports are reused: fast restarts
    rng = random.Random(5)
    seen, mid_write = 0, 0
    started = time.monotonic()
    for _ in range(KILLS):
        loaded = context.Event()
        process = context.Process(target=save_forever, args=(path, loaded), daemon=True)
        process.start()
        assert loaded.wait(60), "the saver did not start"  # on a loaded machine a fork can take a while
        time.sleep(rng.uniform(0.005, 0.08))
        os.kill(process.pid, signal.SIGKILL)
        process.join()
        assert process.exitcode == -signal.SIGKILL
        temporary = [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]
        mid_write += bool(temporary)
        for name in temporary:  # what a crash leaves behind; the next run starts clean
            os.unlink(tmp_path / name)
        if os.path.exists(path):
            model = streamnb.load(path)  # never ModelFormatError
            assert model.n_learned >= seen  # the old model or a newer one
            seen = model.n_learned
            check_prefix(model, seen)
    print(f"kills={KILLS} mid_write={mid_write} final_n={seen} seconds={time.monotonic() - started:.1f}")  # pytest -s
    assert seen >= 10 * STEP  # the model did grow across the kills
    assert mid_write >= 5, f"only {mid_write} of {KILLS} kills landed inside a save"


def test_a_killed_fresh_interpreter_never_leaves_a_broken_file(tmp_path):
    """The same with a separate Python process (no fork), a few times."""
    path = str(tmp_path / "model.snb")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
        from test_crash_safety import save_forever
        import numpy, streamnb.models.multinomial  # imported on first use otherwise: "ready" means the imports are done
        print("ready", flush=True)
        save_forever({path!r})
    """)
    rng = random.Random(11)
    seen = 0
    for _ in range(4):
        process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
        assert process.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.2, 0.6))
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stdout.close()
        if os.path.exists(path):
            model = streamnb.load(path)
            assert model.n_learned >= seen
            seen = model.n_learned
            check_prefix(model, seen)
    assert seen > 0
