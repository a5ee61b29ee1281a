"""Which requests the page may make past the API's guard.

The ``/v1`` API refuses any request with an ``Origin`` header. The page is the
one browser client: its own paths accept an ``Origin`` naming this very server
(the refresh ``POST`` carries one) and nothing else. Its static assets hold no
retrieved data, so they load without the bearer token; every other page path
needs the token like the API does, and without it gets the prompt that asks
for it (:func:`token_prompt`). The headers every page answer carries are
:mod:`broker.surfaces.page.security_headers`.

This module is imported by the guard on every request: it stays free of the
template engine, which loads only when a page is rendered.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

API_PREFIX = "/v1/"
ASSET_PREFIX = "/static/"

def owns(path: str) -> bool:
    """A path the page serves: everything outside the ``/v1`` API."""
    return not path.startswith(API_PREFIX) and path != API_PREFIX.rstrip("/")


def is_asset(path: str) -> bool:
    return path.startswith(ASSET_PREFIX)


def same_origin(request: Request) -> bool:
    """The request's ``Origin`` names the server it was sent to (scheme, host and port)."""
    origin = request.headers.get("origin", "").strip().lower()
    host = request.headers.get("host", "").strip().lower()
    return bool(host) and origin == f"{request.url.scheme}://{host}"


def browser_allowed(request: Request) -> bool:
    """An ``Origin``-carrying request the guard lets through: the page's own, same-origin."""
    return owns(request.url.path) and same_origin(request)


def token_prompt() -> Response:
    """401 for a page path without the token: a page that asks for it and keeps it for the tab."""
    from broker.surfaces.page.templating import render

    headers = {"WWW-Authenticate": 'Bearer realm="recall"'}
    return render("token.html", {"title": "Access token", "section": ""}, status=401, headers=headers)
