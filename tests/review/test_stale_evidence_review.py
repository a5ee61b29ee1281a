"""Temporal verdicts as an agent reads them: the successor named, withheld counts summed."""

from __future__ import annotations

import json

import pytest

from broker.app import open_broker
from broker.config import load_config
from broker.surfaces.mcp import Tools

OLD = {"id": "old", "title": "Retention policy", "body": "retention thirty days",
       "metadata": {"superseded_by": ["kb:new"]}}
NEW = {"id": "new", "title": "Retention policy revised", "body": "retention ninety days",
       "metadata": {"supersedes": ["kb:old"]}}
EXPIRED = [
    {"id": f"gone-{n}", "title": f"Retention note {n}", "body": "retention kept",
     "valid_to": "2020-01-01T00:00:00Z"}
    for n in range(3)
]


def test_a_superseded_result_shown_with_include_stale_names_its_successor_in_json(home):
    user = home(kb={"records": [OLD, NEW]})
    run = user.recall("query", "--json", "--include-stale", "retention")
    assert run.returncode == 0, run.stderr
    shown = {r["locator"]: r for r in json.loads(run.stdout)["results"]}
    assert shown["kb:old"]["verdict"] == "superseded"
    assert shown["kb:old"]["superseded_by"] == "kb:new"
    assert "superseded_by" not in shown["kb:new"]


def test_a_superseded_result_shown_with_include_stale_names_its_successor_on_its_pointer_line(home):
    user = home(kb={"records": [OLD, NEW]})
    run = user.recall("query", "--include-stale", "retention")
    assert "kb:old  stale superseded by kb:new\n" in run.stdout


@pytest.mark.anyio
async def test_mcp_text_says_withheld_results_once_per_reason_with_the_count_summed(home):
    home(kb={"records": [OLD, NEW, *EXPIRED]})
    async with open_broker(load_config()) as broker:
        result = await Tools(broker, "default").call("recall_query", {"query": "retention"})
    text = result.content[0].text
    assert text.count("Withheld") == 2
    assert "Withheld 3 result(s): expired.\n" in text
    assert "Withheld 1 result(s): superseded (successor kb:new).\n" in text
    assert sum(s["count"] for s in result.structured_content["suppressed"]) == 4
