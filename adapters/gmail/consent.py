"""``recall-gmail auth``: Google's consent flow for read-only Gmail access.

Runs google-auth-oauthlib's installed-app flow (a one-shot local redirect
server on loopback) with the ``gmail.readonly`` scope only, then writes the
authorized-user token file — mode 0600, replaced atomically — that the
adapter reads and refreshes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from adapters.gmail.settings import READONLY_SCOPE, default_token_file


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="recall-gmail",
        description="Gmail adapter for recall. Without arguments it serves protocol v1 on stdio.",
    )
    commands = top.add_subparsers(dest="command", required=True)
    auth = commands.add_parser(
        "auth", help="authorize read-only Gmail access and write the token file",
        description="Open Google's consent page for read-only Gmail access "
        f"({READONLY_SCOPE}) and write the token file the adapter uses.",
    )
    auth.add_argument("--client-secrets", required=True, type=Path, metavar="FILE",
                      help="OAuth client (Desktop app) JSON downloaded from Google Cloud Console")
    auth.add_argument("--token", type=Path, metavar="FILE", default=None,
                      help=f"where to write the token (default {default_token_file()})")
    auth.add_argument("--no-browser", action="store_true",
                      help="print the consent URL instead of opening a browser")
    auth.add_argument("--port", type=int, default=0,
                      help="loopback port for Google's redirect (default: any free port)")
    return top


def main(arguments: list[str]) -> int:
    options = parser().parse_args(arguments)
    secrets: Path = options.client_secrets
    token_path: Path = options.token or default_token_file()
    if not secrets.is_file():
        print(f"recall-gmail auth: no OAuth client file at {secrets}; download a Desktop-app "
              "client JSON from Google Cloud Console (APIs & Services > Credentials)",
              file=sys.stderr)
        return 2
    from google_auth_oauthlib.flow import InstalledAppFlow

    from adapters.gmail.credentials import write_private_json

    try:
        flow = InstalledAppFlow.from_client_secrets_file(str(secrets), scopes=[READONLY_SCOPE])
    except (ValueError, KeyError) as exc:
        print(f"recall-gmail auth: {secrets} is not an OAuth client file ({exc})", file=sys.stderr)
        return 2
    try:
        credentials = flow.run_local_server(
            host="localhost", port=options.port, open_browser=not options.no_browser,
            authorization_prompt_message="Open this URL to authorize read-only Gmail access: {url}",
            success_message="recall-gmail is authorized; you may close this window.",
        )
    except Exception as exc:  # oauthlib raises many types; none carries a token
        print(f"recall-gmail auth: authorization failed ({type(exc).__name__})", file=sys.stderr)
        return 1
    write_private_json(token_path, json.loads(credentials.to_json()))
    print(f"wrote {token_path} (read-only Gmail access)")
    return 0
