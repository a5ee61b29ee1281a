"""A search waits for the model only as long as its deadline allows: the first load on a
machine prepares the model (seconds), and a search meanwhile answers partial, saying so,
instead of running into its deadline."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from adapters.semantic.index import VectorIndex
from tests.adapters.semantic.hash_encoder import HashEncoder


def _slow_index(tmp_path: Path, ready: threading.Event, fail: bool = False) -> VectorIndex:
    def load() -> HashEncoder:
        ready.wait(10)
        if fail:
            raise OSError("the model cache is unreadable")
        return HashEncoder()

    (tmp_path / "notes").mkdir()
    return VectorIndex(str(tmp_path / "notes"), str(tmp_path / "store"), encoder_factory=load)


def test_a_model_still_loading_is_not_waited_for_past_the_time_given(tmp_path: Path) -> None:
    ready = threading.Event()
    index = _slow_index(tmp_path, ready)
    index.load_encoder_in_background()
    assert index.encoder_within(0.05) is None
    ready.set()
    assert isinstance(index.encoder_within(5), HashEncoder)
    assert isinstance(index.encoder_within(0), HashEncoder)  # loaded: no wait at all


def test_a_model_that_failed_to_load_raises_why(tmp_path: Path) -> None:
    ready = threading.Event()
    index = _slow_index(tmp_path, ready, fail=True)
    index.load_encoder_in_background()
    ready.set()
    with pytest.raises(OSError, match="unreadable"):
        index.encoder_within(5)
