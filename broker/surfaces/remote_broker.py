"""A broker reached over HTTP (``--server URL``): the :class:`broker.api.BrokerAPI` operations.

Queries post the complete tier but declare the caller's own surface, so the
server shapes the response exactly as the in-process broker would and the CLI
prints the same thing. HTTP errors come back as the same error types.

The client is the standard library's ``http.client`` in a worker thread: it
imports in a few milliseconds, which is the point of asking a warm server.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import orjson

from adapter_sdk.wire import WireValidationError
from broker.api import BrokerAPI
from broker.contracts import (
    ExpandRequest,
    ExpandResponse,
    QueryRequest,
    QueryResponse,
    RefreshRequest,
    RefreshResponse,
    SourcesResponse,
)
from broker.errors import RecallError, UsageError
from broker.surfaces.error_codes import raised_for

if TYPE_CHECKING:
    from broker.doctor import Diagnosis
    from broker.refresh import Progress

CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 600.0


class RemoteBroker(BrokerAPI):
    """``async with RemoteBroker(url, token=..., profile=...) as broker``."""

    def __init__(self, url: str, *, token: str | None = None, profile: str = "") -> None:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"--server {url!r}: expected a URL such as http://127.0.0.1:8765")
        self.url = url.rstrip("/")
        self.profile = profile
        self._headers = {"Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"

    async def __aenter__(self) -> RemoteBroker:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    async def query(self, request: QueryRequest) -> QueryResponse:
        body = request.to_json()
        body["tier"] = "complete"
        data = await self._call("POST", "/v1/query", body, ok=(200, 206, 503))
        return QueryResponse.model_validate(data)

    async def expand(self, request: ExpandRequest) -> ExpandResponse:
        data = await self._call("POST", "/v1/expand", request.to_json(), ok=(200,))
        return ExpandResponse.model_validate(data)

    async def refresh(self, request: RefreshRequest, progress: Progress | None = None) -> RefreshResponse:
        data = await self._call("POST", "/v1/refresh", request.to_json(), ok=(200, 206, 503))
        return RefreshResponse.model_validate(data)

    async def sources(self, profile: str = "") -> SourcesResponse:
        params = {"profile": profile} if profile else None
        data = await self._call("GET", "/v1/sources", None, ok=(200, 206, 503), params=params)
        try:
            return SourcesResponse.model_validate(data)
        except WireValidationError as exc:
            raise RecallError(f"server {self.url} answered /v1/sources with something other than a listing: {exc}") from None

    async def doctor(self, profile: str = "") -> Diagnosis:
        from broker.doctor import from_json

        params = {"profile": profile} if profile else None
        data = await self._call("GET", "/v1/doctor", None, ok=(200, 206, 503), params=params)
        try:
            return from_json(data if isinstance(data, dict) else {})
        except ValueError as exc:
            raise RecallError(f"server {self.url} answered /v1/doctor with something other than a diagnosis: {exc}") from None

    async def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        *,
        ok: tuple[int, ...],
        params: dict[str, str] | None = None,
    ) -> Any:
        try:
            status, raw = await anyio.to_thread.run_sync(self._exchange, method, path, body, params)
        except OSError as exc:
            raise RecallError(f"cannot reach recall server at {self.url}: {exc}") from None
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise RecallError(
                f"server {self.url} answered {path} with HTTP {status} and no JSON body"
            ) from None
        if status in ok and not (isinstance(data, dict) and "error" in data):
            return data
        raise remote_error(status, data, self.url)

    def _exchange(
        self, method: str, path: str, body: dict[str, Any] | None, params: dict[str, str] | None
    ) -> tuple[int, bytes]:
        import http.client
        from urllib.parse import urlencode, urlsplit

        parts = urlsplit(self.url)
        connection_type = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        connection = connection_type(parts.hostname or "", parts.port, timeout=CONNECT_TIMEOUT)
        target = parts.path.rstrip("/") + path + (f"?{urlencode(params)}" if params else "")
        headers = dict(self._headers)
        payload = None
        if body is not None:
            payload = orjson.dumps(body)
            headers["Content-Type"] = "application/json"
        try:
            connection.connect()
            if connection.sock is not None:
                connection.sock.settimeout(READ_TIMEOUT)
            connection.request(method, target, body=payload, headers=headers)
            reply = connection.getresponse()
            return reply.status, reply.read()
        except http.client.HTTPException as exc:
            raise OSError(f"{type(exc).__name__}: {exc}") from None
        finally:
            connection.close()


def remote_error(status: int, data: Any, url: str) -> RecallError:
    """The error the in-process broker would have raised for this HTTP error body."""
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return RecallError(f"server {url} answered HTTP {status} without an error body")
    code = str(error.get("code", ""))
    message = str(error.get("message", ""))
    if code == "unauthorized":
        return UsageError(f"{message} (pass --auth-token-env ENV naming a variable that holds it)")
    raised = raised_for(code, message)
    if raised is not None:
        return raised
    return RecallError(f"server {url}: {message} ({code})" if message else f"server {url}: HTTP {status}")
