"""Whether a chunk's note holds a word of the question, counted as the notes index counts words.

The leg's admission asks more of a chunk whose note shares no word with the
question (``admission.py``): nothing in that record would have led the notes index
to it, so only the model vouches for it. Words are the question's content terms and
the note's tokens, each stemmed by ``adapter_sdk.lexical.matching_stem`` as the notes
index stems them, so "backups" meets "backup" and "https" does not meet "http".
A note's words are those the notes index holds of it: its text without link targets
and URLs (``indexable``), so a letter in a URL's query string is no word the note
shares. A word of one letter or digit ("v" in "a v formation", a flag's letter in
many pages) is not counted: it is too common to vouch for anything.
The note is read only while its bytes are those the index embedded; otherwise the
chunk's title and preview stand for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from adapter_sdk.lexical import analyze_query, matching_stem, tokenize
from adapter_sdk.markdown.chunking import indexable
from adapters.semantic.note_bytes import NoteReader

if TYPE_CHECKING:
    from adapters.semantic.indexed_chunk import IndexedChunk

REMEMBERED_NOTES = 1024  # a note's words, the oldest forgotten first


def question_terms(question: str) -> frozenset[str]:
    """The question's content words (function words and single characters dropped), stemmed."""
    return frozenset(matching_stem(t) for t in analyze_query(question).content_terms if len(t) > 1)


class NoteWords:
    """The stemmed words of a folder's notes, read on first use and remembered per revision."""

    def __init__(self, reader: NoteReader) -> None:
        self.reader = reader
        self._known: dict[tuple[str, str], frozenset[str]] = {}

    def shares_a_word(self, chunk: IndexedChunk, terms: frozenset[str]) -> bool:
        """Whether the note ``chunk`` belongs to holds one of ``terms``."""
        return not terms.isdisjoint(self.words(chunk))

    def any_shares(self, chunks: Iterable[IndexedChunk], terms: frozenset[str]) -> bool:
        """Whether the note of any of ``chunks`` holds one of ``terms`` (read until one does)."""
        return any(self.shares_a_word(chunk, terms) for chunk in chunks)

    def words(self, chunk: IndexedChunk) -> frozenset[str]:
        key = (chunk.path, chunk.sha256)
        if key in self._known:
            return self._known[key]
        text = self._text(chunk)
        if text is None:  # changed since it was embedded: not remembered
            return _stemmed_words(f"{chunk.title}\n{chunk.preview}")
        if len(self._known) >= REMEMBERED_NOTES:
            del self._known[next(iter(self._known))]
        self._known[key] = _stemmed_words(text)
        return self._known[key]

    def _text(self, chunk: IndexedChunk) -> str | None:
        data = self.reader.unchanged_bytes(chunk)
        return None if data is None else data.decode("utf-8", errors="replace")


def _stemmed_words(text: str) -> frozenset[str]:
    return frozenset(matching_stem(t) for t in tokenize(indexable(text)))
