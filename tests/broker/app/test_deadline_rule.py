"""One deadline rule: the plan's, which the probe a cold command writes ahead follows too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from broker.deadlines import query_budget, source_deadline
from broker.vocabulary import DEFAULT_LATENCY_MS

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def test_a_query_without_a_latency_budget_gets_the_default():
    assert query_budget(0) == query_budget(-1) == timedelta(milliseconds=DEFAULT_LATENCY_MS)
    assert query_budget(800) == timedelta(milliseconds=800)


def test_a_source_answers_by_its_own_timeout_unless_the_query_runs_out_first():
    usable = NOW + timedelta(seconds=3)
    assert source_deadline(NOW, 2000, usable) == (NOW + timedelta(seconds=2), True)
    assert source_deadline(NOW, 3000, usable) == (usable, True)
    assert source_deadline(NOW, 4000, usable) == (usable, False)
