"""An onnxruntime session for the int8 model, prepared once per store and then reused.

At every load onnxruntime's graph optimisations fold the int8 weights into float32
ones and fuse the attention's operators: a few hundred milliseconds on an idle
machine, about a second on a busy one, with both copies of the weights in memory
meanwhile. The first load into a store saves the graph it prepared beside the
embeddings; later loads read that graph with the optimisations off, which gives the
same graph, so the same vectors, without the work.

The saved graph is a folder: ``model.onnx`` holds the operators, ``weights.bin`` the
float32 weights, which onnxruntime maps into memory instead of parsing them out of
the graph and copying them (a load of 70-90 ms instead of 170-240 ms, 100 MB of
memory instead of 190, measured in ``bench/README.md``; the pages are shared by every
process that loads the same folder). Its name carries what it was prepared from (the
weights file's path, size and modification time, onnxruntime's version, the
processor architecture): another model or runtime gets a folder of its own and the
one it replaces is removed. Deleting it costs the next load its preparing again,
nothing else.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
from contextlib import suppress
from pathlib import Path
from typing import Any

PREFIX = "onnx-prepared-"
GRAPH = "model.onnx"
WEIGHTS = "weights.bin"  # named inside GRAPH, so a folder is written aside whole and then renamed
PROVIDERS = ["CPUExecutionProvider"]


def open_session(weights: Path, cache_dir: Path | None) -> Any:
    """A one-thread CPU session for ``weights``, from the store's prepared copy when it has
    one; without ``cache_dir`` the model is prepared in memory and nothing is saved."""
    import onnxruntime

    if cache_dir is None:
        return _session(str(weights), optimize=True)
    prepared = cache_dir / f"{PREFIX}{fingerprint(weights, onnxruntime.__version__)}"
    if (prepared / GRAPH).is_file():
        try:
            return _session(str(prepared / GRAPH), optimize=False)
        except Exception:  # damaged (onnxruntime's errors share no base but Exception): prepare it again
            _remove(prepared)
    return _prepare(weights, prepared)


def fingerprint(weights: Path, runtime_version: str) -> str:
    stat = weights.stat()
    made_from = f"{weights.resolve()}\n{stat.st_size}\n{stat.st_mtime_ns}\n{runtime_version}\n{platform.machine()}"
    return hashlib.sha256(made_from.encode()).hexdigest()[:16]


def _prepare(weights: Path, prepared: Path) -> Any:
    """Load ``weights`` with the optimisations on and save what they made as the folder
    ``prepared`` (written aside, then renamed: a process loading it never reads half of
    it). A store that cannot be written to still gets its session."""
    partial = prepared.with_name(f".{prepared.name}.{os.getpid()}")
    try:
        partial.mkdir()
        session = _session(str(weights), optimize=True, save_to=partial / GRAPH)
    except Exception:  # a read-only or full disk: the session without the saved copy
        _remove(partial)
        return _session(str(weights), optimize=True)
    try:
        os.rename(partial, prepared)
    except OSError:  # another process's copy was renamed into place first
        _remove(partial)
        return session
    for older in prepared.parent.glob(f"{PREFIX}*"):
        if older != prepared:
            _remove(older)
    return session


def _remove(path: Path) -> None:
    """A prepared folder, or a single-file graph an earlier release kept."""
    with suppress(OSError):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


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
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    # no fallback: on a failed load it would retry with the same provider after printing
    # to stdout, which is an adapter's protocol stream
    return onnxruntime.InferenceSession(model, options, providers=PROVIDERS, enable_fallback=0)
