"""A tiny made-up corpus in TREC 2007's layout, with its feedback indexes, for the tests of the
feedback tasks (the real corpus is research-use only and never in the repository).

``full/index`` lists every message (``spam ../data/inmail.N``); ``delay/index`` gives the
labels of the first :data:`DELAYED` messages and ``partial/index`` those of one recipient's
mail (every third message), the others written with a capitalised label (``Spam``, ``Ham``).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

N_MESSAGES = 48
DELAYED = 16
SPAM_WORDS = ["cheap", "pills", "discount", "offer", "winner", "prize", "casino", "loan", "free", "bonus"]
HAM_WORDS = ["meeting", "agenda", "project", "report", "lunch", "review", "draft", "schedule", "notes", "team"]


def label_of(i: int) -> str:
    """Message i's class (0-based): spam and ham interleaved unevenly, both from the start."""
    return "spam" if i % 3 != 1 else "ham"


def raw_message(i: int) -> bytes:
    words = SPAM_WORDS if label_of(i) == "spam" else HAM_WORDS
    sender = "deals@offers.example.com" if label_of(i) == "spam" else "alice@work.example.org"
    body = " ".join(words[(i + k) % len(words)] for k in range(12))
    return (f"From: {sender}\nTo: me@example.org\nSubject: {words[i % len(words)]} {i}\n"
            f"Date: Mon, {1 + i % 28:02d} Apr 2007 10:00:00 +0000\nMessage-ID: <{i}@example>\n\n{body}\n").encode()


def labelled(task: str, i: int) -> bool:
    """Whether the task's index gives message i's label."""
    return task == "full" or (task == "delay" and i < DELAYED) or (task == "partial" and i % 3 == 0)


def index_text(task: str, n: int = N_MESSAGES) -> str:
    lines = []
    for i in range(n):
        label = label_of(i)
        lines.append(f"{label if labelled(task, i) else label.capitalize()} ../data/inmail.{i + 1}")
    return "\n".join(lines) + "\n"


def write_trec_folder(root: Path, feedback: bool = True) -> Path:
    """The corpus as a folder (``feedback``: with delay/ and partial/); returns root."""
    (root / "data").mkdir(parents=True)
    for i in range(N_MESSAGES):
        (root / "data" / f"inmail.{i + 1}").write_bytes(raw_message(i))
    for task in ("full", "delay", "partial") if feedback else ("full",):
        (root / task).mkdir()
        (root / task / "index").write_text(index_text(task))
    return root


def write_archive(path: Path, files: dict[str, bytes]) -> Path:
    """A .tar.gz holding the files (name -> bytes), in that order; returns path."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def write_trec_archives(folder: Path) -> tuple[Path, Path]:
    """The corpus as trec07p-dev's two archives: (the messages and full/index, the feedback indexes)."""
    corpus = {"trec07p-tiny/full/index": index_text("full").encode()}
    corpus.update({f"trec07p-tiny/data/inmail.{i + 1}": raw_message(i) for i in range(N_MESSAGES)})
    feedback = {f"trec07p-tiny/{task}/index": index_text(task).encode() for task in ("delay", "partial")}
    return (write_archive(folder / "trec07p-tiny.tar.gz", corpus),
            write_archive(folder / "trec07p-tiny-feedback.tar.gz", feedback))
