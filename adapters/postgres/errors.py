"""What can go wrong talking to PostgreSQL, as one typed value the user can act on.

Every failure the adapter meets becomes a :class:`SourceProblem`::

    kind            wire code                 health        cause
    unreachable     -32000 source_unavailable unavailable   no server, connection lost, shutting down
    denied          -32001 source_denied      denied        authentication failed, no privilege,
                                                            a role that bypasses row-level security,
                                                            a search that tried to write
    misconfigured   -32004 not_configured     unavailable   no such table, column or text configuration
    timed_out       -32007 deadline_exceeded  (n/a)         statement_timeout: the source deadline passed
    failed          -32603 internal_error     unavailable   anything else the server said

Messages summarise what the server or libpq said; they never carry the
connection string or the password (:func:`scrub` removes both wherever they
might appear).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from adapter_sdk import ErrorCode, HealthStatus, RpcError

if TYPE_CHECKING:
    import psycopg


class ProblemKind(StrEnum):
    unreachable = "unreachable"
    denied = "denied"
    misconfigured = "misconfigured"
    timed_out = "timed_out"
    failed = "failed"


_WIRE: dict[ProblemKind, tuple[ErrorCode, HealthStatus]] = {
    ProblemKind.unreachable: (ErrorCode.source_unavailable, HealthStatus.unavailable),
    ProblemKind.denied: (ErrorCode.source_denied, HealthStatus.denied),
    ProblemKind.misconfigured: (ErrorCode.source_not_configured, HealthStatus.unavailable),
    ProblemKind.timed_out: (ErrorCode.deadline_exceeded, HealthStatus.unavailable),
    ProblemKind.failed: (ErrorCode.internal_error, HealthStatus.unavailable),
}

# SQLSTATE classes and codes, as PostgreSQL documents them (Appendix A).
_DENIED_STATES = {"28000", "28P01", "42501", "25006"}
_MISCONFIGURED_STATES = {"42P01", "42703", "42704", "3F000", "42883", "3D000"}
_UNREACHABLE_CLASSES = ("08", "57P")
_QUERY_CANCELED = "57014"


class SourceProblem(Exception):
    """A failure already summarised for the user."""

    def __init__(self, kind: ProblemKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    @property
    def health_status(self) -> HealthStatus:
        return _WIRE[self.kind][1]

    def rpc(self) -> RpcError:
        return RpcError(_WIRE[self.kind][0], self.message)


def classify(exc: psycopg.Error, *, secrets: tuple[str, ...], doing: str) -> SourceProblem:
    """The problem ``exc`` stands for, raised while ``doing`` (\"searching kb\")."""
    import psycopg

    state = exc.sqlstate or ""
    said = scrub(_server_said(exc), secrets)
    if state == _QUERY_CANCELED:
        return SourceProblem(
            ProblemKind.timed_out, f"{doing}: the server cancelled the statement ({said})"
        )
    if state in _DENIED_STATES or (not state and _looks_like_auth(said)):
        return SourceProblem(ProblemKind.denied, f"{doing}: access denied: {said}")
    if state in _MISCONFIGURED_STATES:
        return SourceProblem(
            ProblemKind.misconfigured,
            f"{doing}: {said}; check the source's settings 'table', 'columns' and 'text_config'",
        )
    if state.startswith(_UNREACHABLE_CLASSES) or isinstance(exc, psycopg.OperationalError):
        return SourceProblem(ProblemKind.unreachable, f"{doing}: the server is unreachable: {said}")
    return SourceProblem(ProblemKind.failed, f"{doing}: {said}")


def dsn_secrets(dsn: str) -> tuple[str, ...]:
    """What must never be printed: the connection string, and the password inside it."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        password = str(conninfo_to_dict(dsn).get("password") or "")
    except Exception:  # an unparsable string is reported when connecting; hide all of it
        password = ""
    return (dsn, password)


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every secret (the connection string, its password) replaced."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "[redacted]")
    return text


def _server_said(exc: psycopg.Error) -> str:
    """The server's own words when it sent any, else libpq's reason, on one line."""
    primary = exc.diag.message_primary if exc.sqlstate else None
    if primary:
        return primary
    text = str(exc).strip()
    # libpq: 'connection failed: connection to server at "h", port p failed: REASON'
    if "failed:" in text:
        text = text.rsplit("failed:", 1)[1]
    text = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return text.removeprefix("FATAL:").strip() or type(exc).__name__


def _looks_like_auth(said: str) -> bool:
    lowered = said.lower()
    return "authentication failed" in lowered or "no password supplied" in lowered or (
        "role" in lowered and "does not exist" in lowered
    )
