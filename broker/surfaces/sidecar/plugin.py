"""Answering one Sidecar plugin request (``recall sidecar-plugin``): one request in, one response out.

Speaks ``sidecar.plugin/v1`` and the earlier ``sidecar.plugin/v1-draft`` and
stamps every response, errors included, with the identifier the request used.
This module projects recall's vocabulary onto Sidecar's — outcome and coverage
onto a page, results onto rows, withheld counts onto notices — and decides
nothing about retrieval. A typed failure is an answer like any other: the
caller exits 0 either way.
"""

from __future__ import annotations

import traceback
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TextIO, TypeVar

from broker import __version__
from broker.api import BrokerAPI, OnTheBroker
from broker.config import Config
from broker.contracts import (
    DEFAULT_RESPONSE_TOKENS,
    Budget,
    DetailLevel,
    ExpandRequest,
    Mode,
    QueryRequest,
    QueryResponse,
    RefreshRequest,
    Scope,
    SourcesResponse,
    Surface,
)
from broker.errors import ConfigError, ExpandError, RecallError
from broker.instants import parse_instant
from broker.requests import InvalidRequest, check_query
from broker.severity import Severity, severity
from broker.surfaces.sidecar.pages import (
    choices,
    freshness,
    health_label,
    health_tone,
    label,
    record_types,
    result_page,
    shortfall_text,
    source_document,
)
from broker.surfaces.sidecar.protocol import (
    ANY,
    DRAFT,
    EXPAND_BUDGET,
    FILTERS,
    FROZEN,
    MAX_CHOICE_ID,
    MAX_CHOICES,
    PROTOCOLS,
    REFRESH_ACTION,
    RESULTS,
    SOURCES,
    SOURCES_EVERY_SECONDS,
    Refusal,
    deadline_budget,
    decode,
    integer_param,
    invalid,
    line,
    refusal,
    text_param,
)

T = TypeVar("T")
# The sources page warns of a listing short of ok, in the tone of its rung.
NOTICE_TONE = {Severity.degraded: "warning", Severity.failed: "danger"}


def answer(
    raw: bytes, stderr: TextIO, flag_profile: str = "", resident: OnTheBroker | None = None
) -> dict[str, Any]:
    """The response to one request (against ``resident`` when given); never raises.
    Diagnostics (an internal error's traceback, a note) go to ``stderr``."""
    protocol = FROZEN
    try:
        request = decode(raw)
        asked = request.get("protocol")
        if asked not in PROTOCOLS:
            raise invalid(f"protocol {asked!r} is not supported; recall speaks {FROZEN} (and {DRAFT})")
        protocol = asked
        return {"protocol": protocol, **Plugin(flag_profile, request, stderr, resident).dispatch()}
    except Refusal as refusal:
        return {"protocol": protocol, **refusal.body()}
    except Exception:
        stderr.write("recall sidecar-plugin: internal error\n" + traceback.format_exc())
        return {"protocol": protocol, **Refusal(
            "internal",
            "recall hit an internal error while answering this request; details were written to standard error",
        ).body()}


def load() -> Config:
    from broker.config import load_config

    try:
        config = load_config()
    except ConfigError as exc:
        raise Refusal("invalid_config", f"recall configuration did not load: {exc}",
                      hint="Run recall doctor") from None
    if not config.paths.config_file.exists():
        raise Refusal("invalid_config", f"recall has no configuration at {config.paths.config_file}",
                      hint="Run recall init --notes DIR")
    return config


class Plugin:
    def __init__(
        self, flag_profile: str, request: dict[str, Any], stderr: TextIO, resident: OnTheBroker | None = None
    ) -> None:
        self.flag_profile = flag_profile.strip()
        self.request = request
        self.stderr = stderr
        self.resident = resident
        self.latency_ms, self.hard_timeout = deadline_budget(request.get("deadlineMs"))

    def dispatch(self) -> dict[str, Any]:
        method = self.request.get("method")
        if method == "describe":
            return self.describe()
        if method == "resolve":
            raise invalid("recall declares no matchers, so resolve has nothing to resolve")
        if method not in ("list", "get", "act"):
            raise invalid(f"unknown method {method!r}; the protocol has describe, resolve, list, get and act")
        params = self.request.get("params")
        if params is None:
            raise invalid("the request carries no params")
        if not isinstance(params, dict):
            raise invalid("params must be a JSON object")
        self.refuse_remote()
        if method == "act":
            return self.act(params)
        collection = params.get("collection")
        if collection not in (RESULTS, SOURCES):
            raise invalid(f"no collection named {collection!r}; recall declares {RESULTS} and {SOURCES}")
        if method == "list":
            return self.list_results(params) if collection == RESULTS else self.list_sources()
        return self.get_result(params) if collection == RESULTS else self.get_source(params)

    def refuse_remote(self) -> None:
        context = self.request.get("context")
        project = context.get("project") if isinstance(context, dict) else None
        host = project.get("hostId") if isinstance(project, dict) else None
        if host:
            raise Refusal(
                "unavailable",
                f"this recall runs on the machine Sidecar is running on and cannot answer for host {host!r}",
            )

    def run(self, config: Config, work: Callable[[BrokerAPI], Awaitable[T]]) -> T:
        """``await work(broker)`` under the host's deadline; its end is ``unavailable``."""
        import anyio

        from broker.app import run

        async def bounded(broker: BrokerAPI) -> T:
            if self.hard_timeout is None:
                return await work(broker)
            with anyio.fail_after(self.hard_timeout):
                return await work(broker)

        try:
            if self.resident is not None:
                return self.resident(bounded)  # type: ignore[no-any-return]
            return run(config, bounded)
        except TimeoutError:
            raise Refusal("unavailable", "recall ran out of the host's deadline", retryable=True) from None
        except ConfigError as exc:  # a project source's settings crossed the trust boundary
            raise Refusal("invalid_config", f"recall configuration did not load: {exc}",
                          hint="Run recall doctor") from None

    # -- describe ------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        config = load()
        return {
            "plugin": {"kind": "recall", "name": "Recall", "version": __version__},
            "context": ["project"],
            "collections": [
                {
                    "id": RESULTS,
                    "title": "Results",
                    "search": "required",
                    "columns": [
                        {"id": "rank", "label": "#", "width": 3, "align": "right", "kind": "number"},
                        {"id": "title", "label": "Title", "primary": True},
                        {"id": "source", "label": "Source", "width": 14},
                        {"id": "excerpt", "label": "Excerpt", "secondary": True},
                    ],
                    "views": [],
                    "filters": self.result_filters(config),
                    "sort": [
                        {"id": "rank", "label": "Relevance", "default": "asc"},
                        {"id": "source", "label": "Source"},
                        {"id": "updated", "label": "Updated"},
                    ],
                    "detail": True,
                    "refresh": {},
                },
                {
                    "id": SOURCES,
                    "title": "Sources",
                    "search": "none",
                    "columns": [
                        {"id": "name", "label": "Source", "primary": True},
                        {"id": "health", "label": "Health", "kind": "status"},
                        {"id": "fresh", "label": "Fresh", "kind": "timestamp"},
                    ],
                    "views": [],
                    "sort": [],
                    "detail": True,
                    "refresh": {"everySeconds": SOURCES_EVERY_SECONDS},
                },
            ],
            "actions": [
                {"id": REFRESH_ACTION, "title": "Refresh source", "on": "item",
                 "collection": SOURCES, "mutates": True, "confirm": True}
            ],
        }

    def result_filters(self, config: Config) -> list[dict[str, Any]]:
        profiles, profiles_lost = choices(sorted(config.profiles), lead_with_any=False)
        sources, sources_lost = choices([s.source_id for s in config.sources])
        kinds, kinds_lost = choices(record_types(config))
        default_profile = self.flag_profile or config.defaults.profile
        profile_filter: dict[str, Any] = {
            "id": "profile", "label": label("Profile", len(config.profiles), profiles_lost),
            "kind": "choice", "choices": profiles,
        }
        if any(c["id"] == default_profile for c in profiles):
            profile_filter["default"] = default_profile
        if profiles_lost + sources_lost + kinds_lost:
            self.stderr.write(
                f"recall sidecar-plugin: the filter choosers omit {profiles_lost} profiles, {sources_lost} "
                f"sources and {kinds_lost} record types (at most {MAX_CHOICES} choices, ids of at most "
                f"{MAX_CHOICE_ID} characters)\n"
            )
        return [
            profile_filter,
            {"id": "source", "label": label("Source", len(config.sources), sources_lost),
             "kind": "choice", "choices": sources, "default": ANY},
            {"id": "type", "label": label("Type", len(record_types(config)), kinds_lost),
             "kind": "choice", "choices": kinds, "default": ANY},
            {"id": "since", "label": "Since (RFC 3339 date)", "kind": "text"},
        ]

    # -- filters -------------------------------------------------------------

    def selection(self, config: Config, filters: Any) -> tuple[str, Scope]:
        """The profile and scope a call's filters choose (declared order, then the rest sorted)."""
        profile, scope = self.flag_profile, Scope()
        if filters is None:
            return profile, scope
        if not isinstance(filters, dict):
            raise invalid("filters must be a JSON object")
        order = [f for f in FILTERS if f in filters] + sorted(k for k in filters if k not in FILTERS)
        for key in order:
            value = str(filters[key] or "").strip()
            if key not in FILTERS:
                raise invalid(f"no filter named {key!r}; recall declares {', '.join(FILTERS)}")
            if not value or (key in ("source", "type") and value == ANY):
                continue
            if key == "profile":
                if value not in config.profiles:
                    raise invalid(f"filter profile: no profile named {value!r}; this machine declares "
                                  f"{', '.join(sorted(config.profiles))}")
                profile = value
            elif key == "source":
                if config.source(value) is None:
                    raise invalid(f"filter source: no source named {value!r} is configured; "
                                  "`recall sources` lists what this installation has")
                scope.source_ids = [value]
            elif key == "type":
                if value not in record_types(config):
                    raise invalid(f"filter type: no configured source declares record type {value!r}; "
                                  f"this machine declares {', '.join(record_types(config)) or 'none'}")
                scope.record_types = [value]
            else:
                scope.since = parse_since(value)
        return profile, scope

    # -- results ---------------------------------------------------------------

    def list_results(self, params: dict[str, Any]) -> dict[str, Any]:
        request = QueryRequest(
            query=text_param(params, "query").strip(),
            mode=Mode.explicit,
            budget=Budget(latency_ms=self.latency_ms, response_tokens=DEFAULT_RESPONSE_TOKENS,
                          surface=Surface.structured_pointer),
            limit=integer_param(params, "limit"),
        )
        try:
            check_query(request)  # before the configuration loads: no source is asked
        except InvalidRequest as exc:
            raise invalid(exc.describe({})) from None
        if text_param(params, "cursor").strip():
            raise invalid("recall answers one page and returns no cursor, so there is no page to resume")
        config = load()
        request.profile, request.scope = self.selection(config, params.get("filters"))
        try:
            response: QueryResponse = self.run(config, lambda broker: broker.query(request))
        except RecallError as exc:
            raise refusal(exc, "recall could not run the query") from None
        return {"page": result_page(response, params.get("sort"))}

    def get_result(self, params: dict[str, Any]) -> dict[str, Any]:
        from broker.locator import Locator

        locator = str(params.get("id") or "").strip()
        try:
            parsed = Locator.parse(locator)
        except ExpandError as exc:
            raise invalid(exc.message) from None
        config = load()
        profile, _ = self.selection(config, params.get("filters"))
        request = ExpandRequest(locator=locator, detail=DetailLevel.full, budget_bytes=EXPAND_BUDGET,
                                profile=profile)
        try:
            response = self.run(config, lambda broker: broker.expand(request))
        except ExpandError as exc:
            stated = exc.stated
            if stated.usage:
                raise invalid(exc.message) from None
            raise Refusal(stated.sidecar_code, f"recall could not expand {locator}: {exc}",
                          retryable=stated.retryable) from None
        except RecallError as exc:
            raise refusal(exc, f"recall could not expand {locator}") from None
        provenance = [
            {"label": name, "value": line(value, 512)}
            for name, value in (
                ("Provenance", response.provenance),
                ("Revision", response.source_revision),
                ("Truncated", "yes" if response.truncated else None),
                ("Boundary", response.truncation_boundary if response.truncated else None),
            )
            if value and value.strip()
        ]
        sections: list[dict[str, Any]] = [
            {"title": "Evidence", "body": {"format": "markdown", "text": response.content}}
        ]
        if provenance:
            sections.append({"title": "Provenance", "fields": provenance})
        return {"resource": {
            "identity": locator,
            "title": line(parsed.local, 300),
            "subtitle": line(parsed.source_id, 120),
            "fields": [{"label": "Source", "value": line(parsed.source_id, 512)},
                       {"label": "Locator", "value": line(locator, 512)}],
            "sections": sections,
        }}

    # -- sources ---------------------------------------------------------------

    def listing(self) -> SourcesResponse:
        config = load()
        try:
            listing: SourcesResponse = self.run(config, lambda broker: broker.sources(self.flag_profile))
        except RecallError as exc:
            raise Refusal("unavailable", f"recall could not list its sources: {exc}", retryable=True) from None
        return listing

    def list_sources(self) -> dict[str, Any]:
        listing = self.listing()
        items = [
            {"id": row.source_id,
             "cells": {"name": line(row.source_id, 512), "health": health_label(row), "fresh": freshness(row)},
             "status": {"label": health_label(row), "tone": health_tone(row)}}
            for row in listing.sources
        ]
        page: dict[str, Any] = {"outcome": "answered", "items": items, "total": len(items)}
        tone = NOTICE_TONE.get(severity(listing.status))
        if tone is not None:
            page["notices"] = [{"tone": tone, "text": line(
                f"sources {listing.status}: {shortfall_text(listing, len(items))}", 200)}]
        return {"page": page}

    def get_source(self, params: dict[str, Any]) -> dict[str, Any]:
        wanted = str(params.get("id") or "").strip()
        listing = self.listing()
        row = next((s for s in listing.sources if s.source_id == wanted), None)
        if row is None:
            raise Refusal("not_found", f"no source named {wanted!r} in profile {listing.profile!r}")
        return {"resource": source_document(listing.profile, row)}

    # -- act -------------------------------------------------------------------

    def act(self, params: dict[str, Any]) -> dict[str, Any]:
        action = params.get("action")
        if action != REFRESH_ACTION:
            raise invalid(f"no action named {action!r}; recall declares {REFRESH_ACTION}")
        if params.get("collection") != SOURCES:
            raise invalid(f"{REFRESH_ACTION} applies to the {SOURCES} collection, not {params.get('collection')!r}")
        source_id = str(params.get("id") or "").strip()
        if not source_id:
            raise invalid(f"{REFRESH_ACTION} needs a source id")
        config = load()
        request = RefreshRequest(profile=self.flag_profile, source_id=source_id)
        try:
            response = self.run(config, lambda broker: broker.refresh(request))
        except RecallError as exc:
            return {"outcome": {"status": "failed",
                                "message": line(f"recall could not refresh {source_id}: {exc}", 200)}}
        message = f"{source_id}: {response.outcome}"
        row = next((s for s in response.sources if s.source_id == source_id), None)
        if row is not None:
            message = f"{source_id}: {row.status}" + (f" ({row.reason})" if row.reason else "")
            if row.health is not None:
                message += f", health {row.health.status}"
        if severity(response.outcome) is Severity.failed:
            return {"outcome": {"status": "failed", "message": line(message, 200)}}
        return {"outcome": {"status": "done", "message": line(message, 200), "refresh": [SOURCES],
                            "open": {"collection": SOURCES, "id": source_id}}}


def parse_since(value: str) -> datetime:
    try:
        return parse_instant(value).astimezone(UTC)
    except ValueError:
        raise invalid(f"filter since: {value[:64]!r} is not an RFC 3339 date; want "
                      f"{datetime.now(UTC):%Y-%m-%d} or {datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}") from None
