"""An onnxruntime session for the int8 model, prepared once per store and then reused.

At every load onnxruntime's graph optimisations fold the int8 weights into float32
ones and fuse the attention's operators: a few hundred milliseconds on an idle
machine, about a second on a busy one, with both copies of the weights in memory
meanwhile. The first load into a store saves the graph it prepared beside the
embeddings; later loads read that graph with the optimisations off, which gives the
same graph, so the same vectors, without the work. The saved file's name carries
what it was prepared from (the weights file's path, size and modification time,
onnxruntime's version, the processor architecture): another model or runtime gets a
file of its own and the one it replaces is removed. Deleting the file costs the next
load its preparing again, nothing else.
"""

from __future__ import annotations

import hashlib
import os
import platform
from contextlib import suppress
from pathlib import Path
from typing import Any

PREFIX = "onnx-prepared-"
PROVIDERS = ["CPUExecutionProvider"]


def open_session(weights: Path, cache_dir: Path | None) -> Any:
    """A one-thread CPU session for ``weights``, from the store's prepared copy when it has
    one; without ``cache_dir`` the model is prepared in memory and nothing is saved."""
    import onnxruntime

    if cache_dir is None:
        return _session(str(weights), optimize=True)
    prepared = cache_dir / f"{PREFIX}{fingerprint(weights, onnxruntime.__version__)}.onnx"
    if prepared.is_file():
        try:
            return _session(str(prepared), optimize=False)
        except Exception:  # damaged (onnxruntime's errors share no base but Exception): prepare it again
            with suppress(OSError):
                prepared.unlink()
    return _prepare(weights, prepared)


def fingerprint(weights: Path, runtime_version: str) -> str:
    stat = weights.stat()
    made_from = f"{weights.resolve()}\n{stat.st_size}\n{stat.st_mtime_ns}\n{runtime_version}\n{platform.machine()}"
    return hashlib.sha256(made_from.encode()).hexdigest()[:16]


def _prepare(weights: Path, prepared: Path) -> Any:
    """Load ``weights`` with the optimisations on and save what they made as ``prepared``
    (written aside, then renamed: a process loading it never reads half a file). A store
    that cannot be written to still gets its session."""
    partial = prepared.with_name(f".{prepared.name}.{os.getpid()}")
    try:
        session = _session(str(weights), optimize=True, save_to=partial)
        os.replace(partial, prepared)
    except Exception:  # a read-only or full disk: the session without the saved copy
        with suppress(OSError):
            partial.unlink()
        return _session(str(weights), optimize=True)
    for older in prepared.parent.glob(f"{PREFIX}*.onnx"):
        if older != prepared:
            with suppress(OSError):
                older.unlink()
    return session


def _session(model: str, optimize: bool, save_to: Path | None = None) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # batches run side by side instead (``pooling.py``)
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # warnings would go to stderr on every load
    if not optimize:  # a prepared graph: optimising it again would find nothing to do
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    if save_to is not None:
        options.optimized_model_filepath = str(save_to)
    # no fallback: on a failed load it would retry with the same provider after printing
    # to stdout, which is an adapter's protocol stream
    return onnxruntime.InferenceSession(model, options, providers=PROVIDERS, enable_fallback=0)
