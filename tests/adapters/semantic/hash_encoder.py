"""A stand-in model for index tests: each text's vector is drawn from its digest, so it is stable."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any


class HashEncoder:
    key = "test-hash"
    dimensions = 384

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        rows = [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).normal(size=384)
                for t in texts]
        return np.array(rows, dtype=np.float32).reshape(len(texts), 384)
