"""How a discrete model is saved and read back: its state as plain values and named arrays.

``StateParts`` is the part of ``DiscreteNB`` (``base.py``) that the model file
(``streamnb.persist``: a versioned, checksummed zip of JSON and .npy, no pickle) and pickling
go through.
"""

from __future__ import annotations

import math
import os
import struct
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    import numpy as np

    from ..store import Arrays
else:
    from .._lazy import numpy as np

from .. import _core, persist
from ..errors import describe
from ..store import STORE_ARRAYS, _raw_array, _require
from .parts import ModelParts

#: The arrays a model file keeps the evidence of a smoothing chosen online in: per candidate
#: and temperature (float64, J x T), and the documents scored (int64, one value).
EVIDENCE_ARRAYS = ("smoothing_evidence", "smoothing_scored")

_Model = TypeVar("_Model", bound="StateParts")


class StateParts(ModelParts):
    """Saving, loading and pickling (a part of ``DiscreteNB``)."""

    # -- persistence ------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model to ``path`` atomically (format: ``streamnb.persist``); read it with ``streamnb.load``."""
        persist.save(self, path)

    def _state(self) -> tuple[dict[str, Any], Arrays]:
        """The persistence hook: the model as plain values (params, labels ...) and named arrays."""
        scalars, arrays = self.store.export()
        state = {"params": self.get_params(), **scalars, "last_t": self.last_t,
                 "pruned_at": self.store.pruned_at, "pass_at": self._pass_at}
        if self._ledger is not None:
            arrays.update(self._ledger.arrays(self.store.class_id))
        evidence = self._core.evidence_state()
        if evidence is not None:
            values, scored = evidence
            arrays[EVIDENCE_ARRAYS[0]] = np.array(values, dtype=np.float64).reshape(-1, _core.TEMPERATURES)
            arrays[EVIDENCE_ARRAYS[1]] = np.array([scored], dtype=np.int64)
        return state, arrays

    @classmethod
    def _from_state(cls: type[_Model], state: dict[str, Any], arrays: Arrays) -> _Model:
        """Rebuild a model from ``_state``'s output; ModelFormatError for anything inconsistent."""
        keys = {"params", "labels", "scale", "n_learned", "last_t", "pruned_at", "pass_at"}
        version_1 = keys | {"features"}  # a version-1 file lists the vocabulary's tokens here
        _require(set(state) in (keys, version_1), f"state keys {sorted(state)} differ from {sorted(keys)}")
        model = cls(**state["params"])
        model.store.restore(state, arrays, state["pruned_at"], tokens=state.get("features"))
        n = model.n_learned
        last_t = state["last_t"]
        if last_t is not None:
            _require(isinstance(last_t, (int, float)) and not isinstance(last_t, bool) and np.isfinite(last_t),
                     f"last_t must be a finite number or null, got {describe(last_t)}")
            last_t = float(last_t)
        model._clock.last_t = last_t
        pass_at = state["pass_at"]
        _require(isinstance(pass_at, int) and not isinstance(pass_at, bool) and 0 <= pass_at <= n,
                 f"pass_at must be an int in [0, {n}], got {describe(pass_at)}")
        model._pass_at = pass_at
        ledger_arrays = {name for name in arrays if name.startswith("ledger_")}
        unknown = sorted(set(arrays) - set(STORE_ARRAYS) - ledger_arrays - set(EVIDENCE_ARRAYS))
        _require(not unknown, f"arrays {unknown[:5]!r} are not arrays of a {cls.__name__}")
        model._restore_evidence(arrays)
        if model._ledger is None:
            _require(not ledger_arrays, "ledger arrays in a model without a ledger")
        else:
            model._ledger.restore(arrays, model.store.labels, n, model.forgetting.half_life_seconds is not None)
        return model

    def _restore_evidence(self, arrays: Arrays) -> None:
        """Load the evidence of a smoothing chosen online (read from the file's bytes: no numpy)."""
        present = [name for name in EVIDENCE_ARRAYS if name in arrays]
        if self._call_alpha is not None:
            _require(not present, f"evidence arrays {present!r} in a model whose smoothing is fixed")
            return
        _require(len(present) == 2, f"a model choosing its smoothing online keeps its evidence: "
                                    f"arrays {list(EVIDENCE_ARRAYS)!r} are missing")
        n = len(cast("tuple[Any, ...]", self._core.smoothing_report())[0])
        values = _raw_values(arrays, EVIDENCE_ARRAYS[0], "<f8", [n, _core.TEMPERATURES])
        scored = _raw_values(arrays, EVIDENCE_ARRAYS[1], "<i8", [1])[0]
        _require(0 <= scored < 2**63, f"documents scored must be >= 0, got {scored}")
        self._core.restore_evidence([float(v) for v in values], int(scored))


def _raw_values(arrays: Arrays, name: str, dtype: str, shape: list[int]) -> tuple[Any, ...]:
    """The values of a small saved array as Python numbers, its dtype and shape checked."""
    saved_dtype, saved_shape, buffer, start, end = _raw_array(arrays, name)
    _require(saved_dtype == dtype and list(saved_shape) == shape,
             f"array {name!r} must be {dtype} of shape {shape}, got {saved_dtype} of shape {list(saved_shape)}")
    return struct.unpack(f"<{math.prod(shape)}{'d' if dtype == '<f8' else 'q'}", bytes(buffer[start:end]))

