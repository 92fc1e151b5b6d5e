"""The commands that make, change and show a model file: ``train``, ``learn``, ``unlearn``
and ``inspect``.

learn and unlearn hold the model's write lock (:mod:`streamnb.service.journal`) from load
to save, and train around its save (a journal a deleted model left is learned too), so
commands run at once on one file (or beside ``streamnb serve``) each add their lessons:
none is lost to a concurrent writer.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from .cli_common import (
    LOCK_TIMEOUT,
    CommandError,
    build_model,
    check_model_file,
    check_new_file,
    counts_text,
    in_date_order,
    labelled,
    load_served_model,
    messages_text,
    sourced,
    warn_without_ledger,
    with_progress,
)


def cmd_train(args: argparse.Namespace) -> int:
    """``streamnb train``: a new model file from labelled mail, learned in Date order.

    Parameters
    ----------
    args
        The options of ``streamnb train``: the model file, the sources, the model's options,
        ``--force`` and ``--ledger``.

    Returns
    -------
    int
        0 once the model file is saved.

    Raises
    ------
    CommandError
        The file exists (without ``--force``), its folder does not, or there is nothing to learn.
    LockFileError, ModelLockedError
        The model file's lock cannot be made, or another writer holds it.
    SourceError, OSError
        A source cannot be read, or the file cannot be written (it is left as it was).
    """
    from ..persist import dumps
    from . import journal

    target = Path(args.model)
    check_new_file(args.model, "model file")
    if target.exists() and not args.force:
        raise CommandError(f"{str(target)!r} exists; use 'streamnb learn' to add to it, or --force to replace it")
    items = list(labelled(args))
    if not items:
        raise CommandError("nothing to learn: give --spam, --ham or --data sources")
    journal.check_lock_file(target)  # before the training, not after it (the sources are read: a typo made nothing)
    model = build_model(args)
    warn_without_ledger(model, items, args.model, "train")
    warn_one_class(items)
    # In Date order, as the mail arrived: naive Bayes' counts do not depend on the order, but a
    # logistic regression (the default model's second part) learns a step at a time, and a
    # folder of spam then a folder of ham would teach it one class, then the other.
    for x, label in with_progress(in_date_order(items), "train"):
        model.learn_one(x, label)
    with journal.write_lock(target, LOCK_TIMEOUT):
        if target.exists() and not args.force:  # made by another command while this one trained
            raise CommandError(f"{str(target)!r} exists; use 'streamnb learn' to add to it, or --force to replace it")
        # Beside no model file, a journal holds lessons `streamnb serve` acknowledged for a
        # model deleted since: the new model learns them, as the service would. The lessons
        # of a model this one replaces (--force) are dropped with it.
        orphaned = [] if target.exists() else journal.pending_lessons(target, journal.NO_FILE)
        journal.replay(model, orphaned, journal.journal_path(target))
        journal.save_folded(target, dumps(model))
    also = f" (and {messages_text(len(orphaned), 'journaled lesson')})" if orphaned else ""
    print(f"trained {type(model).__name__} on {messages_text(len(items))}{also} ({counts_text(model.class_counts)}); "
          f"|V| = {model.n_features:,}; saved {target}")
    return 0


def warn_one_class(items: list[tuple[Any, Any]]) -> None:
    """Say so when every message is of one class: such a model cannot tell one class from
    another (a filter of spam only calls nothing ham) until it learns the other.

    Parameters
    ----------
    items
        The (message, label) pairs about to be learned.
    """
    labels = {label for _, label in items}
    if len(labels) == 1:
        (label,) = labels
        other = {"spam": "ham", "ham": "spam"}.get(str(label), "another class")
        flag = f" (streamnb learn MODEL --{other} SRC)" if other in ("spam", "ham") else ""
        print(f"streamnb train: warning: every message is {label}: the model tells nothing apart until it learns "
              f"{other} too{flag}", file=sys.stderr)


def _correct(args: argparse.Namespace, unlearn: bool) -> int:
    from ..errors import InvalidInputError
    from ..persist import dumps
    from . import journal

    check_model_file(args.model)  # before the lock, whose file a typo would otherwise leave behind
    sources = list(sourced(args))  # read the mail before taking the lock: others wait less
    if not sources:
        raise CommandError(f"nothing to {'unlearn' if unlearn else 'learn'}: give --spam, --ham or --data sources")
    if unlearn:
        check_distinct(sources)
    items = [(x, label) for _, x, label in sources]
    with journal.write_lock(args.model, LOCK_TIMEOUT):
        model, folded = journal.fold_pending(args.model)  # with the lessons `streamnb serve` acknowledged
        if not unlearn:
            warn_without_ledger(model, items, args.model, "learn")
        change = model.unlearn_many if unlearn else model.learn_many
        try:
            change([x for x, _ in items], [label for _, label in items])  # all or nothing
        except InvalidInputError as error:
            if not unlearn:
                raise
            raise unlearn_error(args.model, sources, error) from None
        journal.save_folded(args.model, dumps(model))
    verb = "unlearned" if unlearn else "learned"
    also = f" (and {messages_text(folded, 'journaled lesson')})" if folded else ""
    print(f"{verb} {messages_text(len(items))}{also}; classes now {counts_text(model.class_counts)}; "
          f"saved {args.model}")
    return 0


def check_distinct(sources: list[tuple[str, Any, Any]]) -> None:
    """A message given twice to unlearn is refused, naming both places (it was learned once).

    Parameters
    ----------
    sources
        (origin, message, label) of each message to unlearn.

    Raises
    ------
    CommandError
        Two of them are the same message.
    """
    seen: dict[Any, str] = {}
    for origin, x, _ in sources:
        key = x if isinstance(x, (bytes, str)) else repr(x)
        if key in seen:
            twice = f"{origin} is given twice" if origin == seen[key] else f"{origin} and {seen[key]} are one message"
            raise CommandError(f"{twice}: a message is unlearned once; nothing was unlearned")
        seen[key] = origin


def unlearn_error(path: str, sources: list[tuple[str, Any, Any]], error: Exception) -> CommandError:
    """The error of an unlearn the model refused, about the message: which one, and why.

    The batch is all or nothing and its error speaks of features; the messages are unlearned
    one by one from the model file (read again: the refused batch may have left the model in
    memory changed) until one is refused, and that one is named.

    Parameters
    ----------
    path
        The model file (held under its write lock by the caller).
    sources
        (origin, message, label) of each message to unlearn.
    error
        What the model said of the batch.

    Returns
    -------
    CommandError
        "ORIGIN: this model never learned it as LABEL ...; nothing was unlearned".
    """
    from ..errors import InvalidInputError
    from . import journal

    model, _ = journal.fold_pending(path)
    for origin, x, label in sources:
        try:
            model.unlearn_one(x, label)
        except InvalidInputError as refused:
            reason = str(refused)
            if "feature" in reason:  # the counts' own words: a feature of the message is not in the class
                reason = f"some of its words were never learned as {label}"
            return CommandError(f"{origin}: {path} never learned this message as {label} ({reason}); nothing was "
                                "unlearned")
    return CommandError(f"{error}; nothing was unlearned")


def cmd_learn(args: argparse.Namespace) -> int:
    """``streamnb learn``: add labelled messages to a model file, in place (all or nothing).

    Parameters
    ----------
    args
        The options of ``streamnb learn``: the model file and the sources of the lessons.

    Returns
    -------
    int
        0 once the model file holds the lessons (and those its journal held).

    Raises
    ------
    CommandError
        The model file does not exist, or there is nothing to learn.
    ModelLockedError, SourceError, StreamNBError, OSError
        As the model file, its lock, the sources and the model allow: the file is left as it was.
    """
    return _correct(args, unlearn=False)


def cmd_unlearn(args: argparse.Namespace) -> int:
    """``streamnb unlearn``: take messages learned before out of a model file (all or nothing).

    Parameters
    ----------
    args
        The options of ``streamnb unlearn``: the model file and the sources of the
        messages to take out.

    Returns
    -------
    int
        0 once the model file is saved without them.

    Raises
    ------
    CommandError, ModelLockedError, SourceError, StreamNBError, OSError
        As :func:`cmd_learn` (a message the model never learned is refused: nothing is
        taken out).
    """
    return _correct(args, unlearn=True)


def cmd_inspect(args: argparse.Namespace) -> int:
    """``streamnb inspect``: a model file's type, classes, counts, |V| and most telling tokens,
    with the lessons ``streamnb serve`` journaled beside it and not yet folded (as the service sees it).

    Parameters
    ----------
    args
        The options of ``streamnb inspect``: the model file and ``--top``.

    Returns
    -------
    int
        0 once the description is printed.

    Raises
    ------
    CommandError
        The model file does not exist.
    ModelFormatError
        The file is not a model file, or is damaged.
    """
    model, lessons = load_served_model(args.model)
    print(f"{type(model).__name__}: {model!r}")
    if lessons:
        kinds = Counter(f"{lesson.action} {lesson.label}" if lesson.label else lesson.action for lesson in lessons)
        print(f"journal: {messages_text(len(lessons), 'lesson')} told to 'streamnb serve' and not yet folded into the "
              f"file ({', '.join(f'{kind} {n}' for kind, n in kinds.items())}); counted below")
    counts = getattr(model, "class_counts", {})
    print("classes: " + ", ".join(f"{label!r}: {count:g} message{'' if count == 1 else 's'}"
                                  for label, count in counts.items()))
    if hasattr(model, "n_features"):
        print(f"|V| = {model.n_features} features")
    smoothing = getattr(model, "smoothing_", None)
    if smoothing is not None:
        print(smoothing)
    if hasattr(model, "log_linear") and len(counts) >= 2 and args.top:
        for label, features in discriminative_features(model, args.top).items():
            print(f"top {args.top} tokens for {label!r} (log P(w|c) minus the mean over the other classes):")
            for feature, weight in features:
                print(f"  {feature}\t{weight:+.3f}")
    return 0


def discriminative_features(model: Any, k: int) -> dict[Any, list[tuple[Any, float]]]:
    """Per class, the k features whose weight most exceeds their mean weight in the other classes.

    Parameters
    ----------
    model
        A model with ``log_linear()`` (a naive Bayes model).
    k
        How many features per class.

    Returns
    -------
    dict
        Class label -> [(feature, lift)], the largest lift first.
    """
    import numpy as np

    view = model.log_linear()
    weights = view.weights
    top = {}
    for c, label in enumerate(view.classes):
        others = np.delete(weights, c, axis=1).mean(axis=1)
        lift = weights[:, c] - others
        order = np.argsort(-lift, kind="stable")[:k]
        top[label] = [(view.features[i], float(lift[i])) for i in order]
    return top
