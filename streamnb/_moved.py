"""The old import paths of the flat layout: each warns once, names the new path, and re-exports it."""

from __future__ import annotations

import warnings

REMOVED_IN = "0.3.0"
# Each old module path (under streamnb.) and where it lives now.
MOVED = {
    "text": "features.text", "mail": "features.email", "weighting": "features.weighting", "ngrams": "features.ngrams",
    "decision": "filter.decision", "calibrate": "filter.calibrate", "evaluate": "filter.evaluate",
    "plots": "filter.plots", "datasets": "filter.datasets", "sources": "filter.sources", "trec": "filter.trec",
    "cli": "service.cli", "serve": "service.serve", "journal": "service.journal",
    "river": "integrations.river", "distributed": "integrations.distributed",
}


def warn_moved(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that module ``old`` moved to ``new`` and goes in streamnb REMOVED_IN.

    From an old module's body, the default stacklevel points at the ``import`` line that named
    it (``warnings`` skips the import system's own frames), where Python's default filters show
    a DeprecationWarning.
    """
    warnings.warn(f"{old} moved to {new}; import it from there (the old path goes in streamnb {REMOVED_IN})",
                  DeprecationWarning, stacklevel=stacklevel)
