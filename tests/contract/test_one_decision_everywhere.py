"""One request, one decision, whichever surface carries it.

Each row is a request stated once; each surface translates it into its own
input (flags, an HTTP body, MCP tool arguments, a Sidecar page request) and its
answer is read back as one decision: ``refused`` (a usage error: exit 1, HTTP
400, an MCP error result that names the argument, Sidecar ``invalid_request``)
or the query's outcome with coverage folded in as the exit code folds it
(``failed`` > ``degraded`` > ``abstained`` > ``answered``). A surface that
cannot express a row (the command line has no way to send a string where a
number goes) returns ``None`` and is left out of that row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.broker.surfaces.conftest import Served, Workspace
from tests.broker.surfaces.mcp_session import mcp_session

QUERY = "restore drill"
REFUSED = "refused"
EXIT_DECISION = {0: "answered", 1: REFUSED, 2: "abstained", 3: "degraded", 4: "failed"}


@dataclass(frozen=True)
class Ask:
    """A request in the broker's own terms; ``None`` leaves a field out."""

    query: str = QUERY
    profile: str = "default"
    limit: Any = None
    latency_ms: Any = None
    sources: list[str] | None = None
    as_of: Any = None
    include_stale: Any = None
    cli: bool = True
    """Whether the command line can say this at all."""
    sidecar: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


ROWS: list[tuple[str, Ask, str]] = [
    ("good", Ask(), "answered"),
    ("abstains", Ask(query="zebra xylophone"), "abstained"),
    ("degraded", Ask(profile="wide"), "degraded"),
    ("failed", Ask(profile="wide", sources=["broken"]), "failed"),
    ("empty", Ask(query=""), REFUSED),
    ("blank", Ask(query="   "), REFUSED),
    ("limit-too-large", Ask(limit=20_000), REFUSED),
    ("limit-negative", Ask(limit=-1), REFUSED),
    ("limit-not-a-number", Ask(limit="three"), REFUSED),
    ("limit-as-text", Ask(limit="3", cli=False), REFUSED),
    ("limit-true", Ask(limit=True, cli=False), REFUSED),
    ("latency-beyond-a-day", Ask(latency_ms=10**9, sidecar=False), REFUSED),
    ("unknown-source", Ask(sources=["nowhere"]), REFUSED),
    # the command line reads a time without a zone as UTC, as its help says; the APIs refuse it
    ("as-of-without-zone", Ask(as_of="2030-01-01T00:00:00", cli=False, sidecar=False), REFUSED),
    ("as-of-a-date", Ask(as_of="2030-01-01", cli=False, sidecar=False), REFUSED),
    ("as-of-seconds", Ask(as_of=1_900_000_000, cli=False, sidecar=False), REFUSED),
    ("as-of-with-offset", Ask(as_of="2030-01-01T09:30:00+02:00", cli=False, sidecar=False), "answered"),
    ("include-stale-as-text", Ask(include_stale="false", cli=False, sidecar=False), REFUSED),
]


# -- the command line, in process and against a server ---------------------------


def cli_args(ask: Ask) -> list[str] | None:
    if not ask.cli:
        return None
    args = ["query", "--json", "--profile", ask.profile]
    if ask.limit is not None:
        args += ["--limit", str(ask.limit)]
    if ask.latency_ms is not None:
        args += ["--budget-ms", str(ask.latency_ms)]
    for source in ask.sources or ():
        args += ["--scope", f"source={source}"]
    return [*args, "--", ask.query] if ask.query else args


def by_cli(workspace: Workspace, ask: Ask, server: str | None = None) -> str | None:
    args = cli_args(ask)
    if args is None:
        return None
    run = workspace.recall(*args[:1], *(["--server", server] if server else []), *args[1:])
    assert "Traceback" not in run.stderr, run.stderr
    return EXIT_DECISION[run.returncode]


# -- HTTP ---------------------------------------------------------------------------


def http_body(ask: Ask) -> dict[str, Any]:
    body: dict[str, Any] = {"query": ask.query, "profile": ask.profile}
    if ask.limit is not None:
        body["limit"] = ask.limit
    if ask.latency_ms is not None:
        body["budget"] = {"latency_ms": ask.latency_ms}
    if ask.sources is not None:
        body["scope"] = {"source_ids": ask.sources}
    if ask.as_of is not None:
        body["as_of"] = ask.as_of
    if ask.include_stale is not None:
        body["include_stale"] = ask.include_stale
    return body


def by_http(server: Served, ask: Ask) -> str:
    reply = httpx.post(server.url + "/v1/query", json=http_body(ask), timeout=60)
    if reply.status_code == 400:
        assert reply.json()["error"]["code"] == "bad_request"
        return REFUSED
    assert reply.status_code in (200, 206, 503), reply.text
    return folded(reply.json())


# -- MCP ----------------------------------------------------------------------------


def mcp_arguments(ask: Ask) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": ask.query}
    for name in ("limit", "sources", "as_of", "include_stale"):
        if getattr(ask, name) is not None:
            arguments[name] = getattr(ask, name)
    if ask.latency_ms is not None:
        arguments["budget_ms"] = ask.latency_ms
    return arguments


def mcp_decision(result: Any) -> str:
    text = result.content[0].text
    if result.is_error and result.structured_content is None:
        assert text.startswith(("invalid arguments for recall_query", "recall_query could not run")), text
        return REFUSED
    return folded(result.structured_content)


# -- Sidecar --------------------------------------------------------------------------


def by_sidecar(workspace: Workspace, ask: Ask) -> str | None:
    if not ask.sidecar:
        return None
    params: dict[str, Any] = {"collection": "results", "query": ask.query}
    if ask.limit is not None:
        params["limit"] = ask.limit
    if ask.sources:
        params["filters"] = {"source": ask.sources[0]}
    request = {"protocol": "sidecar.plugin/v1", "method": "list", "params": params}
    run = workspace.recall("sidecar-plugin", "--profile", ask.profile, stdin=json.dumps(request))
    reply = json.loads(run.stdout)
    if "error" in reply:
        assert reply["error"]["code"] == "invalid_request", reply
        return REFUSED
    return str(reply["page"]["outcome"])


def folded(body: dict[str, Any]) -> str:
    if body["outcome"] == "failed":
        return "failed"
    return "degraded" if body["coverage"] == "degraded" else str(body["outcome"])


# -- the table ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp_decisions(workspace: Workspace) -> dict[str, str]:
    """Every row through one ``recall mcp`` per profile."""
    import anyio

    async def ask_all() -> dict[str, str]:
        decisions: dict[str, str] = {}
        for profile in ("default", "wide"):
            async with mcp_session(workspace, "--profile", profile) as session:
                for name, ask, _ in ROWS:
                    if ask.profile == profile:
                        result = await session.call_tool("recall_query", mcp_arguments(ask))
                        decisions[name] = mcp_decision(result)
        return decisions

    return anyio.run(ask_all)


@pytest.mark.parametrize(("ask", "expected"), [(ask, expected) for _, ask, expected in ROWS],
                         ids=[name for name, _, _ in ROWS])
def test_every_surface_decides_a_request_the_same_way(
    request: pytest.FixtureRequest, workspace: Workspace, default_server: Served, wide_server: Served,
    mcp_decisions: dict[str, str], ask: Ask, expected: str,
) -> None:
    server = wide_server if ask.profile == "wide" else default_server
    surfaces: dict[str, Callable[[], str | None]] = {
        "cli": lambda: by_cli(workspace, ask),
        "cli --server": lambda: by_cli(workspace, ask, server.url),
        "http": lambda: by_http(server, ask),
        "mcp": lambda: mcp_decisions[request.node.callspec.id],
        "sidecar": lambda: by_sidecar(workspace, ask),
    }
    decisions = {name: decide() for name, decide in surfaces.items()}
    assert {name: d for name, d in decisions.items() if d is not None} == dict.fromkeys(
        (name for name, d in decisions.items() if d is not None), expected
    )
