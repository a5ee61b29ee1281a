"""The numpy encoder: a text's embedding does not depend on the texts batched with it.

Batches are padded to their longest text, so a padding token that leaked into
attention or pooling would move a short text's embedding when a long one is
encoded beside it.
"""

from __future__ import annotations

import pytest

from broker.config.init import semantic_extra_missing

pytestmark = pytest.mark.skipif(
    bool(semantic_extra_missing()), reason=f"semantic extra not installed: {semantic_extra_missing()}"
)

TEXTS = [
    "Double quotes are preferred.",
    "Lines ending in `# fmt: skip` and blocks between `# fmt: off` and `# fmt: on` are never"
    " reformatted, whatever the configured line length says about them. " * 6,
    "Official images are published on Docker Hub, tagged with each release.",
]


def test_an_embedding_is_the_same_alone_and_in_a_padded_batch() -> None:
    import numpy as np

    from adapters.semantic.model import Encoder

    encoder = Encoder()
    together = encoder.encode(TEXTS)
    alone = np.stack([encoder.encode([text])[0] for text in TEXTS])
    assert together.shape == (3, encoder.dimensions)
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_embeddings_come_back_in_the_order_the_texts_were_given() -> None:
    import numpy as np

    from adapters.semantic.model import Encoder

    encoder = Encoder()
    forward = encoder.encode(TEXTS)
    backward = encoder.encode(TEXTS[::-1])
    assert np.allclose(forward[::-1], backward, atol=1e-5)
    similarity = forward @ forward.T
    assert similarity[0, 2] < 0.5  # unrelated sentences are not near-duplicates
