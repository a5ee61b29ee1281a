"""``python -m adapters.notes`` / ``recall-notes``: serve the notes adapter on stdio."""

from __future__ import annotations


def main() -> None:
    from adapter_sdk import start_quietly

    start_quietly()  # before the imports: they allocate much, none of it garbage
    from adapter_sdk import run
    from adapters.notes.adapter import NotesAdapter

    run(NotesAdapter())


if __name__ == "__main__":
    main()
