"""The supervisor pools one process per source and leaves none behind."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from adapter_sdk.protocol import SearchOutcome, SearchParams
from broker.supervise import AdapterFailure, FailureReason, Supervisor, Timings

from .conftest import (
    RAW_ADAPTER,
    SDK_ADAPTER,
    assert_no_process_left,
    deadline_in,
    is_running,
    recorded_pids,
    spec_for,
)

pytestmark = pytest.mark.anyio


async def test_aclose_leaves_no_process_behind(tmp_path: Path) -> None:
    supervisor = Supervisor(Timings(term_grace=0.3))
    async with supervisor:
        notes = supervisor.client(
            spec_for(tmp_path, SDK_ADAPTER, source_uid="u1", settings={"spawn_child": True})
        )
        mail = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain", source_uid="u2"))
        hung = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "hang", source_uid="u3"))
        async with anyio.create_task_group() as starting:
            for client in (notes, mail, hung):
                starting.start_soon(client.initialize)
        assert len(recorded_pids(tmp_path)) == 5  # three adapters, two helpers
        assert all(is_running(pid) for pid in recorded_pids(tmp_path))
        await supervisor.aclose()
        assert not any(is_running(pid) for pid in recorded_pids(tmp_path))
        with pytest.raises(RuntimeError):
            supervisor.client(spec_for(tmp_path, SDK_ADAPTER, source_uid="u4"))
    await assert_no_process_left(tmp_path, within=0)


async def test_each_source_gets_its_own_process(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        first = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain", source_uid="u1"))
        second = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain", source_uid="u2"))
        a = (await first.search(SearchParams(query="x", limit=5, deadline=deadline_in(5)))).result
        b = (await second.search(SearchParams(query="x", limit=5, deadline=deadline_in(5)))).result
    assert first is not second
    assert a.diagnostics["pid"] != b.diagnostics["pid"]
    await assert_no_process_left(tmp_path)


async def test_a_source_in_two_profiles_keeps_one_process_per_profile(tmp_path: Path) -> None:
    """Asking a shared source through a second profile must not restart the first one's process."""
    async with Supervisor() as supervisor:
        first_spec = spec_for(tmp_path, RAW_ADAPTER, "plain", source_uid="shared")
        second_spec = replace(first_spec, workdir=tmp_path / "state" / "other-profile" / "shared")
        first = supervisor.client(first_spec)
        a = (await first.search(SearchParams(query="x", limit=5, deadline=deadline_in(5)))).result
        second = supervisor.client(second_spec)
        b = (await second.search(SearchParams(query="x", limit=5, deadline=deadline_in(5)))).result
        again = supervisor.client(first_spec)
        c = (await again.search(SearchParams(query="x", limit=5, deadline=deadline_in(5)))).result
    assert again is first
    assert a.diagnostics["pid"] == c.diagnostics["pid"] != b.diagnostics["pid"]
    await assert_no_process_left(tmp_path)


async def test_changed_spec_replaces_the_client_and_closes_the_old_process(
    tmp_path: Path,
) -> None:
    async with Supervisor() as supervisor:
        old = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain", source_id="notes"))
        await old.initialize()
        old_pid = recorded_pids(tmp_path)[0]
        new = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "plain", source_id="renamed"))
        result = (await new.search(SearchParams(query="x", limit=5, deadline=deadline_in(5)))).result
        with anyio.fail_after(3):
            while is_running(old_pid):
                await anyio.sleep(0.02)
        assert old.closed
        with pytest.raises(AdapterFailure) as caught:
            await old.initialize()

    assert new is not old
    assert result.candidates[0].locator.startswith("renamed:")
    assert caught.value.reason is FailureReason.unreachable
    assert caught.value.outcome is SearchOutcome.unavailable
    await assert_no_process_left(tmp_path)


async def test_in_flight_call_fails_unreachable_when_the_supervisor_closes(
    tmp_path: Path,
) -> None:
    failures: list[AdapterFailure] = []
    async with Supervisor(Timings(term_grace=0.3)) as supervisor:
        client = supervisor.client(spec_for(tmp_path, SDK_ADAPTER))
        await client.initialize()

        async def slow_search() -> None:
            try:
                await client.search(SearchParams(query="slow", limit=5, deadline=deadline_in(30)))
            except AdapterFailure as failure:
                failures.append(failure)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(slow_search)
            await anyio.sleep(0.1)
            await supervisor.aclose()

    assert [f.reason for f in failures] == [FailureReason.unreachable]
    await assert_no_process_left(tmp_path)
