"""``python -m adapters.semantic`` / ``recall-semantic``: serve the semantic adapter on stdio."""

from __future__ import annotations


def main() -> None:
    import os

    # one BLAS thread: the embedding batches are small, and a machine shared with the
    # broker and other adapters loses far more to spinning threads than it gains
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from adapter_sdk import start_quietly

    start_quietly()  # before the imports: they allocate much, none of it garbage
    from adapter_sdk import run
    from adapters.semantic.adapter import SemanticAdapter

    run(SemanticAdapter())


if __name__ == "__main__":
    main()
