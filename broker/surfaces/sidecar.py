"""The Sidecar plugin protocol (``recall sidecar-plugin``): one request in, one response out.

Speaks ``sidecar.plugin/v1`` and the earlier ``sidecar.plugin/v1-draft`` and
stamps every response, errors included, with the identifier the request used.
This module projects recall's vocabulary onto Sidecar's — outcome and coverage
onto a page, results onto rows, withheld counts onto notices — and decides
nothing about retrieval. A typed failure is an answer like any other: the
caller exits 0 either way.
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson

from broker import __version__
from broker.api import BrokerAPI, OnTheBroker
from broker.config import Config
from broker.contracts import (
    DEFAULT_RESPONSE_TOKENS,
    Budget,
    Coverage,
    DetailLevel,
    ExpandRequest,
    ListingStatus,
    Mode,
    Outcome,
    QueryRequest,
    QueryResponse,
    RefreshOutcome,
    RefreshRequest,
    Result,
    Scope,
    SearchOutcome,
    SourcesResponse,
    SourceState,
    Surface,
)
from broker.errors import ConfigError, ExpandError, RecallError
from broker.requests import InvalidRequest, check_query
from broker.sanitize import bound
from broker.surfaces.error_codes import error_code

T = TypeVar("T")
FROZEN = "sidecar.plugin/v1"
DRAFT = "sidecar.plugin/v1-draft"
PROTOCOLS = (FROZEN, DRAFT)
MAX_REQUEST_BYTES = 1 << 20
MAX_DEADLINE_MS = 600_000
EXPAND_BUDGET = 64 * 1024

RESULTS, SOURCES = "results", "sources"
ANY = "any"
FILTERS = ("profile", "source", "type", "since")
MAX_CHOICES, MAX_CHOICE_ID = 64, 32
MAX_NOTICES, MAX_COVERAGE_ROWS = 4, 64
REFRESH_ACTION = "refresh-source"
SOURCES_EVERY_SECONDS = 120

COVERAGE_STATE = {
    SearchOutcome.success: "answered",
    SearchOutcome.partial: "unhealthy",
    SearchOutcome.timeout: "timeout",
    SearchOutcome.skipped: "skipped",
    SearchOutcome.failed: "failed",
    SearchOutcome.unavailable: "unhealthy",
    SearchOutcome.denied: "unhealthy",
}
PARTIAL_REASON = "partial: the source searched only part of its boundary"
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class Refusal(Exception):
    """A typed protocol error: ``{code, message, retryable, setupHint?}``."""

    def __init__(self, code: str, message: str, *, retryable: bool = False, hint: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.retryable, self.hint = code, message, retryable, hint

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": line(self.message, 400),
                                 "retryable": self.retryable}
        if self.hint:
            error["setupHint"] = line(self.hint, 200)
        return {"error": error}


def invalid(message: str) -> Refusal:
    return Refusal("invalid_request", message)


def refusal(error: RecallError, doing: str) -> Refusal:
    """``error`` under the code every surface reports it with; a bad request is only its message."""
    code = error_code(error)
    message = str(error) if code.sidecar == "invalid_request" else f"{doing}: {error}"
    return Refusal(code.sidecar, message, retryable=code.retryable)


def text_param(params: dict[str, Any], name: str) -> str:
    """A text parameter; absent or null reads as empty, anything but text is refused."""
    value = params.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise invalid(f"{name} must be a string, not {type(value).__name__}")
    return value


def integer_param(params: dict[str, Any], name: str) -> int:
    """An integer parameter; absent or null reads as 0 (the default), anything but an integer is refused."""
    value = params.get(name)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        return int(value)  # a number too large for a 64-bit integer arrives as a float
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid(f"{name} must be an integer, not {type(value).__name__}")
    return value


def line(text: str | None, limit: int) -> str:
    """One line, no control characters, at most ``limit`` characters."""
    return bound(_CONTROLS.sub(" ", text or "").strip(), limit)


# ---------------------------------------------------------------------------
# Entry point


def answer(raw: bytes, flag_profile: str = "", resident: OnTheBroker | None = None) -> dict[str, Any]:
    """The response to one request (against ``resident`` when given); never raises."""
    protocol = FROZEN
    try:
        request = decode(raw)
        asked = request.get("protocol")
        if asked not in PROTOCOLS:
            raise invalid(f"protocol {asked!r} is not supported; recall speaks {FROZEN} (and {DRAFT})")
        protocol = asked
        return {"protocol": protocol, **Plugin(flag_profile, request, resident).dispatch()}
    except Refusal as refusal:
        return {"protocol": protocol, **refusal.body()}
    except Exception:
        sys.stderr.write("recall sidecar-plugin: internal error\n" + traceback.format_exc())
        return {"protocol": protocol, **Refusal(
            "internal",
            "recall hit an internal error while answering this request; details were written to standard error",
        ).body()}


def decode(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_REQUEST_BYTES:
        raise invalid(f"request is larger than {MAX_REQUEST_BYTES} bytes")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise invalid(f"the request is not one JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise invalid("the request is not one JSON object")
    return value


def deadline_budget(deadline_ms: Any) -> tuple[int, float | None]:
    """(recall latency budget in ms, hard timeout in seconds) from the host's deadline."""
    if not isinstance(deadline_ms, int) or isinstance(deadline_ms, bool) or deadline_ms <= 0:
        return 0, None
    deadline_ms = min(deadline_ms, MAX_DEADLINE_MS)
    reserve = min(max(deadline_ms // 10, 100), 1000)
    if reserve >= deadline_ms:
        reserve = deadline_ms // 2
    budget = max(deadline_ms - reserve, 1)
    return budget, (budget + reserve / 2) / 1000


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


# ---------------------------------------------------------------------------
# Methods


class Plugin:
    def __init__(self, flag_profile: str, request: dict[str, Any], resident: OnTheBroker | None = None) -> None:
        self.flag_profile = flag_profile.strip()
        self.request = request
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
            sys.stderr.write(
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
        rows = [row.to_json() for row in listing.sources]
        items = [
            {"id": s["source_id"],
             "cells": {"name": line(s["source_id"], 512), "health": health_label(s), "fresh": freshness(s)},
             "status": {"label": health_label(s), "tone": health_tone(s)}}
            for s in rows
        ]
        page: dict[str, Any] = {"outcome": "answered", "items": items, "total": len(items)}
        if listing.status != ListingStatus.ok:
            tone = "danger" if listing.status == ListingStatus.failed else "warning"
            page["notices"] = [{"tone": tone, "text": line(
                f"sources {listing.status}: {_shortfall_text(listing, len(items))}", 200)}]
        return {"page": page}

    def get_source(self, params: dict[str, Any]) -> dict[str, Any]:
        wanted = str(params.get("id") or "").strip()
        listing = self.listing()
        row = next((s for s in listing.sources if s.source_id == wanted), None)
        if row is None:
            raise Refusal("not_found", f"no source named {wanted!r} in profile {listing.profile!r}")
        return {"resource": source_document(listing.profile, row.to_json())}

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
        if response.outcome == RefreshOutcome.failed:
            return {"outcome": {"status": "failed", "message": line(message, 200)}}
        return {"outcome": {"status": "done", "message": line(message, 200), "refresh": [SOURCES],
                            "open": {"collection": SOURCES, "id": source_id}}}


# ---------------------------------------------------------------------------
# Projections


def choices(names: list[str], *, lead_with_any: bool = True) -> tuple[list[dict[str, str]], int]:
    out = [{"id": ANY, "title": "Any"}] if lead_with_any else []
    lost = 0
    for name in names:
        if len(name) > MAX_CHOICE_ID or len(out) >= MAX_CHOICES:
            lost += 1
        else:
            out.append({"id": name, "title": name})
    return out, lost


def label(name: str, configured: int, lost: int) -> str:
    return f"{name} ({configured - lost} of {configured})" if lost else name


def record_types(config: Config) -> list[str]:
    return sorted({t for s in config.sources for t in (s.record_types or ()) if t})


def parse_since(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise invalid(f"filter since: {value[:64]!r} is not an RFC 3339 date; want "
                      f"{datetime.now(UTC):%Y-%m-%d} or {datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}") from None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def page_outcome(response: QueryResponse) -> str:
    if response.outcome == Outcome.failed:
        return "failed"
    if response.coverage == Coverage.degraded:
        return "degraded"
    return str(response.outcome)


def result_page(response: QueryResponse, sort: Any) -> dict[str, Any]:
    rows = sorted_rows(list(enumerate(response.results, 1)), sort if isinstance(sort, dict) else {})
    page: dict[str, Any] = {
        "outcome": page_outcome(response),
        "items": [result_item(rank, result) for rank, result in rows],
        "total": len(rows) + response.dropped_results,
    }
    notices = result_notices(response)
    if notices:
        page["notices"] = notices
    withheld = sum(s.count for s in response.suppressed)
    if withheld or response.dropped_results:
        page["omitted"] = {"suppressed": withheld, "dropped": response.dropped_results}
    coverage = coverage_rows(response)
    if coverage:
        page["coverage"] = coverage
    return page


def updated(result: Result) -> datetime | None:
    primary = result.primary
    return primary.event_time or primary.confirmed_at or primary.observed_at or primary.valid_from


def sorted_rows(rows: list[tuple[int, Result]], sort: dict[str, Any]) -> list[tuple[int, Result]]:
    key = sort.get("key") or "rank"
    descending = sort.get("dir") == "desc" or (not sort.get("dir") and key == "updated")
    by_rank = sorted(rows, key=lambda r: r[0])
    if key == "source":  # sorting is stable, so relevance breaks every tie
        return sorted(by_rank, key=lambda r: r[1].primary.source_id, reverse=descending)
    if key == "updated":  # an unknown time is not an old one: last either way
        known = [(r, t) for r in by_rank if (t := updated(r[1])) is not None]
        unknown = [r for r in by_rank if updated(r[1]) is None]
        return [r for r, _ in sorted(known, key=lambda pair: pair[1], reverse=descending)] + unknown
    return sorted(rows, key=lambda r: r[0], reverse=descending)


def result_item(rank: int, result: Result) -> dict[str, Any]:
    primary = result.primary
    item: dict[str, Any] = {
        "id": primary.locator,
        "cells": {
            "rank": str(rank),
            "title": line(primary.title.strip() or primary.local_part, 512),
            "source": line(primary.source_id, 512),
            "excerpt": line(primary.excerpt, 512),
        },
    }
    units = result.explanation.corroboration.independent_units
    if result.explanation.exact_promoted:
        item["status"] = {"label": "exact", "tone": "success"}
    elif units > 1:
        item["status"] = {"label": f"corroborated {units}", "tone": "info"}
    return item


def result_notices(response: QueryResponse) -> list[dict[str, str]]:
    from broker.render.ledger import degraded_entries

    notices: list[dict[str, str]] = []
    degraded = degraded_entries(response)
    if response.outcome == Outcome.failed:
        notices.append({"tone": "danger", "text": "every source recall asked failed: " + ", ".join(degraded)
                        if degraded else "every source recall asked failed, so an empty list would claim nothing"})
    elif degraded:
        asked = len(response.source_outcomes or []) or (
            response.source_summary.sources if response.source_summary else len(degraded))
        notices.append({"tone": "warning",
                        "text": f"{len(degraded)} of {asked} sources did not answer ({', '.join(degraded)})"})
    if response.suppressed:
        counts: dict[str, int] = {}
        for s in response.suppressed:
            counts[str(s.reason)] = counts.get(str(s.reason), 0) + s.count
        detail = ", ".join(f"{reason} {count}" for reason, count in counts.items())
        notices.append({"tone": "info", "text": f"{sum(counts.values())} records suppressed ({detail})"})
    if response.dropped_results:
        notices.append({"tone": "info", "text": f"{response.dropped_results} results dropped by the response budget"})
    notices += [{"tone": "info", "text": f"omitted for the response budget: {part}"} for part in response.omitted]
    return [{"tone": n["tone"], "text": line(n["text"], 200)} for n in notices[:MAX_NOTICES]]


def coverage_rows(response: QueryResponse) -> list[dict[str, Any]]:
    rows = []
    for report in response.source_outcomes or ():
        state = COVERAGE_STATE.get(report.outcome, "unhealthy")
        reason = report.reason or ""
        if report.outcome == SearchOutcome.partial and not reason:
            reason = PARTIAL_REASON
        elif state == "unhealthy" and not reason:
            reason = str(report.outcome)
        row: dict[str, Any] = {"source": line(report.source_id, 512), "state": state}
        if reason:
            row["reason"] = line(reason, 200)
        if report.elapsed_ns >= 1_000_000:
            row["elapsedMs"] = report.elapsed_ns // 1_000_000
        rows.append(row)
    if len(rows) <= MAX_COVERAGE_ROWS:
        return rows
    first = [r for r in rows if r["state"] != "answered"] + [r for r in rows if r["state"] == "answered"]
    return first[:MAX_COVERAGE_ROWS]


def _shortfall_text(listing: SourcesResponse, total: int) -> str:
    """Which sources keep the listing from ``ok``: those that cannot answer, then those
    that answer from less than they hold."""
    parts = []
    unusable = [row.source_id for row in listing.unusable]
    if unusable:
        parts.append(f"{len(unusable)} of {total} sources cannot answer ({', '.join(unusable)})")
    short = [row.source_id for row in listing.sources if row.status == SourceState.degraded]
    if short:
        parts.append(f"{len(short)} of {total} answer from less than they hold ({', '.join(short)})")
    return "; ".join(parts)


def health_label(source: dict[str, Any]) -> str:
    """The row's state as the core decided it, spelled for people."""
    return str(source["status"]).replace("_", " ")


def health_tone(source: dict[str, Any]) -> str:
    status = SourceState(source["status"])
    if status in (SourceState.disabled, SourceState.not_probed):
        return "neutral"
    return {SourceState.healthy: "success", SourceState.degraded: "warning"}.get(status, "danger")


def _rfc3339(value: str | None) -> str:
    if not value:
        return ""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return ""


def freshness(source: dict[str, Any]) -> str:
    health = source.get("health") or {}
    return _rfc3339(health.get("last_success_at")) or _rfc3339(health.get("checked_at"))


def source_document(profile: str, s: dict[str, Any]) -> dict[str, Any]:
    def fields(pairs: list[tuple[str, Any]]) -> list[dict[str, str]]:
        return [{"label": k, "value": line(str(v), 512)} for k, v in pairs if v not in (None, "", [], 0)]

    health = s.get("health") or {}
    health_pairs: list[tuple[str, Any]] = [("Status", health_label(s)), ("Error", s.get("error"))]
    if not s.get("probed"):
        health_pairs.append(("Probed", "no; the configuration says not to contact it"))
    elif health:
        health_pairs += [
            ("Coverage", health.get("coverage")),
            ("Checked", _rfc3339(health.get("checked_at"))),
            ("Last success", _rfc3339(health.get("last_success_at"))),
            ("Source watermark", health.get("source_watermark")),
            ("Index watermark", health.get("index_watermark")),
            ("Generation", health.get("index_generation")),
            ("Records", health.get("record_count")),
            ("Indexed", health.get("indexed_count")),
            ("Failed", health.get("failed_count")),
        ]
    capability_pairs: list[tuple[str, Any]] = [
        ("Adapter id", s.get("adapter_id")),
        ("Name", s.get("display_name")),
        ("Capabilities", ", ".join(s.get("capabilities") or [])),
        ("Query modes", ", ".join(s.get("query_modes") or [])),
        ("as_of", s.get("as_of_support")),
        ("Record types", ", ".join(s.get("record_types") or [])),
        ("Freshness policy", s.get("freshness_policy")),
    ]
    document: dict[str, Any] = {
        "identity": s["source_id"],
        "title": line(s["source_id"], 300),
        "subtitle": line(" · ".join(p for p in (s.get("adapter"), s.get("freshness_mode")) if p), 120),
        "status": {"label": health_label(s), "tone": health_tone(s)},
        "fields": fields([
            ("Adapter", s.get("adapter")),
            ("Profile", profile),
            ("Enabled", "yes" if s.get("enabled") else "no"),
            ("In profile", "yes" if s.get("in_profile") else "no"),
            ("Sensitivity", s.get("sensitivity")),
            ("Location", s.get("location")),
        ]),
    }
    sections = [
        {"title": title, "fields": body}
        for title, body in (("Health", fields(health_pairs)), ("Capabilities", fields(capability_pairs)))
        if body
    ]
    if sections:
        document["sections"] = sections
    return document


def encode(response: dict[str, Any]) -> bytes:
    return orjson.dumps(response) + b"\n"
