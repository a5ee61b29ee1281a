"""One table from a broker error to what each surface answers with.

The HTTP API answers ``{"error": {"code", "message"}}`` with a status, the
Sidecar plugin a refusal code with a retry hint, and the HTTP client turns a
code back into the error the in-process broker would have raised, so
``recall --server`` fails exactly as ``recall`` does. All three read this
table; the first row whose error type matches wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.errors import (
    ConfigError,
    ExpandError,
    ExpandErrorCode,
    PlanError,
    RecallError,
    UnknownProfile,
    UnsatisfiableScope,
    UsageError,
)


@dataclass(frozen=True)
class ErrorCode:
    code: str
    http_status: int
    sidecar: str
    retryable: bool = False


BAD_REQUEST = ErrorCode("bad_request", 400, "invalid_request")
PROFILE_MISMATCH = ErrorCode("profile_mismatch", 409, "invalid_request")
INTERNAL = ErrorCode("internal", 500, "unavailable", retryable=True)

TABLE: tuple[tuple[type[RecallError], ErrorCode], ...] = (
    (UnsatisfiableScope, BAD_REQUEST),
    (UnknownProfile, PROFILE_MISMATCH),
    (UsageError, BAD_REQUEST),
    (ConfigError, ErrorCode("internal", 500, "invalid_config")),
)

EXPAND_CODES = {
    ExpandErrorCode.malformed_locator: ErrorCode("malformed_locator", 400, "invalid_request"),
    ExpandErrorCode.denied: ErrorCode("denied", 403, "unavailable"),
    ExpandErrorCode.not_configured: ErrorCode("not_configured", 404, "not_found"),
    ExpandErrorCode.locator_unknown: ErrorCode("locator_unknown", 404, "not_found"),
    ExpandErrorCode.locator_expired: ErrorCode("locator_expired", 410, "not_found"),
    ExpandErrorCode.timeout: ErrorCode("timeout", 504, "unavailable", retryable=True),
    ExpandErrorCode.unreachable: ErrorCode("unreachable", 502, "unavailable", retryable=True),
    ExpandErrorCode.budget_exceeded: ErrorCode("budget_exceeded", 502, "unavailable"),
    ExpandErrorCode.failed: ErrorCode("failed", 502, "unavailable", retryable=True),
}


def error_code(error: RecallError) -> ErrorCode:
    """How every surface reports ``error``."""
    if isinstance(error, ExpandError):
        return EXPAND_CODES[error.code]
    return next((code for kind, code in TABLE if isinstance(error, kind)), INTERNAL)


def raised_for(code: str, message: str) -> RecallError | None:
    """The error a server's ``code`` stands for, as the in-process broker raises it; None if unknown."""
    if code in ExpandErrorCode.__members__:
        return ExpandError(ExpandErrorCode(code), message)
    if code == BAD_REQUEST.code:
        return UsageError(message)
    if code == PROFILE_MISMATCH.code:
        return PlanError(message)
    return None
