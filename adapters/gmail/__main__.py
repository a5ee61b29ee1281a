"""Entry point: ``python -m adapters.gmail`` / ``recall-gmail``.

With no arguments it serves protocol v1 on stdio. ``recall-gmail auth
--client-secrets FILE [--token FILE]`` runs Google's consent flow for
read-only Gmail access and writes the token file the adapter reads.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.gmail.adapter import GmailAdapter


def main() -> None:
    arguments = sys.argv[1:]
    if arguments:
        from adapters.gmail.consent import main as consent_main

        sys.exit(consent_main(arguments))
    from adapter_sdk import serve_quietly

    serve_quietly(_adapter)


def _adapter() -> GmailAdapter:
    from adapters.gmail.adapter import GmailAdapter

    return GmailAdapter()


if __name__ == "__main__":
    main()
