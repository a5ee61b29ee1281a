"""A store read back key by key or in one pass over the table gives the same vectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adapters.semantic.hash_encoder import HashEncoder

np = pytest.importorskip("numpy")


def _served(notes: Path, store: Path) -> Any:
    from adapters.semantic.index import VectorIndex

    index = VectorIndex(str(notes), str(store), encoder_factory=HashEncoder)
    pending = index.prepare()
    if pending is not None:
        index.embed(pending)
    assert index.last_error is None
    return index.snapshot()


@pytest.mark.parametrize("scan_above", [0, 10**9])
def test_a_restarted_index_serves_the_vectors_it_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scan_above: int
) -> None:
    from adapters.semantic import index

    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(12):
        (notes / f"note{n}.md").write_text(f"# Note {n}\n\nThe body of note {n}.\n\n## More\n\nAnd a second part {n}.\n")
    other = tmp_path / "other"  # another folder sharing the store: its vectors are not served
    other.mkdir()
    (other / "elsewhere.md").write_text("# Elsewhere\n\nNot in this folder.\n")
    store = tmp_path / "store"
    _served(other, store)
    built = _served(notes, store)
    monkeypatch.setattr(index, "SCAN_ABOVE", scan_above)  # every read one pass, or every read by key
    again = index.VectorIndex(str(notes), str(store), encoder_factory=HashEncoder)
    assert again.prepare() is None  # every vector found in the store: nothing to embed
    restarted = again.snapshot()
    assert restarted.keys == built.keys
    assert len(restarted.keys) == 24
    assert np.array_equal(restarted.matrix, built.matrix)


def _stored_keys(store: Path) -> set[str]:
    import sqlite3

    with sqlite3.connect(store / "embeddings.sqlite3") as conn:
        return {key for (key,) in conn.execute("SELECT key FROM embeddings")}


def test_vectors_of_text_edited_away_are_pruned_and_every_other_folders_kept(tmp_path: Path) -> None:
    from adapters.semantic.index import VectorIndex

    notes, other, store = tmp_path / "notes", tmp_path / "other", tmp_path / "store"
    notes.mkdir()
    other.mkdir()
    (notes / "kept.md").write_text("# Kept\n\nThis text stays.\n")
    (notes / "edited.md").write_text("# Edited\n\nThe first wording.\n")
    (notes / "deleted.md").write_text("# Deleted\n\nSoon gone.\n")
    (other / "elsewhere.md").write_text("# Elsewhere\n\nAnother folder sharing the store.\n")
    elsewhere = _served(other, store)
    first = _served(notes, store)
    (notes / "edited.md").write_text("# Edited\n\nThe second wording, longer than the first.\n")
    (notes / "deleted.md").unlink()
    index = VectorIndex(str(notes), str(store), encoder_factory=HashEncoder)
    pending = index.prepare()
    assert pending is not None
    index.embed(pending)
    now = index.snapshot()
    gone = set(first.keys) - set(now.keys)
    assert len(gone) == 2 and gone <= _stored_keys(store)  # kept until pruned

    assert index.prune_replaced() == 2
    assert _stored_keys(store) == set(now.keys) | set(elsewhere.keys)
    again = VectorIndex(str(notes), str(store), encoder_factory=HashEncoder)
    assert again.prepare() is None  # nothing the folder needs was removed
    assert index.prune_replaced() == 0
