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
