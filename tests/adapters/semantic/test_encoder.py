"""Every installed encoder: a text's embedding does not depend on the texts batched with it.

Batches are padded to their longest text, so a padding token that leaked into
attention or pooling would move a short text's embedding when a long one is
encoded beside it.
"""

from __future__ import annotations

import pytest

from adapters.semantic.encoders import DEFAULT_MODEL, MODELS, missing

# the default model comes with the install; the others are tested where their packages are
INSTALLED = [
    pytest.param(model, marks=pytest.mark.skipif(
        model != DEFAULT_MODEL and bool(missing(model)), reason=f"{model} not installed"))
    for model in sorted(MODELS)
]

TEXTS = [
    "Double quotes are preferred.",
    "Lines ending in `# fmt: skip` and blocks between `# fmt: off` and `# fmt: on` are never"
    " reformatted, whatever the configured line length says about them. " * 6,
    "Official images are published on Docker Hub, tagged with each release.",
]


@pytest.mark.parametrize("model", INSTALLED)
def test_an_embedding_is_the_same_alone_and_in_a_padded_batch(model: str) -> None:
    import numpy as np

    from adapters.semantic.encoders import load

    encoder = load(model)
    together = encoder.encode(TEXTS)
    alone = np.stack([encoder.encode([text])[0] for text in TEXTS])
    assert together.shape == (3, encoder.dimensions)
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("model", INSTALLED)
def test_embeddings_come_back_in_the_order_the_texts_were_given(model: str) -> None:
    import numpy as np

    from adapters.semantic.encoders import load

    encoder = load(model)
    forward = encoder.encode(TEXTS)
    backward = encoder.encode(TEXTS[::-1])
    assert np.allclose(forward[::-1], backward, atol=1e-5)
    similarity = forward @ forward.T
    assert similarity[0, 2] < 0.5  # unrelated sentences are not near-duplicates


def test_batches_embedded_side_by_side_give_the_vectors_of_one_thread() -> None:
    import numpy as np

    from adapters.semantic.onnx_model import BATCH, OnnxEncoder

    if missing(DEFAULT_MODEL):
        pytest.skip(f"{DEFAULT_MODEL} not installed")
    texts = [f"{text} ({n})" for n in range(BATCH) for text in TEXTS]  # three batches
    one_thread = OnnxEncoder(workers=1).encode(texts)
    two_threads = OnnxEncoder(workers=2).encode(texts)
    assert np.array_equal(one_thread, two_threads)  # stored vectors do not depend on the threads
