"""Refresh progress says how each source ended, not merely that it did."""

from __future__ import annotations

import pytest

from broker.app import open_broker
from broker.config import load_config
from broker.contracts import RefreshRequest
from broker.refresh import RefreshEvent, RefreshStage


@pytest.mark.anyio
async def test_refresh_progress_reports_each_sources_status_and_reason(home):
    home(kb={"records": []})
    events: list[RefreshEvent] = []
    async with open_broker(load_config()) as broker:
        await broker.refresh(RefreshRequest(), events.append)
    assert events == [
        RefreshEvent("kb", RefreshStage.started),
        RefreshEvent("kb", RefreshStage.ended, "skipped (checkpoint_unsupported)"),
    ]


def test_refresh_prints_no_progress_when_stderr_is_not_a_terminal(home):
    user = home(kb={"records": []})
    run = user.recall("refresh")
    assert run.stderr == ""
    assert "kb  nothing to index: read live at every query" in run.stdout


def test_the_live_line_keeps_the_first_clause_of_a_sources_account_of_work_left():
    from broker.surfaces.commands.refresh import WORK_LEFT_WIDTH, _first_clause

    assert _first_clause("2744 chunks not embedded yet") == "2744 chunks not embedded yet"
    notes = "first build: 1234 notes are waiting to be indexed; answered from the 500 notes indexed so far"
    assert _first_clause(notes) == "first build: 1234 notes are waiting to be indexed"
    cut = _first_clause("x" * 200)
    assert len(cut) == WORK_LEFT_WIDTH and cut.endswith("…")
