"""Entry point: ``python -m adapters.postgres`` / ``recall-postgres``.

With no arguments it serves protocol v1 on stdio. ``recall-postgres ingest DIR
--source ID`` loads a folder of markdown notes into the managed corpus ID.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.postgres.adapter import PostgresAdapter


def main() -> None:
    arguments = sys.argv[1:]
    if arguments:
        from adapters.postgres.ingest_cli import main as ingest_main

        sys.exit(ingest_main(arguments))
    from adapter_sdk import serve_quietly

    serve_quietly(_adapter)


def _adapter() -> PostgresAdapter:
    from adapters.postgres.adapter import PostgresAdapter

    return PostgresAdapter()


if __name__ == "__main__":
    main()
