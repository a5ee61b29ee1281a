"""A chunk as the vector index serves it: where it is, what a hit shows, and its note's digest."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IndexedChunk:
    path: str
    start_line: int
    end_line: int
    title: str
    preview: str
    sha256: str  # of the note's bytes when indexed
