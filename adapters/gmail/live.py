"""API mode: each request asks Gmail itself, pointer-first.

Search lists threads with Gmail's own query (following ``nextPageToken``),
then reads each thread's headers (``format=metadata``) concurrently until a
soft deadline shortly before the request's own. Bodies are fetched only by
expand. A cut listing or unread threads make the answer ``partial``.
"""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import anyio

from adapter_sdk import (
    ErrorCode,
    ExpandParams,
    ExpandResult,
    HealthParams,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
)
from adapters.gmail import render, threads
from adapters.gmail.bodies import payload_text
from adapters.gmail.client import GmailClient
from adapters.gmail.credentials import TokenStore
from adapters.gmail.errors import (
    AuthorizationError,
    DeadlineReached,
    GmailError,
    RateLimited,
    ServiceUnavailable,
    ThreadNotFound,
)
from adapters.gmail.query import MailQuery, gmail_search
from adapters.gmail.settings import GmailConfig

MAX_PAGE_SIZE = 100
LISTING_SHARE = 0.5


class ApiSource:
    def __init__(self, config: GmailConfig) -> None:
        self.config = config
        self.tokens = TokenStore(config.token_file, config.token_uri, config.request_timeout)
        self.client = GmailClient(config.api_base, self.tokens, config.request_timeout)

    # -- search ------------------------------------------------------------

    async def search(self, params: SearchParams, query: MailQuery, limit: int) -> SearchResult:
        started = time.perf_counter()
        soft = _soft_deadline(params.deadline)
        q = gmail_search(query, self.config.query_prefix, params.filters.since,
                         params.filters.until, params.as_of)
        diagnostics: dict[str, Any] = {"transport": "api", "query_mode": "lexical",
                                       "gmail_query": q, "query_term_count": len(query.terms)}
        if query.removed:
            diagnostics["query_terms_removed"] = list(query.removed)
        if params.as_of is not None:
            diagnostics["as_of"] = "filter_before_instant"
        listed, cut, pages = await self._list(q, limit, soft, not query.text)
        diagnostics.update(pages=pages, threads_listed=len(listed))
        wanted = list(dict.fromkeys([*query.thread_ids, *listed]))
        read, problems = await self._read_metadata(wanted, soft)
        # a named id Gmail does not hold is simply not a hit
        problems.pop(ThreadNotFound.reason, None)
        unread = sum(problems.values())
        diagnostics.update(threads_read=len(read), threads_unread=unread,
                           requests=self.client.requests_sent, retries=self.client.retries)
        if not read and (unread or cut):
            raise _no_answer(problems, cut)

        ordered = [tid for tid in query.thread_ids if tid in read]
        ordered += [tid for tid in listed if tid in read and tid not in ordered]
        now = datetime.now(UTC)
        reasons = [reason for reason, count in problems.items() if count]
        if cut:
            reasons.insert(0, "deadline_cut_listing")
        outcome = SearchOutcome.partial if reasons else SearchOutcome.success
        if reasons:
            diagnostics["coverage_reason"] = ", ".join(reasons)
        # Gmail's order (newest first) is kept, but a thread whose subject and senders hold
        # none of the terms (a body-only match, relevance 0) goes after those that do
        shown = []
        for tid in ordered:
            summary = read[tid] if params.as_of is None else read[tid].as_of(params.as_of)
            if summary is not None:
                relevance = threads.header_relevance(summary, query.terms)
                exact = tid in query.thread_ids
                shown.append((not exact, relevance == 0, summary, relevance, exact))
        shown.sort(key=lambda row: row[:2])
        candidates = [
            threads.candidate(
                summary, rank=rank, source_id=self.config.source_id, terms=query.terms,
                relevance=relevance, exact=exact, observed_at=now,
                confirmed=outcome == SearchOutcome.success,
            )
            for rank, (_, _, summary, relevance, exact) in enumerate(shown[:limit], start=1)
        ]
        diagnostics["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return SearchResult(candidates=candidates, outcome=outcome, diagnostics=diagnostics)

    async def _list(
        self, q: str, limit: int, soft: float, empty: bool
    ) -> tuple[list[str], bool, int]:
        """Thread ids in Gmail's order; ``cut`` when the deadline stopped pagination."""
        listed: list[str] = []
        page_token: str | None = None
        pages = 0
        if empty:
            return listed, False, pages
        # pages after the first may use only part of the time: reading the threads needs the rest
        later_pages = anyio.current_time() + (soft - anyio.current_time()) * LISTING_SHARE
        while len(listed) < limit:
            try:
                page = await _denied_or(self.client.list_threads(
                    q, min(limit - len(listed), MAX_PAGE_SIZE), page_token,
                    later_pages if pages else soft))
            except DeadlineReached:
                return listed, True, pages
            pages += 1
            for entry in page.get("threads") or []:
                if entry.get("id") and entry["id"] not in listed:
                    listed.append(str(entry["id"]))
            page_token = page.get("nextPageToken")
            if not page_token:
                break
        return listed[:limit], False, pages

    async def _read_metadata(
        self, thread_ids: list[str], soft: float
    ) -> tuple[dict[str, threads.ThreadSummary], dict[str, int]]:
        read: dict[str, threads.ThreadSummary] = {}
        problems: dict[str, int] = {}
        limiter = anyio.Semaphore(self.config.fetch_concurrency)
        denied: list[AuthorizationError] = []

        async def fetch(thread_id: str) -> None:
            async with limiter:
                try:
                    read[thread_id] = summary_from_api(
                        await self.client.thread(thread_id, "metadata", soft))
                except AuthorizationError as exc:
                    denied.append(exc)
                except GmailError as exc:
                    problems[exc.reason] = problems.get(exc.reason, 0) + 1

        async with anyio.create_task_group() as group:
            for thread_id in thread_ids:
                group.start_soon(fetch, thread_id)
        if denied:
            raise _denied(denied[0])
        return read, problems

    # -- expand ------------------------------------------------------------

    async def expand(self, params: ExpandParams, thread_id: str) -> ExpandResult:
        deadline = _soft_deadline(params.deadline)
        form = "metadata" if params.detail.value == "summary" else "full"
        try:
            thread = await _denied_or(self.client.thread(thread_id, form, deadline))
        except ThreadNotFound:
            raise RpcError(
                ErrorCode.locator_expired,
                f"Gmail thread {thread_id} no longer exists (deleted, or not in this account)",
            ) from None
        except DeadlineReached:
            raise RpcError(ErrorCode.deadline_exceeded, "Gmail did not answer in time") from None
        except GmailError as exc:
            raise RpcError(ErrorCode.source_unavailable, str(exc)) from None
        summary = summary_from_api(thread)
        if not summary.messages:
            raise RpcError(ErrorCode.locator_expired, f"Gmail thread {thread_id} has no messages")
        bodies = [payload_text(m.get("payload") or {}) for m in thread.get("messages") or []]
        shown = render.render(summary, bodies, params.detail, params.budget_bytes)
        return ExpandResult(
            content=shown.content, truncated=shown.truncated,
            truncation_boundary=shown.boundary, source_revision=threads.revision(summary),
            provenance=f"gmail thread {thread_id} ({len(summary.messages)} messages)",
        )

    # -- health ------------------------------------------------------------

    async def health(self, params: HealthParams) -> HealthResult:
        checked_at = datetime.now(UTC)
        diagnostics: dict[str, Any] = {"transport": "api", "mode": "api",
                                       "query_prefix": self.config.query_prefix}
        try:
            profile = await self.client.profile(_soft_deadline(params.deadline))
        except AuthorizationError as exc:
            return _failed_health(HealthStatus.denied, checked_at, diagnostics, str(exc))
        except DeadlineReached:
            raise RpcError(ErrorCode.deadline_exceeded, "Gmail did not answer in time") from None
        except GmailError as exc:
            return _failed_health(HealthStatus.unavailable, checked_at, diagnostics, str(exc))
        email = str(profile.get("emailAddress", "")).lower()
        diagnostics["store_identity"] = "gmail:" + hashlib.sha256(email.encode()).hexdigest()[:16]
        if self.config.account and email != self.config.account:
            return _failed_health(
                HealthStatus.denied, checked_at, diagnostics,
                f"the token belongs to another account than {self.config.account}; "
                f"run `recall-gmail auth --client-secrets FILE --token {self.config.token_file}` "
                "signed in as that account",
            )
        threads_total = int(profile.get("threadsTotal") or 0)
        watermark = (f"threads={threads_total} messages={int(profile.get('messagesTotal') or 0)}"
                     f" history={profile.get('historyId', '')}")
        return HealthResult(
            status=HealthStatus.healthy, checked_at=checked_at, coverage=IndexCoverage.complete,
            last_success_at=checked_at, source_watermark=watermark, record_count=threads_total,
            diagnostics=diagnostics,
        )

    async def close(self) -> None:
        await self.client.aclose()


def summary_from_api(thread: dict[str, Any]) -> threads.ThreadSummary:
    messages = []
    for message in thread.get("messages") or []:
        headers = {
            str(h.get("name", "")).lower(): str(h.get("value", ""))
            for h in (message.get("payload") or {}).get("headers") or []
        }
        messages.append(threads.MessageHeader(
            message_id=str(message.get("id", "")),
            sender=headers.get("from", ""),
            recipients=headers.get("to", ""),
            subject=headers.get("subject", ""),
            date=_message_date(message, headers.get("date")),
            labels=tuple(message.get("labelIds") or ()),
        ))
    messages.sort(key=lambda m: m.date or datetime.min.replace(tzinfo=UTC))
    return threads.ThreadSummary(str(thread.get("id", "")), tuple(messages))


def _message_date(message: dict[str, Any], header: str | None) -> datetime | None:
    internal = message.get("internalDate")
    if internal is not None:
        try:
            return datetime.fromtimestamp(int(internal) / 1000, UTC)
        except (TypeError, ValueError, OverflowError):
            pass
    if header:
        try:
            parsed = parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _soft_deadline(deadline: datetime) -> float:
    """The anyio-clock instant to stop starting work: leaves time to build the reply."""
    remaining = (deadline - datetime.now(UTC)).total_seconds()
    margin = min(max(remaining * 0.1, 0.05), 0.5)
    return anyio.current_time() + remaining - margin


async def _denied_or(awaitable: Any) -> Any:
    try:
        return await awaitable
    except AuthorizationError as exc:
        raise _denied(exc) from None
    except (RateLimited, ServiceUnavailable) as exc:
        raise RpcError(ErrorCode.source_unavailable, str(exc),
                       {"reason": exc.reason}) from None


def _denied(exc: AuthorizationError) -> RpcError:
    return RpcError(ErrorCode.source_denied, str(exc), {"reason": "denied"})


def _no_answer(problems: dict[str, int], cut: bool) -> RpcError:
    if problems.get(RateLimited.reason):
        return RpcError(ErrorCode.source_unavailable,
                        "Gmail rate limit reached before any thread could be read; retry later",
                        {"reason": RateLimited.reason})
    if problems.get(ServiceUnavailable.reason):
        return RpcError(ErrorCode.source_unavailable, "Gmail failed to return any thread",
                        {"reason": ServiceUnavailable.reason})
    return RpcError(ErrorCode.deadline_exceeded,
                    "the deadline passed before any Gmail thread was read")


def _failed_health(
    status: HealthStatus, checked_at: datetime, diagnostics: dict[str, Any], reason: str
) -> HealthResult:
    return HealthResult(status=status, checked_at=checked_at, coverage=IndexCoverage.unknown,
                        diagnostics={**diagnostics, "reason": reason})
