"""The ``recall serve`` application: the ``/v1`` routes and the page behind one guard."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from broker.config import Config
from broker.surfaces.http.api_routes import ENDPOINTS, Api
from broker.surfaces.http.guard import (
    DEFAULT_REQUEST_TIMEOUT,
    JSON_TYPE,
    MAX_IN_FLIGHT,
    MAX_QUEUED,
    Guard,
)
from broker.surfaces.http.responses import problem


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        listed = ", ".join(f"{' '.join(m)} {p}" for p, m in ENDPOINTS.items())
        return problem(404, "not_found", f"no endpoint {request.url.path}; endpoints: {listed}")
    if exc.status_code == 405:
        # the reference's answer: not_found, and Allow names the one method the endpoint serves
        allow = ", ".join(ENDPOINTS.get(request.url.path, ())) or (exc.headers or {}).get("Allow", "")
        return problem(
            405, "not_found", f"{request.method} is not allowed on {request.url.path}; use {allow}",
            {"Allow": allow},
        )
    return problem(exc.status_code, "bad_request", str(exc.detail))


async def _internal(request: Request, exc: Exception) -> Response:
    return problem(500, "internal", "internal error; see the server's standard error")


def create_app(
    config: Config,
    *,
    profile: str,
    bound_host: str = "127.0.0.1",
    token: str | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    log_requests: bool = False,
    max_in_flight: int = MAX_IN_FLIGHT,
    max_queued: int = MAX_QUEUED,
    extra_routes: Sequence[Route] = (),
    extra_body_types: frozenset[str] = frozenset(),
) -> Starlette:
    """The ``/v1`` application and the page for ``profile``; its lifespan owns the broker and its adapters.

    ``extra_routes`` are served beside ``/v1`` behind the same guard; they reach the
    open broker as ``request.app.state.broker``. Request bodies are JSON, or of one of
    ``extra_body_types`` (each a type a browser must ask leave for before sending).
    """
    from broker.surfaces.page.routes import page_routes

    api = Api(config, profile, request_timeout)
    return Starlette(
        routes=[*api.routes(), *page_routes(api), *extra_routes],
        lifespan=api.lifespan,
        exception_handlers={HTTPException: _http_error, Exception: _internal},
        middleware=[
            Middleware(
                Guard,
                profile=profile,
                bound_host=bound_host,
                token=token,
                max_in_flight=max_in_flight,
                max_queued=max_queued,
                log_requests=log_requests,
                request_timeout=request_timeout,
                body_types=frozenset({JSON_TYPE}) | extra_body_types,
            )
        ],
    )
