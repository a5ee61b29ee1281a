from __future__ import annotations

from broker.errors import ExpandError, ExpandErrorCode
from broker.render import tool

from . import fixtures


def test_failed_query_text_says_it_is_not_evidence_of_absence() -> None:
    assert tool.query_text(fixtures.failed()).splitlines()[1] == tool.FAILED_NOTE


def test_query_text_header_reports_truncation_and_drops() -> None:
    assert tool.query_text(fixtures.truncated()).splitlines()[0] == (
        "outcome=answered coverage=complete results=2 truncated=true dropped=5"
    )


def test_query_text_flattens_a_multi_line_excerpt_onto_one_line() -> None:
    assert "   Snapshots are kept for ninety days; the drill task rotates owners." in (
        tool.query_text(fixtures.answered())
    )


def test_query_text_marks_a_stale_result_with_its_verdict() -> None:
    assert "score=0.0190 verdict=superseded" in tool.query_text(fixtures.stale_shown())


def test_expand_failure_text_names_locator_code_and_message() -> None:
    error = ExpandError(ExpandErrorCode.locator_unknown, "no such record")
    assert tool.expand_failure_text("notes:gone.md", error) == (
        "notes:gone.md could not be expanded (locator_unknown): no such record"
    )


def test_sources_text_states_the_status_the_core_decided() -> None:
    assert tool.sources_text(fixtures.listing()).startswith("profile work, sources degraded\n")
