"""Outcomes under faults, one table through every surface.

Each row is a fault in a source that sits beside a healthy one; each column a
surface: the CLI, the CLI asking ``recall serve`` (``--server``), HTTP, MCP and
Sidecar. Every cell states the same outcome, coverage and degraded sources,
the surface's own code for them (exit code, HTTP status, MCP ``isError``,
Sidecar page outcome), and leaves no process behind; the server's descriptors
do not grow across repeated faults. A full disk is not in the table: it cannot
be produced for an unprivileged process without mounting a filesystem.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.broker.surfaces.conftest import fixture_request
from tests.broker.surfaces.mcp_session import mcp_session

from .conftest import Fault, FaultWorkspace, workspace_fixture

pytestmark = pytest.mark.anyio

TIMEOUT = "timeout: source timeout 1.5s"
FAULTS = [
    Fault("crash_at_start", "raw_exit_in_handshake", degraded=("crash_at_start (adapter_unavailable)",)),
    Fault("crash_mid_search", "fixture", {"fail": "crash"}, degraded=("crash_mid_search (unreachable)",)),
    Fault("hang", "fixture", {"fail": "hang"}, degraded=(f"hang ({TIMEOUT})",)),
    Fault("garbage", "raw_garbage", coverage="complete"),
    Fault("oversized_frame", "raw_oversized", coverage="complete"),
    Fault("wrong_id", "raw_unknown_id", coverage="complete"),
    Fault("ignore_cancel", "raw_hang", degraded=(f"ignore_cancel ({TIMEOUT})",)),
    Fault("slow_health", "raw_slow_health", degraded=("slow_health (unhealthy)",)),
    Fault("store_deleted", "notes", degraded=("store_deleted (unhealthy)",)),
]
QUESTION = "restore drill"
REPEATS = 4

workspace = workspace_fixture(FAULTS)


@dataclass(frozen=True)
class Observed:
    outcome: str
    coverage: str
    degraded: tuple[str, ...]
    locators: tuple[str, ...]


def observed(pointer: dict) -> Observed:
    return Observed(
        pointer["outcome"],
        pointer["coverage"],
        tuple(pointer.get("source_summary", {}).get("degraded", [])),
        tuple(sorted(r["locator"] for r in pointer["results"])),
    )


def expected(fault: Fault) -> Observed:
    """A source that still answered (its fault was survivable) shows its record too."""
    shown = ["good:restore"] + ([f"{fault.name}:doc-1"] if fault.coverage == "complete" else [])
    return Observed(fault.outcome, fault.coverage, fault.degraded, tuple(sorted(shown)))


async def via_cli(ws: FaultWorkspace, fault: Fault) -> None:
    run = ws.recall("query", "--json", "--profile", fault.name, QUESTION)
    assert run.returncode == fault.exit_code, run.stderr
    assert observed(json.loads(run.stdout)) == expected(fault)


async def via_remote_cli(ws: FaultWorkspace, fault: Fault) -> None:
    run = ws.recall("query", "--json", "--server", ws.server(fault.name).url, QUESTION)
    assert run.returncode == fault.exit_code, run.stderr
    assert observed(json.loads(run.stdout)) == expected(fault)


async def via_http(ws: FaultWorkspace, fault: Fault) -> None:
    served = ws.server(fault.name)

    def ask() -> httpx.Response:
        return httpx.post(served.url + "/v1/query", json={"query": QUESTION, "tier": "pointer"}, timeout=60)

    first = ask()
    assert first.status_code == fault.http_status
    assert first.headers["Recall-Coverage"] == fault.coverage
    assert observed(first.json()) == expected(fault)
    before = open_descriptors(served.process.pid)
    for _ in range(REPEATS):
        assert observed(ask().json()) == expected(fault)
    # a respawned adapter has new pipes, the one it replaced may still be stopping, a
    # connection may still be closing; a leak grows with every fault and stays
    after = settled_descriptors(served.process.pid, len(before) + 1)
    assert len(after) <= len(before) + 1, f"descriptors the server kept: {sorted(after - before)}"


async def via_mcp(ws: FaultWorkspace, fault: Fault) -> None:
    async with mcp_session(ws, "--profile", fault.name) as session:  # type: ignore[arg-type]
        result = await session.call_tool("recall_query", {"query": QUESTION})
    assert result.is_error is (fault.outcome == "failed")
    assert observed(result.structured_content or {}) == expected(fault)


async def via_sidecar(ws: FaultWorkspace, fault: Fault) -> None:
    request = json.loads(fixture_request("list-results.json"))
    request["params"]["query"] = QUESTION
    run = ws.recall("sidecar-plugin", "--profile", fault.name, stdin=json.dumps(request))
    assert run.returncode == 0, run.stderr
    page = json.loads(run.stdout)["page"]
    assert page["outcome"] == ("answered" if fault.coverage == "complete" else "degraded")
    assert tuple(sorted(item["id"] for item in page["items"])) == expected(fault).locators


SURFACES: dict[str, Callable[[FaultWorkspace, Fault], Awaitable[None]]] = {
    "cli": via_cli,
    "server": via_remote_cli,
    "http": via_http,
    "mcp": via_mcp,
    "sidecar": via_sidecar,
}


def open_descriptors(pid: int) -> set[str]:
    """What each open descriptor of ``pid`` refers to, by number (``3 -> socket:[123]``)."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found.add(f"{fd.name} -> {fd.readlink()}")
        except OSError:
            continue
    return found


def settled_descriptors(pid: int, most: int, wait: float = 15.0) -> set[str]:
    """The server's descriptors once background stops are done (at most ``wait`` seconds)."""
    give_up = time.monotonic() + wait
    while len(found := open_descriptors(pid)) > most and time.monotonic() < give_up:
        time.sleep(0.1)
    return found


def server_family(ws: FaultWorkspace) -> tuple[int, ...]:
    """The servers and what they keep running (warm adapters): not orphans while they serve."""
    servers = {served.process.pid for served in ws.servers.values()}
    family = set(servers)
    for pid in ws.live_processes():
        chain = pid
        while chain > 1:
            try:
                chain = int(Path(f"/proc/{chain}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                break
            if chain in servers:
                family.add(pid)
                break
    return tuple(family)


@pytest.mark.parametrize("surface", list(SURFACES))
@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
async def test_a_fault_gives_the_same_answer_on_every_surface_and_leaves_nothing_running(
    workspace: FaultWorkspace, fault: Fault, surface: str
) -> None:
    await SURFACES[surface](workspace, fault)
    orphans = workspace.live_processes(besides=server_family(workspace))
    assert orphans == [], describe(orphans)


def describe(pids: list[int]) -> str:
    """Each orphan's command line and parent, for the failure message."""
    lines = []
    for pid in pids:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
        except OSError:
            continue
        lines.append(f"{pid} (parent {parent}): {argv.strip()}")
    return "orphaned processes:\n" + "\n".join(lines)
