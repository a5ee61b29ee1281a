"""Entry point: ``python -m adapters.gmail`` / ``recall-gmail``.

With no arguments it serves protocol v1 on stdio. ``recall-gmail auth
--client-secrets FILE [--token FILE]`` runs Google's consent flow for
read-only Gmail access and writes the token file the adapter reads.
"""

from __future__ import annotations

import sys


def main() -> None:
    arguments = sys.argv[1:]
    if arguments:
        from adapters.gmail.consent import main as consent_main

        sys.exit(consent_main(arguments))
    from adapter_sdk import start_quietly

    start_quietly()  # before the imports: they allocate much, none of it garbage
    from adapter_sdk import run
    from adapters.gmail.adapter import GmailAdapter

    run(GmailAdapter())


if __name__ == "__main__":
    main()
