"""The service's metrics (Prometheus text at ``/metrics``) and its health (``/health``).

``streamnb serve --metrics HOST:PORT`` answers HTTP GET on HOST:PORT beside the spamd port:

- ``/metrics``: Prometheus' text format, made by the prometheus-client library: the
  requests by command and outcome, the verdicts, a latency histogram, the checks answered
  "unsure" because they could not be scored, the refused TELLs by reply code, the lessons
  waiting in journals, the models loaded and the bytes they hold, the connections under way,
  and the process's resident memory and CPU (every name starts with ``streamnb_``); with
  ``--store``, whether the lesson store answers (``streamnb_store_reachable``) and the checks
  scored from memory while it did not (``streamnb_stale_checks_total``);
- ``/health``: ``200 ok`` while the service answers, ``503`` with the reason when it does not
  (it is stopping, or its event loop has not run for :data:`STALL_SECONDS`): for a load
  balancer's health check.

The HTTP server runs in a thread of its own; it reads only prometheus-client's metrics
(thread-safe), which the event loop sets after each request and every second
(:meth:`Metrics.beat`), so a scrape never touches the models.

With ``--workers N`` the metrics are the workers' together, in prometheus-client's
multiprocess mode (:func:`share_between_processes`): each worker writes its values to files of
a folder of the service's own, and one more process answers HTTP with their sums
(:class:`WorkersMetrics`: counters and histograms added up, the gauges of the live workers
added up; ``streamnb_process_resident_memory_bytes`` is the workers' resident memory added
up). ``/health`` is ``503`` when no worker is serving or one's event loop has stalled.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, multiprocess, values
from prometheus_client.exposition import choose_encoder

from .logs import Outcome

log = logging.getLogger("streamnb.serve")

# The event loop marks each second it runs; a /health that finds no mark this long is 503.
STALL_SECONDS = 10.0
# Seconds: a check takes a few milliseconds; a TELL waits for an fsync, a fold for a save.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def share_between_processes() -> str:
    """Make the metrics made from now on in this process and the processes it forks write to
    files of a new folder (prometheus-client's multiprocess mode), for :class:`WorkersMetrics`
    to add up; returns the folder (the caller removes it once the workers are gone).

    The library chooses where values go when it is imported, from ``PROMETHEUS_MULTIPROC_DIR``;
    the service imports it before it knows whether it has workers, so the choice is made
    again here, before any metric is.

    Returns
    -------
    str
        The folder.
    """
    folder = tempfile.mkdtemp(prefix="streamnb-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]  # (untyped in prometheus-client)
    return folder


class Metrics:
    """The service's metrics, in a registry of their own.

    Parameters
    ----------
    shared
        This process is one of the workers of ``--workers`` (:func:`share_between_processes`
        was called before it was forked): its resident memory and the time of its last beat
        are gauges the metrics process adds up, instead of the process collector's.

    Attributes
    ----------
    registry
        The metrics ``/metrics`` answers with.
    """

    def __init__(self, shared: bool = False) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        self.requests = Counter("streamnb_requests", "Requests answered, by command and outcome (ok, unscored, "
                                "refused, error, gone)", ["command", "outcome"], registry=registry)
        self.verdicts = Counter("streamnb_verdicts", "Verdicts of the checks answered (unscored ones as unsure)",
                                ["verdict"], registry=registry)
        self.latency = Histogram("streamnb_request_seconds", "Seconds from a connection taken to its reply made, "
                                 "by command", ["command"], buckets=LATENCY_BUCKETS, registry=registry)
        self.unscored = Counter("streamnb_unscored_checks", "Checks answered unsure (STREAMNB_UNSCORED) because "
                                "the message could not be scored", registry=registry)
        self.refused_tells = Counter("streamnb_refused_tells", "TELLs refused, by the reply's code (69 not "
                                     "allowed or no ledger, 74 I/O, 75 locked, 65/76 bad request)", ["code"],
                                     registry=registry)
        self.journal_lessons = Gauge("streamnb_journal_lessons", "Acknowledged lessons waiting in journals, not yet "
                                     "folded into their model files", multiprocess_mode="livesum", registry=registry)
        self.models_loaded = Gauge("streamnb_models_loaded", "Models in memory (the users' and the site model)",
                                   multiprocess_mode="livesum", registry=registry)
        self.model_bytes = Gauge("streamnb_model_bytes", "Bytes the models in memory hold in the compiled core",
                                 multiprocess_mode="livesum", registry=registry)
        self.connections = Gauge("streamnb_connections", "Connections under way", multiprocess_mode="livesum",
                                 registry=registry)
        # --store only (made by the first beat with a store): whether it answers, and the checks
        # scored from memory while it did not
        self.store_reachable: Gauge | None = None
        self.stale_checks: Counter | None = None
        self._stale_counted = 0
        self.shared = shared
        if shared:  # the process collector sees the process that answers HTTP only
            self.resident = Gauge("streamnb_process_resident_memory_bytes", "Resident memory of the workers, added "
                                  "up", multiprocess_mode="livesum", registry=registry)
            self.beat_time = Gauge("streamnb_worker_beat_timestamp_seconds", "When the stalest worker's event loop "
                                   "last ran (Unix time)", multiprocess_mode="livemin", registry=registry)
            self.beat_time.set(time.time())  # a worker starting counts as one that just ran
        else:
            ProcessCollector(namespace="streamnb", registry=registry)  # streamnb_process_resident_memory_bytes ...
        self.last_beat = time.monotonic()
        self.stopping = False

    def record(self, outcome: Outcome) -> None:
        """Count one request.

        Parameters
        ----------
        outcome
            What it came to.
        """
        command = outcome.command
        self.requests.labels(command, outcome.outcome).inc()
        self.latency.labels(command).observe(outcome.milliseconds / 1000.0)
        if outcome.outcome == "unscored":
            self.unscored.inc()
        if command == "TELL" and outcome.outcome == "refused":
            self.refused_tells.labels(str(outcome.code)).inc()
        elif command not in ("TELL", "PING", "SKIP", "-") and outcome.verdict is not None:
            self.verdicts.labels(outcome.verdict).inc()

    def beat(self, models: list[Any], connections: int, store: Any = None) -> None:
        """The event loop is running: mark it, and set the gauges of the models and connections.

        Parameters
        ----------
        models
            The models in the cache (:class:`streamnb.service.users.UserModel`), the site model too.
        connections
            The connections under way.
        store
            The lesson store (:class:`streamnb.service.redis_store.RedisStore`), or None.
        """
        if store is not None:
            if self.store_reachable is None or self.stale_checks is None:
                self.store_reachable = Gauge("streamnb_store_reachable", "1 while the lesson store (--store) "
                                             "answers, 0 while it cannot be reached (models may be stale, TELLs "
                                             "refused)", multiprocess_mode="livemin", registry=self.registry)
                self.stale_checks = Counter("streamnb_stale_checks", "Checks scored with the model in memory "
                                            "because the lesson store (--store) could not be reached: the model "
                                            "may be stale", registry=self.registry)
            self.store_reachable.set(1 if store.reachable else 0)
            self.stale_checks.inc(store.stale_checks - self._stale_counted)
            self._stale_counted = store.stale_checks
        loaded = [entry for entry in models if entry.model is not None]
        self.models_loaded.set(len(loaded))
        self.model_bytes.set(sum(int(getattr(entry.model, "nbytes", 0)) for entry in loaded))
        self.journal_lessons.set(sum(entry.pending for entry in models))
        self.connections.set(connections)
        self.last_beat = time.monotonic()
        if self.shared:
            self.beat_time.set(time.time())
            try:
                with open("/proc/self/statm") as statm:
                    self.resident.set(int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
            except (OSError, ValueError, IndexError):  # not Linux: no figure
                pass

    def health(self) -> tuple[bool, str]:
        """Whether the service answers, and what to say.

        Returns
        -------
        tuple of (bool, str)
            (True, ``ok``), or (False, why not).
        """
        if self.stopping:
            return False, "stopping"
        stalled = time.monotonic() - self.last_beat
        if stalled > STALL_SECONDS:
            return False, f"the service's event loop has not run for {stalled:.0f} s"
        return True, "ok"


class WorkersMetrics:
    """What ``/metrics`` and ``/health`` answer for the workers of ``--workers``: their metrics
    added up from the files of ``folder`` (:func:`share_between_processes`).

    Parameters
    ----------
    folder
        The multiprocess folder the workers write to.

    Attributes
    ----------
    registry
        The metrics ``/metrics`` answers with.
    """

    def __init__(self, folder: str) -> None:
        self.registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(self.registry, path=folder)  # type: ignore[no-untyped-call]
        self.stopping = False

    def health(self) -> tuple[bool, str]:
        """(True, ``ok``) while every live worker's event loop has run lately, else (False, why not)."""
        if self.stopping:
            return False, "stopping"
        beats = [sample.value for family in self.registry.collect()
                 if family.name == "streamnb_worker_beat_timestamp_seconds" for sample in family.samples]
        if not beats:
            return False, "no worker is serving"
        stalled = time.time() - min(beats)
        if stalled > STALL_SECONDS:
            return False, f"a worker's event loop has not run for {stalled:.0f} s"
        return True, "ok"


class MetricsServer:
    """``/metrics`` and ``/health`` over HTTP, in a thread: ``MetricsServer(metrics, host, port).start()``.

    Parameters
    ----------
    metrics
        The metrics to answer with.
    host, port
        Where to listen (port 0: any free port).

    Raises
    ------
    OSError
        The address cannot be listened on.
    """

    def __init__(self, metrics: Metrics | WorkersMetrics, host: str, port: int) -> None:
        self.metrics = metrics

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.split("?", 1)[0]
                if path == "/metrics":  # in the text format the scraper accepts (Accept), as the library chooses
                    encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
                    self._send(200, encoder(metrics.registry), content_type)
                elif path == "/health":
                    healthy, text = metrics.health()
                    self._send(200 if healthy else 503, (text + "\n").encode(), "text/plain; charset=utf-8")
                else:
                    self._send(404, b"not found: /metrics or /health\n", "text/plain; charset=utf-8")

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
                log.debug("metrics: %s %s", self.address_string(), format % args)

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.address = self.httpd.server_address[:2]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="streamnb-metrics", daemon=True)

    def start(self) -> None:
        """Answer in a thread of its own."""
        self._thread.start()

    def stop(self) -> None:
        """Stop answering and close the socket."""
        self.httpd.shutdown()
        self.httpd.server_close()
