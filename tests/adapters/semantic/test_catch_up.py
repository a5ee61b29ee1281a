"""What the leg does before a search: an unwatched folder is checked for changes, a
watched one is not (its watch asks for every rescan), as the notes source does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from adapters.semantic.adapter import SemanticAdapter


class CountedWatermark:
    def __init__(self) -> None:
        self.checks = 0

    def moved(self) -> bool:
        self.checks += 1
        return False


def _adapter(watching: bool | None) -> tuple[SemanticAdapter, CountedWatermark]:
    adapter = SemanticAdapter()
    watermark = CountedWatermark()
    adapter.index = SimpleNamespace(watermark=watermark, pending=0, snapshot=lambda: None)  # type: ignore[assignment]
    if watching is not None:
        adapter.watcher = SimpleNamespace(watching=watching)  # type: ignore[assignment]
    return adapter, watermark


def test_a_watched_folder_is_not_checked_before_a_search() -> None:
    adapter, watermark = _adapter(watching=True)
    adapter._catch_up(datetime.now(UTC) + timedelta(seconds=5))
    assert watermark.checks == 0


def test_an_unwatched_folder_is_checked_before_every_search() -> None:
    for watching in (None, False):  # no watch (a one-shot command), or its first sweep not done
        adapter, watermark = _adapter(watching)
        adapter._catch_up(datetime.now(UTC) + timedelta(seconds=5))
        adapter._catch_up(datetime.now(UTC) + timedelta(seconds=5))
        assert watermark.checks == 2
