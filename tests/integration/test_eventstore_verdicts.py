"""A corrected Polign belief through the broker: withheld now, current as of before the correction."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytest.importorskip("polign_recall", reason="Polign Recall is installed by scripts/install-polign.sh")

from adapters.eventstore.binary import locate  # noqa: E402
from broker.app import open_broker  # noqa: E402
from broker.contracts import QueryRequest  # noqa: E402
from tests.adapters.eventstore.eventstore_store import open_client, stop_store_server  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def polign_store(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "polign"
    try:
        with open_client(directory, locate(None)) as client:
            client.remember("user", "prefers_editor", "vim", observed_at="2026-01-01T10:00:00Z")
            client.remember("user", "prefers_editor", "neovim", observed_at="2026-06-01T10:00:00Z")
        yield directory
    finally:
        stop_store_server(directory)


async def ask(config, text: str, **fields):
    async with open_broker(config) as broker:
        return await broker.query(QueryRequest(query=text, **fields))


async def test_corrected_belief_is_withheld_and_its_correction_shown(polign_store, builtin_config):
    config = builtin_config(memory=("eventstore", polign_store))
    response = await ask(config, "editor vim")
    titles = [r.primary.title for r in response.results]
    assert any("neovim" in t for t in titles), titles
    assert not any(t.endswith(": vim") for t in titles), titles
    superseded = [s for s in response.suppressed if s.reason == "superseded"]
    assert superseded and superseded[0].successor.startswith("memory:user/prefers_editor")


async def test_before_the_correction_the_old_belief_is_current(polign_store, builtin_config):
    config = builtin_config(memory=("eventstore", polign_store))
    response = await ask(config, "editor vim", as_of=datetime(2026, 3, 1, tzinfo=UTC))
    titles = [r.primary.title for r in response.results]
    assert any(t.endswith("vim") and "neovim" not in t for t in titles), titles
    assert not [s for s in response.suppressed if s.reason == "superseded"]
