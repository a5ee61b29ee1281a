"""One reader for the shared-word check and the excerpts: a note is read once, never stale."""

from __future__ import annotations

import builtins
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from adapters.semantic import note_bytes
from adapters.semantic.indexed_chunk import IndexedChunk
from adapters.semantic.note_bytes import NoteReader

OLD_NS = 1_704_067_200 * 10**9


def _note(root: Path, text: str) -> IndexedChunk:
    path = root / "note.md"
    path.write_text(text)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return IndexedChunk("note.md", 1, 3, "Note", "", hashlib.sha256(text.encode()).hexdigest())


def test_a_note_met_twice_in_a_search_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunk = _note(tmp_path, "# Note\n\nAbout lighthouses.\n")
    opened: list[str] = []

    def counting_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(path))
        return builtins.open(path, *args, **kwargs)

    monkeypatch.setattr(note_bytes, "open", counting_open, raising=False)
    reader = NoteReader(str(tmp_path))
    assert reader.unchanged_bytes(chunk) == reader.unchanged_bytes(chunk) == b"# Note\n\nAbout lighthouses.\n"
    assert len(opened) == 1


def test_a_note_changed_or_gone_since_it_was_embedded_gives_nothing(tmp_path: Path) -> None:
    chunk = _note(tmp_path, "# Note\n\nAbout lighthouses.\n")
    reader = NoteReader(str(tmp_path))
    assert reader.unchanged_bytes(chunk) is not None
    (tmp_path / "note.md").write_text("# Note\n\nNow about harbours instead.\n")  # another size and time
    assert reader.unchanged_bytes(chunk) is None
    (tmp_path / "note.md").unlink()
    assert reader.unchanged_bytes(chunk) is None
