"""Stale evidence from real sources is withheld and counted, now and as of an earlier instant."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from broker.app import open_broker
from broker.contracts import QueryRequest
from broker.severity import severity
from tests.integration.conftest import write_note

pytestmark = pytest.mark.anyio

OLD_DECISION = """---
title: Borg for all backups
valid_from: 2022-09-01
---
# Borg for all backups

We back up every server with Borg, nightly, to the storage box.
"""

NEW_DECISION = """---
title: pgBackRest for database backups
valid_from: 2024-04-10
supersedes: old-decision
---
# pgBackRest for database backups

Databases move to pgBackRest with continuous WAL archiving.
"""

EXPIRED_NOTICE = """---
title: Maintenance window
valid_until: 2024-06-30
---
# Maintenance window

The storage box maintenance window is Sunday night until the end of June.
"""


def ask(config, text: str, **fields):
    async def run():
        async with open_broker(config) as broker:
            return await broker.query(QueryRequest(query=text, **fields))

    return run()


@pytest.fixture
def decisions(tmp_path, builtin_config):
    notes = tmp_path / "notes"
    write_note(notes, "old-decision.md", OLD_DECISION, modified="2022-09-01")
    write_note(notes, "new-decision.md", NEW_DECISION, modified="2024-04-10")
    write_note(notes, "maintenance.md", EXPIRED_NOTICE, modified="2024-05-01")
    return builtin_config(notes=("notes", notes))


async def test_superseded_note_is_withheld_with_its_successor_named(decisions):
    response = await ask(decisions, "borg backups")
    shown = [r.primary.locator.split("#")[0] for r in response.results]
    assert "notes:old-decision.md" not in shown
    withheld = [s for s in response.suppressed if s.reason == "superseded"]
    assert withheld, response.suppressed
    assert withheld[0].successor and withheld[0].successor.startswith("notes:new-decision.md")


async def test_successor_is_promoted_even_when_the_query_missed_it(decisions):
    response = await ask(decisions, "borg nightly")
    shown = [r.primary.locator.split("#")[0] for r in response.results]
    assert shown[0] == "notes:new-decision.md"


async def test_asking_before_the_supersession_shows_the_old_decision_as_current(decisions):
    response = await ask(decisions, "borg backups", as_of=datetime(2023, 6, 1, tzinfo=UTC))
    shown = [r.primary.locator.split("#")[0] for r in response.results]
    assert "notes:old-decision.md" in shown
    assert not [s for s in response.suppressed if s.reason == "superseded"]


async def test_expired_note_is_withheld_now_and_current_before_it_expired(decisions):
    now = await ask(decisions, "maintenance window")
    assert now.outcome == "abstained"
    assert severity(now.outcome, now.coverage).exit_code == 2
    assert [s.reason for s in now.suppressed] == ["expired"]
    before = await ask(decisions, "maintenance window", as_of=datetime(2024, 6, 1, tzinfo=UTC))
    assert before.outcome == "answered"
    assert before.results[0].primary.locator.startswith("notes:maintenance.md")


async def test_include_stale_shows_withheld_evidence_marked(decisions):
    response = await ask(decisions, "maintenance window", include_stale=True)
    assert response.outcome == "answered"
    assert response.results[0].verdict == "expired"


async def test_completed_task_is_current_before_its_completion(tmp_path, builtin_config):
    todo = tmp_path / "todo.txt"
    todo.write_text("x 2024-05-20 2024-05-01 Rotate the storage box credentials +backup\n")
    config = builtin_config(tasks=("tasks", todo))
    now = await ask(config, "rotate storage box credentials")
    assert now.outcome == "abstained"
    assert now.suppressed[0].reason == "completed"
    before = await ask(
        config, "rotate storage box credentials", as_of=datetime(2024, 5, 10, tzinfo=UTC)
    )
    assert before.outcome == "answered"
    assert before.results[0].primary.metadata["status"] == "pending"
