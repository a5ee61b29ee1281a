"""Record and replay conformance transcripts for protocol v1 adapters.

A suite is a directory of cases, each ``<case>/manifest.json``,
``request.jsonl``, ``response.jsonl`` and optional ``fixture/``; the format is
shared with other implementations of the protocol, so suites recorded by
either replay with either. Adapter authors record with :func:`record_case`
(or :func:`record_suite`) and check with :func:`replay_suite`;
``python -m adapter_sdk.conformance`` does both from a shell.
"""

from __future__ import annotations

from adapter_sdk.conformance.cli import main
from adapter_sdk.conformance.diff import VOLATILE_MARK, Difference, compare
from adapter_sdk.conformance.record import CaseSpec, record_case, record_suite
from adapter_sdk.conformance.replay import CaseResult, replay_case, replay_suite
from adapter_sdk.conformance.transcript import (
    FAR_DEADLINE,
    ConformanceError,
    Manifest,
    Transcript,
    case_dirs,
    load_case,
)

__all__ = [
    "FAR_DEADLINE",
    "VOLATILE_MARK",
    "CaseResult",
    "CaseSpec",
    "ConformanceError",
    "Difference",
    "Manifest",
    "Transcript",
    "case_dirs",
    "compare",
    "load_case",
    "main",
    "record_case",
    "record_suite",
    "replay_case",
    "replay_suite",
]
