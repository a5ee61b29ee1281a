"""``python -m adapters.semantic`` / ``recall-semantic``: serve the semantic adapter on stdio."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.semantic.adapter import SemanticAdapter


def main() -> None:
    import os

    # one BLAS thread: the embedding batches are small, and a machine shared with the
    # broker and other adapters loses far more to spinning threads than it gains
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from adapter_sdk import serve_quietly

    serve_quietly(_adapter)


def _adapter() -> SemanticAdapter:
    from adapters.semantic.adapter import SemanticAdapter

    return SemanticAdapter()


if __name__ == "__main__":
    main()
