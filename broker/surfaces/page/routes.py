"""The page's routes: search, expand, sources and refresh, over the API's broker.

Each handler reads a form, asks the same :class:`broker.app.Broker` the ``/v1``
routes ask (through :meth:`Api.call`, so timeouts and typed errors are the
API's), and renders what came back. Nothing here ranks, filters or re-decides:
outcome, coverage, verdicts and suppressions are the application layer's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from broker.contracts import (
    Budget,
    DetailLevel,
    ExpandRequest,
    QueryRequest,
    RefreshRequest,
    Scope,
    Surface,
)
from broker.errors import ExpandError, UsageError
from broker.surfaces.http.api_routes import Api, read_object
from broker.surfaces.http.responses import Problem
from broker.surfaces.page.security_headers import SECURITY_HEADERS
from broker.surfaces.page.templating import render

STATIC = Path(__file__).resolve().parent / "static"
ASSETS = {
    "page.js": "text/javascript; charset=utf-8",
    "page.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
UNBOUNDED_TOKENS = -1  # a page is read by a person: the whole ledger and every result fit


@dataclass
class SearchForm:
    """The search box and its choosers, as the query string carries them."""

    q: str = ""
    profile: str = ""
    sources: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    as_of: str = ""
    explain: bool = False

    @classmethod
    def read(cls, params: QueryParams) -> SearchForm:
        return cls(
            q=params.get("q", "").strip(),
            profile=params.get("profile", "").strip(),
            sources=[s for s in params.getlist("source") if s.strip()],
            types=[t.strip() for value in params.getlist("type") for t in value.split(",") if t.strip()],
            as_of=params.get("as_of", "").strip(),
            explain=params.get("explain") == "1",
        )

    def request(self, profile: str) -> QueryRequest:
        from broker.instants import parse_time

        as_of: datetime | None = parse_time(self.as_of, "as of") if self.as_of else None
        return QueryRequest(
            query=self.q,
            profile=profile,
            scope=Scope(source_ids=self.sources or None, record_types=self.types or None),
            as_of=as_of,
            budget=Budget(
                response_tokens=UNBOUNDED_TOKENS,
                surface=Surface.explained if self.explain else Surface.pointer,
            ),
        )


@cache
def asset(name: str) -> bytes:
    return (STATIC / name).read_bytes()


class Page:
    """The page's handlers, bound to the API whose broker and profile they share."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def context(self, section: str, title: str, **values: Any) -> dict[str, Any]:
        return {"profile": self.api.profile, "section": section, "title": title, **values}

    def choosers(self) -> dict[str, Any]:
        """Profiles, sources and record types, as the configuration declares them."""
        config = self.api.config
        served = config.profile(self.api.profile)
        members = [s for s in (config.source(name) for name in served.sources) if s is not None]
        types = sorted({t for s in members for t in (s.record_types or ())})
        return {
            "profiles": sorted(config.profiles),
            "sources": [s.source_id for s in members],
            "types": types,
        }

    async def search(self, request: Request) -> Response:
        form = SearchForm.read(request.query_params)
        values = {"form": form, **self.choosers(), "response": None, "error": None}
        if not form.q:
            return render("search.html", self.context("search", "Search", **values))
        try:
            profile = self.api.served(form.profile or None)
            response = await self.api.call(self.api.broker.query(form.request(profile)))
        except UsageError as exc:
            return self.failure("search.html", values, 400, "bad_request", str(exc), "search")
        except Problem as refusal:
            return self.failure(
                "search.html", values, refusal.status, refusal.code, refusal.message, "search"
            )
        headers = {"Recall-Outcome": str(response.outcome), "Recall-Coverage": str(response.coverage)}
        values["response"] = response
        return render("search.html", self.context("search", form.q, **values), headers=headers)

    async def expand(self, request: Request) -> Response:
        locator = request.query_params.get("locator", "").strip()
        values: dict[str, Any] = {"locator": locator, "q": request.query_params.get("q", ""),
                                  "expansion": None, "error": None}
        if not locator:
            return self.failure("expand.html", values, 400, "bad_request", "no locator given", "search")
        asked = ExpandRequest(locator=locator, detail=DetailLevel.full, profile=self.api.profile)
        try:
            values["expansion"] = await self.api.call(self.api.broker.expand(asked))
        except ExpandError as exc:
            status = exc.stated.http_status
            return self.failure("expand.html", values, status, str(exc.code), exc.message, "search")
        return render("expand.html", self.context("search", locator, **values))

    async def sources(self, request: Request) -> Response:
        listing = await self.api.call(self.api.broker.sources(self.api.profile))
        coverage = str(listing.status)
        values = {"listing": listing.to_json(), "coverage": coverage}
        return render(
            "sources.html", self.context("sources", "Sources", **values), headers={"Recall-Coverage": coverage}
        )

    async def refresh(self, request: Request) -> Response:
        """``POST {"source_id": ...}`` from the page's confirmed refresh button; answers a fragment."""
        body = await read_object(request)
        source_id = body.get("source_id")
        if not isinstance(source_id, str) or not source_id.strip():
            raise Problem(400, "bad_request", "name the source to refresh: {\"source_id\": \"...\"}")
        asked = RefreshRequest(profile=self.api.profile, source_id=source_id.strip())
        response = await self.api.call(self.api.broker.refresh(asked))
        return render("refreshed.html", {"refresh": response}, headers={"Recall-Outcome": str(response.outcome)})

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return self.failure("error.html", {}, 404, "not_found", f"no page asset {name!r}")
        return Response(asset(name), headers=SECURITY_HEADERS, media_type=ASSETS[name])

    def failure(
        self, template: str, values: dict[str, Any], status: int, code: str, message: str,
        section: str = "",
    ) -> Response:
        values = {**values, "error": {"code": code, "message": message, "status": status}}
        return render(template, self.context(section, "Error", **values), status=status)

    def routes(self) -> list[Route]:
        handlers: list[tuple[str, Callable[[Request], Awaitable[Response]], str]] = [
            ("/", self.search, "GET"),
            ("/expand", self.expand, "GET"),
            ("/sources", self.sources, "GET"),
            ("/sources/refresh", self.refresh, "POST"),
            ("/static/{name}", self.static, "GET"),
        ]
        return [Route(path, self.typed(handler), methods=[method]) for path, handler, method in handlers]

    def typed(self, handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """A refusal the API would answer as JSON becomes the same status and message as a page."""

        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except Problem as refusal:
                return self.failure("error.html", {}, refusal.status, refusal.code, refusal.message)

        return endpoint


def page_routes(api: Api) -> list[Route]:
    return Page(api).routes()
