"""A refresh watched from a terminal asks the source's health beside it, and that never
costs the refresh: an adapter answering one request at a time keeps its process."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter_sdk.protocol import RefreshParams
from broker.refresh import RefreshEvent, _refresh_reporting_work_left
from broker.supervise import Supervisor

from .conftest import RAW_ADAPTER, assert_no_process_left, deadline_in, spec_for

pytestmark = pytest.mark.anyio


async def test_a_one_request_at_a_time_adapter_keeps_its_process_through_a_watched_refresh(
    tmp_path: Path,
) -> None:
    events: list[RefreshEvent] = []
    async with Supervisor() as supervisor:
        client = supervisor.client(spec_for(tmp_path, RAW_ADAPTER, "slow_refresh"))
        await client.initialize()
        refreshed = await _refresh_reporting_work_left(
            client, RefreshParams(deadline=deadline_in(30)), "fault", events.append
        )
        after = await client.health()
        spawns = client.spawns

    assert refreshed.coverage == "complete" and after.coverage == "complete"
    assert spawns == 1  # the health asked while it refreshed was answered, never abandoned
    assert events == []  # answered only after the refresh: stale by then, so not shown
    await assert_no_process_left(tmp_path)
