"""A cold start maps the snapshot last served, only while the folder is what it was built from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.semantic.hash_encoder import HashEncoder

np = pytest.importorskip("numpy")

OLD_NS = 1_704_067_200 * 10**9  # 2024-01-01: long settled, so a stat match can be trusted


def _folder(root: Path, notes: int = 6) -> Path:
    root.mkdir()
    for n in range(notes):
        _write(root / f"note{n}.md", f"# Note {n}\n\nThe body of note {n}.\n\n## More\n\nA second part {n}.\n")
    return root


def _write(path: Path, text: str, mtime_ns: int = OLD_NS) -> None:
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def _index(root: Path, store: Path, resident: bool = False) -> Any:
    from adapters.semantic.index import VectorIndex

    return VectorIndex(str(root), str(store), encoder_factory=HashEncoder, resident=resident)


def _built(root: Path, store: Path) -> Any:
    index = _index(root, store)
    pending = index.prepare()
    if pending is not None:
        index.embed(pending)
    assert index.last_error is None
    return index


def _mapped(index: Any) -> bool:
    return bool(index.snapshot().mapped)


def test_a_cold_start_maps_the_saved_snapshot_and_serves_the_same_chunks(tmp_path: Path) -> None:
    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    _write(root / "empty.md", "")  # a note with no chunk: remembered, but counted in neither
    built = _built(root, store)
    built.save_served()

    cold = _index(root, store)
    assert cold.prepare() is None
    assert _mapped(cold)
    served, original = cold.snapshot(), built.snapshot()
    assert list(served.chunks) == list(original.chunks)  # paths, lines, titles, previews, digests
    assert list(served.keys) == list(original.keys)
    assert np.array_equal(np.asarray(served.matrix), original.matrix)
    assert served.files == original.files == 6
    assert cold.pending == 0 and cold.watermark is not None  # the folder is still watched for changes


def test_a_resident_index_holds_the_mapped_matrix_in_its_own_memory(tmp_path: Path) -> None:
    """A search reads the whole matrix: through the mapping about three times slower."""
    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    _built(root, store).save_served()
    one_shot, resident = _index(root, store), _index(root, store, resident=True)
    one_shot.prepare()
    resident.prepare()
    assert not one_shot.snapshot().matrix.flags.owndata  # one search: read through the mapping
    matrix = resident.snapshot().matrix
    assert type(matrix) is np.ndarray and matrix.flags.owndata
    assert np.array_equal(matrix, one_shot.snapshot().matrix)
    assert resident.snapshot().chunks == list(one_shot.snapshot().chunks)
    assert resident.snapshot().keys == list(one_shot.snapshot().keys)


def test_a_rescan_of_an_unchanged_folder_reads_no_note_and_leaves_the_store_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch's first sweep (a resident adapter's start) used to re-read every note's
    chunks and vectors from the store: about a second at 10,000 notes, which the first
    search waited for."""
    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    index = _built(root, store)
    served = index.snapshot()

    def untouched(*_: Any) -> Any:
        raise AssertionError("the store was read for an unchanged folder")

    monkeypatch.setattr(index, "_chunks", untouched)
    assert index.prepare() is None
    assert index.snapshot() is served and index.pending == 0
    monkeypatch.undo()
    _write(root / "note3.md", "# Note 3\n\nNow about lighthouses.\n")
    pending = index.prepare()
    assert pending is not None and pending.missing  # a change is still read and embedded


@pytest.mark.parametrize("mapped", [False, True])
def test_a_rescan_after_edits_reads_only_the_changed_notes_and_serves_what_a_full_build_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mapped: bool
) -> None:
    root, store = _folder(tmp_path / "notes", notes=8), tmp_path / "store"
    index = _built(root, store)
    if mapped:  # the snapshot a cold start mapped is reused the same way
        index.save_served()
        index = _index(root, store)
        assert index.prepare() is None and _mapped(index)
    _write(root / "note2.md", "# Note 2\n\nNow about lighthouses.\n\n## Keepers\n\nThree of them.\n")
    _write(root / "note9.md", "# Note 9\n\nA new note.\n")
    (root / "note5.md").unlink()
    asked: list[list[str] | None] = []
    remembered = index._notes
    monkeypatch.setattr(index, "_notes", lambda paths=None: asked.append(paths) or remembered(paths))

    pending = index.prepare()
    assert pending is not None
    index.embed(pending)
    assert [sorted(paths or []) for paths in asked] == [["note2.md", "note5.md", "note9.md"]]

    fresh = _built(root, tmp_path / "another-store")  # everything read and embedded anew
    rescanned, built = index.snapshot(), fresh.snapshot()
    assert list(rescanned.chunks) == list(built.chunks)
    assert list(rescanned.keys) == list(built.keys)
    assert np.array_equal(rescanned.matrix, built.matrix)
    assert rescanned.notes.keys() == built.notes.keys()


@pytest.mark.parametrize("change", ["edited", "added", "removed", "touched"])
def test_a_folder_changed_since_the_save_is_rebuilt_from_the_store(tmp_path: Path, change: str) -> None:
    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    _built(root, store).save_served()
    if change == "edited":
        _write(root / "note2.md", "# Note 2\n\nA new body about lighthouses.\n")
    elif change == "added":
        _write(root / "note9.md", "# Note 9\n\nAbout lighthouses.\n")
    elif change == "removed":
        (root / "note2.md").unlink()
    else:  # same bytes, another modification time: it could have been rewritten
        _write(root / "note2.md", (root / "note2.md").read_text(), OLD_NS + 10**9)

    cold = _index(root, store)
    pending = cold.prepare()
    if change in ("edited", "added"):
        assert pending is not None and pending.missing  # the new text is embedded, not hidden
        cold.embed(pending)
    assert not _mapped(cold)
    titles = {chunk.path for chunk in cold.snapshot().chunks}
    assert ("note2.md" in titles) == (change != "removed")
    assert ("note9.md" in titles) == (change == "added")


def test_a_note_read_too_soon_after_its_write_is_never_trusted_by_its_stat(tmp_path: Path) -> None:
    import time

    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    _write(root / "fresh.md", "# Fresh\n\nJust written.\n", time.time_ns())
    _built(root, store).save_served()
    cold = _index(root, store)
    cold.prepare()
    assert not _mapped(cold)


def test_a_saved_snapshot_belongs_to_its_model_and_folder(tmp_path: Path) -> None:
    from adapters.semantic import served_file

    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    built = _built(root, store)
    built.save_served()
    files = {c.path: None for c in built.snapshot().chunks}
    from adapter_sdk.folder.scan import scan

    scanned = scan(str(root), built.scan_settings).files
    assert files.keys() == scanned.keys()
    common = {"dimensions": 384, "files": scanned}
    assert served_file.read(built.served_path, model="another-model", root=built._notes_root, **common) is None
    assert served_file.read(built.served_path, model=built.model_key, root="/elsewhere\nmodel", **common) is None
    assert served_file.read(built.served_path, model=built.model_key, root=built._notes_root, **common) is not None


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "pickled"])
def test_a_damaged_served_file_is_ignored_never_trusted(tmp_path: Path, damage: str) -> None:
    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    built = _built(root, store)
    built.save_served()
    path = built.served_path
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x93NUMPY" + os.urandom(4096))
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # an object array: loading it would unpickle, which may run code
        marker = tmp_path / "ran"
        with open(path, "wb") as out:
            np.lib.format.write_array(out, np.array([_Tripwire(str(marker))], dtype=object), allow_pickle=True)

    cold = _index(root, store)
    cold.prepare()  # rebuilt from the store, nothing to embed
    assert cold.last_error is None
    assert not _mapped(cold)
    assert len(cold.snapshot().chunks) == len(built.snapshot().chunks)
    assert not (tmp_path / "ran").exists()


class _Tripwire:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (Path(self.marker).touch, ())


def test_saving_leaves_no_partial_file_and_clears_one_a_killed_writer_left(tmp_path: Path) -> None:
    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    built = _built(root, store)
    abandoned = built.served_path.with_name(f".{built.served_path.name}.{2**22 + 12345}")  # no such process
    abandoned.write_bytes(b"half a snapshot")
    built.save_served()
    assert sorted(p.name for p in store.iterdir() if p.name.startswith((".served", "served"))) == [
        built.served_path.name
    ]


def test_a_store_that_cannot_be_written_keeps_serving(tmp_path: Path) -> None:
    root, store = _folder(tmp_path / "notes"), tmp_path / "store"
    built = _built(root, store)
    built.served_path.mkdir()  # the name is taken by a folder: the write fails
    built.save_served()
    assert built.last_error is None
    assert len(built.snapshot().chunks) == 12
