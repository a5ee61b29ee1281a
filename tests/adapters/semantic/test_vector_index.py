"""The vector index remembers each note's chunks, so a re-scan reads only the notes that changed.

With the real all-MiniLM-L6-v2 encoder (the default model); skipped where it is missing.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from broker.config.init import semantic_extra_missing

if TYPE_CHECKING:
    from adapters.semantic.encoders import TextEncoder as Encoder
    from adapters.semantic.index import VectorIndex

pytestmark = pytest.mark.skipif(
    bool(semantic_extra_missing()), reason=f"semantic extra not installed: {semantic_extra_missing()}"
)


@pytest.fixture(scope="module")
def encoder() -> Callable[[], Encoder]:
    """One model (the default) for the module: loading it is most of a small build's time."""
    from adapters.semantic.encoders import load

    shared = load()
    return lambda: shared


OLD_NS = 1_704_067_200 * 10**9  # 2024-01-01


def _index(root: Path, store: Path, encoder: Callable[[], Encoder]) -> VectorIndex:
    from adapters.semantic.index import VectorIndex

    return VectorIndex(str(root), str(store), encoder_factory=encoder)


def _built(root: Path, store: Path, encoder: Callable[[], Encoder]) -> VectorIndex:
    index = _index(root, store, encoder)
    pending = index.prepare()
    if pending is not None:
        index.embed(pending)
    assert index.last_error is None
    return index


def _previews(index: VectorIndex) -> dict[str, str]:
    snapshot = index.snapshot()
    assert snapshot is not None
    return {c.path: c.preview for c in snapshot.chunks}


def _write(path: Path, text: str, like: Path | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if like is not None:
        stat = like.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_an_edited_note_is_chunked_again_and_only_it_is_embedded(tmp_path: Path, encoder: Callable[[], Encoder]) -> None:
    notes, store = tmp_path / "notes", tmp_path / "store"
    _write(notes / "a.md", "# Backups\n\nNightly copies go to the offsite bucket.\n")
    _write(notes / "b.md", "# Releases\n\nTags are signed by the release manager.\n")
    _built(notes, store, encoder)
    _write(notes / "a.md", "# Backups\n\nHourly copies go to the offsite bucket and a spare disk.\n")
    os.utime(notes / "a.md", ns=(1, 2))  # a modification time of its own, whatever the clock
    pending = _index(notes, store, encoder).prepare()
    assert pending is not None
    assert [pending.chunks[i].path for i in pending.missing] == ["a.md"]
    again = _built(notes, store, encoder)
    assert "Hourly copies" in _previews(again)["a.md"]


def test_a_note_whose_size_and_mtime_are_unchanged_is_not_read_again(tmp_path: Path, encoder: Callable[[], Encoder]) -> None:
    notes, store = tmp_path / "notes", tmp_path / "store"
    _write(notes / "a.md", "# Backups\n\nNightly copies go to the offsite bucket.\n")
    os.utime(notes / "a.md", ns=(OLD_NS, OLD_NS))  # last written long before it is chunked
    _built(notes, store, encoder)
    kept = tmp_path / "kept.md"
    _write(kept, "", like=notes / "a.md")
    _write(notes / "a.md", "# Backups\n\nMonthly copies go to the offsite bucket.\n", like=kept)
    assert "Nightly copies" in _previews(_built(notes, store, encoder))["a.md"]


def test_a_note_rewritten_within_the_racy_window_is_read_again_despite_its_stat(
    tmp_path: Path, encoder: Callable[[], Encoder]
) -> None:
    """Chunked within moments of its last write, a note can be written again with the same
    size in the same clock tick: its unchanged stat proves nothing, so it is read again."""
    notes, store = tmp_path / "notes", tmp_path / "store"
    _write(notes / "a.md", "# Backups\n\nNightly copies go to the offsite bucket.\n")
    _built(notes, store, encoder)
    kept = tmp_path / "kept.md"
    _write(kept, "", like=notes / "a.md")
    _write(notes / "a.md", "# Backups\n\nMonthly copies go to the offsite bucket.\n", like=kept)
    assert "Monthly copies" in _previews(_built(notes, store, encoder))["a.md"]


def test_a_deleted_note_leaves_the_index(tmp_path: Path, encoder: Callable[[], Encoder]) -> None:
    notes, store = tmp_path / "notes", tmp_path / "store"
    _write(notes / "a.md", "# Backups\n\nNightly copies go to the offsite bucket.\n")
    _write(notes / "b.md", "# Releases\n\nTags are signed by the release manager.\n")
    _built(notes, store, encoder)
    (notes / "b.md").unlink()
    assert set(_previews(_built(notes, store, encoder))) == {"a.md"}
    _write(notes / "b.md", "# Releases\n\nTags are signed by the release manager.\n")
    assert set(_previews(_built(notes, store, encoder))) == {"a.md", "b.md"}


def test_two_folders_sharing_a_store_keep_their_own_notes(tmp_path: Path, encoder: Callable[[], Encoder]) -> None:
    store = tmp_path / "store"
    first, second = tmp_path / "first", tmp_path / "second"
    _write(first / "readme.md", "# Team\n\nThe on-call rotation changes on Mondays.\n")
    _built(first, store, encoder)
    # same name, same size, same modification time, other words
    _write(second / "readme.md", "# Team\n\nThe budget review happens on Fridays.\n", like=first / "readme.md")
    assert "budget review" in _previews(_built(second, store, encoder))["readme.md"]
    assert "on-call rotation" in _previews(_built(first, store, encoder))["readme.md"]


def test_a_store_another_process_embeds_into_is_left_to_it(tmp_path: Path, encoder: Callable[[], Encoder]) -> None:
    """Two processes building one store at once (a refresh beside a resident broker):
    the one finding the store's embedding lease held waits, then embeds only what the
    other left, not every chunk again."""
    import threading
    import time

    from adapters.semantic.index import EMBED_LEASE
    from tests.support.lease_holder import lease_held_elsewhere, let_go

    notes, store = tmp_path / "notes", tmp_path / "store"
    _write(notes / "a.md", "# Backups\n\nNightly copies go to the offsite bucket.\n")
    _write(notes / "b.md", "# Releases\n\nTags are signed by the release manager.\n")
    encoded: list[str] = []

    class Counting:
        def __init__(self) -> None:
            self.shared = encoder()

        def encode(self, texts: list[str]) -> Any:
            encoded.extend(texts)
            return self.shared.encode(texts)

    waiting = _index(notes, store, Counting)  # type: ignore[arg-type]
    pending = waiting.prepare()
    assert pending is not None and len(pending.missing) == 2
    with lease_held_elsewhere(store, EMBED_LEASE) as holder:
        worker = threading.Thread(target=waiting.embed, args=(pending,))
        worker.start()
        time.sleep(1.0)
        assert waiting.elsewhere and waiting.snapshot() is None and encoded == []
        # what the holder embeds meanwhile, as another process would: note a's chunk
        import numpy as np

        (i,) = [i for i, chunk in enumerate(pending.chunks) if chunk.path == "a.md"]
        vector = encoder().encode([pending.texts[i]])[0].astype(np.float16).tobytes()
        with sqlite3.connect(store / "embeddings.sqlite3") as conn:
            conn.execute("INSERT INTO embeddings VALUES (?, ?)", (pending.keys[i], vector))
        let_go(holder)
        worker.join(60)
    assert not worker.is_alive() and waiting.last_error is None and not waiting.elsewhere
    assert sorted(_previews(waiting)) == ["a.md", "b.md"]
    assert len(encoded) == 1 and "Releases" in encoded[0]


_loaded: list[Any] = []


def _default() -> Any:
    from adapters.semantic.encoders import load

    if not _loaded:
        _loaded.append(load())
    return _loaded[0]


class Negated:
    """A second model for one store: the default model's vectors, negated."""

    key = "test/negated"
    dimensions = 384

    def encode(self, texts: list[str]) -> Any:
        return -_default().encode(texts)


def test_a_store_shared_by_two_models_serves_each_its_own_embeddings(
    tmp_path: Path, encoder: Callable[[], Encoder], monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from adapters.semantic import encoders
    from adapters.semantic.index import VectorIndex

    monkeypatch.setitem(encoders.MODELS, "negated", encoders.ModelChoice((), __name__, "Negated"))
    notes, store = tmp_path / "notes", tmp_path / "store"
    _write(notes / "a.md", "# Backups\n\nNightly copies go to the offsite bucket.\n")
    os.utime(notes / "a.md", ns=(OLD_NS, OLD_NS))
    default = _built(notes, store, encoder)
    other = VectorIndex(str(notes), str(store), "negated")
    pending = other.prepare()
    assert pending is not None and len(pending.missing) == 1  # its own embedding, not the default's
    other.embed(pending)
    first, second = default.snapshot(), other.snapshot()
    assert first is not None and second is not None
    assert np.allclose(first.matrix, -second.matrix, atol=1e-2)
