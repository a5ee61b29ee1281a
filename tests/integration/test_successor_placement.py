"""A successor that shares no word with the question takes the first place only from a
record that holds the whole question (real notes source, real broker)."""

from __future__ import annotations

import pytest

from broker.app import open_broker
from broker.contracts import QueryRequest
from tests.integration.conftest import write_note
from tests.integration.test_stale_evidence import NEW_DECISION, OLD_DECISION

pytestmark = pytest.mark.anyio

NIGHTLY_JOBS = """---
title: Nightly jobs
---
# Nightly jobs

The nightly jobs start at two and finish before six.
"""


@pytest.fixture
def decisions_and_jobs(tmp_path, builtin_config):
    notes = tmp_path / "notes"
    write_note(notes, "old-decision.md", OLD_DECISION, modified="2022-09-01")
    write_note(notes, "new-decision.md", NEW_DECISION, modified="2024-04-10")
    write_note(notes, "nightly-jobs.md", NIGHTLY_JOBS, modified="2024-05-01")
    return builtin_config(notes=("notes", notes))


async def shown(config, question: str) -> list[str]:
    async with open_broker(config) as broker:
        response = await broker.query(QueryRequest(query=question))
    return [r.primary.locator.split("#")[0] for r in response.results]


async def test_a_wordless_successor_goes_below_the_first_result_that_answers(decisions_and_jobs):
    # the Borg decision holds two of the three words and ranks first; its successor none
    shown_now = await shown(decisions_and_jobs, "borg nightly retention")
    assert shown_now == ["notes:nightly-jobs.md", "notes:new-decision.md"]


async def test_a_successor_inherits_the_first_place_of_a_record_that_holds_the_whole_question(
    decisions_and_jobs,
):
    assert (await shown(decisions_and_jobs, "borg nightly"))[0] == "notes:new-decision.md"


async def test_a_successor_the_question_finds_still_takes_the_first_place(decisions_and_jobs):
    # "backups" is in the successor's own title: it was found, and inherits rank 1
    assert (await shown(decisions_and_jobs, "borg backups"))[0] == "notes:new-decision.md"
