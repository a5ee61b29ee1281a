"""Wire details that match the reference, so a client written against it works here unchanged.

Each test is one behaviour a caller of the reference relies on; the deliberate
differences are in docs/compatibility.md.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.broker.surfaces.conftest import RECALL, Workspace
from tests.broker.surfaces.mcp_session import mcp_session

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def _mcp_lines(workspace: Workspace, *messages: object) -> list[dict]:
    """Send raw lines to ``recall mcp`` and read every reply until it exits on end of input."""
    lines = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
    done = subprocess.run([RECALL, "mcp"], input=lines, capture_output=True, text=True,
                          env=workspace.env, cwd=workspace.root, timeout=60)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_mcp_answers_a_line_that_is_not_json_with_a_parse_error(workspace: Workspace) -> None:
    replies = _mcp_lines(workspace, INITIALIZE, "this is not json")
    errors = [r for r in replies if "error" in r]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(None, -32700)]


def test_mcp_tools_list_before_initialize_is_an_invalid_request(workspace: Workspace) -> None:
    replies = _mcp_lines(workspace, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    assert [(r["id"], r["error"]["code"]) for r in replies] == [(5, -32600)]


@pytest.mark.anyio
async def test_mcp_accepts_an_unbounded_token_budget_as_the_cli_does(workspace: Workspace) -> None:
    async with mcp_session(workspace) as session:
        unbounded = await session.call_tool("recall_query", {"query": "restore drill", "budget_tokens": -1})
        zero = await session.call_tool("recall_query", {"query": "restore drill", "budget_tokens": 0})
    assert unbounded.is_error is False
    assert unbounded.structured_content["outcome"] == "answered"
    assert zero.is_error is False  # 0 asks for the default budget, on every surface


def _query_json(workspace: Workspace, *args: str) -> dict:
    done = workspace.recall("query", "restore drill", "--json", "--explain", *args)
    assert done.returncode in (0, 3), done.stderr
    return json.loads(done.stdout)


def test_every_result_says_how_its_source_honors_as_of_even_when_none_was_asked(workspace: Workspace) -> None:
    response = _query_json(workspace)
    honored = [r["explanation"]["freshness"].get("as_of_honored") for r in response["results"]]
    assert honored and all(honored), honored


def test_a_source_listing_falls_back_to_the_adapters_freshness_policy(workspace: Workspace) -> None:
    done = workspace.recall("sources", "--json")
    rows = {row["source_id"]: row for row in json.loads(done.stdout)["sources"]}
    assert "freshness_policy" not in (workspace.root / "config").rglob("config.toml").__next__().read_text()
    assert rows["kb"]["freshness_policy"].startswith("indexed")  # the notes adapter's own words


WHOLE_FLOAT = re.compile(r'":\s*-?\d+\.0\s*[,\n}\]]')


def test_whole_numbers_print_without_a_fraction_as_the_reference_prints_them(workspace: Workspace) -> None:
    done = workspace.recall("query", "restore drill", "--json", "--explain")
    assert '"prior"' in done.stdout
    assert not WHOLE_FLOAT.findall(done.stdout)
    listing = workspace.recall("sources", "--json").stdout
    assert '"base_prior": 1' in listing or '"base_prior"' not in listing
    assert not WHOLE_FLOAT.findall(listing)


def test_a_notes_source_reports_when_it_was_last_confirmed_from_its_first_query(workspace: Workspace) -> None:
    """A new process has not synced yet; its index's last successful sync stands in, as the reference's does."""
    response = _query_json(workspace)
    notes = next(s for s in response["source_outcomes"] if s["source_id"] == "kb")
    assert notes.get("confirmed_at"), notes
