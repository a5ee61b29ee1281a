"""Adapter protocol version 1: wire vocabulary, payload models and stdio framing.

Both ends use this module: the broker's supervisor (client) and adapters built
on :mod:`adapter_sdk.server`. Field names, enumerations and error codes follow
protocol v1 exactly, so adapters written for other implementations of the
protocol interoperate. Every payload object rejects unknown fields.

Framing is newline-delimited JSON-RPC 2.0: one message per line, no headers,
an 8 MiB frame limit, a trailing CR tolerated and blank lines skipped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import orjson

from adapter_sdk.vocabulary import (
    JSONRPC,
    MAX_FRAME_BYTES,
    PROTOCOL_VERSION_MAX,
    PROTOCOL_VERSION_MIN,
    AdapterSkipReason,
    AsOfSupport,
    Capability,
    CheckpointProgress,
    DetailLevel,
    ErrorCode,
    ExcerptKind,
    FreshnessMode,
    HealthStatus,
    IndexCoverage,
    MatchSignal,
    Method,
    QueryMode,
    RelevanceBasis,
    SearchOutcome,
    Sensitivity,
)
from adapter_sdk.wire import Field, WireModel, WireValidationError

# the wire vocabulary and model base, re-exported so adapters import one module
__all__ = [
    "WireModel",
    "WireValidationError",
    "AdapterSkipReason",
    "AsOfSupport",
    "Capability",
    "CheckpointProgress",
    "DetailLevel",
    "ErrorCode",
    "ExcerptKind",
    "FreshnessMode",
    "HealthStatus",
    "IndexCoverage",
    "MatchSignal",
    "Method",
    "QueryMode",
    "RelevanceBasis",
    "SearchOutcome",
    "Sensitivity",
]

# ---------------------------------------------------------------------------
# Payload models


class InitializeParams(WireModel):
    protocol_version_min: int = Field(ge=1)
    protocol_version_max: int = Field(ge=1)
    workdir: str = Field(min_length=1)
    source_id: str = Field(min_length=1)
    location: str | None = None
    base_dir: str | None = None
    settings: dict[str, Any] | None = None


class ExecutableRequirement(WireModel):
    name: str = Field(min_length=1)
    command: str = Field(min_length=1)
    purpose: str | None = None


TRUSTED_ONLY = "trusted_only"
"""A settings-schema keyword: ``{"type": "string", "trusted_only": true}`` on a property.

A setting marked so may only come from the user's own configuration, never from a
project ``recall.toml`` that arrived with a cloned repository: mark every setting
that chooses a network endpoint, a credential or token, a file outside the
source's location, or anything else a stranger must not choose for the user.
"""


def trusted_only(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` for one setting, marked as settable only from user configuration."""
    return {**schema, TRUSTED_ONLY: True}


def project_settable(settings_schema: dict[str, Any] | None, name: str) -> bool:
    """Whether a project file may set ``name``: the schema declares it and does not mark it.

    A setting the schema does not declare, or any setting of an adapter that
    publishes no schema, is not settable from a project: nothing says it is safe.
    """
    properties = (settings_schema or {}).get("properties")
    declared = properties.get(name) if isinstance(properties, dict) else None
    return isinstance(declared, dict) and declared.get(TRUSTED_ONLY) is not True


class Manifest(WireModel):
    protocol_version: int = Field(ge=1)
    adapter_id: str = Field(min_length=1)
    display_name: str = Field(min_length=1)
    record_types: list[str]
    query_modes: list[QueryMode]
    freshness_modes: list[FreshnessMode] = Field(min_length=1)
    as_of_support: AsOfSupport
    relevance_basis: RelevanceBasis
    capabilities: list[Capability]
    sensitivity: Sensitivity
    derives_from: str | None = None
    max_concurrency: int | None = Field(default=None, ge=0)
    freshness_policy: str | None = None
    settings_schema: dict[str, Any] | None = None
    executable_requirements: list[ExecutableRequirement] | None = None


class SearchFilters(WireModel):
    record_types: list[str] | None = None
    since: datetime | None = None
    until: datetime | None = None
    entities: list[str] | None = None
    project: str | None = None


class SearchParams(WireModel):
    query: str
    filters: SearchFilters = Field(default_factory=SearchFilters)
    limit: int = Field(ge=0)
    deadline: datetime
    context: list[str] | None = None
    as_of: datetime | None = None


class Candidate(WireModel):
    """One hit as an adapter reports it. Source identity is attached by the broker."""

    candidate_id: str = Field(min_length=1)
    source_uid: Literal[""] | None = None
    source_id: Literal[""] | None = None
    source_record_id: str = Field(min_length=1)
    locator: str = Field(pattern=r"^[^:]+:.+$")
    derived_from: list[str] | None = None
    record_type: str = Field(min_length=1)
    title: str
    excerpt: str | None = None
    excerpt_kind: ExcerptKind | None = None
    local_rank: int = Field(ge=1)
    local_score: float | None = None
    relevance: float | None = Field(default=None, ge=0.0, le=1.0)
    match_signals: list[MatchSignal] | None = None
    observed_at: datetime | None = None
    confirmed_at: datetime | None = None
    event_time: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    source_revision: str | None = None
    sensitivity: Sensitivity
    metadata: dict[str, Any] | None = None
    content_fingerprint: str | None = None


class SearchResult(WireModel):
    candidates: list[Candidate] | None
    outcome: SearchOutcome
    diagnostics: dict[str, Any] | None = None
    source_watermark: str | None = None
    reason: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire = super().to_wire()
        wire.setdefault("candidates", [])
        return wire


class ExpandParams(WireModel):
    locator: str = Field(pattern=r"^[^:]+:.+$")
    detail: DetailLevel
    budget_bytes: int = Field(ge=0)
    deadline: datetime


class ExpandResult(WireModel):
    content: str
    truncated: bool
    source_revision: str | None = None
    truncation_boundary: str | None = None
    provenance: str | None = None


class HealthParams(WireModel):
    deadline: datetime


class RefreshParams(WireModel):
    deadline: datetime
    full: bool | None = None


class HealthResult(WireModel):
    status: HealthStatus
    checked_at: datetime
    coverage: IndexCoverage
    last_success_at: datetime | None = None
    source_watermark: str | None = None
    index_watermark: str | None = None
    index_generation: str | None = None
    index_model: str | None = None
    index_config: str | None = None
    record_count: int | None = Field(default=None, ge=0)
    indexed_count: int | None = Field(default=None, ge=0)
    failed_count: int | None = Field(default=None, ge=0)
    diagnostics: dict[str, Any] | None = None
    checkpoint_progress: CheckpointProgress | None = None
    cold_start_ns: int | None = Field(default=None, ge=0)

    @property
    def usable(self) -> bool:
        return self.status in (HealthStatus.healthy, HealthStatus.degraded)


class CancelParams(WireModel):
    id: int | str


class Empty(WireModel):
    pass


PARAMS_MODEL: dict[str, type[WireModel]] = {
    Method.initialize: InitializeParams,
    Method.search: SearchParams,
    Method.expand: ExpandParams,
    Method.health: HealthParams,
    Method.refresh: RefreshParams,
    Method.cancel: CancelParams,
    Method.shutdown: Empty,
}

RESULT_MODEL: dict[str, type[WireModel]] = {
    Method.initialize: Manifest,
    Method.search: SearchResult,
    Method.expand: ExpandResult,
    Method.health: HealthResult,
    Method.refresh: HealthResult,
    Method.shutdown: Empty,
}

DEADLINE_METHODS = frozenset({Method.search, Method.expand, Method.health, Method.refresh})

# ---------------------------------------------------------------------------
# Errors


class RpcError(Exception):
    """An error that travels as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r})"


def negotiate_version(requested_min: int, requested_max: int) -> int:
    """Pick the highest version both ends speak, or raise invalid_params."""
    low = max(requested_min, PROTOCOL_VERSION_MIN)
    high = min(requested_max, PROTOCOL_VERSION_MAX)
    if requested_min > requested_max or low > high:
        raise RpcError(
            ErrorCode.invalid_params,
            f"requested protocol version range {requested_min}..{requested_max}, "
            f"this build speaks {PROTOCOL_VERSION_MIN}..{PROTOCOL_VERSION_MAX}",
        )
    return high


# ---------------------------------------------------------------------------
# Framing


class FrameError(Exception):
    """A line that is not a usable frame. The stream stays aligned after it."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """Serialize one message as a single line terminated by ``\\n``."""
    return orjson.dumps(message) + b"\n"


def decode_frame(line: bytes) -> dict[str, Any] | None:
    """Parse one line. Returns None for a blank line; raises FrameError otherwise."""
    if len(line) > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {len(line)} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")
    stripped = line.rstrip(b"\r\n")
    if not stripped.strip():
        return None
    try:
        message = orjson.loads(stripped)
    except orjson.JSONDecodeError as exc:
        raise FrameError(f"unparseable frame: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError("frame is not a JSON object")
    if message.get("jsonrpc") != JSONRPC:
        raise FrameError('frame lacks "jsonrpc": "2.0"')
    if "method" in message:
        if "result" in message or "error" in message:
            raise FrameError("request frame carries a result or error")
    elif "id" not in message or (("result" in message) == ("error" in message)):
        raise FrameError("response frame needs an id and exactly one of result or error")
    return message


class FrameReader:
    """Read frames from a byte stream that yields chunks, keeping alignment.

    ``receive`` is any async callable returning the next chunk (b"" at EOF).
    Oversized lines are consumed to their newline and reported as FrameError.
    """

    def __init__(self, receive: Any, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self._receive = receive
        self._buffer = bytearray()
        self._max = max_frame_bytes
        self._discarding = False
        self._eof = False

    async def read_line(self) -> bytes | None:
        """Return the next raw line (without validation), or None at EOF."""
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                if self._discarding:
                    self._discarding = False
                    raise FrameError(f"frame exceeds the {self._max}-byte limit")
                return line
            if len(self._buffer) > self._max:
                self._buffer.clear()
                self._discarding = True
            if self._eof:
                if self._buffer and not self._discarding:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                return None
            chunk = await self._receive()
            if not chunk:
                self._eof = True
            else:
                self._buffer.extend(chunk)

    async def read(self) -> dict[str, Any] | None:
        """Return the next frame, skipping blank lines; None at EOF."""
        while True:
            line = await self.read_line()
            if line is None:
                return None
            frame = decode_frame(line)
            if frame is not None:
                return frame


def request_frame(request_id: int | str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": request_id, "method": method, "params": params}


def handshake_frame(params: InitializeParams) -> bytes:
    """``recall/initialize`` as a broker writes it to a new adapter process: encoded,
    and the process's first request, so id 1."""
    return encode_frame(request_frame(1, Method.initialize, params.to_wire()))


def notification_frame(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "method": method, "params": params}


def result_frame(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": request_id, "result": result}


def error_frame(request_id: Any, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": request_id, "error": error.to_wire()}

