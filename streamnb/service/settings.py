"""The server's settings and the limits one client may cost it, with their defaults.

Both ``streamnb serve``'s options (``streamnb.service.cli``: their defaults and the help that
states them) and the server (``streamnb.service.serve``) read the defaults here, their one
home. The module is light (no asyncio, no model) so the command line is built without the
server.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SPAMC_MAX_SIZE = 500 * 1024  # spamc's default --max-size


@dataclass(frozen=True)
class Limits:
    """What one client may cost the server."""

    max_size: int = SPAMC_MAX_SIZE  # message bytes (after zlib decompression too)
    timeout: float = 30.0  # seconds for a whole request to arrive (and for a reply to be taken)
    max_connections: int = 64  # connections handled at once; more are answered EX_TEMPFAIL
    max_line: int = 8192  # bytes per request/header line (spamc's own buffer)
    max_headers: int = 255  # as spamd
    lock_timeout: float = 10.0  # seconds to wait for a model another writer holds


@dataclass(frozen=True)
class Settings:
    """Everything the server needs besides where to listen."""

    models: Path
    new_model: Callable[[], Any]  # the model a new user starts with (cli.build_model + a ledger)
    rule: Any  # the decision rule (decision.LogOddsRule, ChiSquareRule ...)
    spam_cutoff: float
    # the rule for a user's model, when it depends on the model (LogOddsRule.for_model: an
    # EmailNB file keeps its cutoffs, a Fusion gets its own); None: ``rule`` for every model
    rule_for: Callable[[Any], Any] | None = None
    min_per_class: float = 10
    allow_tell: bool = False
    read_only: bool = False  # never write in the models folder; TELL is refused
    max_models: int = 32
    snapshot_every: int = 1000
    snapshot_seconds: float = 60.0
    limits: Limits = Limits()

    def __post_init__(self) -> None:
        # Resolved once: a user's file is checked to resolve inside exactly this folder.
        object.__setattr__(self, "models", Path(os.path.realpath(self.models)))

    def rule_of(self, model: Any) -> Any:
        """The decision rule for a user's model."""
        return self.rule if self.rule_for is None else self.rule_for(model)
