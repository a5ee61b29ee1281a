"""Batches embedded side by side: the same vectors as one at a time, and no thread left behind."""

from __future__ import annotations

import threading
import time

import pytest

np = pytest.importorskip("numpy")

from adapters.semantic.pooling import pooled_vectors  # noqa: E402

DIMENSIONS = 4
TOKEN_IDS = [[n + 1] * (1 + n % 7) for n in range(40)]  # 40 texts of 1 to 7 tokens


def _hidden(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A forward pass whose token states depend on the token, so the pooled vectors differ."""
    time.sleep(0.01)  # long enough for the other worker to take the next batch
    return np.stack([ids * (d + 1) % 5 + 1.0 for d in range(DIMENSIONS)], axis=-1).astype(np.float32)


def _encoding_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("semantic-encode")]


def test_two_workers_give_the_vectors_one_gives() -> None:
    alone = pooled_vectors(TOKEN_IDS, DIMENSIONS, 4, _hidden)
    side_by_side = pooled_vectors(TOKEN_IDS, DIMENSIONS, 4, _hidden, workers=2)
    assert np.array_equal(alone, side_by_side)


def test_the_batches_of_a_long_list_run_on_two_threads() -> None:
    threads: set[int] = set()

    def forward(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        threads.add(threading.get_ident())
        return _hidden(ids, mask)

    pooled_vectors(TOKEN_IDS, DIMENSIONS, 4, forward, workers=2)
    assert len(threads) == 2
    assert threading.get_ident() not in threads


def test_a_single_batch_runs_on_the_calling_thread() -> None:
    threads: set[int] = set()

    def forward(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        threads.add(threading.get_ident())
        return _hidden(ids, mask)

    pooled_vectors(TOKEN_IDS[:3], DIMENSIONS, 4, forward, workers=2)
    assert threads == {threading.get_ident()}


def test_a_failed_batch_stops_the_rest_and_leaves_no_thread_running() -> None:
    ran = []

    def forward(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        ran.append(len(ids))
        if len(ran) == 2:
            raise MemoryError("out of memory in the forward pass")
        return _hidden(ids, mask)

    with pytest.raises(MemoryError):
        pooled_vectors(TOKEN_IDS, DIMENSIONS, 4, forward, workers=2)
    assert len(ran) < len(TOKEN_IDS) // 4  # the batches not started were cancelled
    assert _encoding_threads() == []
