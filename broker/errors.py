"""Every error the broker raises, in one picture.

    RecallError                      a request could not be served; no corpus claim (exit 1)
    ├── UsageError                   bad command-line or request input
    ├── ConfigError                  configuration cannot be loaded or is invalid
    │   └── TrustError               a project file tried to cross the trust boundary
    ├── PlanError                    the request cannot be planned
    │   ├── UnknownProfile           the named profile is not configured
    │   └── UnsatisfiableScope       scope names sources that cannot be searched
    ├── FusionError                  the candidate pool breaks a fusion precondition
    └── ExpandError                  a locator could not be expanded; has a code (see EXPAND_ERRORS)

Adapter failures are not exceptions at this level: the supervisor classifies
them into a :class:`broker.supervise.AdapterFailure` and the application turns
that into a source outcome, so a broken source never aborts a query.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RecallError(Exception):
    """Base of every broker error. ``str(err)`` is the one line a user reads."""


class UsageError(RecallError):
    pass


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with the configuration, with where it was found."""

    message: str
    file: str | None = None
    key: str | None = None
    source_id: str | None = None
    kind: str = "configuration"  # configuration | trust_boundary | identity

    def __str__(self) -> str:
        where = ", ".join(
            part
            for part in (
                f"file {self.file}" if self.file else "",
                f"key {self.key}" if self.key else "",
                f"source {self.source_id}" if self.source_id else "",
            )
            if part
        )
        return f"{self.message} ({where})" if where else self.message


class ConfigError(RecallError):
    def __init__(self, problems: list[ConfigProblem] | str) -> None:
        if isinstance(problems, str):
            problems = [ConfigProblem(problems)]
        self.problems = problems
        if len(problems) == 1:
            text = f"configuration: {problems[0]}"
        else:
            text = f"configuration has {len(problems)} problems:\n  " + "\n  ".join(
                str(p) for p in problems
            )
        super().__init__(text)


class TrustError(ConfigError):
    pass


class PlanError(RecallError):
    pass


class UnknownProfile(PlanError):
    pass


class UnsatisfiableScope(PlanError):
    pass


class FusionError(RecallError):
    """A candidate or source fact that fusion cannot rank (a defect upstream, not a source's)."""


class ExpandErrorCode(StrEnum):
    malformed_locator = "malformed_locator"
    not_configured = "not_configured"
    denied = "denied"
    locator_unknown = "locator_unknown"
    locator_expired = "locator_expired"
    unreachable = "unreachable"
    timeout = "timeout"
    budget_exceeded = "budget_exceeded"
    failed = "failed"


class ExpandError(RecallError):
    def __init__(self, code: ExpandErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def stated(self) -> ExpandErrorClass:
        return EXPAND_ERRORS[self.code]


@dataclass(frozen=True)
class ExpandErrorClass:
    """How every surface states one expand error code."""

    exit_code: int  # recall expand
    http_status: int
    sidecar_code: str  # sidecar.plugin/v1 error code
    retryable: bool = False

    @property
    def usage(self) -> bool:
        """The caller's locator was wrong, not the source: nothing to retry."""
        return self.exit_code == 1


_USAGE = ExpandErrorClass(1, 400, "invalid_request")
_UNAVAILABLE = "unavailable"
_NOT_FOUND = "not_found"  # a locator that will not come back by retrying

# One table for every surface. A locator is malformed when the broker cannot
# split it or its source's adapter cannot parse the local part
# (``locator_unknown``); either is a usage error. A locator that parses but no
# longer resolves, or a source that cannot be read, is a failed expansion.
EXPAND_ERRORS: dict[ExpandErrorCode, ExpandErrorClass] = {
    ExpandErrorCode.malformed_locator: _USAGE,
    ExpandErrorCode.locator_unknown: _USAGE,
    ExpandErrorCode.denied: ExpandErrorClass(4, 403, _UNAVAILABLE),
    ExpandErrorCode.not_configured: ExpandErrorClass(4, 404, _NOT_FOUND),
    ExpandErrorCode.locator_expired: ExpandErrorClass(4, 410, _NOT_FOUND),
    ExpandErrorCode.timeout: ExpandErrorClass(4, 504, _UNAVAILABLE, retryable=True),
    ExpandErrorCode.unreachable: ExpandErrorClass(4, 502, _UNAVAILABLE, retryable=True),
    ExpandErrorCode.budget_exceeded: ExpandErrorClass(4, 502, _UNAVAILABLE),
    ExpandErrorCode.failed: ExpandErrorClass(4, 502, _UNAVAILABLE, retryable=True),
}
