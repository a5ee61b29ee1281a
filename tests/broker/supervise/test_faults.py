"""Adapters that crash, hang, print garbage or lie: every case ends typed, with no orphan."""

from __future__ import annotations

import time
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


def search(query: str, seconds: float = 5.0) -> SearchParams:
    return SearchParams(query=query, limit=10, deadline=deadline_in(seconds))


async def test_crash_mid_call_is_unreachable_and_respawns_on_next_use(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, SDK_ADAPTER))
        await client.initialize()
        with pytest.raises(AdapterFailure) as caught:
            await client.search(search("crash"))
        after = (await client.search(search("again"))).result
        diagnostics = client.diagnostics()

    assert caught.value.outcome is SearchOutcome.unavailable
    assert caught.value.reason is FailureReason.unreachable
    assert "exited with status 3" in caught.value.message
    assert "about to crash" in caught.value.message
    assert after.outcome is SearchOutcome.success
    assert client.spawns == 2
    assert diagnostics["spawns"] == 2
    assert diagnostics["last_exit"] == 3
    assert "about to crash" in diagnostics["stderr_tail"]
    await assert_no_process_left(tmp_path)


async def test_exit_during_handshake_is_unavailable(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "exit_in_handshake"))
        with pytest.raises(AdapterFailure) as caught:
            await client.search(search("anything"))

    assert caught.value.outcome is SearchOutcome.unavailable
    assert caught.value.reason is FailureReason.unreachable
    assert "exited with status 4 during recall/initialize" in caught.value.message
    assert "cannot open the store" in caught.value.message
    assert client.diagnostics()["last_exit"] == 4
    await assert_no_process_left(tmp_path)


async def test_missing_command_is_spawn_failed(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, SDK_ADAPTER, argv=["recall-no-such-adapter-xyz"])
    async with Supervisor() as supervisor:
        client = supervisor.client(spec)
        with pytest.raises(AdapterFailure) as caught:
            await client.initialize()

    assert caught.value.outcome is SearchOutcome.unavailable
    assert caught.value.reason is FailureReason.spawn_failed
    assert "recall-no-such-adapter-xyz" in caught.value.message
    assert "not on PATH" in caught.value.message
    assert client.spawns == 0


async def test_hung_adapter_ignoring_cancel_is_cut_at_its_deadline_and_its_group_killed(
    tmp_path: Path,
) -> None:
    async with Supervisor(Timings(term_grace=0.3)) as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "hang"))
        await client.initialize()
        leader = recorded_pids(tmp_path)[0]
        started = time.monotonic()
        with pytest.raises(AdapterFailure) as caught:
            await client.search(search("anything", seconds=0.3))
        elapsed = time.monotonic() - started
        # torn down in the background, through SIGTERM (ignored) to SIGKILL
        await assert_no_process_left(tmp_path)
        with anyio.fail_after(1):
            while client.diagnostics()["last_exit"] is None:
                await anyio.sleep(0.01)
        diagnostics = client.diagnostics()

    assert caught.value.outcome is SearchOutcome.timeout
    assert caught.value.reason is FailureReason.deadline_exceeded_unresponsive
    assert elapsed < 0.3 + 0.25 + 0.25  # deadline + cancel grace + slack; no teardown wait
    assert diagnostics["pid"] is None
    assert diagnostics["last_exit"] == -9
    assert not is_running(leader)


async def test_process_stopped_for_ignoring_cancel_is_respawned_on_next_use(
    tmp_path: Path,
) -> None:
    async with Supervisor(Timings(term_grace=0.3)) as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "hang"))
        with pytest.raises(AdapterFailure):
            await client.search(search("anything", seconds=0.3))
        await client.initialize()
        assert client.spawns == 2
    await assert_no_process_left(tmp_path)


async def test_adapter_acknowledging_cancel_times_out_and_keeps_its_process(
    tmp_path: Path,
) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, SDK_ADAPTER))
        first = (await client.search(search("warm"))).result
        started = time.monotonic()
        with pytest.raises(AdapterFailure) as caught:
            await client.search(search("slow", seconds=0.3))
        elapsed = time.monotonic() - started
        later = (await client.search(search("still-here"))).result

    assert caught.value.outcome is SearchOutcome.timeout
    assert caught.value.reason is FailureReason.deadline_exceeded
    assert elapsed < 0.3 + 0.25
    assert later.diagnostics["pid"] == first.diagnostics["pid"]
    assert client.spawns == 1
    await assert_no_process_left(tmp_path)


async def test_caller_cancellation_of_an_unresponsive_adapter_stops_it(tmp_path: Path) -> None:
    async with Supervisor(Timings(term_grace=0.3)) as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "hang"))
        await client.initialize()
        started = time.monotonic()
        with anyio.move_on_after(0.2):
            await client.search(search("anything", seconds=30))
        elapsed = time.monotonic() - started
        await assert_no_process_left(tmp_path)

    assert elapsed < 0.2 + 0.25  # the caller is not held for the grace
    assert client.diagnostics()["pid"] is None


async def test_garbage_on_stdout_is_counted_and_replies_still_matched(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "garbage"))
        first = (await client.search(search("one"))).result
        second = (await client.search(search("two"))).result
        diagnostics = client.diagnostics()

    assert first.candidates[0].locator == second.candidates[0].locator == "fault:doc-1"
    assert diagnostics["violations"] == 12  # 4 per reply: handshake and two searches
    assert any("unknown or already answered id 424242" in v for v in diagnostics["violation_log"])
    assert any("recall/log" in v for v in diagnostics["violation_log"])
    await assert_no_process_left(tmp_path)


async def test_oversized_frame_is_skipped_and_the_stream_stays_aligned(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "oversized"))
        first = (await client.search(search("one"))).result
        second = (await client.search(search("two"))).result
        diagnostics = client.diagnostics()

    assert first.candidates[0].locator == second.candidates[0].locator == "fault:doc-1"
    assert diagnostics["violations"] == 2
    assert all("exceeds" in v for v in diagnostics["violation_log"])
    await assert_no_process_left(tmp_path)


async def test_reply_with_unknown_id_is_dropped_and_the_call_completes(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "unknown_id"))
        result = (await client.search(search("then-right"))).result
        diagnostics = client.diagnostics()

    assert result.candidates[0].locator == "fault:doc-1"
    assert diagnostics["violations"] == 1
    await assert_no_process_left(tmp_path)


async def test_call_answered_only_under_unknown_ids_times_out(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "unknown_id"))
        with pytest.raises(AdapterFailure) as caught:
            await client.search(search("only-wrong", seconds=0.3))
        later = (await client.search(search("then-right"))).result

    assert caught.value.outcome is SearchOutcome.timeout
    assert caught.value.reason is FailureReason.deadline_exceeded  # cancel acknowledged
    assert later.outcome is SearchOutcome.success
    assert client.spawns == 1
    await assert_no_process_left(tmp_path)


async def test_schema_invalid_result_is_an_adapter_error_naming_the_field(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "invalid_result"))
        with pytest.raises(AdapterFailure) as caught:
            await client.search(search("anything"))

    assert caught.value.outcome is SearchOutcome.failed
    assert caught.value.reason is FailureReason.adapter_error
    assert "outcome: Field required" in caught.value.message
    await assert_no_process_left(tmp_path)


async def test_a_schema_invalid_candidate_is_dropped_and_named_the_rest_standing(
    tmp_path: Path,
) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "invalid_candidate"))
        answer = await client.search(search("anything"))

    assert [c.local_rank for c in answer.result.candidates or []] == [1]
    assert [(m.index, m.candidate_id) for m in answer.malformed] == [(0, "c1")]
    assert answer.malformed[0].why.startswith("local_rank: Input should be greater than or equal to 1")
    await assert_no_process_left(tmp_path)


async def test_wrong_protocol_version_is_unavailable_and_the_process_stopped(
    tmp_path: Path,
) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "wrong_version"))
        with pytest.raises(AdapterFailure) as caught:
            await client.initialize()
        await assert_no_process_left(tmp_path)

    assert caught.value.outcome is SearchOutcome.unavailable
    assert caught.value.reason is FailureReason.protocol_version_unsupported
    assert "version 2" in caught.value.message and "1..1" in caught.value.message
    assert client.manifest is None


async def test_output_before_the_handshake_reply_is_a_violation(tmp_path: Path) -> None:
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "chatter"))
        manifest = await client.initialize()
        diagnostics = client.diagnostics()

    assert manifest.adapter_id == "raw/1"
    assert diagnostics["violations"] == 2
    assert all(v.startswith("before the handshake reply") for v in diagnostics["violation_log"])
    await assert_no_process_left(tmp_path)


async def test_adapter_silent_at_handshake_is_handshake_timeout(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, SDK_ADAPTER, argv=["sleep", "30"])
    async with Supervisor(Timings(handshake_timeout=0.3, term_grace=0.3)) as supervisor:
        client = supervisor.client(spec)
        with pytest.raises(AdapterFailure) as caught:
            await client.initialize()
        pid = client.diagnostics()["pid"]

    assert caught.value.outcome is SearchOutcome.unavailable
    assert caught.value.reason is FailureReason.handshake_timeout
    assert pid is None
    assert client.diagnostics()["last_exit"] is not None
