"""What every request passes before a route sees it.

Host header (DNS rebinding), no ``Origin`` (no browser may call this API; the
page outside ``/v1`` accepts its own origin only, :mod:`broker.surfaces.page.access`),
bearer token when one is configured, ``Content-Type: application/json`` on
bodies and the body size bound. A body is read whole, under the request
timeout, before the request may wait for one of the concurrency slots, so a
client that sends slowly or stalls holds its own connection and nothing else;
``/v1/health`` and ``/v1/version`` never wait for a slot.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import sys
import time

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from broker.surfaces.http.responses import media_type, problem
from broker.surfaces.page import access as page_access

MAX_BODY_BYTES = 1 << 20
JSON_TYPE = "application/json"
MAX_IN_FLIGHT = 32
MAX_QUEUED = 96
DEFAULT_REQUEST_TIMEOUT = 120.0
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

ORIGIN_REJECTED = "requests carrying an Origin header are refused: this API is not for browsers"
HOST_REJECTED = "Host header {host!r} is not this server's address (DNS rebinding protection)"
UNAUTHORIZED = "missing or wrong bearer token; send Authorization: Bearer <token>"
BUSY = "server is busy: {limit} requests are already in flight; retry shortly"
BODY_TOO_SLOW = "request body did not arrive within the server's {timeout:g}s request timeout"
TOO_LARGE = f"request body is larger than {MAX_BODY_BYTES} bytes"
# Answered at once, whatever the queries in flight: a liveness probe must not queue.
UNSLOTTED_PATHS = frozenset({"/v1/health", "/v1/version"})


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
