"""One naive Bayes classifier over records that mix text, numeric and categorical fields."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from .. import persist
from ..errors import InvalidInputError, InvalidTypeError, ModelFormatError, describe
from ..validate import Label, check_part, check_schema
from .base import DiscreteNB
from .categorical import CategoricalNB
from .gaussian import GaussianNB
from .multinomial import MultinomialNB
from .record import Record, RecordNB
from .settings import Forgetting, Pruning

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..store import Arrays
    from .values import Floats
else:
    from .._lazy import numpy as np

KINDS = ("text", "numeric", "categorical")


class _Read(NamedTuple):
    text: Any  # the text field's document (a mapping, or raw text; {} when absent), checked
    numeric: Any
    categorical: Any


@persist.register_model
class MixedNB(RecordNB):
    """Naive Bayes over records with a text field, numeric fields and categorical fields.

    The parts are independent given the class, so under ONE class prior
    log P(c | x) = log P(c) + L_text(c) + L_numeric(c) + L_categorical(c) - log Z,
    where each L is its part's joint log-likelihood minus the part's own prior (for
    ComplementNB, whose score carries no prior, its score). The shared prior is this
    model's ``class_prior`` over the records it learned.

    ``schema`` maps each field to ``"text"`` (at most one field), ``"numeric"`` or
    ``"categorical"``. A record may leave any field out: a missing numeric or categorical
    field is skipped, a missing text field is an empty document (which still counts for
    BernoulliNB, where absent words are evidence). Fields not in the schema are an error.

    Parameters
    ----------
    schema
        A non-empty mapping field -> ``"text"``, ``"numeric"`` or ``"categorical"``.
    text, numeric, categorical
        The part models (untrained, without a fixed class prior): a discrete model
        (default ``MultinomialNB()``; one that forgets, prunes or keeps a ledger is
        refused: the parts learn without them), a ``GaussianNB`` and a ``CategoricalNB``
        (defaults: theirs).
    class_prior
        The one prior of the record: ``"mle"`` (the default), ``"laplace"``,
        ``"uniform"``, or a mapping label -> prior probability.

    Raises
    ------
    InvalidParameterError
        For a schema that is empty, names another kind or two text fields, or a part that
        is trained, has a fixed class prior, or forgets, prunes or keeps a ledger.
    InvalidTypeError
        For a part of the wrong model type.

    >>> from streamnb.models.mixed import MixedNB
    >>> model = MixedNB({"text": "text", "size": "numeric", "domain": "categorical"})
    >>> _ = model.learn_one({"text": {"cheap": 2, "pills": 1}, "size": 900.0, "domain": "x.biz"}, "spam")
    >>> _ = model.learn_one({"text": {"cheap": 1, "offer": 1}, "size": 1100.0, "domain": "y.biz"}, "spam")
    >>> _ = model.learn_one({"text": {"agenda": 1, "meeting": 2}, "size": 5000.0, "domain": "work.org"}, "ham")
    >>> _ = model.learn_one({"text": {"meeting": 1, "notes": 1}, "size": 7000.0, "domain": "work.org"}, "ham")
    >>> model.predict_one({"text": {"cheap": 1}, "size": 1000.0, "domain": "x.biz"})
    'spam'
    """

    def __init__(self, schema: Mapping[Hashable, str], *, text: DiscreteNB | None = None,
                 numeric: GaussianNB | None = None, categorical: CategoricalNB | None = None,
                 class_prior: str | Mapping[Label, float] = "mle") -> None:
        super().__init__(class_prior=class_prior)
        self.schema = check_schema(schema, KINDS)
        text_fields = [field for field, kind in self.schema.items() if kind == "text"]
        self.text_field = text_fields[0] if text_fields else None
        self.numeric_fields = [field for field, kind in schema.items() if kind == "numeric"]
        self.categorical_fields = [field for field, kind in schema.items() if kind == "categorical"]
        self.text = _part(text, DiscreteNB, MultinomialNB, "text") if self.text_field is not None else None
        self.numeric = _part(numeric, GaussianNB, GaussianNB, "numeric") if self.numeric_fields else None
        self.categorical = (_part(categorical, CategoricalNB, CategoricalNB, "categorical")
                            if self.categorical_fields else None)

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "schema": self.schema}

    def _parts(self) -> list[DiscreteNB | RecordNB]:
        return [part for part in (self.text, self.numeric, self.categorical) if part is not None]

    # -- records ----------------------------------------------------------------------
    def _split(self, x: object) -> tuple[Any, dict[Hashable, Any], dict[Hashable, Any]]:
        """(text value or None, numeric sub-record, categorical sub-record)."""
        record = self._record(x)
        unknown = [field for field in record if field not in self.schema]
        if unknown:
            raise InvalidInputError(f"field(s) {unknown[:3]!r} are not in the schema (fields: {list(self.schema)})")
        text = record.get(self.text_field) if self.text_field is not None else None
        numeric = {f: record[f] for f in self.numeric_fields if f in record}
        categorical = {f: record[f] for f in self.categorical_fields if f in record}
        return text, numeric, categorical

    def _read(self, x: Record) -> _Read:
        text, numeric, categorical = self._split(x)
        document = None
        if self.text is not None:
            document = {} if text is None else text
            self.text._core.present_features(document, allow_empty=True)  # checks the document
        return _Read(
            document,
            self.numeric._read(numeric) if self.numeric else None,
            self.categorical._read(categorical) if self.categorical else None)

    def _encode(self, x: Record) -> _Read:
        text, numeric, categorical = self._split(x)
        return _Read(None if self.text is None else ({} if text is None else text),
                     self.numeric._encode(numeric) if self.numeric else None,
                     self.categorical._encode(categorical) if self.categorical else None)

    # -- learning ---------------------------------------------------------------------
    def _grow_classes(self, n_classes: int) -> None:
        """The parts add their classes when they learn."""

    def _record_parts(self, read: _Read) -> list[tuple[RecordNB, Any]]:
        return [(part, r) for part, r in ((self.numeric, read.numeric), (self.categorical, read.categorical))
                if part is not None]

    def _check_learn(self, read: _Read, label: Label, weight: float) -> None:
        # The text part refuses what it cannot learn (e.g. counts that would overflow).
        if self.text is not None:
            self.text._learner.part_check(read.text, label, weight)

    def _check_removable(self, read: _Read, c: int, weight: float) -> None:
        for part, part_read in self._record_parts(read):
            part._check_unlearn(part_read, self.labels[c], weight)

    def _add(self, read: _Read, label: Label, c: int, weight: float) -> None:
        # The text part goes first: unlearning it is the one step that checks as it goes
        # (CountStore.update), and if it raises nothing else has changed yet.
        if self.text is not None:
            self.text._learner.part_apply(read.text, label, weight)
        for part, part_read in self._record_parts(read):
            part._commit(part_read, label, weight)

    def _check_mergeable(self, other: MixedNB) -> None:
        super()._check_mergeable(other)  # the same schema: the same parts (text, numeric, categorical)
        if self.text is not None and other.text is not None:
            self.text._check_mergeable(other.text)
        if self.numeric is not None and other.numeric is not None:
            self.numeric._check_mergeable(other.numeric)
        if self.categorical is not None and other.categorical is not None:
            self.categorical._check_mergeable(other.categorical)

    def _merge_counts(self, other: MixedNB, class_map: npt.NDArray[np.int64]) -> None:
        if self.text is not None and other.text is not None:
            self.text.merge(other.text)
        if self.numeric is not None and other.numeric is not None:
            self.numeric.merge(other.numeric)
        if self.categorical is not None and other.categorical is not None:
            self.categorical.merge(other.categorical)

    # -- persistence ------------------------------------------------------------------
    def _table_state(self) -> tuple[dict[str, Any], Arrays]:
        """Each part's own state (its registered type name, its arrays prefixed by its kind)."""
        tables: dict[str, Any] = {}
        arrays: dict[str, npt.NDArray[Any]] = {}
        for kind in KINDS:
            part = getattr(self, kind)
            if part is not None:
                tables[kind], part_arrays = persist.part_state(part, f"{kind}_")
                arrays.update(part_arrays)
        return tables, arrays

    def _foreign_arrays(self, arrays: Arrays) -> list[str]:
        """Arrays under no part's prefix (each part refuses what it does not read under its own)."""
        prefixes = tuple(f"{kind}_" for kind in KINDS if getattr(self, kind) is not None)
        return sorted(name for name in arrays if name != "class_weights" and not name.startswith(prefixes))

    def _restore_tables(self, tables: object, arrays: Arrays) -> None:
        kinds = [kind for kind in KINDS if getattr(self, kind) is not None]
        if not (isinstance(tables, dict) and sorted(tables) == sorted(kinds)):
            raise ModelFormatError(f"MixedNB parts {sorted(tables) if isinstance(tables, dict) else tables!r} "
                                   f"do not match the schema's {kinds}")
        for kind in kinds:
            expected = {"text": DiscreteNB, "numeric": GaussianNB, "categorical": CategoricalNB}[kind]
            part = persist.restore_part(tables[kind], arrays, f"{kind}_", expected, f"MixedNB {kind} part")
            setattr(self, kind, part)

    # -- prediction -------------------------------------------------------------------
    def _log_likelihood(self, encoded: _Read) -> Floats:
        """Sum over the parts of log P(x_part | c), each part's own prior taken out."""
        total = np.zeros(len(self.labels))
        for part, part_encoded in ((self.text, encoded.text), (self.numeric, encoded.numeric),
                                   (self.categorical, encoded.categorical)):
            if part is None:
                continue
            scores = part._log_likelihood(part_encoded)
            total += scores[self._part_classes(part)]
        return total

    def _part_classes(self, part: DiscreteNB | RecordNB) -> npt.NDArray[np.int64]:
        """For each class of this model, its index in the part (the parts learn every record,
        so they know every class; their order may differ after merges)."""
        lookup = part.store.class_id if isinstance(part, DiscreteNB) else part._class_id
        return np.array([lookup(label) for label in self.labels], dtype=np.int64)

    def part_log_likelihoods(self, x: Record) -> dict[str, dict[Label, float]]:
        """Each part's log P(x_part | c) without prior, per class: what predict sums."""
        encoded = self._encode(x)
        result: dict[str, dict[Label, float]] = {}
        for name, part, part_encoded in (("text", self.text, encoded.text), ("numeric", self.numeric, encoded.numeric),
                                         ("categorical", self.categorical, encoded.categorical)):
            if part is not None:
                scores = part._log_likelihood(part_encoded)[self._part_classes(part)]
                result[name] = {self.labels[c]: float(scores[c]) for c in self._active()}
        return result

    def __repr__(self) -> str:
        return f"MixedNB(schema={self.schema!r}, classes={len(self.classes)})"


_Part = TypeVar("_Part", bound="DiscreteNB | RecordNB")

#: text-part settings MixedNB cannot honour (see _part), and their values that do nothing
_UNSUPPORTED_TEXT_SETTINGS = {"forgetting": Forgetting(), "pruning": Pruning(), "ledger": None}


def _part(given: object, kind: type, default: Callable[[], _Part], name: str) -> _Part:
    """A part model: the one given (untrained, without a fixed prior), or a default one."""
    if given is None:
        return default()
    if not isinstance(given, kind):
        raise InvalidTypeError(f"the {name} part must be a {kind.__name__}, got {describe(given)}")
    given = cast(_Part, given)  # an instance of kind: default's class or a base of it
    # MixedNB learns and unlearns its parts without a clock, a pruning pass or a ledger
    # (the numeric and categorical parts have none): a text part set to forget, prune
    # or keep a ledger would not do so, or could not unlearn exactly
    chosen = {setting: getattr(given, setting) for setting, inert in _UNSUPPORTED_TEXT_SETTINGS.items()
              if isinstance(given, DiscreteNB) and getattr(given, setting) != inert}
    check_part(name, given.classes, given.class_prior, chosen)
    return given
