"""Texts to unit vectors in length-sorted batches: the part every encoder shares.

An encoder supplies its token ids and a forward pass from padded ids and an
attention mask to per-token hidden states; batching by length (so a batch pads
little), mean pooling over the real tokens and normalising are the same for all.

With ``workers`` above one, the batches of a long list run on that many threads at
once, each batch whole on one thread: a forward pass that releases the interpreter's
lock (onnxruntime's does) then keeps that many cores busy without a thread ever
waiting on another mid-batch, which is what a shared machine punishes. A single
batch (a question) runs on the calling thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Forward = Callable[["np.ndarray", "np.ndarray"], "np.ndarray"]
"""(ids int64 [batch, length], mask float32 [batch, length]) -> hidden [batch, length, dims]."""


def pooled_vectors(
    token_ids: list[list[int]], dimensions: int, batch: int, forward: Forward, workers: int = 1,
) -> np.ndarray:
    """One unit vector per text, the mean of its tokens' hidden states."""
    import numpy as np

    out = np.zeros((len(token_ids), dimensions), dtype=np.float32)
    order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
    batches = [order[start : start + batch] for start in range(0, len(order), batch)]

    def pool(rows: list[int]) -> None:  # each batch writes rows of its own
        length = max(len(token_ids[i]) for i in rows)
        ids = np.zeros((len(rows), length), dtype=np.int64)
        mask = np.zeros((len(rows), length), dtype=np.float32)
        for n, i in enumerate(rows):
            ids[n, : len(token_ids[i])] = token_ids[i]
            mask[n, : len(token_ids[i])] = 1.0
        hidden = forward(ids, mask)
        pooled = np.einsum("bld,bl->bd", hidden, mask) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out[rows] = pooled / np.maximum(norms, 1e-12)

    if workers <= 1 or len(batches) <= 1:
        for rows in batches:
            pool(rows)
    else:
        _in_parallel(pool, batches, min(workers, len(batches)))
    return out


def _in_parallel(pool: Callable[[list[int]], None], batches: list[list[int]], workers: int) -> None:
    """Run every batch on ``workers`` threads; the first failure cancels the batches not yet
    started and is raised once the running ones end, so no thread outlives the call."""
    from concurrent.futures import ThreadPoolExecutor

    executor = ThreadPoolExecutor(workers, thread_name_prefix="semantic-encode")
    try:
        for done in [executor.submit(pool, rows) for rows in batches]:
            done.result()
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
