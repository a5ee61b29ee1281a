"""The ``/v1`` routes: parse a request, ask the broker, map what it answered onto a status.

An answer's severity (:mod:`broker.severity`) maps onto a status with
:data:`HTTP_STATUS`: failed 503, degraded 206, otherwise 200; the bodies of 206
and 503 are still typed results.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapter_sdk.wire import WireModel, WireValidationError
from broker import __version__
from broker.api import BrokerAPI
from broker.config import Config
from broker.contracts import (
    ExpandRequest,
    QueryRequest,
    RefreshRequest,
    Surface,
)
from broker.errors import (
    ExpandError,
    RecallError,
)
from broker.requests import InvalidRequest, check_query, json_instant_problems
from broker.severity import Severity, severity
from broker.surfaces.error_codes import error_code
from broker.surfaces.http.responses import Problem, json_response, problem

API_VERSION = "v1"
Parsed = TypeVar("Parsed", bound=WireModel)

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

MISSING_LOCATOR = "a locator is required: <source_id>:<local>, exactly as a query returned it"


HTTP_STATUS: dict[Severity, int] = {
    Severity.answered: 200,
    Severity.abstained: 200,
    Severity.degraded: 206,
    Severity.failed: 503,
}


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
        status = HTTP_STATUS[severity(response.outcome, response.coverage)]
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
        status = HTTP_STATUS[severity(response.outcome)]
        return json_response(response.to_json(), status, {"Recall-Outcome": str(response.outcome)})

    async def sources(self, request: Request) -> Response:
        profile = self.served(request.query_params.get("profile"))
        listing = await self.call(self.broker.sources(profile))
        status = HTTP_STATUS[severity(listing.status)]
        return json_response(listing.to_json(), status, {"Recall-Coverage": str(listing.status)})

    async def doctor(self, request: Request) -> Response:
        from broker.doctor import to_json

        profile = self.served(request.query_params.get("profile"))
        diagnosis = await self.call(self.broker.doctor(profile))
        status = HTTP_STATUS[severity(diagnosis.status)]
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
