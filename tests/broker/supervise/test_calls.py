"""A well-behaved adapter under supervision: calls, concurrency, health caching."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from adapter_sdk.protocol import (
    DetailLevel,
    ExpandParams,
    HealthStatus,
    RefreshParams,
    SearchOutcome,
    SearchParams,
)
from broker.supervise import (
    DEFAULT_CALL_TIMEOUT,
    AdapterFailure,
    FailureReason,
    Supervisor,
    Timings,
    classify,
)

from .conftest import RAW_ADAPTER, SDK_ADAPTER, assert_no_process_left, deadline_in, spec_for

pytestmark = pytest.mark.anyio


def search(query: str, seconds: float = 5.0) -> SearchParams:
    return SearchParams(query=query, limit=10, deadline=deadline_in(seconds))


async def test_healthy_adapter_answers_search_expand_and_health(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, SDK_ADAPTER))
        result = (await client.search(search("roadmap"))).result
        expanded = await client.expand(
            ExpandParams(
                locator=result.candidates[0].locator,
                detail=DetailLevel.full,
                budget_bytes=0,
                deadline=deadline_in(5),
            )
        )
        health = await client.health()

    assert result.outcome is SearchOutcome.success
    assert [c.locator for c in result.candidates] == ["fault:notes/roadmap.md#L1-L2"]
    assert expanded.content == "content of fault:notes/roadmap.md#L1-L2"
    assert health.status is HealthStatus.healthy
    assert client.manifest is not None and client.manifest.adapter_id == "steered/1"
    assert client.spawns == 1
    await assert_no_process_left(tmp_path)


async def test_one_process_serves_every_call_while_alive(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain"))
        manifest = await client.initialize()
        first = (await client.search(search("a"))).result
        second = (await client.search(search("b"))).result
        assert await client.initialize() == manifest
        assert supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain")) is client

    assert first.diagnostics["pid"] == second.diagnostics["pid"]
    assert client.spawns == 1
    await assert_no_process_left(tmp_path)


async def test_unset_deadline_is_sent_as_the_default_call_timeout(tmp_path: Path) -> None:
    unset = datetime(1, 1, 1, tzinfo=UTC)
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain"))
        result = (await client.search(SearchParams(query="x", limit=1, deadline=unset))).result

    sent = datetime.fromisoformat(result.diagnostics["deadline"].replace("Z", "+00:00"))
    granted = (sent - datetime.now(UTC)).total_seconds()
    assert DEFAULT_CALL_TIMEOUT - 5 < granted <= DEFAULT_CALL_TIMEOUT
    await assert_no_process_left(tmp_path)


async def test_call_made_after_its_deadline_times_out_without_spawning(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain"))
        with pytest.raises(AdapterFailure) as caught:
            await client.search(search("late", seconds=-1))

    assert caught.value.outcome is SearchOutcome.timeout
    assert caught.value.reason is FailureReason.deadline_exceeded
    assert client.spawns == 0


async def test_workdir_is_created_private_before_spawn(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    async with Supervisor() as supervisor:
        await supervisor.client(spec).initialize()
        assert spec.workdir.is_dir()
        assert spec.workdir.stat().st_mode & 0o777 == 0o700
    await assert_no_process_left(tmp_path)


async def test_adapter_error_codes_become_typed_failures(tmp_path: Path) -> None:
    expected = {
        -32000: (SearchOutcome.unavailable, FailureReason.unreachable),
        -32001: (SearchOutcome.denied, FailureReason.denied),
        -32002: (SearchOutcome.failed, FailureReason.locator_unknown),
        -32003: (SearchOutcome.failed, FailureReason.locator_expired),
        -32004: (SearchOutcome.failed, FailureReason.source_not_configured),
        -32005: (SearchOutcome.failed, FailureReason.as_of_unsupported),
        -32006: (SearchOutcome.failed, FailureReason.budget_exceeded),
        -32007: (SearchOutcome.timeout, FailureReason.deadline_exceeded),
        -32603: (SearchOutcome.failed, FailureReason.adapter_error),
    }
    seen = {}
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, SDK_ADAPTER))
        for code in expected:
            with pytest.raises(AdapterFailure) as caught:
                await client.search(search(f"error:{code}"))
            seen[code] = (caught.value.outcome, caught.value.reason)
            assert caught.value.code == code
            assert 'source "fault"' in caught.value.message
            assert f"steered error {code}" in caught.value.message
        assert client.spawns == 1  # an error reply leaves the process in service
    assert seen == expected
    await assert_no_process_left(tmp_path)


async def test_max_concurrency_one_serializes_calls(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, SDK_ADAPTER, settings={"max_concurrency": 1, "search_delay": 0.2})
    results = []
    async with Supervisor() as supervisor:
        client = supervisor.client(spec)
        await client.initialize()

        async def one(query: str) -> None:
            results.append((await client.search(search(query))).result)

        started = time.monotonic()
        async with anyio.create_task_group() as tasks:
            for query in ("a", "b", "c"):
                tasks.start_soon(one, query)
        elapsed = time.monotonic() - started

    assert [r.diagnostics["max_in_flight"] for r in results] == [1, 1, 1]
    assert elapsed >= 0.6
    await assert_no_process_left(tmp_path)


async def test_the_caller_hears_when_a_search_is_written_and_works_while_it_runs(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, SDK_ADAPTER, settings={"search_delay": 0.3})
    written: list[float] = []
    async with Supervisor() as supervisor:
        client = supervisor.client(spec)
        await client.initialize()
        result = (await client.search(search("a"), sent=lambda: written.append(time.monotonic()))).result
        answered = time.monotonic()
    assert result.candidates and len(written) == 1
    assert answered - written[0] >= 0.25  # told before the adapter's answer, not after


async def test_undeclared_concurrency_lets_calls_overlap(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, SDK_ADAPTER, settings={"search_delay": 0.3})
    results = []
    async with Supervisor() as supervisor:
        client = supervisor.client(spec)
        await client.initialize()

        async def one(query: str) -> None:
            results.append((await client.search(search(query))).result)

        async with anyio.create_task_group() as tasks:
            for query in ("a", "b", "c"):
                tasks.start_soon(one, query)

    assert max(r.diagnostics["max_in_flight"] for r in results) == 3
    await assert_no_process_left(tmp_path)


async def test_max_concurrency_wait_is_bounded_by_the_deadline(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, SDK_ADAPTER, settings={"max_concurrency": 1, "search_delay": 0.5})
    async with Supervisor() as supervisor:
        client = supervisor.client(spec)
        await client.initialize()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(client.search, search("holds-the-slot"))
            await anyio.sleep(0.05)
            with pytest.raises(AdapterFailure) as caught:
                await client.search(search("waits", seconds=0.2))
    assert caught.value.outcome is SearchOutcome.timeout
    assert caught.value.reason is FailureReason.deadline_exceeded
    assert "max_concurrency 1" in caught.value.message
    await assert_no_process_left(tmp_path)


async def test_health_is_cached_for_its_ttl(tmp_path: Path) -> None:
    timings = Timings(health_ttl=0.4)
    async with Supervisor(timings) as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain"))
        first = await client.health()
        again = await client.health()
        await anyio.sleep(0.45)
        after_ttl = await client.health()

    assert first.record_count == again.record_count == 1  # one probe reached the adapter
    assert after_ttl.record_count == 2
    await assert_no_process_left(tmp_path)


async def test_first_probe_after_spawn_carries_cold_start(tmp_path: Path) -> None:
    async with Supervisor(Timings(health_ttl=0)) as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain"))
        first = await client.health()
        second = await client.health()

    assert first.cold_start_ns is not None and first.cold_start_ns > 0
    assert second.cold_start_ns is None
    assert second.record_count == 2
    await assert_no_process_left(tmp_path)


async def test_concurrent_health_probes_are_served_by_one_probe(tmp_path: Path) -> None:
    answers = []
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain"))

        async def probe() -> None:
            answers.append(await client.health())

        async with anyio.create_task_group() as tasks:
            for _ in range(5):
                tasks.start_soon(probe)

    assert [a.record_count for a in answers] == [1] * 5
    await assert_no_process_left(tmp_path)


async def test_health_merges_captured_stderr_under_adapter_keys(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "chatter"))
        await client.initialize()
        await anyio.sleep(0.1)  # let the stderr line arrive
        health = await client.health()

    assert health.diagnostics["violations"] == "counted by the adapter"
    assert "ready as fault" in health.diagnostics["stderr_tail"]
    await assert_no_process_left(tmp_path)


async def test_refresh_drops_the_health_cache(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain"))
        before = await client.health()
        refreshed = await client.refresh(RefreshParams(deadline=deadline_in(5)))
        after = await client.health()

    assert before.record_count == 1
    assert refreshed.record_count == 2
    assert after.record_count == 3
    await assert_no_process_left(tmp_path)


async def test_caller_cancellation_sends_cancel_and_keeps_an_answering_process(
    tmp_path: Path,
) -> None:
    async with Supervisor(Timings(health_ttl=0)) as supervisor:
        client = supervisor.client(spec_for(tmp_path, SDK_ADAPTER))
        first = (await client.search(search("warm"))).result
        with anyio.move_on_after(0.2) as scope:
            await client.search(search("slow", seconds=30))
        assert scope.cancelled_caught
        await anyio.sleep(0.3)  # the cancel grace, judged in the background
        health = await client.health()
        later = (await client.search(search("still-here"))).result

    assert health.diagnostics["cancelled"] == 1
    assert later.diagnostics["pid"] == first.diagnostics["pid"]
    assert client.spawns == 1
    await assert_no_process_left(tmp_path)


def test_classify_reports_caller_cancellation_as_cancelled() -> None:
    import asyncio

    failure = classify(asyncio.CancelledError(), "notes")
    assert (failure.outcome, failure.reason) == (SearchOutcome.failed, FailureReason.cancelled)
    assert 'source "notes"' in failure.message
    timeout = classify(TimeoutError(), "notes")
    assert (timeout.outcome, timeout.reason) == (
        SearchOutcome.timeout,
        FailureReason.deadline_exceeded,
    )
