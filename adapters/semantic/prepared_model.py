"""An onnxruntime session for the int8 model, prepared once per user and then reused.

The shipped graph stores int8 weights that onnxruntime folds into float32 ones at
load, so it would compute in float32 and read 88 MB of weights for every question.
Preparing it gives it int8 arithmetic: the folded float graph (its attention fused)
is quantized again dynamically (``onnxruntime.quantization``: int8 weights per
output channel, each batch's activations quantized as it runs, ``MatMulInteger``),
then optimised once more. It embeds twice the chunks per CPU-second and a question
in half the time; its vectors are not the float graph's (cosine 0.99 on average),
so the model's key says how it is run (``eval/README.md`` measures its ranking).
Preparing takes about four seconds of CPU and needs the ``onnx`` package, so it is
done once per machine and user: the first load saves the graph it prepared in the
model cache (:func:`model_cache`: ``$RECALL_MODEL_CACHE``, else
``$XDG_CACHE_HOME/recall/models``, else ``~/.cache/recall/models``), and every later
load, by any source's adapter, reads that graph with the optimisations off, which
gives the same graph, so the same vectors, without the work. Where no cache can be
written the model is prepared in memory at every load.

The saved graph is a folder: ``model.onnx`` holds the operators, ``weights.bin`` the
float32 weights, which onnxruntime maps into memory instead of parsing them out of
the graph and copying them (a load of 70-90 ms instead of 170-240 ms, 100 MB of
memory instead of 190, measured in ``bench/README.md``; the pages are shared by every
process that loads the same folder). Its name carries what it was prepared from (the
weights file's path, size and modification time, onnxruntime's version, the
processor architecture, how it was prepared): another model, runtime or recipe gets
a folder of its own and the one it replaces is removed. Deleting it costs the next
load its preparing again, nothing else.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

PREFIX = "onnx-prepared-"
RECIPE = "int8-dynamic-per-channel"  # how the graph is prepared: a new recipe prepares anew
GRAPH = "model.onnx"
WEIGHTS = "weights.bin"  # named inside GRAPH, so a folder is written aside whole and then renamed
PROVIDERS = ["CPUExecutionProvider"]


def model_cache(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where prepared models are kept for this user (None: no home to keep them in)."""
    if environ.get("RECALL_MODEL_CACHE"):
        return Path(environ["RECALL_MODEL_CACHE"])
    if environ.get("XDG_CACHE_HOME"):
        return Path(environ["XDG_CACHE_HOME"]) / "recall" / "models"
    if environ.get("HOME"):
        return Path(environ["HOME"]) / ".cache" / "recall" / "models"
    return None


def open_session(weights: Path, cache_dir: Path | None) -> Any:
    """A one-thread CPU session for ``weights``, from the prepared copy in ``cache_dir``
    when it has one; without ``cache_dir`` the model is prepared in memory and nothing
    is saved."""
    import onnxruntime

    if cache_dir is None:
        with tempfile.TemporaryDirectory(prefix="recall-model-") as scratch:
            return _session(str(_quantized(weights, Path(scratch))), optimize=True)
    prepared = cache_dir / f"{PREFIX}{fingerprint(weights, onnxruntime.__version__)}"
    if (prepared / GRAPH).is_file():
        try:
            return _session(str(prepared / GRAPH), optimize=False)
        except Exception:  # damaged (onnxruntime's errors share no base but Exception): prepare it again
            _remove(prepared)
    return _prepare(weights, prepared)


def fingerprint(weights: Path, runtime_version: str) -> str:
    stat = weights.stat()
    made_from = (f"{weights.resolve()}\n{stat.st_size}\n{stat.st_mtime_ns}\n{runtime_version}\n"
                 f"{platform.machine()}\n{RECIPE}")
    return hashlib.sha256(made_from.encode()).hexdigest()[:16]


def _prepare(weights: Path, prepared: Path) -> Any:
    """Load ``weights`` with the optimisations on and save what they made as the folder
    ``prepared`` (written aside, then renamed: a process loading it never reads half of
    it). A cache that cannot be written to still gets its session."""
    partial = prepared.with_name(f".{prepared.name}.{os.getpid()}")
    try:
        prepared.parent.mkdir(parents=True, exist_ok=True)
        partial.mkdir()
        session = _session(str(_quantized(weights, partial)), optimize=True, save_to=partial / GRAPH)
        for scratch in partial.iterdir():
            if scratch.name not in (GRAPH, WEIGHTS):
                scratch.unlink()
    except Exception:  # a read-only or full disk: the session without a saved copy
        _remove(partial)
        return open_session(weights, None)
    try:
        os.rename(partial, prepared)
    except OSError:  # another process's copy was renamed into place first
        _remove(partial)
        return session
    for older in prepared.parent.glob(f"{PREFIX}*"):
        if older != prepared:
            _remove(older)
    for abandoned in prepared.parent.glob(f".{PREFIX}*"):  # by a process killed while preparing
        if not _alive(abandoned.suffix.lstrip(".")):
            _remove(abandoned)
    return session


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _quantized(weights: Path, folder: Path) -> Path:
    """Write the model with int8 arithmetic into ``folder`` and return its graph: the
    shipped weights folded and fused by onnxruntime, then quantized dynamically."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folded = folder / "folded.onnx"
    _session(str(weights), optimize=True, save_to=folded, weights_file="folded.bin")
    quantized = folder / "quantized.onnx"
    with _root_logger_silenced():  # it warns that the graph was not pre-processed, which it needs not be
        quantize_dynamic(folded, quantized, per_channel=True, weight_type=QuantType.QInt8)
    return quantized


@contextmanager
def _root_logger_silenced() -> Iterator[None]:
    """No record below an error from the root logger, and no stderr handler installed on it
    (``logging.warning`` installs one on a root logger that has none)."""
    root = logging.getLogger()
    quiet = logging.NullHandler()
    root.addHandler(quiet)
    disabled = root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(disabled)
        root.removeHandler(quiet)


def _remove(path: Path) -> None:
    """A prepared folder, or a single-file graph an earlier release kept."""
    with suppress(OSError):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


def _session(model: str, optimize: bool, save_to: Path | None = None, weights_file: str = WEIGHTS) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # batches run side by side instead (``pooling.py``)
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # warnings would go to stderr on every load
    if not optimize:  # a prepared graph: optimising it again would find nothing to do
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    if save_to is not None:
        options.optimized_model_filepath = str(save_to)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", weights_file)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    # no fallback: on a failed load it would retry with the same provider after printing
    # to stdout, which is an adapter's protocol stream
    return onnxruntime.InferenceSession(model, options, providers=PROVIDERS, enable_fallback=0)
