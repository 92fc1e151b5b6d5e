"""A spam filter under one of TREC 2007's feedback tasks: which labels it gets, and what it
does with the mail that comes without.

TREC 2007's spam track (Cormack 2007) measured filters under four tasks. In each, every
message of the stream is classified by the filter as it stands and scored; they differ in
the labels the filter gets afterwards:

- ``full``: every message's label, right after it is classified;
- ``delay`` and ``partial``: the labels of some messages only (``labelled``; TREC's: the
  first 10,000 messages, or one recipient's mail); the others are delivered with their
  verdict and no label;
- ``active``: the filter may ask for at most ``quota`` labels, of the messages of its
  choice; it is told the labels it has left and the messages still to come, this one
  included (``classify(x, budget=(labels_left, messages_left))``), and says whether it
  wants this one (``Verdict.ask``).

:func:`run_task` runs that protocol: for each message, ``verdict = f.classify(x,
explain=False, budget=...)`` (the budget in the active task only); then ``f.learn(x,
label)`` when the task gives the label (or the filter asked for it with labels left),
else ``f.observe(x, verdict)``: delivered with this verdict, no label.
:func:`streamnb.filter.trec.load_trec_task` reads the labels each task gives on a TREC
corpus.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from ..validate import Label
    from .report import Bools, Floats, Objects
    from .spam_filter import Verdict
else:
    from .._lazy import numpy as np

from ..errors import InvalidInputError, InvalidParameterError, describe
from ..validate import check_int, check_one_of, check_progress
from .base import HAM, SPAM
from .evaluate import Progress, _objects, _pairs, prequential
from .report import VerdictRates

__all__ = ["TASKS", "DEFAULT_QUOTA", "FIRST", "LAST", "TaskFilter", "TaskReport", "run_task"]

#: TREC 2007's feedback tasks.
TASKS = ("full", "delay", "partial", "active")
#: The active task's quota of labels (TREC 2007's, over 75,419 messages).
DEFAULT_QUOTA = 1000
#: The parts of a long stream ranked apart (:meth:`TaskReport.ranking`): on trec07p-dev the
#: first 40,000 messages are where the default filter's settings were chosen, the last
#: 10,000 are out of sample.
FIRST, LAST = 40_000, 10_000


class TaskFilter(Protocol):
    """What :func:`run_task` calls: :class:`~streamnb.filter.spam_filter.SpamFilter`'s
    ``classify``, ``learn`` and ``observe`` (the verdict needs ``label``, ``log_odds`` and
    ``ask``)."""

    def classify(self, x: Any, *, explain: bool = ..., budget: tuple[int, int] | None = ...) -> Verdict: ...

    def learn(self, x: Any, label: Label) -> object: ...

    def observe(self, x: Any, verdict: Verdict) -> object: ...


@dataclass
class TaskReport(VerdictRates):
    """What a filter said of each message of a stream under a feedback task, and which
    labels it got.

    Per message: ``y_true`` (the class it is scored against), ``verdicts``, ``log_odds``
    (the ranking, for (1-AUC)%), ``learned`` (the filter got its label and learned it),
    ``asked`` (the active task: the filter asked for it). The verdicts' rates and the
    ranking: :class:`~streamnb.filter.report.VerdictRates`.
    """

    task: str
    quota: int | None
    positive: Label
    negative: Label
    y_true: Objects = field(repr=False)
    verdicts: Objects = field(repr=False)
    log_odds: Floats = field(repr=False)
    learned: Bools = field(repr=False)
    asked: Bools = field(repr=False)
    seconds: float = 0.0

    @property
    def labels_used(self) -> int:
        """The labels the filter got (given by the task, or asked for)."""
        return int(self.learned.sum())

    @property
    def labels_asked(self) -> int:
        """The messages whose label the filter asked for (the active task; 0 in the others)."""
        return int(self.asked.sum())

    def ranking(self, first: int = FIRST, last: int = LAST) -> dict[str, float | None]:
        """(1-AUC)% of the whole stream and, when it is longer than ``first`` messages, of
        its first ``first`` and its last ``last`` (None for a part with one class only).

        Parameters
        ----------
        first, last : int
            The sizes of the two parts (>= 1).

        Returns
        -------
        dict
            ``whole``, and on a stream longer than ``first``: ``first_<first>`` and
            ``last_<last>``.
        """
        check_int("first", first, 1)
        check_int("last", last, 1)
        figures = {"whole": self.one_minus_auc_percent_of(slice(None))}
        if self.n > first:
            figures[f"first_{first}"] = self.one_minus_auc_percent_of(slice(0, first))
            figures[f"last_{last}"] = self.one_minus_auc_percent_of(slice(max(0, self.n - last), None))
        return figures


def run_task(spam_filter: TaskFilter, stream: Iterable[tuple[Any, Label]], task: str = "full", *,
             labelled: Sequence[bool] | None = None, quota: int | None = None,
             progress: Progress = False,
             positive: Label = SPAM, negative: Label = HAM) -> TaskReport:
    """Run a filter over a stream under one feedback task (see the module docstring).

    Parameters
    ----------
    spam_filter : SpamFilter
        The filter (changed in place), or anything with its ``classify``, ``learn`` and
        ``observe`` (:class:`TaskFilter`).
    stream : iterable of (message, label)
        The messages in order, each with its true class (the filter is scored on every
        one; it gets the label only as the task says).
    task : {"full", "delay", "partial", "active"}
        Which labels the filter gets.
    labelled : sequence of bool or None
        The delay and partial tasks: whether the filter gets each message's label (one per
        message). None in the full and active tasks.
    quota : int or None
        The active task: the labels the filter may ask for (>= 0; None for
        :data:`DEFAULT_QUOTA`). None in the other tasks.
    progress : bool or callable
        A bar on stderr (True, drawn only on a terminal), none (False), or a
        callable(done, total).
    positive, negative : label
        The two classes (the filter's).

    Returns
    -------
    TaskReport
        Every message's verdict and log-odds, which labels the filter got and asked for.

    Raises
    ------
    InvalidParameterError
        For an unknown task, a quota out of range or given outside the active task.
    InvalidInputError
        For ``labelled`` missing, given outside the delay and partial tasks, or not one
        bool per message; an item that is not a (message, label) pair, a label that is
        neither class, or an empty stream. Nothing is classified then.
    """
    check_one_of("task", task, TASKS, "'full', 'delay', 'partial' or 'active'")
    check_progress(progress)
    if quota is not None and task != "active":
        raise InvalidParameterError(f"quota goes with the active task, not {task!r}")
    left = check_int("quota", DEFAULT_QUOTA if quota is None else quota, 0) if task == "active" else 0
    items = list(_pairs(stream))  # read whole first: a bad item or label stops the run before it starts
    given = _given(task, labelled, len(items))
    for i, (_, label) in enumerate(items):
        if label != positive and label != negative:
            raise InvalidInputError(f"stream item {i} has label {describe(label)}; expected {positive!r} or "
                                    f"{negative!r}")
    n = len(items)
    verdicts: list[str] = []
    log_odds: list[float] = []
    learned = np.zeros(n, dtype=bool)
    asked = np.zeros(n, dtype=bool)
    at = 0

    def step(x: Any, label: Label) -> None:
        nonlocal at, left
        i = at
        if task == "active":
            verdict = spam_filter.classify(x, explain=False, budget=(left, n - i))
            asked[i] = verdict.ask
            learned[i] = verdict.ask and left > 0
            left -= int(learned[i])
        else:
            verdict = spam_filter.classify(x, explain=False)
            learned[i] = given[i]
        if learned[i]:
            spam_filter.learn(x, label)
        else:
            spam_filter.observe(x, verdict)
        verdicts.append(verdict.label)
        log_odds.append(float(verdict.log_odds))
        at += 1

    started = time.perf_counter()
    prequential(items, step, progress=progress, total=n, label=task)
    return TaskReport(task=task, quota=(DEFAULT_QUOTA if quota is None else quota) if task == "active" else None,
                      positive=positive, negative=negative, y_true=_objects([label for _, label in items]),
                      verdicts=np.asarray(verdicts, dtype=object), log_odds=np.asarray(log_odds, dtype=float),
                      learned=learned, asked=asked, seconds=time.perf_counter() - started)


def _given(task: str, labelled: Sequence[bool] | None, n: int) -> list[bool]:
    """Whether the task gives each message's label unasked (every one in the full task, none
    in the active task); InvalidInputError for a ``labelled`` that does not fit the task."""
    if task in ("delay", "partial"):
        if labelled is None:
            raise InvalidInputError(f"the {task} task needs labelled: whether the filter gets each message's label")
        given = list(labelled)
        if len(given) != n or not all(isinstance(g, (bool, np.bool_)) for g in given):
            raise InvalidInputError(f"labelled must hold one bool per message ({n:,}), got {describe(labelled)} "
                                    f"of {len(given):,}")
        return [bool(g) for g in given]
    if labelled is not None:
        raise InvalidInputError(f"labelled goes with the delay and partial tasks; the {task} task gives "
                                + ("every label" if task == "full" else "the labels asked for"))
    return [task == "full"] * n
