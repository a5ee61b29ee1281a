"""Every tier and encoding of every fixture response, recorded."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from broker.render import human, tool
from broker.render.encode import structured_document
from broker.render.pointer import pointer_document

from . import fixtures

NAMES = sorted(fixtures.RESPONSES)


@pytest.mark.parametrize("name", NAMES)
def test_pointer_tier(name: str, snapshot: SnapshotAssertion) -> None:
    assert human.render_query(fixtures.RESPONSES[name](), explain=False) == snapshot


@pytest.mark.parametrize("name", NAMES)
def test_explain_tier(name: str, snapshot: SnapshotAssertion) -> None:
    assert human.render_query(fixtures.RESPONSES[name](), explain=True) == snapshot


@pytest.mark.parametrize("name", NAMES)
def test_pointer_json(name: str, snapshot: SnapshotAssertion) -> None:
    assert pointer_document(fixtures.RESPONSES[name]()) == snapshot


@pytest.mark.parametrize("name", NAMES)
def test_structured_json(name: str, snapshot: SnapshotAssertion) -> None:
    assert structured_document(fixtures.RESPONSES[name]()) == snapshot


@pytest.mark.parametrize("name", NAMES)
def test_tool_query_text(name: str, snapshot: SnapshotAssertion) -> None:
    assert tool.query_text(fixtures.RESPONSES[name]()) == snapshot


@pytest.mark.parametrize("truncated", [False, True])
def test_expand_renderings(truncated: bool, snapshot: SnapshotAssertion) -> None:
    response = fixtures.expansion(truncated=truncated)
    assert (
        human.render_expand(response),
        tool.expand_text("notes:runbooks/restore.md#L3-L9", response),
    ) == snapshot


def test_refresh_renderings(snapshot: SnapshotAssertion) -> None:
    response = fixtures.refresh()
    assert (human.render_refresh(response), tool.refresh_text(response)) == snapshot


def test_refresh_explain_keeps_the_machine_ledger(snapshot: SnapshotAssertion) -> None:
    assert human.render_refresh(fixtures.refresh(), explain=True) == snapshot


def test_sources_renderings(snapshot: SnapshotAssertion) -> None:
    listing = fixtures.listing()
    assert (human.render_sources(listing), tool.sources_text(listing)) == snapshot
