"""recall open: the search page in a browser, served in the foreground on loopback."""

from __future__ import annotations

import argparse

from broker.surfaces.commands._common import add_profile
from broker.surfaces.streams import Streams

HELP = "open the search page in a browser"
DESCRIPTION = """Serve the search page for one profile on loopback and open it in a browser.

The server runs in the foreground, like 'recall serve' on 127.0.0.1 with a free
port (or --addr), and stops with Ctrl-C, stopping every adapter. The browser is
the one the desktop names (or $BROWSER); --no-browser only prints the address."""
EXIT_CODES = """exit codes:
  1  error: bad usage, configuration or listen address
SIGINT or SIGTERM stops every adapter, then ends with that signal's status (130, 143)."""

DEFAULT_ADDR = "127.0.0.1:0"


def configure(parser: argparse.ArgumentParser) -> None:
    add_profile(parser)
    parser.add_argument("--addr", default=DEFAULT_ADDR, metavar="HOST:PORT",
                        help="loopback address to listen on (default: 127.0.0.1, a free port)")
    parser.add_argument("--no-browser", action="store_true", help="print the address; open nothing")


def run(args: argparse.Namespace, io: Streams) -> int:
    import ipaddress

    from broker.errors import UsageError
    from broker.surfaces.commands.serve import parse_addr, serve

    host, _ = parse_addr(args.addr)
    if not ipaddress.ip_address(host).is_loopback:
        raise UsageError(f"--addr {args.addr}: recall open listens on loopback only; "
                         "use 'recall serve' with a token to serve beyond it")
    served = argparse.Namespace(addr=args.addr, profile=args.profile, auth_token_env=None,
                                request_timeout=120.0, log_requests=False)
    return serve(served, io, on_listening=None if args.no_browser else open_browser)


def open_browser(url: str) -> None:
    """Start the browser beside the server: a browser command that waits must not hold it up."""
    import threading
    import webbrowser

    threading.Thread(target=webbrowser.open, args=(url,), name="open-browser", daemon=True).start()
