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
from typing import TYPE_CHECKING, Any

from ..filter.rules import RuleOptions

if TYPE_CHECKING:
    from ..filter.rules import DecisionRule

SPAMC_MAX_SIZE = 500 * 1024  # spamc's default --max-size
# K of the site blend (streamnb/service/site.py): a user's model that knows K messages of its
# rarer class weighs as much as the site model. Of 3 to 1,000, 300 and 1,000 ranked a user's
# mail best, within 0.0001 of each other, where it differs from the site's and where it is the
# same mail (benchmarks/bench_site.py); 300 lets the user's own model count sooner.
SITE_BLEND = 300.0
# The log (streamnb.service.logs): the levels --log-level takes, and syslog's socket.
LOG_LEVELS = ("debug", "info", "warning", "error")
SYSLOG_SOCKET = "/dev/log"


@dataclass(frozen=True)
class Limits:
    """What one client may cost the server.

    Parameters
    ----------
    max_size
        Message bytes (after zlib decompression too); default spamc's, 500 KB.
    timeout
        Seconds for a whole request to arrive (and for a reply to be taken).
    max_connections
        Connections handled at once; more are answered EX_TEMPFAIL.
    max_line
        Bytes per request or header line (spamc's own buffer).
    max_headers
        Headers per request, as spamd.
    lock_timeout
        Seconds a TELL waits for a model another writer holds.
    """

    max_size: int = SPAMC_MAX_SIZE  # message bytes (after zlib decompression too)
    timeout: float = 30.0  # seconds for a whole request to arrive (and for a reply to be taken)
    max_connections: int = 64  # connections handled at once; more are answered EX_TEMPFAIL
    max_line: int = 8192  # bytes per request/header line (spamc's own buffer)
    max_headers: int = 255  # as spamd
    lock_timeout: float = 10.0  # seconds to wait for a model another writer holds


@dataclass(frozen=True)
class Settings:
    """Everything the server needs besides where to listen.

    Parameters
    ----------
    models
        The folder of the per-user models ``DIR/<user>.snb`` (resolved once); None with a
        ``store``, which keeps them.
    new_model
        Makes the model a new user starts with (the command's model and a ledger).
    rule
        The decision rule's options (:class:`~streamnb.filter.rules.RuleOptions`): the one
        factory of every model's rule (:meth:`rule_of`), and ``min_per_class`` (verdicts are
        unsure until a model has learned that many messages of each class).
    allow_tell
        Accept TELL.
    read_only
        Never write in the models folder; TELL is refused.
    max_models
        Models kept loaded.
    max_memory
        Bytes the users' models in memory may hold together (as the core counts them,
        ``model.nbytes``, with the messages each observed since its last save); beyond it the
        least recently used are let go, as beyond ``max_models``. None: no cap but ``max_models``.
    snapshot_every, snapshot_seconds
        A user's journal is folded into the model file after this many lessons, or once its
        oldest lesson is this old; a model that observed mail since its last save is saved
        once the oldest of it is this old.
    site
        Serve a site model, ``DIR/@site.snb``, beside each user's (:mod:`streamnb.service.site`).
    site_learns
        Every TELL teaches the site model too (else it only answers, and observes).
    site_blend
        K: the lessons of each class at which a user's own model weighs as much as the site's.
    observe
        Each check lets the models that answered it observe its message (the site model, and
        the user's own if there is one): ``SpamFilter.observe``, kept in memory until the
        model is next saved (not with a ``store``: :mod:`streamnb.service.shared`).
    store
        ``redis://HOST:PORT/DB``: the models' lessons and snapshots live in that Redis database,
        shared by every host serving it (:mod:`streamnb.service.shared`); None: in ``models``.
    limits
        What one client may cost the server.
    """

    models: Path | None
    new_model: Callable[[], Any]  # the model a new user starts with (cli.build_model + a ledger)
    rule: RuleOptions = RuleOptions()
    allow_tell: bool = False
    read_only: bool = False  # never write in the models folder; TELL is refused
    max_models: int = 32
    max_memory: int | None = None  # bytes of the users' models in memory (model.nbytes); None: no cap
    snapshot_every: int = 1000
    snapshot_seconds: float = 60.0
    site: bool = True
    site_learns: bool = True
    site_blend: float = SITE_BLEND
    observe: bool = True
    store: str | None = None  # redis://HOST:PORT/DB: the models shared through Redis; None: the folder
    limits: Limits = Limits()

    def __post_init__(self) -> None:
        if self.models is None and self.store is None:
            raise ValueError("Settings: the models need a folder (models) or a store")
        if self.models is not None:
            # Resolved once: a user's file is checked to resolve inside exactly this folder.
            object.__setattr__(self, "models", Path(os.path.realpath(self.models)))

    @property
    def folder(self) -> Path:
        """The models folder (serving without a ``store``).

        Raises
        ------
        RuntimeError
            With a store and no folder: nothing should read one then.
        """
        if self.models is None:
            raise RuntimeError("the models live in the store (--store): there is no models folder")
        return self.models

    def rule_of(self, model: Any) -> DecisionRule:
        """The decision rule for a model: ``rule``'s, with the model's own log-odds cutoffs
        for those not given (an EmailNB file keeps its cutoffs, a Fusion gets its own).

        Parameters
        ----------
        model
            A user's model, the site model, or a new user's.

        Returns
        -------
        DecisionRule
            The rule.
        """
        return self.rule.rule_for(model)

    @property
    def min_per_class(self) -> float:
        """Verdicts are unsure until a model has learned this many messages of each class."""
        return self.rule.required_per_class
