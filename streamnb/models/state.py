"""How a discrete model is saved and read back: its state as plain values and named arrays.

``DiscreteNB._state`` and ``_from_state`` (``base.py``), which the model file
(``streamnb.persist``: a versioned, checksummed zip of JSON and .npy, no pickle) and pickling
go through, call these. The parameters are kept as a model file has always kept them: the
settings objects' fields flat among the model's own (``DiscreteNB._saved_params``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    import numpy as np

    from ..store import Arrays
    from .base import DiscreteNB
else:
    from .._lazy import numpy as np

from .. import _core
from ..errors import describe
from ..store import STORE_ARRAYS, _raw_values, _require

#: The arrays a model file keeps the evidence of a smoothing chosen online in: per candidate
#: and temperature (float64, J x T), and the documents scored (int64, one value).
EVIDENCE_ARRAYS = ("smoothing_evidence", "smoothing_scored")

_Model = TypeVar("_Model", bound="DiscreteNB")


def model_state(model: DiscreteNB) -> tuple[dict[str, Any], Arrays]:
    """The model as plain values (params, labels, clocks ...) and named arrays."""
    scalars, arrays = model.store.export()
    learner = model._learner
    state = {"params": model._saved_params(), **scalars, "last_t": learner.clock.last_t,
             "pruned_at": model.store.pruned_at, "pass_at": learner.pass_at}
    if learner.ledger is not None:
        arrays.update(learner.ledger.arrays(model.store.class_id))
    evidence = model._core.evidence_state()
    if evidence is not None:
        values, scored = evidence
        arrays[EVIDENCE_ARRAYS[0]] = np.array(values, dtype=np.float64).reshape(-1, _core.TEMPERATURES)
        arrays[EVIDENCE_ARRAYS[1]] = np.array([scored], dtype=np.int64)
    return state, arrays


def restore_model(cls: type[_Model], state: dict[str, Any], arrays: Arrays) -> _Model:
    """Rebuild a model from ``model_state``'s output; ModelFormatError for anything inconsistent."""
    keys = {"params", "labels", "scale", "n_learned", "last_t", "pruned_at", "pass_at"}
    version_1 = keys | {"features"}  # a version-1 file lists the vocabulary's tokens here
    _require(set(state) in (keys, version_1), f"state keys {sorted(state)} differ from {sorted(keys)}")
    model = cls._from_saved_params(state["params"])
    model.store.restore(state, arrays, state["pruned_at"], tokens=state.get("features"))
    learner = model._learner
    n = model.n_learned
    last_t = state["last_t"]
    if last_t is not None:
        _require(isinstance(last_t, (int, float)) and not isinstance(last_t, bool) and math.isfinite(last_t),
                 f"last_t must be a finite number or null, got {describe(last_t)}")
        last_t = float(last_t)
    learner.clock.last_t = last_t
    pass_at = state["pass_at"]
    _require(isinstance(pass_at, int) and not isinstance(pass_at, bool) and 0 <= pass_at <= n,
             f"pass_at must be an int in [0, {n}], got {describe(pass_at)}")
    learner.pass_at = pass_at
    ledger_arrays = {name for name in arrays if name.startswith("ledger_")}
    unknown = sorted(set(arrays) - set(STORE_ARRAYS) - ledger_arrays - set(EVIDENCE_ARRAYS))
    _require(not unknown, f"arrays {unknown[:5]!r} are not arrays of a {cls.__name__}")
    _restore_evidence(model, arrays)
    if learner.ledger is None:
        _require(not ledger_arrays, "ledger arrays in a model without a ledger")
    else:
        learner.ledger.restore(arrays, model.store.labels, n, model.forgetting.half_life_seconds is not None)
    return model


def _restore_evidence(model: DiscreteNB, arrays: Arrays) -> None:
    """Load the evidence of a smoothing chosen online (read from the file's bytes: no numpy)."""
    present = [name for name in EVIDENCE_ARRAYS if name in arrays]
    if model._call_alpha is not None:
        _require(not present, f"evidence arrays {present!r} in a model whose smoothing is fixed")
        return
    _require(len(present) == 2, f"a model choosing its smoothing online keeps its evidence: "
                                f"arrays {list(EVIDENCE_ARRAYS)!r} are missing")
    n = len(cast("tuple[Any, ...]", model._core.smoothing_report())[0])
    values = _raw_values(arrays, EVIDENCE_ARRAYS[0], "<f8", [n, _core.TEMPERATURES])
    scored = _raw_values(arrays, EVIDENCE_ARRAYS[1], "<i8", [1])[0]
    _require(0 <= scored < 2**63, f"documents scored must be >= 0, got {scored}")
    model._core.restore_evidence([float(v) for v in values], int(scored))
