"""A semantic hit's excerpt: the sentences of its chunk most like the question.

A chunk's first line (a status line, a table header) rarely says why a question
about its meaning found it. For the best ``EXCERPT_HITS`` candidate(s) of a search
the chunk's text is read from its note, only while the note's bytes are those the
index embedded, split into sentences (at most ``MAX_SENTENCES``), and every sentence
is embedded with the search's model. The excerpt is the most similar sentence and the
next most similar one when both fit ``EXCERPT_CHARS``, in the note's order, joined by
`` … ``. Sentence embeddings are remembered per chunk (the ``REMEMBERED_CHUNKS``
latest), so a resident adapter embeds a chunk's sentences once. Other candidates,
and a note changed since it was embedded, keep the chunk's opening as a preview.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from adapter_sdk.markdown.chunking import indexable, parse_note
from adapters.semantic.note_bytes import NoteReader

if TYPE_CHECKING:
    import numpy as np

    from adapters.semantic.encoders import TextEncoder
    from adapters.semantic.indexed_chunk import IndexedChunk

# embedding a sentence costs about 8 ms of CPU: the best hit's six sentences at most keep
# a search's first sight of a chunk within about 50 ms (then they are remembered)
EXCERPT_HITS = 1
MAX_SENTENCES = 6
SENTENCES_SHOWN = 2
EXCERPT_CHARS = 400
REMEMBERED_CHUNKS = 2048  # about 20 MB of sentence vectors; the oldest are forgotten first
MIN_SENTENCE_CHARS = 12  # shorter pieces (a list marker, "Status: ok.") say too little alone
_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`_*\[(\"'])|\n\s*\n|\n\s*[-*+]\s+|\n\s*\d+[.)]\s+")


def sentences(text: str) -> list[str]:
    """The sentences and list items of a chunk's text, whitespace folded, in order."""
    pieces = (" ".join(piece.split()) for piece in _BREAK.split(text))
    return [piece for piece in pieces if len(piece) >= MIN_SENTENCE_CHARS]


class SentenceExcerpts:
    def __init__(self, reader: NoteReader, encoder: TextEncoder) -> None:
        self.reader = reader
        self.encoder = encoder
        self._known: dict[tuple[str, int, int, str], tuple[list[str], np.ndarray]] = {}

    def excerpts(self, chunks: Sequence[IndexedChunk], question: np.ndarray) -> list[str | None]:
        """The excerpt of each chunk, or None where the chunk's preview stands."""
        wanted = [self._sentences(chunk) for chunk in chunks[:EXCERPT_HITS]]
        return [self._best(found, question) if found else None for found in wanted] + [None] * max(
            0, len(chunks) - EXCERPT_HITS
        )

    def _sentences(self, chunk: IndexedChunk) -> tuple[list[str], np.ndarray] | None:
        key = (chunk.path, chunk.start_line, chunk.end_line, chunk.sha256)
        if key not in self._known:
            text = self._text(chunk)
            found = sentences(text) if text else []
            if len(found) < 2:  # one sentence: the preview already shows it
                return None
            found = found[:MAX_SENTENCES]
            if len(self._known) >= REMEMBERED_CHUNKS:
                del self._known[next(iter(self._known))]
            self._known[key] = (found, self.encoder.encode(found))
        return self._known[key]

    def _text(self, chunk: IndexedChunk) -> str | None:
        data = self.reader.unchanged_bytes(chunk)
        if data is None:
            return None
        try:
            parsed = parse_note(chunk.path, data.decode("utf-8"))
        except UnicodeDecodeError:
            return None
        for candidate in parsed.chunks:
            if (candidate.start_line, candidate.end_line) == (chunk.start_line, chunk.end_line):
                return indexable(candidate.body)
        return None

    @staticmethod
    def _best(found: tuple[list[str], np.ndarray], question: np.ndarray) -> str:
        texts, vectors = found
        similarity = vectors @ question
        chosen: list[int] = []
        length = 0
        for index in sorted(range(len(texts)), key=lambda i: -float(similarity[i])):
            cost = len(texts[index]) + (3 if chosen else 0)
            if chosen and (length + cost > EXCERPT_CHARS or len(chosen) == SENTENCES_SHOWN):
                break
            chosen.append(index)
            length += cost
        text = " … ".join(texts[i] for i in sorted(chosen))
        return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"
