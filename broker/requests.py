"""What makes a request servable, decided once for every surface.

Each surface turns its own input (command-line flags, an HTTP body, MCP tool
arguments, a Sidecar page request) into a request model; the rules here decide
whether that request can be served. :meth:`broker.app.Broker.query` applies them,
and a surface that wants to refuse before it opens a broker calls the same
function, so no surface answers what another refuses.

A refusal is an :class:`InvalidRequest`: one :class:`RequestProblem` per field,
each naming the field by its request path (``budget.latency_ms``). A surface
renders the problems under its own names for the fields (``--budget-ms`` on
the command line, ``budget_ms`` over MCP) with :meth:`InvalidRequest.describe`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from broker.contracts import (
    DEFAULT_LATENCY_MS,
    MAX_LATENCY_MS,
    MAX_LIMIT,
    QueryRequest,
    RefreshRequest,
)
from broker.errors import UsageError

LIMIT_MIN, LIMIT_MAX = 0, MAX_LIMIT
"""``limit``: 0 asks for the profile's ``max_results``."""
LATENCY_MIN_MS, LATENCY_MAX_MS = 0, MAX_LATENCY_MS
"""``budget.latency_ms``: 0 asks for the default budget."""
UNBOUNDED_TOKENS = -1
"""``budget.response_tokens``: -1 lifts the bound, 0 asks for the default, else a positive bound."""

INSTANT_EXAMPLE = "2030-01-01T00:00:00Z"
RFC3339_INSTANT = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)
"""An RFC 3339 ``date-time``: a date, a time and the zone, which the format requires."""


@dataclass(frozen=True)
class RequestProblem:
    """One field a request cannot be served with, and the rule it breaks."""

    field: str
    rule: str

    def describe(self, names: Mapping[str, str]) -> str:
        return f"{names.get(self.field, self.field)} {self.rule}"


class InvalidRequest(UsageError):
    """A request the broker refuses before asking any source."""

    def __init__(self, problems: list[RequestProblem]) -> None:
        self.problems = problems
        super().__init__(self.describe({}))

    def describe(self, names: Mapping[str, str]) -> str:
        """The problems as one line, each field under the name ``names`` gives it."""
        return "; ".join(problem.describe(names) for problem in self.problems)


def query_problems(request: QueryRequest) -> list[RequestProblem]:
    """Every rule ``request`` breaks, in field order; empty if it can be served."""
    problems: list[RequestProblem] = []
    if not request.query.strip():
        problems.append(RequestProblem("query", "is empty; ask a question in words"))
    problems += [
        RequestProblem(name, f"is not UTF-8 text: {_as_given(text)}")
        for name, text in _texts(request)
        if not _is_utf8(text)
    ]
    if not LIMIT_MIN <= request.limit <= LIMIT_MAX:
        problems.append(RequestProblem(
            "limit", f"must be between {LIMIT_MIN} and {LIMIT_MAX} (0: the profile's max_results)"
        ))
    if not LATENCY_MIN_MS <= request.budget.latency_ms <= LATENCY_MAX_MS:
        problems.append(RequestProblem(
            "budget.latency_ms",
            f"must be between {LATENCY_MIN_MS} and {LATENCY_MAX_MS} (0: {DEFAULT_LATENCY_MS})",
        ))
    if request.budget.response_tokens < UNBOUNDED_TOKENS:
        problems.append(RequestProblem(
            "budget.response_tokens", "must be positive, 0 for the default, or -1 for unbounded"
        ))
    instants = {
        "as_of": request.as_of,
        "valid_at": request.valid_at,
        "scope.since": request.scope.since,
        "scope.until": request.scope.until,
    }
    problems += [
        instant_problem(name, value)
        for name, value in instants.items()
        if value is not None and not zoned(value)
    ]
    return problems


def _texts(request: QueryRequest) -> Iterator[tuple[str, str]]:
    yield "query", request.query
    yield "profile", request.profile
    scope = request.scope
    for name in ("source_ids", "record_types", "entities"):
        for text in getattr(scope, name) or ():
            yield f"scope.{name}", text
    if scope.project is not None:
        yield "scope.project", scope.project


def _is_utf8(text: str) -> bool:
    """Whether ``text`` can be sent as UTF-8. A command line's bytes that are not UTF-8
    reach Python as lone surrogates, which no source can be sent."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _as_given(text: str) -> str:
    """The bytes a command line gave (which Python decoded with ``surrogateescape``), or
    the text's repr if it came from elsewhere (a JSON escape of a lone surrogate)."""
    try:
        return repr(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return repr(text)


def check_query(request: QueryRequest) -> QueryRequest:
    """``request`` itself if it can be served; else :class:`InvalidRequest` naming every problem."""
    problems = query_problems(request)
    if problems:
        raise InvalidRequest(problems)
    return request


def is_instant_text(text: str) -> bool:
    """Whether ``text`` is an RFC 3339 instant (not a date, a bare time or a count of seconds)."""
    return RFC3339_INSTANT.fullmatch(text) is not None


QUERY_INSTANTS = (("as_of",), ("valid_at",), ("scope", "since"), ("scope", "until"))


def json_instant_problems(body: Mapping[str, object]) -> list[RequestProblem]:
    """Instants in a JSON query body that are not RFC 3339 text (a number of seconds is not one)."""
    problems = []
    for path in QUERY_INSTANTS:
        value: object = body
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is not None and not (isinstance(value, str) and is_instant_text(value)):
            problems.append(RequestProblem(
                ".".join(path), f"must be an RFC 3339 instant with a zone, such as {INSTANT_EXAMPLE}"
            ))
    return problems


def check_refresh(request: RefreshRequest) -> RefreshRequest:
    """``request`` itself if it can be served: a named source must be named by more than blanks."""
    if request.source_id is not None and not request.source_id.strip():
        raise InvalidRequest([RequestProblem("source_id", "is blank; omit it to refresh every source")])
    return request


def zoned(value: datetime | None) -> bool:
    """An absent instant, or one that names its zone: a time without one is no instant at all."""
    return value is None or value.utcoffset() is not None


def instant_problem(field: str, value: datetime) -> RequestProblem:
    return RequestProblem(
        field, f"{value.isoformat()} has no time zone; give an RFC 3339 instant such as {INSTANT_EXAMPLE}"
    )


__all__ = [
    "INSTANT_EXAMPLE",
    "InvalidRequest",
    "LATENCY_MAX_MS",
    "LATENCY_MIN_MS",
    "LIMIT_MAX",
    "LIMIT_MIN",
    "RequestProblem",
    "UNBOUNDED_TOKENS",
    "RFC3339_INSTANT",
    "check_query",
    "check_refresh",
    "is_instant_text",
    "json_instant_problems",
    "query_problems",
    "zoned",
]
