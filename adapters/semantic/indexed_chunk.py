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
    # of the note's bytes when indexed: its NoteStat's digest, the same string shared by the
    # note's chunks; carried here because the readers that check a hit's note and key
    # their caches by revision (note_bytes, shared_words, excerpts) are handed chunks alone
    sha256: str
