"""Pure parts of the eventstore adapter: locators, sentences, refusals, budgets."""

from __future__ import annotations

from adapter_sdk.protocol import DetailLevel, ErrorCode, Sensitivity
from adapters.eventstore.adapter import classify_refusal
from adapters.eventstore.beliefs import PairLocator, sentence, to_candidates
from adapters.eventstore.history import render


def test_locator_keeps_slashes_and_hashes_inside_the_subject() -> None:
    locator = PairLocator.parse("team/a#b/prefers_editor#m-0123")
    assert locator == PairLocator("team/a#b", "prefers_editor", "m-0123")
    assert locator is not None and locator.local() == "team/a#b/prefers_editor#m-0123"


def test_locator_without_predicate_or_event_does_not_parse() -> None:
    assert PairLocator.parse("user#m-1") is None
    assert PairLocator.parse("user/prefers_editor") is None


def test_sentence_prints_numbers_as_plain_decimals_and_notes_as_their_text() -> None:
    assert sentence("acme", "deal_value", 8000.0) == "acme deal value: 8000"
    assert sentence("acme", "budget_confirmed", True) == "acme budget confirmed: true"
    assert sentence("user", "note", "keys live in the vault") == "keys live in the vault"


def test_incomplete_history_refusal_is_a_failure_not_unreachable() -> None:
    refusal = "recall: incomplete history: read 10001 of 10001 events (maximum 10000)"
    assert classify_refusal(refusal) == ErrorCode.internal_error


def test_unreachable_database_refusal_is_source_unavailable() -> None:
    refusal = (
        'recall: complete exact history unavailable: polign: request: Get "http://127.0.0.1:1/v1": '
        "dial tcp 127.0.0.1:1: connect: connection refused"
    )
    assert classify_refusal(refusal) == ErrorCode.source_unavailable


def test_cross_predicate_replacement_cites_the_replaced_predicate() -> None:
    belief = {
        "subject": "user",
        "predicate": "dislikes",
        "value": "mangoes",
        "event_id": "m-2",
        "observed_at": "2026-02-01T00:00:00Z",
        "replaced": [
            {
                "predicate": "likes",
                "value": "mangoes",
                "event_id": "m-1",
                "observed_at": "2026-01-01T00:00:00Z",
            }
        ],
    }
    live, withheld = to_candidates([belief], "mem", ["mangoes"], None, Sensitivity.internal)
    assert withheld.locator == "mem:user/likes#m-1"
    assert withheld.title == "user likes: mangoes"
    assert withheld.metadata is not None and withheld.metadata["superseded_by"] == live.locator


def test_budget_cut_keeps_whole_lines_and_says_how_many_were_dropped() -> None:
    events = [
        {
            "id": f"m-{n}",
            "subject": "user",
            "predicate": "prefers_editor",
            "value": f"editor{n}",
            "observed_at": f"2026-01-0{n}T00:00:00Z",
            "source": "user_stated",
            "confidence": 1,
        }
        for n in range(1, 6)
    ]
    rendered = render(PairLocator("user", "prefers_editor", "m-5"), events, DetailLevel.full, 260)
    assert rendered.truncated
    assert len(rendered.content.encode()) <= 260
    assert rendered.content.endswith("more line(s) beyond the byte budget")
