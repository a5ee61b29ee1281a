"""A note's bytes as they were when one of its chunks was embedded.

The shared-word check (``shared_words.py``) and the best hit's excerpt
(``excerpts.py``) both read the note a chunk belongs to, the first time a search
meets it. One :class:`NoteReader` serves both, so the note is read and hashed
once: the last notes read are remembered with their stat, and handed out again
while the stat is unchanged and was taken long enough after the note's last
write to be trusted.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import TYPE_CHECKING

from adapter_sdk.folder.scan import FileStat
from adapters.semantic.served_file import NoteStat

if TYPE_CHECKING:
    from adapters.semantic.indexed_chunk import IndexedChunk

RECENT_NOTES = 32  # more than a search's candidates span


class NoteReader:
    def __init__(self, root: str) -> None:
        self.root = root
        self._recent: dict[tuple[str, str], tuple[NoteStat, bytes]] = {}

    def unchanged_bytes(self, chunk: IndexedChunk) -> bytes | None:
        """The bytes of ``chunk``'s note, or ``None`` when it is gone or changed since it was embedded."""
        path = os.path.join(self.root, chunk.path)
        key = (chunk.path, chunk.sha256)
        try:
            stat = os.stat(path)
            found = FileStat(stat.st_size, stat.st_mtime_ns)
            remembered = self._recent.get(key)
            if remembered is not None and remembered[0].unchanged_at(found):
                return remembered[1]
            read_ns = time.time_ns()
            with open(path, "rb") as note:
                data = note.read()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != chunk.sha256:
            return None
        if len(self._recent) >= RECENT_NOTES:
            del self._recent[next(iter(self._recent))]
        self._recent[key] = (NoteStat(found.size, found.mtime_ns, read_ns, chunk.sha256), data)
        return data
