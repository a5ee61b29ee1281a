"""A note's bytes as they were when one of its chunks was embedded."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.semantic.indexed_chunk import IndexedChunk


def unchanged_bytes(root: str | Path, chunk: IndexedChunk) -> bytes | None:
    """The bytes of ``chunk``'s note, or ``None`` when it is gone or changed since it was embedded."""
    try:
        data = (Path(root) / chunk.path).read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != chunk.sha256:
        return None
    return data
