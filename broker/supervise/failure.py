"""How an adapter call can fail, as one typed value.

Every failure of a supervised call is an :class:`AdapterFailure` carrying a
source outcome, a machine reason and a readable message::

    outcome      reason                          cause
    timeout      deadline_exceeded               deadline passed; the adapter answered recall/cancel,
                                                 or replied -32007 itself
                 deadline_exceeded_unresponsive  deadline passed and recall/cancel went unanswered:
                                                 the process was stopped
    unavailable  unreachable                     process exited, closed its output, or replied -32000
                 spawn_failed                    the command could not be started
                 handshake_timeout               no answer to recall/initialize in time
                 protocol_version_unsupported    the manifest names a version outside the asked range
    denied       denied                          the adapter replied -32001
    failed       as_of_unsupported               -32005
                 budget_exceeded                 -32006
                 source_not_configured           -32004
                 locator_expired                 -32003
                 locator_unknown                 -32002
                 adapter_error                   any other error reply, or a result that breaks the schema
                 protocol_violation              a reply whose error object is malformed
                 cancelled                       the caller abandoned the call (see :func:`classify`)

Adapter prose only ever reaches ``message``; outcome and reason are decided here.
"""

from __future__ import annotations

import asyncio
from enum import StrEnum

import anyio

from adapter_sdk.protocol import ErrorCode, RpcError, SearchOutcome, WireValidationError


class FailureReason(StrEnum):
    deadline_exceeded = "deadline_exceeded"
    deadline_exceeded_unresponsive = "deadline_exceeded_unresponsive"
    cancelled = "cancelled"
    unreachable = "unreachable"
    denied = "denied"
    as_of_unsupported = "as_of_unsupported"
    budget_exceeded = "budget_exceeded"
    source_not_configured = "source_not_configured"
    locator_expired = "locator_expired"
    locator_unknown = "locator_unknown"
    protocol_version_unsupported = "protocol_version_unsupported"
    spawn_failed = "spawn_failed"
    handshake_timeout = "handshake_timeout"
    adapter_error = "adapter_error"
    protocol_violation = "protocol_violation"


class AdapterFailure(Exception):
    """A supervised call did not produce a usable answer. Never an empty success."""

    def __init__(
        self,
        outcome: SearchOutcome,
        reason: FailureReason,
        message: str,
        *,
        code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.reason = reason
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"AdapterFailure({self.outcome.value}/{self.reason.value}: {self.message!r})"


_BY_CODE: dict[int, tuple[SearchOutcome, FailureReason]] = {
    ErrorCode.deadline_exceeded: (SearchOutcome.timeout, FailureReason.deadline_exceeded),
    ErrorCode.source_unavailable: (SearchOutcome.unavailable, FailureReason.unreachable),
    ErrorCode.source_denied: (SearchOutcome.denied, FailureReason.denied),
    ErrorCode.as_of_unsupported: (SearchOutcome.failed, FailureReason.as_of_unsupported),
    ErrorCode.budget_exceeded: (SearchOutcome.failed, FailureReason.budget_exceeded),
    ErrorCode.source_not_configured: (SearchOutcome.failed, FailureReason.source_not_configured),
    ErrorCode.locator_expired: (SearchOutcome.failed, FailureReason.locator_expired),
    ErrorCode.locator_unknown: (SearchOutcome.failed, FailureReason.locator_unknown),
}

_UNREACHABLE_ERRORS: tuple[type[BaseException], ...] = (
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
    BrokenPipeError,
    ConnectionError,
    EOFError,
)


def failure_for_code(code: int, message: str) -> AdapterFailure:
    """The failure an adapter's JSON-RPC error code stands for."""
    outcome, reason = _BY_CODE.get(code, (SearchOutcome.failed, FailureReason.adapter_error))
    return AdapterFailure(outcome, reason, message, code=code)


def classify(exc: BaseException, source_id: str | None = None) -> AdapterFailure:
    """Turn any exception met around an adapter call into an :class:`AdapterFailure`.

    The supervisor raises AdapterFailure itself; this is for callers that hold
    some other exception, notably the cancellation of their own task (reason
    ``cancelled``, outcome ``failed``: the caller abandoned, nothing timed out).
    """
    if isinstance(exc, AdapterFailure):
        return exc
    where = f'source "{source_id}": ' if source_id else ""
    if isinstance(exc, RpcError):
        return failure_for_code(exc.code, f"{where}{exc.message} (code {exc.code})")
    if _is_cancellation(exc):
        return AdapterFailure(
            SearchOutcome.failed, FailureReason.cancelled, f"{where}the call was cancelled"
        )
    if isinstance(exc, TimeoutError):
        return AdapterFailure(
            SearchOutcome.timeout, FailureReason.deadline_exceeded, f"{where}deadline exceeded"
        )
    if isinstance(exc, _UNREACHABLE_ERRORS):
        return AdapterFailure(
            SearchOutcome.unavailable,
            FailureReason.unreachable,
            f"{where}adapter unreachable ({type(exc).__name__}: {exc})",
        )
    if isinstance(exc, WireValidationError):
        return AdapterFailure(
            SearchOutcome.failed, FailureReason.adapter_error, f"{where}{validation_summary(exc)}"
        )
    return AdapterFailure(
        SearchOutcome.failed, FailureReason.adapter_error, f"{where}{type(exc).__name__}: {exc}"
    )


def _is_cancellation(exc: BaseException) -> bool:
    if isinstance(exc, asyncio.CancelledError):
        return True
    try:
        return isinstance(exc, anyio.get_cancelled_exc_class())
    except RuntimeError:  # no event loop running: only asyncio's class is known
        return False


def validation_summary(exc: WireValidationError) -> str:
    """Name the offending fields, e.g. ``candidates.0.local_rank: Input should be ...``."""
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(part) for part in error["loc"]) or "(whole result)"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - 3
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)
