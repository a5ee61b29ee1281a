"""Adapter processes: spawn, handshake, deadlines, cancel, death and teardown.

Each configured source gets one long-lived adapter process (protocol v1,
JSON-RPC over stdio), pooled by :class:`Supervisor` under its ``source_uid``
and driven through an :class:`AdapterClient`. The lifecycle of one process::

    first use ──► spawn ───────────────────────────► spawn_failed (unavailable)
                  own session/process group, workdir 0700, stderr drained to a ring
                  │
                  ▼
              recall/initialize  (≤ 10 s, or the call's deadline if sooner)
                  │  no answer ───────────────────► handshake_timeout (unavailable)
                  │  exits / EOF ─────────────────► unreachable (unavailable)
                  │  version outside asked range ─► protocol_version_unsupported
                  │  invalid manifest ────────────► adapter_error (failed)
                  ▼                                  (each of these stops the process)
               ready ◄───────────────────────────────────────────────┐
                  │  a call: slot (max_concurrency) ► frame ► reply    │ reply, or any
                  │                                                    │ reply within
                  │  deadline passes ─► recall/cancel ─► wait 250 ms ──┘ the grace:
                  │                          │                timeout/deadline_exceeded
                  │                          └ silence ─► wedged: timeout/
                  │                                      deadline_exceeded_unresponsive
                  │  caller cancelled ─► recall/cancel; grace judged in the background
                  │  process exits ───► in-flight calls: unreachable (unavailable)
                  ▼
               retired ─► stdin closed ─► SIGTERM ─► (2 s) SIGKILL ─► group swept
                  │        all in the background: the caller's deadline is kept
                  ▼
              next use spawns again (``spawns`` + 1, ``last_exit`` recorded)

``close()`` (and :meth:`Supervisor.aclose`) first asks politely with
``recall/shutdown``, then escalates the same way and waits until every process,
including ones being torn down in the background, is gone.

On the wire, stdout carries frames only: unparseable or oversized lines,
requests or notifications from the adapter, and replies to unknown ids are
counted as violations and skipped; the stream stays aligned. stderr is kept
as a bounded tail in :meth:`AdapterClient.diagnostics`, never parsed.

Every method raises :class:`AdapterFailure` when it cannot answer; a failure is
never turned into an empty success. Health probes are cached for 30 s (failed
ones too), serialized, and the first after a spawn carries ``cold_start_ns``.
A search answer is read candidate by candidate: one that does not fit the
protocol is dropped and named (:class:`SearchAnswer`), the rest stands.
"""

from __future__ import annotations

from broker.supervise.adapter_client import AdapterClient
from broker.supervise.answer import MALFORMED_NAMED, MalformedCandidate, SearchAnswer
from broker.supervise.failure import AdapterFailure, FailureReason, classify
from broker.supervise.pool import Supervisor
from broker.supervise.process import AdapterSpec
from broker.supervise.timings import (
    CANCEL_GRACE,
    DEFAULT_CALL_TIMEOUT,
    HANDSHAKE_TIMEOUT,
    HEALTH_TTL,
    PROBE_TIMEOUT,
    TERM_GRACE,
    Timings,
)

__all__ = [
    "CANCEL_GRACE",
    "DEFAULT_CALL_TIMEOUT",
    "HANDSHAKE_TIMEOUT",
    "HEALTH_TTL",
    "MALFORMED_NAMED",
    "PROBE_TIMEOUT",
    "TERM_GRACE",
    "AdapterClient",
    "AdapterFailure",
    "AdapterSpec",
    "FailureReason",
    "MalformedCandidate",
    "SearchAnswer",
    "Supervisor",
    "Timings",
    "classify",
]
