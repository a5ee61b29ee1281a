"""``python -m adapters.notes`` / ``recall-notes``: serve the notes adapter on stdio."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.notes.adapter import NotesAdapter


def main() -> None:
    from adapter_sdk import serve_quietly

    serve_quietly(_adapter)


def _adapter() -> NotesAdapter:
    from adapters.notes.adapter import NotesAdapter

    return NotesAdapter()


if __name__ == "__main__":
    main()
