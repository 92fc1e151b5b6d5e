"""Corrections (issue 34): a lesson unlearned, by the default filter, the command and the service.

The default filter (``SpamFilter()``: the fusion of EmailNB and logistic regression on byte
4-grams) learns the first 800 messages of the Date-ordered SpamAssassin stream. A lesson is
one of the 20 messages after them, learned under the other label (misfiled: what a
correction takes back), or under its own (as labelled: a lesson taken back all the same).
The probes are 200 later messages, never learned; a score is the filter's log-odds,
log P(spam|x) - log P(ham|x).

- **Right after**: the lesson learned, then unlearned: the largest change of a probe's score
  (target <= 1e-9).
- **With lessons in between**: the lesson learned, then the n messages after the 20 (with
  their labels; n = 1, 10, 100), then the lesson unlearned; against the filter that learned
  the 800 and those n only: the largest difference of a probe's score, as a fraction of
  what the lesson had moved the probes when it was learned (the largest move). The worst
  lesson at n = 100, of either kind, is the target (<= 10%). Beside it, the same with ``records=None`` (the
  reverse step: what unlearn did before issue 34), and the difference as a fraction of the
  gap the unlearn had to close (the lesson's effect just before it, against that filter).
- **The command and the service**: the filter's model saved; ``streamnb learn`` then
  ``streamnb unlearn`` of the lesson (right after), and ``streamnb unlearn`` on the model
  saved after the lesson and 100 others; the service (``streamnb serve --allow-tell``, the
  command's model with its ledger of 100,000) told the lesson, then told to forget it
  (spamc's ``-L forget``), and told to forget it after 100 others. Each is compared as
  above with the filter in this process that never learned the lesson (the file saved after
  the command's run, or by the service at its clean stop, is loaded).
- **Cost**: CPU per message of the 800 learned by the default filter with its records and
  with ``records=None`` (the rounds taking turns; the only figures of the section measured
  in rounds, the others are deterministic), and the bytes a record takes in memory
  (tracemalloc) and in the model file.

With ``--quick`` (the synthetic corpus, or 300 messages): 100 learned, 3 lessons, n = 1 and
10, 50 probes; the command and the service right after only.
"""

from __future__ import annotations

import pickle
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import common
from .service import Service, child_env

NAME = "corrections"
TITLE = "Corrections: a lesson unlearned right after, and with lessons in between"
DEFAULT = True
USER = "bench"


class Plan:
    """How many messages of the stream each part takes."""

    def __init__(self, quick: bool) -> None:
        self.learned = 100 if quick else 800
        self.lessons = 3 if quick else 20
        self.between = (1, 10) if quick else (1, 10, 100)
        self.probes = 50 if quick else 200

    def split(self, messages: Sequence[Any]) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        """(learned, lessons, in between, probes): consecutive slices of the stream."""
        at = self.learned
        learned, lessons = messages[:at], messages[at:at + self.lessons]
        at += self.lessons
        between = messages[at:at + max(self.between)]
        at += max(self.between)
        return list(learned), list(lessons), list(between), list(messages[at:at + self.probes])


KINDS = ("misfiled", "as labelled")


def other(label: str) -> str:
    return "ham" if label == "spam" else "spam"


def taught(lesson: Any, kind: str) -> str:
    """The label a lesson is learned (and unlearned) under."""
    return other(lesson.label) if kind == "misfiled" else lesson.label


def scores(model: Any, probes: list[bytes]) -> list[float]:
    """The filter's log-odds of each probe."""
    from streamnb.filter.decision import SpamFilter

    spam_filter = SpamFilter(model)
    return [spam_filter.log_odds(raw) for raw in probes]


def largest(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b))


def copy(model: Any) -> Any:
    return pickle.loads(pickle.dumps(model))


def learned(model: Any, messages: list[Any]) -> Any:
    for message in messages:
        model.learn_one(message.raw, message.label)
    return model


# -- in this process ------------------------------------------------------------------------------

def in_between(base: Any, lessons: list[Any], between: list[Any], probes: list[bytes], counts: tuple[int, ...],
               kind: str, records: bool) -> dict[str, Any]:
    """Per n: each lesson's move, what its unlearn left against the filter that never learned
    it, and the gap the unlearn had to close."""
    out: dict[str, Any] = {}
    for n in counts:
        never = scores(learned(copy(base), between[:n]), probes)
        rows = []
        for lesson in lessons:
            model = copy(base)
            if not records:
                model._records = None
            start = scores(model, probes)
            model.learn_one(lesson.raw, taught(lesson, kind))
            moved = largest(scores(model, probes), start)
            learned(model, between[:n])
            gap = largest(scores(model, probes), never)
            model.unlearn_one(lesson.raw, taught(lesson, kind))
            left = largest(scores(model, probes), never)
            rows.append({"label": lesson.label, "moved": moved, "gap": gap, "left": left,
                         "of_moved": left / moved, "of_gap": left / gap if gap else None})
        of_moved = [row["of_moved"] for row in rows]
        out[str(n)] = {"lessons": rows, "worst_of_moved": max(of_moved), "median_of_moved": statistics.median(of_moved),
                       "worst_lesson": max(range(len(rows)), key=lambda i: of_moved[i])}
    return out


def right_after(base: Any, lessons: list[Any], probes: list[bytes]) -> dict[str, Any]:
    model = copy(base)
    start = scores(model, probes)
    moved, left = [], []
    for kind in KINDS:
        for lesson in lessons:
            model.learn_one(lesson.raw, taught(lesson, kind))
            moved.append(largest(scores(model, probes), start))
            model.unlearn_one(lesson.raw, taught(lesson, kind))
            left.append(largest(scores(model, probes), start))
    return {"moved": moved, "left": left, "worst_left": max(left)}


# -- the command and the service ------------------------------------------------------------------

def command(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "streamnb", *args], capture_output=True, env=child_env(),
                          timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"streamnb {' '.join(args)}: {done.stderr.decode(errors='replace')[-2000:]}")


def through_command(base: Any, lesson: Any, between: list[Any], probes: list[bytes], folder: Path,
                    with_between: bool) -> dict[str, Any]:
    """``streamnb learn`` + ``streamnb unlearn`` (right after), or ``streamnb unlearn`` on the model
    saved after the lesson and ``between``: what is left against the filter that never learned it."""
    import streamnb

    path, eml = folder / "model.snb", folder / "lesson.eml"
    eml.write_bytes(lesson.raw)
    option = f"--{other(lesson.label)}"
    if with_between:
        model = copy(base)
        model.learn_one(lesson.raw, other(lesson.label))
        learned(model, between)
        model.save(path)
        never = scores(learned(copy(base), between), probes)
    else:
        base.save(path)
        command("learn", str(path), option, str(eml))
        never = scores(base, probes)
    moved = largest(scores(streamnb.load(path), probes), never)
    command("unlearn", str(path), option, str(eml))
    left = largest(scores(streamnb.load(path), probes), never)
    return {"gap": moved, "left": left}


def tell(port: int, raw: bytes, label: str | None) -> bytes:
    """A TELL (spamc -L spam|ham, or forget) over spamd's protocol; the reply's first line."""
    headers = f"Message-class: {label}\r\nSet: local\r\n" if label else "Remove: local\r\n"
    request = (f"TELL SPAMC/1.5\r\n{headers}User: {USER}\r\nContent-length: {len(raw)}\r\n\r\n").encode() + raw
    with socket.create_connection(("127.0.0.1", port), timeout=120) as connection:
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    first = reply.split(b"\r\n", 1)[0]
    if not first.startswith(b"SPAMD/1.5 0 "):
        raise RuntimeError(f"TELL answered {reply[:200]!r}")
    return first


def through_service(messages: list[Any], lesson: Any, between: list[Any], probes: list[bytes], folder: Path,
                    with_between: bool) -> dict[str, Any]:
    """The service's model (the command's, with its ledger) at the learned messages (and the
    lesson and ``between``, learned here); the server told the lesson (when not learned here)
    and told to forget it; the file it saves at its clean stop, against the same model that
    never learned the lesson."""
    import streamnb
    from streamnb.service import cli

    def served() -> Any:
        return learned(cli.build_model(cli.build_parser().parse_args(["serve", "--models", "unused"])), messages)

    models = folder / "models"
    models.mkdir()
    model = served()
    never = scores(learned(copy(model), between if with_between else []), probes)
    if with_between:
        model.learn_one(lesson.raw, other(lesson.label))
        learned(model, between)
    model.save(models / f"{USER}.snb")
    server = Service(models, "--allow-tell")
    try:
        if not with_between:
            tell(server.port, lesson.raw, other(lesson.label))
        tell(server.port, lesson.raw, None)
    finally:
        code = server.stop()
    if code != 0:
        raise RuntimeError(f"streamnb serve exited {code}: {''.join(server.log)[-2000:]}")
    return {"left": largest(scores(streamnb.load(models / f"{USER}.snb"), probes), never)}


# -- cost -----------------------------------------------------------------------------------------

def cost(messages: list[Any], repeats: int) -> dict[str, Any]:
    from streamnb.models import Fusion

    contenders = {"records": lambda: common.cpu_seconds(lambda: learned(Fusion(), messages)),
                  "no records": lambda: common.cpu_seconds(lambda: learned(Fusion(records=None), messages))}
    seconds = common.rounds(contenders, repeats)
    with_records = learned(Fusion(), messages)
    without = learned(Fusion(records=None), messages)
    memory, _ = common.traced_bytes(lambda: learned(Fusion(), messages))
    memory_without, _ = common.traced_bytes(lambda: learned(Fusion(records=None), messages))
    with tempfile.TemporaryDirectory() as folder:
        with_records.save(Path(folder) / "a.snb")
        without.save(Path(folder) / "b.snb")
        file_bytes = (Path(folder) / "a.snb").stat().st_size - (Path(folder) / "b.snb").stat().st_size
    n = len(messages)
    return {"messages": n,
            "us_per_message": {name: common.summary([s / n * 1e6 for s in runs], common.CPU)
                               for name, runs in seconds.items()},
            "ratio": common.ratio(seconds["records"], seconds["no records"]),
            "record_bytes_memory": (memory - memory_without) / len(with_records._records),
            "record_bytes_file": file_bytes / len(with_records._records)}


# -- the section ----------------------------------------------------------------------------------

def run(ctx: common.Context) -> dict[str, Any]:
    from streamnb.models import Fusion

    plan = Plan(ctx.quick)
    corpus = ctx.corpus()
    messages, lessons, between, probe_messages = plan.split(corpus.messages)
    probes = [message.raw for message in probe_messages]
    ctx.log(f"  {len(messages)} learned, {len(lessons)} lessons, {len(between)} in between, {len(probes)} probes")
    clock = time.perf_counter()
    base = learned(Fusion(), messages)
    data: dict[str, Any] = {"corpus": corpus.name, "learned": len(messages), "lessons": len(lessons),
                            "probes": len(probes), "between_counts": list(plan.between)}
    data["right_after"] = right_after(base, lessons, probes)
    ctx.log(f"  right after: largest change {data['right_after']['worst_left']:.2e}")
    data["in_between"] = {kind: {how: in_between(base, lessons, between, probes, plan.between, kind, records)
                                 for how, records in (("records", True), ("reverse step", False))}
                          for kind in KINDS}
    for kind, hows in data["in_between"].items():
        for how, by_n in hows.items():
            ctx.log(f"  {kind}, {how}: " + "; ".join(f"n = {n}: worst {row['worst_of_moved']:.1%}, median "
                                                     f"{row['median_of_moved']:.1%} of the move"
                                                     for n, row in by_n.items()))
    n = str(max(plan.between))
    worst = lessons[data["in_between"]["misfiled"]["records"][n]["worst_lesson"]]
    rest = between[:int(n)]
    data["command"], data["service"] = {}, {}
    for with_between in ((False, True) if not ctx.quick else (False,)):
        key = f"after {n} others" if with_between else "right after"
        lesson = worst if with_between else lessons[0]
        with tempfile.TemporaryDirectory() as folder:
            data["command"][key] = through_command(base, lesson, rest, probes, Path(folder), with_between)
        with tempfile.TemporaryDirectory() as folder:
            data["service"][key] = through_service(messages, lesson, rest, probes, Path(folder), with_between)
        ctx.log(f"  {key}: streamnb unlearn leaves {data['command'][key]['left']:.2e}, the service's forget "
                f"{data['service'][key]['left']:.2e}")
    data["cost"] = cost(messages, ctx.repeats)
    ctx.log(f"  cost: {data['cost']['ratio']['median']:.3f}x the CPU per learned message; a record "
            f"{data['cost']['record_bytes_memory']:.0f} bytes in memory, {data['cost']['record_bytes_file']:.0f} "
            "in the file")
    data["seconds"] = time.perf_counter() - clock
    return data


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _range(values: Any) -> str:
    values = list(values)
    return f"{min(values):.2f} to {max(values):.2f}"


def markdown(data: dict[str, Any]) -> list[str]:
    n = str(max(data["between_counts"]))
    lines = [f"The default filter after the first {data['learned']:,} messages of the {data['corpus']} stream (Date "
             f"order); {data['lessons']} lessons (the next messages, each learned under the other label, misfiled, "
             f"or under its own), unlearned; a score is a probe's log-odds ({data['probes']} later messages, never "
             "learned).", "",
             f"Right after the learn, the largest change of a probe's score: {data['right_after']['worst_left']:.1e} "
             f"(the lessons had moved them by up to {max(data['right_after']['moved']):.2f}).", "",
             "With n lessons in between, what the unlearn leaves against the filter that never learned the lesson "
             "(the largest difference over the probes), as a share of what the lesson had moved them when it was "
             "learned; for the worst lesson, and the median one:", "",
             "| lessons | unlearn | " + " | ".join(f"n = {k}: worst | median" for k in data["between_counts"]) + " |",
             "|---|---|" + "---|---|" * len(data["between_counts"])]
    for kind, hows in data["in_between"].items():
        for how, by_n in hows.items():
            name = "kept steps (now)" if how == "records" else "reverse step (before)"
            lines.append(f"| {kind} | {name} | " + " | ".join(f"{_pct(by_n[k]['worst_of_moved'])} | "
                                                             f"{_pct(by_n[k]['median_of_moved'])}" for k in by_n) + " |")
    for kind, hows in data["in_between"].items():
        rows = hows["records"][n]["lessons"]
        gaps = [row["of_gap"] for row in rows if row["of_gap"] is not None]
        lines += ["", f"At n = {n}, {kind}: the lessons had moved the probes by {_range(r['moved'] for r in rows)} "
                  f"when learned, by {_range(r['gap'] for r in rows)} just before the unlearn (against the filter "
                  f"that never learned them), and the unlearn left {_range(r['left'] for r in rows)}"
                  + (f" ({_pct(statistics.median(gaps))} of that gap, median)." if gaps else ".")]
    lines += ["", "Through the command and the service (the largest difference of a probe's score from the filter "
              "that never learned the lesson):", "", "| | streamnb unlearn | the service's forget |", "|---|---|---|"]
    for key in data["command"]:
        lines.append(f"| {key} | {data['command'][key]['left']:.1e} | {data['service'][key]['left']:.1e} |")
    cost = data["cost"]
    us = cost["us_per_message"]
    lines += ["", f"Keeping the steps: {us['records']['median']:.0f} us of CPU per learned message against "
              f"{us['no records']['median']:.0f} us without ({cost['ratio']['median']:.3f}x, median of the rounds); "
              f"a record takes {cost['record_bytes_memory']:.0f} bytes in memory and {cost['record_bytes_file']:.0f} "
              "in the model file."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    n = str(max(data["between_counts"]))
    return [
        {"id": "corrections_right_after", "what": "default filter: largest probe score change, a lesson learned "
         "then unlearned", "value": data["right_after"]["worst_left"], "op": "<=", "threshold": 1e-9, "unit": ""},
        {"id": "corrections_in_between", "what": f"default filter: what unlearning a lesson leaves after {n} others, "
         "over what it moved (worst lesson)",
         "value": max(hows["records"][n]["worst_of_moved"] for hows in data["in_between"].values()),
         "op": "<=", "threshold": 0.10, "unit": ""},
        {"id": "corrections_command_service", "what": "streamnb unlearn and the service's forget right after: largest "
         "probe score change", "value": max(data["command"]["right after"]["left"],
                                             data["service"]["right after"]["left"]),
         "op": "<=", "threshold": 1e-9, "unit": ""},
    ]


if __name__ == "__main__":
    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
