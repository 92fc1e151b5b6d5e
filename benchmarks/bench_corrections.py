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
  lesson at n = 100, of either kind, is the target (<= 10%). Three ways: the default filter
  (its window of documents: the unlearn replays the steps after the lesson, src/replay.rs),
  ``window=0`` (the lesson's own kept steps undone: what unlearn did before the replay), and
  ``records=None`` (the reverse step: what unlearn did before issue 34); and the difference
  as a fraction of the gap the unlearn had to close (the lesson's effect just before it,
  against that filter).
- **The command and the service**: the filter's model saved; ``streamnb learn`` then
  ``streamnb unlearn`` of the lesson (right after), and ``streamnb unlearn`` on the model
  saved after the lesson and 100 others; the service (``streamnb serve --allow-tell``, the
  command's model with its ledger of 100,000) told the lesson, then told to forget it
  (spamc's ``-L forget``), and told to forget it after 100 others. Each is compared as
  above with the filter in this process that never learned the lesson (the file saved after
  the command's run, or by the service at its clean stop, is loaded).
- **Cost**: CPU per message of the 800 learned by the default filter, with ``window=0`` and
  with ``records=None``; CPU of an unlearn with 100 lessons after it, by replay and by the
  lesson's own steps (the rounds taking turns; the only figures of the section measured in
  rounds, the others are deterministic); the bytes a record and a kept document take in
  memory (the core's own count, ``nbytes``) and in the model file, and the model file's
  size.

With ``--quick`` (the synthetic corpus, or 300 messages): 100 learned, 3 lessons, n = 1 and
10, 50 probes; the command and the service right after only.
"""

from __future__ import annotations

import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import common
from .service import Service, child_env, exchange

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

#: How a filter unlearns a lesson with others after it: the keyword arguments of its Fusion
HOWS = {"replay": {}, "own step": {"window": 0}, "reverse step": {"records": None}}


def in_between(base: Any, lessons: list[Any], between: list[Any], probes: list[bytes], counts: tuple[int, ...],
               kind: str) -> dict[str, Any]:
    """Per n: each lesson's move, what its unlearn left against the filter that never learned
    it, and the gap the unlearn had to close."""
    out: dict[str, Any] = {}
    for n in counts:
        never = scores(learned(copy(base), between[:n]), probes)
        rows = []
        for lesson in lessons:
            model = copy(base)
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
    from streamnb.filter.sources import read_mail

    path, eml = folder / "model.snb", folder / "lesson.eml"
    eml.write_bytes(lesson.raw)
    option = f"--{other(lesson.label)}"
    if with_between:
        # the message as the command reads the file (a first line "From ..." makes it an mbox,
        # and that line is not part of the message): the same bytes, the same fingerprint
        read = next(iter(read_mail(str(eml)))).raw
        model = copy(base)
        model.learn_one(read, other(lesson.label))
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
    reply = exchange(port, request, timeout=120)
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

def cost(bases: dict[str, Any], messages: list[Any], lessons: list[Any], between: list[Any],
         repeats: int) -> dict[str, Any]:
    """Learning's CPU per message by each way; an unlearn's CPU with ``between`` after the
    lesson (replay, own step); the bytes of a record and a kept document, in memory and in
    the model file."""
    from streamnb.models import Fusion

    contenders = {how: (lambda kwargs=kwargs: common.cpu_seconds(lambda: learned(Fusion(**kwargs), messages)))
                  for how, kwargs in HOWS.items()}
    seconds = common.rounds(contenders, repeats)
    n = len(messages)
    lesson = lessons[0]

    def unlearn(how: str) -> float:
        model = copy(bases[how])
        model.learn_one(lesson.raw, other(lesson.label))
        learned(model, between)
        return common.cpu_seconds(lambda: model.unlearn_one(lesson.raw, other(lesson.label)))

    unlearning = common.rounds({how: (lambda how=how: unlearn(how)) for how in ("replay", "own step")}, repeats)
    records = len(bases["replay"]._records)
    documents = bases["replay"]._records.documents
    nbytes = {how: model.nbytes for how, model in bases.items()}
    with tempfile.TemporaryDirectory() as folder:
        sizes = {}
        for how, model in bases.items():
            model.save(Path(folder) / "m.snb")
            sizes[how] = (Path(folder) / "m.snb").stat().st_size
    return {"messages": n, "records": records, "documents": documents, "after": len(between),
            "us_per_message": {how: common.summary([s / n * 1e6 for s in runs], common.CPU)
                               for how, runs in seconds.items()},
            "ratio": common.ratio(seconds["replay"], seconds["reverse step"]),
            "ratio_own_step": common.ratio(seconds["own step"], seconds["reverse step"]),
            "unlearn_ms": {how: common.summary([s * 1e3 for s in runs], common.CPU) for how, runs in unlearning.items()},
            "record_bytes_memory": (nbytes["own step"] - nbytes["reverse step"]) / records,
            "document_bytes_memory": (nbytes["replay"] - nbytes["own step"]) / documents,
            "record_bytes_file": (sizes["own step"] - sizes["reverse step"]) / records,
            "document_bytes_file": (sizes["replay"] - sizes["own step"]) / documents,
            "file_bytes": sizes}


# -- the section ----------------------------------------------------------------------------------

def run(ctx: common.Context) -> dict[str, Any]:
    from streamnb.models import Fusion

    plan = Plan(ctx.quick)
    corpus = ctx.corpus()
    messages, lessons, between, probe_messages = plan.split(corpus.messages)
    probes = [message.raw for message in probe_messages]
    ctx.log(f"  {len(messages)} learned, {len(lessons)} lessons, {len(between)} in between, {len(probes)} probes")
    clock = time.perf_counter()
    bases = {how: learned(Fusion(**kwargs), messages) for how, kwargs in HOWS.items()}
    base = bases["replay"]
    data: dict[str, Any] = {"corpus": corpus.name, "learned": len(messages), "lessons": len(lessons),
                            "probes": len(probes), "between_counts": list(plan.between)}
    data["right_after"] = right_after(base, lessons, probes)
    ctx.log(f"  right after: largest change {data['right_after']['worst_left']:.2e}")
    data["in_between"] = {kind: {how: in_between(bases[how], lessons, between, probes, plan.between, kind)
                                 for how in HOWS}
                          for kind in KINDS}
    for kind, hows in data["in_between"].items():
        for how, by_n in hows.items():
            ctx.log(f"  {kind}, {how}: " + "; ".join(f"n = {n}: worst {row['worst_of_moved']:.1%}, median "
                                                     f"{row['median_of_moved']:.1%} of the move"
                                                     for n, row in by_n.items()))
    n = str(max(plan.between))
    worst = lessons[data["in_between"]["misfiled"]["replay"][n]["worst_lesson"]]
    rest = between[:int(n)]
    data["command"], data["service"] = {}, {}
    for with_between in ((False, True) if not ctx.quick else (False,)):
        key = f"after {n} others" if with_between else "right after"
        lesson = worst if with_between else lessons[0]
        with tempfile.TemporaryDirectory() as folder:
            data["command"][key] = through_command(base, lesson, rest, probes, Path(folder), with_between)
        with tempfile.TemporaryDirectory() as folder:
            data["service"][key] = through_service(messages, lesson, rest, probes, Path(folder), with_between)
        if with_between:  # as a share of what the lesson moved when learned (the library's figure)
            rows = data["in_between"]["misfiled"]["replay"][n]["lessons"]
            moved = rows[lessons.index(worst)]["moved"]
            for where in ("command", "service"):
                data[where][key]["of_moved"] = data[where][key]["left"] / moved
        ctx.log(f"  {key}: streamnb unlearn leaves {data['command'][key]['left']:.2e}, the service's forget "
                f"{data['service'][key]['left']:.2e}")
    data["cost"] = cost(bases, messages, lessons, rest, ctx.repeats)
    c = data["cost"]
    ctx.log(f"  cost: {c['ratio']['median']:.3f}x the CPU per learned message; an unlearn {n} lessons after "
            f"{c['unlearn_ms']['replay']['median']:.1f} ms (own step {c['unlearn_ms']['own step']['median']:.2f} ms); "
            f"a kept document {c['document_bytes_memory']:.0f} bytes in memory, {c['document_bytes_file']:.0f} in "
            "the file")
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
    names = {"replay": "replay (now)", "own step": "its own kept steps (before)",
             "reverse step": "reverse step (before issue 34)"}
    for kind, hows in data["in_between"].items():
        for how, by_n in hows.items():
            name = names[how]
            lines.append(f"| {kind} | {name} | " + " | ".join(f"{_pct(by_n[k]['worst_of_moved'])} | "
                                                             f"{_pct(by_n[k]['median_of_moved'])}" for k in by_n) + " |")
    for kind, hows in data["in_between"].items():
        rows = hows["replay"][n]["lessons"]
        gaps = [row["of_gap"] for row in rows if row["of_gap"] is not None]
        lines += ["", f"At n = {n}, {kind}: the lessons had moved the probes by {_range(r['moved'] for r in rows)} "
                  f"when learned, by {_range(r['gap'] for r in rows)} just before the unlearn (against the filter "
                  f"that never learned them), and the unlearn left {_range(r['left'] for r in rows)}"
                  + (f" ({_pct(statistics.median(gaps))} of that gap, median)." if gaps else ".")]
    lines += ["", "Through the command and the service (the largest difference of a probe's score from the filter "
              "that never learned the lesson):", "", "| | streamnb unlearn | the service's forget |", "|---|---|---|"]
    for key in data["command"]:
        share = {where: data[where][key].get("of_moved") for where in ("command", "service")}
        lines.append(f"| {key} | {data['command'][key]['left']:.1e}"
                     + (f" ({_pct(share['command'])} of the move)" if share["command"] is not None else "")
                     + f" | {data['service'][key]['left']:.1e}"
                     + (f" ({_pct(share['service'])} of the move)" if share["service"] is not None else "") + " |")
    cost = data["cost"]
    us, ms, sizes = cost["us_per_message"], cost["unlearn_ms"], cost["file_bytes"]
    lines += ["", f"The cost: learning takes {us['replay']['median']:.0f} us of CPU per message with the window "
              f"against {us['own step']['median']:.0f} us with the steps alone (window=0) and "
              f"{us['reverse step']['median']:.0f} us with no records (against no records: "
              f"{cost['ratio']['median']:.3f}x and {cost['ratio_own_step']['median']:.3f}x, median of the rounds). "
              f"An unlearn with {cost['after']} lessons "
              f"after the lesson takes {ms['replay']['median']:.1f} ms by replay, {ms['own step']['median']:.2f} ms by "
              f"its own steps. A record takes {cost['record_bytes_memory']:.0f} bytes in memory and "
              f"{cost['record_bytes_file']:.0f} in the model file; a kept document (the window held "
              f"{cost['documents']:,}) {cost['document_bytes_memory']:,.0f} bytes in memory and "
              f"{cost['document_bytes_file']:,.0f} in the file. The model file after {cost['messages']:,} messages: "
              f"{sizes['replay'] / 2**20:.1f} MiB ({sizes['own step'] / 2**20:.1f} MiB with window=0, "
              f"{sizes['reverse step'] / 2**20:.1f} MiB with no records)."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    n = str(max(data["between_counts"]))
    return [
        {"id": "corrections_right_after", "what": "default filter: largest probe score change, a lesson learned "
         "then unlearned", "value": data["right_after"]["worst_left"], "op": "<=", "threshold": 1e-9, "unit": ""},
        {"id": "corrections_in_between", "what": f"default filter: what unlearning a lesson leaves after {n} others, "
         "over what it moved (worst lesson)",
         "value": max(hows["replay"][n]["worst_of_moved"] for hows in data["in_between"].values()),
         "op": "<=", "threshold": 0.10, "unit": ""},
        {"id": "corrections_command_service", "what": "streamnb unlearn and the service's forget right after: largest "
         "probe score change", "value": max(data["command"]["right after"]["left"],
                                             data["service"]["right after"]["left"]),
         "op": "<=", "threshold": 1e-9, "unit": ""},
        {"id": "corrections_command_service_between", "what": f"streamnb unlearn and the service's forget after {n} "
         "others: what is left over what the lesson moved (the worst misfiled lesson; not run with --quick)",
         "value": max(data[where][f"after {n} others"]["of_moved"] for where in ("command", "service"))
         if f"after {n} others" in data["command"] else None, "op": "<=", "threshold": 0.10, "unit": ""},
    ]


if __name__ == "__main__":
    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
