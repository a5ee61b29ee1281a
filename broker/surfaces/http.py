"""The HTTP API (``recall serve``): ``/v1`` routes over one long-lived broker.

Adapters stay warm for the server's lifetime: the broker is opened in the
application's lifespan and every request reuses its adapter processes; leaving
the lifespan (graceful shutdown) stops them all.

Every request passes :class:`Guard` first: Host header (DNS rebinding), no
``Origin`` (no browser may call this API; the page outside ``/v1`` accepts its
own origin only, :mod:`broker.surfaces.page.access`), bearer token when one is configured,
``Content-Type: application/json`` on bodies and the body size bound. A body is
read whole, under the request timeout, before the request may wait for one of
the concurrency slots, so a client that sends slowly or stalls holds its own
connection and nothing else; ``/v1/health`` and ``/v1/version`` never wait for
a slot. Routes then parse, call :class:`broker.app.Broker` and map
outcomes onto statuses: failed → 503, degraded → 206, otherwise 200; the bodies
of 206 and 503 are still typed results. Errors are ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from adapter_sdk.wire import WireModel, WireValidationError
from broker import __version__
from broker.api import BrokerAPI
from broker.config import Config
from broker.contracts import (
    Coverage,
    ExpandRequest,
    Outcome,
    QueryRequest,
    RefreshOutcome,
    RefreshRequest,
    Surface,
)
from broker.errors import (
    ExpandError,
    RecallError,
)
from broker.requests import InvalidRequest, check_query, json_instant_problems
from broker.surfaces.error_codes import error_code
from broker.surfaces.page import access as page_access
from broker.surfaces.responses import json_response, media_type, problem

API_VERSION = "v1"
Parsed = TypeVar("Parsed", bound=WireModel)
MAX_BODY_BYTES = 1 << 20
JSON_TYPE = "application/json"
MAX_IN_FLIGHT = 32
MAX_QUEUED = 96
DEFAULT_REQUEST_TIMEOUT = 120.0
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

TIER_COMPLETE = "complete"
TIER_POINTER = "pointer"
SERVED_SURFACES = frozenset(
    {Surface.structured, Surface.structured_pointer, Surface.pointer, Surface.explained}
)

ENDPOINTS = {
    "/v1/query": ("POST",),
    "/v1/expand": ("POST",),
    "/v1/refresh": ("POST",),
    "/v1/sources": ("GET",),
    "/v1/health": ("GET",),
    "/v1/version": ("GET",),
    "/v1/doctor": ("GET",),
}

ORIGIN_REJECTED = "requests carrying an Origin header are refused: this API is not for browsers"
HOST_REJECTED = "Host header {host!r} is not this server's address (DNS rebinding protection)"
MISSING_LOCATOR = "a locator is required: <source_id>:<local>, exactly as a query returned it"
UNAUTHORIZED = "missing or wrong bearer token; send Authorization: Bearer <token>"
BUSY = "server is busy: {limit} requests are already in flight; retry shortly"
BODY_TOO_SLOW = "request body did not arrive within the server's {timeout:g}s request timeout"
TOO_LARGE = f"request body is larger than {MAX_BODY_BYTES} bytes"
# Answered at once, whatever the queries in flight: a liveness probe must not queue.
UNSLOTTED_PATHS = frozenset({"/v1/health", "/v1/version"})


# ---------------------------------------------------------------------------
# Responses


class Problem(Exception):
    """A request refused with a typed error body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def response(self) -> Response:
        return problem(self.status, self.code, self.message)


def outcome_status(failed: bool, degraded: bool) -> int:
    return 503 if failed else 206 if degraded else 200


# ---------------------------------------------------------------------------
# Guard


def host_allowed(host_header: str, bound_host: str) -> bool:
    """Loopback names and IPs, the bound address, and any IP literal when bound to every interface."""
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else ""
    elif host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    if not host:
        return False
    if host in LOOPBACK_NAMES or host == bound_host.lower():
        return True
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        return False
    if literal.is_loopback:
        return True
    return ipaddress.ip_address(bound_host).is_unspecified


def token_matches(given: str, expected: str) -> bool:
    return hmac.compare_digest(
        hashlib.sha256(given.encode()).digest(), hashlib.sha256(expected.encode()).digest()
    )


class _BodyTooLarge(Exception):
    pass


class _Disconnected(Exception):
    pass


async def read_body(receive: Receive) -> bytes:
    """The whole request body, refusing more than ``MAX_BODY_BYTES``."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        body += message.get("body", b"")
        if len(body) > MAX_BODY_BYTES:
            raise _BodyTooLarge
        if not message.get("more_body", False):
            return bytes(body)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then the connection's events."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if delivered:
            return await receive()
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


class Guard:
    """Refuses what no route should see, bounds concurrency, stamps ``Recall-Profile``, logs."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        profile: str,
        bound_host: str,
        token: str | None,
        max_in_flight: int,
        max_queued: int,
        log_requests: bool,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        body_types: frozenset[str] = frozenset({JSON_TYPE}),
    ) -> None:
        self.app = app
        self.body_types = body_types
        self.profile = profile
        self.bound_host = bound_host
        self.token = token
        self.request_timeout = request_timeout
        self.max_in_flight = max_in_flight
        self.max_admitted = max_in_flight + max_queued
        self.slots = anyio.Semaphore(max_in_flight)
        self.admitted = 0
        self.log_requests = log_requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def stamped(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"recall-profile", self.profile.encode())]
            await send(message)

        try:
            refusal = self.refusal(Request(scope))
            if refusal is not None:
                await refusal(scope, receive, stamped)
            elif scope["path"] in UNSLOTTED_PATHS:
                await self.app(scope, receive, stamped)
            elif (read := await self.received(receive)) is None:
                return  # the client went away before its body arrived
            elif isinstance(read, Response):
                await read(scope, receive, stamped)
            elif self.admitted >= self.max_admitted:
                await problem(
                    503, "busy", BUSY.format(limit=self.max_in_flight), {"Retry-After": "1"}
                )(scope, receive, stamped)
            else:
                self.admitted += 1
                try:
                    async with self.slots:
                        await self.app(scope, replaying(read, receive), stamped)
                finally:
                    self.admitted -= 1
        finally:
            if self.log_requests:
                elapsed = (time.perf_counter() - started) * 1000
                sys.stderr.write(f"{scope['method']} {scope['path']} {status} {elapsed:.1f}ms\n")

    async def received(self, receive: Receive) -> bytes | Response | None:
        """The body under the request timeout, a refusal, or None if the client left."""
        try:
            with anyio.fail_after(self.request_timeout):
                return await read_body(receive)
        except TimeoutError:
            return problem(
                408, "timeout", BODY_TOO_SLOW.format(timeout=self.request_timeout),
                {"Connection": "close"},
            )
        except _BodyTooLarge:
            return problem(413, "bad_request", TOO_LARGE, {"Connection": "close"})
        except _Disconnected:
            return None

    def refusal(self, request: Request) -> Response | None:
        if not host_allowed(request.headers.get("host", ""), self.bound_host):
            return problem(421, "host_rejected", HOST_REJECTED.format(host=request.headers.get("host", "")))
        if "origin" in request.headers and not page_access.browser_allowed(request):
            return problem(403, "origin_rejected", ORIGIN_REJECTED)
        if self.token is not None and not page_access.is_asset(request.url.path):
            scheme, _, given = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not token_matches(given.strip(), self.token):
                if page_access.owns(request.url.path):
                    return page_access.token_prompt()
                return problem(
                    401, "unauthorized", UNAUTHORIZED, {"WWW-Authenticate": 'Bearer realm="recall"'}
                )
        if request.method in ("POST", "PUT", "PATCH"):
            if media_type(request) not in self.body_types:
                return problem(415, "bad_request", f"request bodies must be Content-Type: {JSON_TYPE}")
            length = request.headers.get("content-length", "")
            if length.isdigit() and int(length) > MAX_BODY_BYTES:
                return problem(413, "bad_request", TOO_LARGE)
        return None


# ---------------------------------------------------------------------------
# Request parsing


async def read_object(request: Request) -> dict[str, Any]:
    body = await request.body()  # already read whole by the Guard, within its bound
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise Problem(400, "bad_request", f"request body is not one JSON value: {exc}") from None
    if not isinstance(value, dict):
        raise Problem(400, "bad_request", "request body must be a JSON object")
    return value


def validation_message(exc: WireValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "body"
        parts.append(f"{where}: {error['msg'].lower()}")
    return "; ".join(parts)


def parse(model: type[Parsed], body: dict[str, Any]) -> Parsed:
    try:
        return model.model_validate(body)
    except WireValidationError as exc:
        raise Problem(400, "bad_request", validation_message(exc)) from None


# ---------------------------------------------------------------------------
# Routes


class Api:
    """The routes, bound to one served profile and the broker its lifespan opened."""

    def __init__(self, config: Config, profile: str, request_timeout: float) -> None:
        self.config = config
        self.profile = profile
        self.request_timeout = request_timeout
        self._broker: BrokerAPI | None = None

    @property
    def broker(self) -> BrokerAPI:
        if self._broker is None:
            raise RecallError("the server's broker is not open: its lifespan has not started or has ended")
        return self._broker

    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        from broker.app import open_broker

        async with open_broker(self.config) as broker:
            self._broker = broker
            app.state.broker = broker
            try:
                yield
            finally:
                self._broker = None
                app.state.broker = None

    def served(self, asked: str | None) -> str:
        if asked and asked != self.profile:
            raise Problem(
                409, "profile_mismatch",
                f"this server serves profile {self.profile!r}, not {asked!r}; "
                "start another 'recall serve --profile' for it",
            )
        return self.profile

    async def call(self, work: Awaitable[Any]) -> Any:
        try:
            with anyio.fail_after(self.request_timeout):
                return await work
        except TimeoutError:
            raise Problem(504, "timeout", f"request exceeded the server's {self.request_timeout:g}s request timeout") from None
        except ExpandError:
            raise
        except RecallError as exc:
            code = error_code(exc)
            raise Problem(code.http_status, code.code, str(exc)) from None

    async def query(self, request: Request) -> Response:
        from broker.render.pointer import pointer_projection

        body = await read_object(request)
        tier = body.pop("tier", "") or TIER_COMPLETE
        if tier not in (TIER_COMPLETE, TIER_POINTER):
            raise Problem(400, "bad_request", f"tier {tier!r}: use \"complete\" or \"pointer\"")
        budget = body.get("budget")
        surface_given = isinstance(budget, dict) and bool(budget.get("surface"))
        untimed = json_instant_problems(body)
        if untimed:
            raise Problem(400, "bad_request", InvalidRequest(untimed).describe({}))
        asked: QueryRequest = parse(QueryRequest, body)
        try:
            check_query(asked)
        except InvalidRequest as exc:
            raise Problem(400, "bad_request", exc.describe({})) from None
        asked.profile = self.served(asked.profile)
        if not surface_given:
            asked.budget.surface = Surface.structured_pointer if tier == TIER_POINTER else Surface.structured
        elif asked.budget.surface not in SERVED_SURFACES:
            allowed = ", ".join(sorted(SERVED_SURFACES))
            raise Problem(400, "bad_request", f"budget.surface {asked.budget.surface!s}: use one of {allowed}")
        response = await self.call(self.broker.query(asked))
        status = outcome_status(
            response.outcome == Outcome.failed, response.coverage == Coverage.degraded
        )
        headers = {"Recall-Outcome": str(response.outcome), "Recall-Coverage": str(response.coverage)}
        body_out = pointer_projection(response) if tier == TIER_POINTER else response.to_json()
        return json_response(body_out, status, headers)

    async def expand(self, request: Request) -> Response:
        body = await read_object(request)
        locator = body.get("locator")
        if locator is None or locator == "":
            raise Problem(400, "malformed_locator", MISSING_LOCATOR)
        if isinstance(locator, str) and ":" not in locator:
            raise Problem(400, "bad_request", f"locator {locator!r} is not of the form <source_id>:<local>")
        asked: ExpandRequest = parse(ExpandRequest, body)
        asked.profile = self.served(asked.profile)
        try:
            response = await self.call(self.broker.expand(asked))
        except ExpandError as exc:
            code = error_code(exc)
            return problem(code.http_status, code.code, exc.message)
        return json_response(response.to_json())

    async def refresh(self, request: Request) -> Response:
        asked: RefreshRequest = parse(RefreshRequest, await read_object(request))
        asked.profile = self.served(asked.profile)
        response = await self.call(self.broker.refresh(asked))
        status = outcome_status(
            response.outcome == RefreshOutcome.failed, response.outcome == RefreshOutcome.degraded
        )
        return json_response(response.to_json(), status, {"Recall-Outcome": str(response.outcome)})

    async def sources(self, request: Request) -> Response:
        from broker.contracts import ListingStatus

        profile = self.served(request.query_params.get("profile"))
        listing = await self.call(self.broker.sources(profile))
        status = outcome_status(
            listing.status == ListingStatus.failed, listing.status == ListingStatus.degraded
        )
        return json_response(listing.to_json(), status, {"Recall-Coverage": str(listing.status)})

    async def doctor(self, request: Request) -> Response:
        from broker.doctor import DiagnosisStatus, to_json

        profile = self.served(request.query_params.get("profile"))
        diagnosis = await self.call(self.broker.doctor(profile))
        status = outcome_status(
            diagnosis.status == DiagnosisStatus.failed, diagnosis.status == DiagnosisStatus.degraded
        )
        return json_response(to_json(diagnosis), status, {"Recall-Coverage": str(diagnosis.status)})

    async def health(self, request: Request) -> Response:
        return json_response({"status": "ok", "profile": self.profile, "version": __version__})

    async def version(self, request: Request) -> Response:
        return json_response(
            {"version": __version__, "commit": "unknown", "api_version": API_VERSION, "profile": self.profile}
        )

    def routes(self) -> list[Route]:
        handlers: dict[str, Callable[[Request], Awaitable[Response]]] = {
            "/v1/query": self.query,
            "/v1/expand": self.expand,
            "/v1/refresh": self.refresh,
            "/v1/sources": self.sources,
            "/v1/health": self.health,
            "/v1/version": self.version,
            "/v1/doctor": self.doctor,
        }
        return [
            Route(path, _typed(handler), methods=list(ENDPOINTS[path]))
            for path, handler in handlers.items()
        ]


def _typed(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except Problem as refusal:
            return refusal.response()

    return endpoint


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
