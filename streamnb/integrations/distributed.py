"""Training and prediction on Dask: exact for naive Bayes, because merging count tables is concatenation.

A naive Bayes model is a table of counts, and counts add up: a model trained on part A
merged with a model trained on part B is the model trained on A then B (docs/design.md,
invariant 4). So each partition of a Dask collection learns a fresh model locally
(``learn_many``), and the partition models are merged pairwise up a tree, ``split_every``
at a time, in partition order. The result is an ordinary streamnb model, equal to one
process calling ``learn_many`` on the whole collection (same counts, same vocabulary, same
class order; predictions agree to rounding).

A :class:`~streamnb.LogisticRegression` trains the same way, but its merge is parameter
mixing (Mann et al. 2009): the result is the average of the partition models' weights,
each weighing by the documents it learned. That is approximate: it is not the model one
process learns by stepping through every document in turn (benchmarks/bench_logistic.py
measures the gap on 20 Newsgroups).

Works with any scheduler Dask offers: the threaded default, or a ``distributed`` cluster
through a ``Client`` (pass it as ``scheduler=client``, or create it before calling: an
active Client becomes Dask's default).

Input
-----
- a ``dask.bag.Bag`` of records ``(document, label)`` or ``(document, label, weight)``, where a
  document is raw text (the model must have a tokenizer) or a mapping feature -> value;
- a ``dask.dataframe.DataFrame`` with a document column and a label column (names are
  parameters), and optionally a sample-weight column.

Tokenizers run on the workers. Partition models are built and merged *without* the
tokenizer, which is attached again to the final model on the caller's side: a tokenizer
then never travels back from the workers, and a tokenizer that is not equal to its own
pickled copy (a lambda, a closure) does not make the merges fail on mismatched parameters.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Hashable, Sequence
from typing import Any, Protocol, TypeVar

try:
    import dask
    import dask.bag as db
    import dask.dataframe as dd
    import pandas as pd
except ImportError as exc:  # pragma: no cover - exercised by simulating a missing dask
    raise ImportError(
        "streamnb.integrations.distributed needs Dask (dask.bag, dask.dataframe, distributed, pandas): "
        "pip install streamnb[dask]") from exc

from ..errors import InvalidTypeError, StreamNBError, describe
from ..validate import check_columns, check_distinct_columns, check_int, check_output_columns


class Model(Protocol):
    """What this module needs from a model: every streamnb model provides it."""

    def get_params(self) -> dict[str, Any]: ...
    def learn_many(self, X: Sequence[Any], y: Sequence[Any], w: Sequence[float] | None = None) -> Any: ...
    def merge(self, other: Any) -> Any: ...
    def predict_one(self, x: Any) -> Any: ...
    def predict_log_proba_one(self, x: Any) -> dict[Any, float]: ...
    @property
    def classes(self) -> list: ...


M = TypeVar("M", bound=Model)
Data = Any  # dask.bag.Bag | dask.dataframe.DataFrame (kept loose: dask's own types are not generic)

DEFAULT_SPLIT_EVERY = 8


# -- training -----------------------------------------------------------------------------
def train(template: M, data: Data, *, text: str = "text", label: str = "label", weight: str | None = None,
          split_every: int = DEFAULT_SPLIT_EVERY, scheduler: Any = None) -> M:
    """A new model of the template's class and parameters, trained on a Dask collection.

    Each partition learns a fresh, empty copy of the template (``learn_many``); the
    partition models are merged ``split_every`` at a time up a tree, in partition order, so
    the result equals ``learn_many`` over all records in one process. The template itself
    is not changed and its counts, if it has any, are not included (see :func:`learn` to
    add to a trained model).

    ``text``, ``label`` and ``weight`` name the dataframe columns (ignored for a bag, whose
    records carry an optional third field, the weight). ``scheduler`` is anything
    ``dask.compute`` accepts: None (Dask's default: the active distributed Client if any,
    else threads), a name such as ``"threads"``, or a ``distributed.Client``.

    The template's tokenizer runs on the workers, so it must pickle (cloudpickle: a
    lambda will do). It must also be a pure function of the text: a tokenizer that learns
    from the documents it sees (e.g. document frequencies) would differ per partition.

    Parameters
    ----------
    template : model
        A streamnb model whose class and parameters the result takes (not changed).
    data : dask.bag.Bag or dask.dataframe.DataFrame
        Records ``(document, label[, weight])``, or a dataframe with the columns below.
    text, label : str
        The dataframe's columns of the documents and of their labels.
    weight : str or None
        The dataframe's column of sample weights; None for weight 1.
    split_every : int
        How many partition models are merged at a time (>= 2).
    scheduler : object
        What ``dask.compute`` takes as its scheduler; None for Dask's default.

    Returns
    -------
    model
        The trained model.

    Raises
    ------
    InvalidParameterError
        For a ``split_every`` below 2, or columns missing or named twice.
    InvalidTypeError
        For data that is neither a bag nor a dataframe.
    """
    check_int("split_every", split_every, 2)
    parts, columns = _partitions(data, text, label, weight)
    tokenizer = template.get_params().get("tokenizer")
    empty = _empty_without_tokenizer(template)
    models = [dask.delayed(_learn_partition, pure=False)(part, empty, tokenizer, index, columns)
              for index, part in enumerate(parts)]
    while len(models) > 1:
        models = [dask.delayed(_merge_models, pure=False)(*models[start:start + split_every])
                  for start in range(0, len(models), split_every)]
    (model,) = dask.compute(models[0], scheduler=scheduler)
    if tokenizer is not None:
        model.tokenizer = tokenizer
    return model


def learn(model: M, data: Data, *, text: str = "text", label: str = "label", weight: str | None = None,
          split_every: int = DEFAULT_SPLIT_EVERY, scheduler: Any = None) -> M:
    """Add a Dask collection to a (possibly trained) model, in place; returns the model.

    The batch is trained on the cluster as in :func:`train`, then merged into ``model``:
    the same as ``model.learn_many`` on the batch. If anything fails, ``model`` is
    unchanged (the merge starts only once the whole batch has been learned).

    Parameters
    ----------
    model : model
        A streamnb model, trained or not (changed in place).
    data, text, label, weight, split_every, scheduler
        As for :func:`train`.

    Returns
    -------
    model
        ``model`` itself.
    """
    batch = train(model, data, text=text, label=label, weight=weight, split_every=split_every,
                  scheduler=scheduler)
    model.merge(batch)
    return model


def _empty_without_tokenizer(template: M) -> M:
    """A fresh model of the template's class and parameters, with no counts and no tokenizer."""
    params = template.get_params()
    if "tokenizer" in params:
        params = {**params, "tokenizer": None}
    return type(template)(**params)


def _learn_partition(part: Any, empty: M, tokenizer: Any, index: int, columns: tuple | None) -> M:
    """One partition's model: a copy of the empty template after learn_many on its records."""
    model = copy.deepcopy(empty)  # the threaded scheduler hands every task the same object
    try:
        documents, labels, weights = _records(part, columns)
        if documents:
            model.learn_many(_tokenized(documents, tokenizer), labels, weights)
    except StreamNBError as exc:
        # Same error class (callers may catch it), with the partition that holds the record.
        raise type(exc)(f"partition {index}: {exc}") from exc
    return model


def _merge_models(*models: M) -> M:
    """The models merged in order: the model trained on the first one's data, then the next ...

    The first model is merged into in place, which Dask allows here: every partition model
    and partial merge is an intermediate result with exactly one consumer (this task), never
    handed to the caller; on a cluster, an input that came from another worker is a copy,
    and a task lost with its worker is recomputed from recomputed inputs. Copying it first
    would cost a pass over its whole vocabulary per merge.
    """
    merged = models[0]
    for other in models[1:]:
        merged.merge(other)
    return merged


def _records(part: Any, columns: tuple | None) -> tuple[list, list, list[float] | None]:
    """(documents, labels, weights or None) of one partition of a bag or a dataframe."""
    if columns is not None:
        text, label, weight = columns
        weights = None if weight is None else part[weight].tolist()
        return part[text].tolist(), part[label].tolist(), weights
    documents, labels, weights = [], [], []
    for row, record in enumerate(part):
        if not isinstance(record, (tuple, list)) or len(record) not in (2, 3):
            raise InvalidTypeError(
                f"record {row}: expected (document, label) or (document, label, weight), got {describe(record)}")
        documents.append(record[0])
        labels.append(record[1])
        weights.append(record[2] if len(record) == 3 else 1.0)
    return documents, labels, weights


def _tokenized(documents: list, tokenizer: Any) -> list:
    """Raw documents (text, or the bytes of a message) run through the tokenizer; mappings
    (and bad input) pass as they are."""
    if tokenizer is None:
        return documents
    return [tokenizer(d) if isinstance(d, (str, bytes)) else d for d in documents]


# -- prediction ---------------------------------------------------------------------------
def predict(model: Model, data: Data, *, text: str = "text", proba: bool = True, log: bool = False,
            prediction: str = "prediction", prefix: str = "proba_", client: Any = None) -> Data:
    """Predictions for every document of a Dask collection, lazily, in input order.

    For a bag of documents: a bag of ``(label, {class: probability})`` pairs (just the
    labels when ``proba=False``). For a dataframe: a dataframe with the input's index and
    partitions, a ``prediction`` column, and one column per class named ``prefix + str(class)``
    (in ``model.classes`` order). ``log=True`` gives log-probabilities instead. The label is
    the model's own ``predict_one``.

    The model is one object in the graph, sent to each worker once, not per partition.
    With ``client`` (a distributed Client) it is scattered to the workers right away
    instead of travelling inside the task graph (large models make large graphs).

    Parameters
    ----------
    model : model
        A trained streamnb model.
    data : dask.bag.Bag or dask.dataframe.DataFrame
        Documents, or a dataframe with a ``text`` column.
    text : str
        The dataframe's column of the documents.
    proba : bool
        Give the probabilities of the classes as well as the label.
    log : bool
        Give log-probabilities instead.
    prediction : str
        The name of the output column of the label.
    prefix : str
        The names of the output columns of the classes start with this.
    client : distributed.Client or None
        Scatter the model to the workers through this client.

    Returns
    -------
    dask.bag.Bag or dask.dataframe.DataFrame
        The predictions, lazily.

    Raises
    ------
    InvalidParameterError
        For a missing column, or output columns that collide.
    InvalidTypeError
        For data that is neither a bag nor a dataframe.
    """
    tokenizer = model.get_params().get("tokenizer")
    if client is not None:
        shared = client.scatter(model, broadcast=True)
    else:
        shared = dask.delayed(model, traverse=False)
    if isinstance(data, db.Bag):
        return data.map_partitions(_predict_bag_partition, shared, tokenizer, proba, log)
    if isinstance(data, dd.DataFrame):
        check_columns(data.columns, [text])
        classes = list(model.classes)
        names = [prefix + str(c) for c in classes] if proba else []
        check_output_columns(prediction, names)
        meta = pd.DataFrame({prediction: pd.Series([], dtype=object),
                             **{name: pd.Series([], dtype=float) for name in names}})
        return data.map_partitions(_predict_frame_partition, shared, tokenizer, text, prediction,
                                   list(zip(classes, names)), log, meta=meta)
    raise InvalidTypeError(f"data must be a dask.bag.Bag or a dask.dataframe.DataFrame, got {describe(data)}")


def _predict_documents(model: Model, documents: list, tokenizer: Any, log: bool) -> list[tuple[Any, dict]]:
    """(predict_one, predict_log_proba_one or its exp) of each document, tokenized once."""
    results = []
    for features in _tokenized(list(documents), tokenizer):
        label = model.predict_one(features)
        scores = model.predict_log_proba_one(features)  # the model caches the lookup of features
        if not log:
            scores = {c: math.exp(v) for c, v in scores.items()}
        results.append((label, scores))
    return results


def _predict_bag_partition(documents: Any, model: Model, tokenizer: Any, proba: bool, log: bool) -> list:
    results = _predict_documents(model, list(documents), tokenizer, log)
    return results if proba else [label for label, _ in results]


def _predict_frame_partition(part: pd.DataFrame, model: Model, tokenizer: Any, text: str, prediction: str,
                             columns: list[tuple[Hashable, str]], log: bool) -> pd.DataFrame:
    results = _predict_documents(model, part[text].tolist(), tokenizer, log)
    frame = {prediction: pd.Series([label for label, _ in results], index=part.index, dtype=object)}
    for cls, name in columns:
        frame[name] = pd.Series([scores.get(cls, float("nan")) for _, scores in results],
                                index=part.index, dtype=float)
    return pd.DataFrame(frame, index=part.index)


# -- input checks -------------------------------------------------------------------------
def _partitions(data: Data, text: str, label: str, weight: str | None) -> tuple[list, tuple | None]:
    """The collection's partitions as Delayed objects, and the columns to read (None: a bag)."""
    if isinstance(data, db.Bag):
        return data.to_delayed(), None
    if isinstance(data, dd.DataFrame):
        wanted = [text, label] + ([] if weight is None else [weight])
        check_columns(data.columns, wanted)
        check_distinct_columns(wanted)
        return data[wanted].to_delayed(), (text, label, weight)
    raise InvalidTypeError(
        f"data must be a dask.bag.Bag of (document, label[, weight]) records or a dask.dataframe.DataFrame, "
        f"got {describe(data)} (see dask.bag.from_sequence and dask.dataframe.from_pandas)")


__all__ = ["train", "learn", "predict", "Model"]
