"""The leg's side of the folder watch it shares with the notes source.

An adapter a long-lived broker keeps (the resident broker, ``recall serve``, ``recall
mcp``) watches the notes folder from its start with the notes adapter's own watcher
(``adapter_sdk.folder.watch``), as the notes source does; an adapter started for one command
does not live to need it. Whatever the watch reports asks for a rescan of the folder,
which reads again only the notes whose size or modification time moved (``index.py``)
and embeds their new chunks, so an in-place edit of an older note, which the check
before each search (``freshness.py``) cannot see, is embedded too.
"""

from __future__ import annotations

from collections.abc import Callable


class FolderRescans:
    """A :class:`adapter_sdk.folder.watch.ChangeSink` whose every change asks for a rescan."""

    def __init__(self, rescan: Callable[[], None], scanned_from: Callable[[], float]) -> None:
        self._rescan = rescan
        self._scanned_from = scanned_from

    @property
    def swept_from(self) -> float:
        return self._scanned_from()

    def sweep(self, *, verify: bool = False) -> None:
        self._rescan()

    def enqueue(self, paths: list[str]) -> None:
        if paths:
            self._rescan()
