"""The int8 model as prepared for int8 arithmetic is kept in the user's model cache and
loaded from there: a folder of the graph and its weights, which are mapped into memory,
not copied.

With the real weights (the default model); skipped where they are missing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from adapters.semantic.encoders import missing

pytestmark = pytest.mark.skipif(bool(missing()), reason=f"default model not installed: {missing()}")

TEXTS = ["Double quotes are preferred.", "Official images are published on Docker Hub, tagged with each release."]


def _prepared(store: Path) -> list[Path]:
    from adapters.semantic.prepared_model import PREFIX

    return sorted(store.glob(f"{PREFIX}*"))


@pytest.fixture(scope="module")
def cached_vectors() -> Any:
    """TEXTS' vectors from the model in the suite's model cache (prepared at most once)."""
    from adapters.semantic.encoders import load

    return load().encode(TEXTS)


@pytest.fixture
def no_model_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache to keep a prepared model in: it is prepared in memory at every load."""
    for name in ("RECALL_MODEL_CACHE", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)


def test_the_model_cache_is_the_named_folder_else_the_users_cache() -> None:
    from adapters.semantic.prepared_model import model_cache

    assert model_cache({"RECALL_MODEL_CACHE": "/m", "XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/m")
    assert model_cache({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/c/recall/models")
    assert model_cache({"HOME": "/h"}) == Path("/h/.cache/recall/models")
    assert model_cache({}) is None


def test_every_store_loads_the_model_prepared_in_the_model_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adapters.semantic.encoders import load

    monkeypatch.setenv("RECALL_MODEL_CACHE", str(tmp_path / "models"))
    load()
    (kept,) = _prepared(tmp_path / "models")
    made = (kept / "weights.bin").stat().st_mtime_ns
    load()
    assert (kept / "weights.bin").stat().st_mtime_ns == made  # loaded, not prepared again


def test_the_first_load_keeps_the_prepared_model_and_the_vectors_are_the_same(
    tmp_path: Path, no_model_cache: None
) -> None:
    import numpy as np

    from adapters.semantic.encoders import load

    unkept = load().encode(TEXTS)
    first = load(cache_dir=tmp_path).encode(TEXTS)
    (kept,) = _prepared(tmp_path)
    again = load(cache_dir=tmp_path).encode(TEXTS)
    assert np.array_equal(unkept, first)
    assert np.array_equal(unkept, again)
    assert _prepared(tmp_path) == [kept]
    assert [p.name for p in tmp_path.iterdir()] == [kept.name]  # nothing half-written left
    assert sorted(p.name for p in kept.iterdir()) == ["model.onnx", "weights.bin"]
    assert (kept / "weights.bin").stat().st_size > 50 * (kept / "model.onnx").stat().st_size


def test_a_kept_model_is_loaded_without_preparing_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adapters.semantic import prepared_model
    from adapters.semantic.onnx_model import weights_path

    prepared_model.open_session(weights_path(), tmp_path)
    (kept,) = _prepared(tmp_path)
    written = (kept / "weights.bin").stat().st_mtime_ns

    def prepare(*args: object) -> None:
        raise AssertionError("the kept model was prepared again")

    monkeypatch.setattr(prepared_model, "_prepare", prepare)
    assert prepared_model.open_session(weights_path(), tmp_path) is not None
    assert (kept / "weights.bin").stat().st_mtime_ns == written


def test_other_weights_are_prepared_anew_and_replace_the_kept_model(tmp_path: Path) -> None:
    from adapters.semantic.onnx_model import weights_path
    from adapters.semantic.prepared_model import open_session

    weights = tmp_path / "model.onnx"
    shutil.copyfile(weights_path(), weights)
    store = tmp_path / "store"
    store.mkdir()
    open_session(weights, store)
    (before,) = _prepared(store)
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a new release of the weights
    open_session(weights, store)
    (after,) = _prepared(store)
    assert after != before
    assert not before.exists()


def test_a_damaged_kept_model_is_prepared_again(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], cached_vectors: Any
) -> None:
    import numpy as np

    from adapters.semantic.encoders import load

    load(cache_dir=tmp_path)
    (kept,) = _prepared(tmp_path)
    weights = kept / "weights.bin"
    weights.write_bytes(weights.read_bytes()[:1000])  # cut short
    assert np.array_equal(load(cache_dir=tmp_path).encode(TEXTS), cached_vectors)
    assert weights.stat().st_size > 1000
    assert capfd.readouterr().out == ""  # an adapter's stdout is its protocol stream


def test_a_cache_that_cannot_be_written_still_gets_a_model(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], cached_vectors: Any
) -> None:
    import numpy as np

    from adapters.semantic.encoders import load

    not_a_folder = tmp_path / "store"
    not_a_folder.write_text("")  # nothing can be written under it, not even by root
    assert np.array_equal(load(cache_dir=not_a_folder).encode(TEXTS), cached_vectors)
    assert [p.name for p in tmp_path.iterdir()] == ["store"]
    assert capfd.readouterr().out == ""


def test_a_graph_an_earlier_release_kept_as_one_file_is_removed(tmp_path: Path) -> None:
    from adapters.semantic.encoders import load
    from adapters.semantic.prepared_model import PREFIX

    earlier = tmp_path / f"{PREFIX}0123456789abcdef.onnx"
    earlier.write_bytes(b"a graph with its weights inside")
    load(cache_dir=tmp_path)
    (kept,) = _prepared(tmp_path)
    assert kept.is_dir()
    assert not earlier.exists()


def test_a_copy_another_process_renamed_first_is_left_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached_vectors: Any
) -> None:
    import numpy as np

    from adapters.semantic import prepared_model
    from adapters.semantic.encoders import load
    from adapters.semantic.onnx_model import weights_path

    renamed = os.rename

    def rename_after_another(src: str | Path, dst: str | Path) -> None:
        Path(dst).mkdir()
        (Path(dst) / "model.onnx").write_bytes(b"the other process's copy")
        renamed(src, dst)

    monkeypatch.setattr(prepared_model.os, "rename", rename_after_another)
    session = prepared_model.open_session(weights_path(), tmp_path)
    assert session is not None
    (kept,) = _prepared(tmp_path)
    assert (kept / "model.onnx").read_bytes() == b"the other process's copy"
    monkeypatch.undo()
    assert np.array_equal(load(cache_dir=tmp_path).encode(TEXTS), cached_vectors)  # replaced, being damaged


def test_what_a_process_killed_while_preparing_left_is_removed_by_the_next_prepare(tmp_path: Path) -> None:
    from adapters.semantic.encoders import load
    from adapters.semantic.prepared_model import PREFIX

    abandoned = tmp_path / f".{PREFIX}0123456789abcdef.999999999"  # no such process
    preparing = tmp_path / f".{PREFIX}0123456789abcdef.{os.getpid()}"  # one still at it
    for partial in (abandoned, preparing):
        partial.mkdir()
        (partial / "weights.bin").write_bytes(b"half")
    load(cache_dir=tmp_path)
    assert not abandoned.exists()
    assert preparing.exists()
