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
    EXPAND_ERRORS,
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

# expand errors: the table in broker.errors, which the CLI's exit codes read too
EXPAND_CODES = {
    code: ErrorCode(code.value, stated.http_status, stated.sidecar_code, stated.retryable)
    for code, stated in EXPAND_ERRORS.items()
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
