"""The adapter SDK: what an adapter imports, as ``from adapter_sdk import ...``.

The protocol's vocabulary and payload models, :class:`Adapter` and :func:`run`,
and the process helpers (garbage collection, residence) an adapter's entry point
uses. An adapter imports these names from here only (an import-linter contract
holds it to that); the SDK's toolkits (``lexical``, ``relevance``, ``markdown``,
``folder``, ...) are imported by their own module names.
Each name loads its module on first use, so importing a single part of the SDK
(the broker imports :mod:`adapter_sdk.protocol` alone) costs nothing more.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adapter_sdk.collector import loading, start_quietly
    from adapter_sdk.entry import serve_quietly
    from adapter_sdk.protocol import (
        PROTOCOL_VERSION_MAX,
        PROTOCOL_VERSION_MIN,
        TRUSTED_ONLY,
        AdapterSkipReason,
        AsOfSupport,
        Candidate,
        Capability,
        CheckpointProgress,
        DetailLevel,
        ErrorCode,
        ExcerptKind,
        ExecutableRequirement,
        ExpandParams,
        ExpandResult,
        FreshnessMode,
        HealthParams,
        HealthResult,
        HealthStatus,
        IndexCoverage,
        InitializeParams,
        Manifest,
        MatchSignal,
        QueryMode,
        RefreshParams,
        RelevanceBasis,
        RpcError,
        SearchFilters,
        SearchOutcome,
        SearchParams,
        SearchResult,
        Sensitivity,
        trusted_only,
    )
    from adapter_sdk.residence import long_lived
    from adapter_sdk.server import Adapter, Cancellation, current_cancellation, log, run, serve

__all__ = [
    "PROTOCOL_VERSION_MAX",
    "PROTOCOL_VERSION_MIN",
    "TRUSTED_ONLY",
    "Adapter",
    "AdapterSkipReason",
    "AsOfSupport",
    "Cancellation",
    "Candidate",
    "Capability",
    "CheckpointProgress",
    "DetailLevel",
    "ErrorCode",
    "ExcerptKind",
    "ExecutableRequirement",
    "ExpandParams",
    "ExpandResult",
    "FreshnessMode",
    "HealthParams",
    "HealthResult",
    "HealthStatus",
    "IndexCoverage",
    "InitializeParams",
    "Manifest",
    "MatchSignal",
    "QueryMode",
    "RefreshParams",
    "RelevanceBasis",
    "RpcError",
    "SearchFilters",
    "SearchOutcome",
    "SearchParams",
    "SearchResult",
    "Sensitivity",
    "current_cancellation",
    "loading",
    "log",
    "long_lived",
    "run",
    "serve",
    "serve_quietly",
    "start_quietly",
    "trusted_only",
]

_SERVER = frozenset({"Adapter", "Cancellation", "current_cancellation", "log", "run", "serve"})
_COLLECTOR = frozenset({"loading", "start_quietly"})


def _home(name: str) -> str:
    """The module that defines (or first re-exports) ``name``."""
    if name in _SERVER:
        return "adapter_sdk.server"
    if name in _COLLECTOR:
        return "adapter_sdk.collector"
    if name == "long_lived":
        return "adapter_sdk.residence"
    if name == "serve_quietly":
        return "adapter_sdk.entry"
    return "adapter_sdk.protocol"


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'adapter_sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(_home(name)), name)
    globals()[name] = value  # later lookups skip this function
    return value
