"""The query path through real adapter processes: outcome, coverage and exit code."""

from __future__ import annotations

import pytest

from broker.app import open_broker
from broker.contracts import Coverage, Outcome, QueryRequest
from broker.severity import severity

pytestmark = pytest.mark.anyio

RESTORE = {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot and compare checksums."}
RETENTION = {"id": "retention", "title": "Backup retention", "body": "Snapshots are kept ninety days."}
TASK = {"id": "t1", "title": "Run the quarterly restore drill", "body": "Owner rotates."}


async def ask(config, text: str, **fields):
    async with open_broker(config) as broker:
        return await broker.query(QueryRequest(query=text, **fields))


async def test_answered_when_a_source_matches(write_sources):
    config = write_sources(notes={"records": [RESTORE, RETENTION]}, tasks={"records": [TASK]})
    response = await ask(config, "restore drill")
    assert response.outcome == Outcome.answered
    assert response.coverage == Coverage.complete
    assert severity(response.outcome, response.coverage).exit_code == 0
    locators = [r.primary.locator for r in response.results]
    assert set(locators) == {"notes:restore", "tasks:t1"}
    assert {r.outcome for r in response.source_outcomes} == {"success"}


async def test_abstains_when_every_source_answered_with_nothing(write_sources):
    config = write_sources(notes={"records": [RESTORE]}, tasks={"records": [TASK]})
    response = await ask(config, "submarine ballast")
    assert response.outcome == Outcome.abstained
    assert response.coverage == Coverage.complete
    assert severity(response.outcome, response.coverage).exit_code == 2


async def test_degraded_when_one_source_times_out(write_sources):
    config = write_sources(
        notes={"records": [RESTORE]},
        slow={"records": [TASK], "settings": {"delay_ms": 3000}, "timeout_ms": 300},
    )
    response = await ask(config, "restore drill")
    assert response.outcome == Outcome.answered
    assert response.coverage == Coverage.degraded
    assert severity(response.outcome, response.coverage).exit_code == 3
    slow = next(r for r in response.source_outcomes if r.source_id == "slow")
    assert slow.outcome == "timeout"
    assert slow.timeout is not None and slow.timeout.budget == "source_timeout"


async def test_failed_when_every_source_fails(write_sources):
    config = write_sources(
        a={"records": [RESTORE], "settings": {"fail": "error"}},
        b={"records": [TASK], "settings": {"fail": "crash"}},
    )
    response = await ask(config, "restore drill")
    assert response.outcome == Outcome.failed
    assert severity(response.outcome, response.coverage).exit_code == 4
    assert {r.outcome for r in response.source_outcomes} == {"unavailable"}


async def test_candidates_above_the_ceiling_are_dropped_and_counted(write_sources):
    secret = dict(RESTORE, id="secret", sensitivity="restricted")
    config = write_sources(profile_ceiling="confidential", notes={"records": [RESTORE, secret]})
    response = await ask(config, "restore drill")
    assert [r.primary.locator for r in response.results] == ["notes:restore"]
    assert response.suppressed[0].reason == "sensitivity"
    assert response.suppressed[0].count == 1
    assert response.suppressed[0].lineage_root is None


async def test_source_floor_raises_candidate_sensitivity(write_sources):
    config = write_sources(notes={"records": [RESTORE], "sensitivity": "confidential"})
    response = await ask(config, "restore drill")
    assert response.results[0].primary.sensitivity == "confidential"


async def test_source_above_ceiling_is_never_contacted(write_sources):
    config = write_sources(
        profile_ceiling="internal",
        mail={"records": [RESTORE], "sensitivity": "confidential", "settings": {"fail": "crash"}},
        notes={"records": [RESTORE]},
    )
    response = await ask(config, "restore drill")
    mail = next(r for r in response.source_outcomes if r.source_id == "mail")
    assert (mail.outcome, mail.reason) == ("skipped", "sensitivity_ceiling")
    assert response.coverage == Coverage.complete


async def test_as_of_excludes_sources_that_cannot_honour_it(write_sources):
    from datetime import UTC, datetime

    config = write_sources(
        notes={"records": [RESTORE]},
        live={"records": [TASK], "settings": {"as_of_support": "none"}},
    )
    response = await ask(config, "restore drill", as_of=datetime(2026, 1, 1, tzinfo=UTC))
    live = next(r for r in response.source_outcomes if r.source_id == "live")
    assert (live.outcome, live.reason) == ("skipped", "as_of_unsupported")
    assert response.coverage == Coverage.degraded


async def test_unhealthy_source_is_skipped_and_degrades(write_sources):
    config = write_sources(notes={"records": [RESTORE]}, sick={"records": [TASK], "settings": {"health": "unavailable"}})
    response = await ask(config, "restore drill")
    sick = next(r for r in response.source_outcomes if r.source_id == "sick")
    assert (sick.outcome, sick.reason) == ("skipped", "unhealthy")
    assert response.coverage == Coverage.degraded


async def test_scope_naming_an_unknown_source_is_refused(write_sources):
    from broker.contracts import Scope
    from broker.errors import UnsatisfiableScope

    config = write_sources(notes={"records": [RESTORE]})
    with pytest.raises(UnsatisfiableScope):
        await ask(config, "restore", scope=Scope(source_ids=["nowhere"]))


async def test_scope_limits_the_sources_asked(write_sources):
    from broker.contracts import Scope

    config = write_sources(notes={"records": [RESTORE]}, tasks={"records": [TASK]})
    response = await ask(config, "restore drill", scope=Scope(source_ids=["tasks"]))
    notes = next(r for r in response.source_outcomes if r.source_id == "notes")
    assert (notes.outcome, notes.reason) == ("skipped", "out_of_scope")
    assert [r.primary.locator for r in response.results] == ["tasks:t1"]
    assert response.coverage == Coverage.complete


def live_children() -> set[int]:
    """Child processes of this test process that are not zombies."""
    import os
    from pathlib import Path

    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[1]) == os.getpid():
            children.add(int(stat.parent.name))
    return children


async def test_hung_adapter_is_cut_at_its_source_timeout_and_killed(write_sources):
    import time

    config = write_sources(
        notes={"records": [RESTORE]},
        frozen={"records": [TASK], "settings": {"fail": "hang"}, "timeout_ms": 300},
    )
    before = live_children()
    async with open_broker(config) as broker:
        started = time.monotonic()
        response = await broker.query(QueryRequest(query="restore drill"))
        elapsed = time.monotonic() - started
    frozen = next(r for r in response.source_outcomes if r.source_id == "frozen")
    assert frozen.outcome == "timeout"
    assert response.outcome == Outcome.answered and severity(response.outcome, response.coverage).exit_code == 3
    assert elapsed < 3.0
    assert live_children() <= before
