"""A read-only Gmail REST API v1 client over httpx.

Only GET requests are ever sent. Every call is bounded by a deadline on
anyio's clock: a request that cannot finish in time raises DeadlineReached.
A 401 refreshes the token once and retries; 429, rate-limit 403s and 5xx are
retried after ``Retry-After`` (or a short backoff) while time remains. Every
request asks the token store for its token, so a token file replaced, expired
or removed decides the very next request.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

import anyio
import anyio.to_thread
import httpx

from adapters.gmail.credentials import TokenStore
from adapters.gmail.errors import (
    AuthorizationError,
    DeadlineReached,
    RateLimited,
    ServiceUnavailable,
    ThreadNotFound,
)

QueryParams = list[tuple[str, str | int | float | bool | None]]
MAX_RETRIES = 3
BACKOFF_SECONDS = 0.25
METADATA_HEADERS = ("Subject", "From", "To", "Date")
_RATE_LIMIT_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}


class GmailClient:
    def __init__(self, api_base: str, tokens: TokenStore, request_timeout: float) -> None:
        self.api_base = api_base
        self._tokens = tokens
        self._timeout = request_timeout
        self._http = httpx.AsyncClient(base_url=f"{api_base}/gmail/v1/users/me/")
        self._token_lock = anyio.Lock()
        self.requests_sent = 0
        self.retries = 0

    async def aclose(self) -> None:
        await self._http.aclose()

    async def profile(self, deadline: float) -> dict[str, Any]:
        return await self._get("profile", [], deadline)

    async def list_threads(
        self, query: str, max_results: int, page_token: str | None, deadline: float
    ) -> dict[str, Any]:
        params: QueryParams = [("q", query), ("maxResults", str(max_results))]
        if page_token:
            params.append(("pageToken", page_token))
        return await self._get("threads", params, deadline)

    async def thread(self, thread_id: str, form: str, deadline: float) -> dict[str, Any]:
        params: QueryParams = [("format", form)]
        if form == "metadata":
            params += [("metadataHeaders", name) for name in METADATA_HEADERS]
        return await self._get(f"threads/{quote(thread_id, safe='')}", params, deadline)

    async def _access_token(self, rejected: str | None) -> str:
        """The token file's current token: a ``stat`` when nothing changed; reading the
        file or refreshing the token (blocking I/O) runs in a worker thread, one at a time."""
        ready = self._tokens.ready_token(rejected)
        if ready is not None:
            return ready
        async with self._token_lock:
            return await anyio.to_thread.run_sync(self._tokens.access_token, rejected)

    async def _get(self, path: str, params: QueryParams, deadline: float) -> Any:
        rejected: str | None = None
        refreshed = False
        attempt = 0
        while True:
            token = await self._access_token(rejected)
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                raise DeadlineReached("no time left for a Gmail request")
            self.requests_sent += 1
            try:
                response = await self._http.get(
                    path, params=params, headers={"Authorization": f"Bearer {token}"},
                    timeout=min(remaining, self._timeout),
                )
            except httpx.TimeoutException:
                if anyio.current_time() >= deadline - 0.01:
                    raise DeadlineReached("Gmail did not answer before the deadline") from None
                raise ServiceUnavailable(
                    f"Gmail at {self.api_base} did not answer within {self._timeout:g}s"
                ) from None
            except httpx.HTTPError as exc:
                raise ServiceUnavailable(
                    f"cannot reach Gmail at {self.api_base} ({type(exc).__name__})"
                ) from None
            status = response.status_code
            if status == 200:
                try:
                    return response.json()
                except ValueError:
                    raise ServiceUnavailable(f"Gmail answered {path} with non-JSON") from None
            if status == 401:
                if refreshed:
                    raise AuthorizationError("Gmail rejected the access token even after a refresh")
                refreshed, rejected = True, token
                continue
            reason = _error_reason(response)
            if status == 403 and reason not in _RATE_LIMIT_REASONS:
                raise AuthorizationError(f"Gmail refused access ({reason or 'forbidden'})")
            if status == 404:
                raise ThreadNotFound(f"Gmail has no {path}")
            if status in (403, 429) or status >= 500:
                attempt += 1
                wait = _retry_after(response)
                wait = BACKOFF_SECONDS * 2 ** (attempt - 1) if wait is None else wait
                if attempt > MAX_RETRIES or anyio.current_time() + wait >= deadline:
                    if status in (403, 429):
                        hint = f"; Gmail asked to retry after {wait:g}s" if wait else ""
                        raise RateLimited(f"Gmail rate limit reached{hint}")
                    raise ServiceUnavailable(f"Gmail answered HTTP {status} for {_kind(path)}")
                self.retries += 1
                await anyio.sleep(wait)
                continue
            raise ServiceUnavailable(f"Gmail answered HTTP {status} for {_kind(path)}")


def _kind(path: str) -> str:
    return "a thread" if path.startswith("threads/") else path


def _error_reason(response: httpx.Response) -> str | None:
    try:
        error = response.json().get("error", {})
        details = error.get("errors") or [{}]
        reason = details[0].get("reason") or error.get("status")
    except (ValueError, AttributeError, IndexError):
        return None
    return str(reason) if reason else None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None
