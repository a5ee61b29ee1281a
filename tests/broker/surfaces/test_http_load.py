"""A bounded load on a real server: no errors, no extra adapter processes, no leaked descriptors."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import anyio
import httpx
import pytest

from .conftest import start_server

pytestmark = pytest.mark.anyio

CONCURRENT = 50


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def settle(pid: int, ceiling: int) -> int:
    """Descriptors once closed connections are gone (the server closes them after the client does)."""
    count = descriptors(pid)
    for _ in range(40):
        if count <= ceiling:
            break
        await anyio.sleep(0.05)
        count = descriptors(pid)
    return count


async def test_fifty_concurrent_queries_leak_no_adapters_or_descriptors(workspace):
    served = start_server(workspace)
    pid = served.process.pid
    try:
        async with httpx.AsyncClient(base_url=served.url, timeout=60) as client:
            warm = await client.post("/v1/query", json={"query": "restore drill"})
            assert warm.status_code == 200
        adapters = children(pid)
        await anyio.sleep(0.2)
        baseline = descriptors(pid)
        assert len(adapters) == 3

        statuses: list[int] = []
        latencies: list[float] = []

        async def one(client: httpx.AsyncClient) -> None:
            started = time.perf_counter()
            reply = await client.post("/v1/query", json={"query": "restore drill", "tier": "pointer"})
            latencies.append(time.perf_counter() - started)
            statuses.append(reply.status_code)
            assert reply.json()["outcome"] == "answered"

        limits = httpx.Limits(max_connections=CONCURRENT)
        async with httpx.AsyncClient(base_url=served.url, timeout=60, limits=limits) as client:
            async with anyio.create_task_group() as tasks:
                for _ in range(CONCURRENT):
                    tasks.start_soon(one, client)
        assert statuses == [200] * CONCURRENT
        assert children(pid) == adapters, "the warm adapters served every request"
        assert await settle(pid, baseline) <= baseline
        print(f"p50 {statistics.median(latencies) * 1000:.1f} ms over {CONCURRENT} concurrent queries")
    finally:
        served.stop()
    assert not [p for p in adapters if alive(p)], "graceful shutdown stops every adapter process"
