"""Run an adapter: framing, dispatch, concurrency, cancellation and deadlines.

An adapter author subclasses :class:`Adapter`, fills in the handlers, and calls
:func:`run`. Handlers may be ``async def`` or plain ``def``; plain ones run in a
worker thread so a slow search never blocks ``recall/cancel``.

What the server guarantees on the wire:

* requests are dispatched concurrently, each bounded by its own ``deadline``;
* ``recall/cancel`` (or the deadline) ends a request with error -32007 and
  its late result, if any, is discarded;
* a search/expand/health/refresh without a deadline is refused with -32602;
* params are validated before dispatch and results before the reply;
* unknown methods get -32601; anything thrown becomes -32603 with its message;
* ``recall/shutdown`` replies ``{}``, drains in-flight work, and the process exits 0;
* end of stdin cancels whatever is in flight.
"""

from __future__ import annotations

import inspect
import math
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import orjson

from adapter_sdk.protocol import (
    DEADLINE_METHODS,
    PARAMS_MODEL,
    RESULT_MODEL,
    ErrorCode,
    ExpandParams,
    ExpandResult,
    FrameError,
    FrameReader,
    HealthParams,
    HealthResult,
    InitializeParams,
    Manifest,
    Method,
    RefreshParams,
    RpcError,
    SearchParams,
    SearchResult,
    WireModel,
    WireValidationError,
    encode_frame,
    error_frame,
    negotiate_version,
    result_frame,
)

_NO_DEADLINE_BEFORE = datetime(1970, 1, 2, tzinfo=UTC)


class Adapter:
    """Base for adapters. Override the handlers your adapter supports.

    ``initialize`` must return a :class:`Manifest`; the server checks the
    requested version range before calling it and fills ``protocol_version``.
    """

    def initialize(self, params: InitializeParams) -> Manifest:
        raise NotImplementedError

    def search(self, params: SearchParams) -> SearchResult:
        raise RpcError(ErrorCode.method_not_found, 'unknown method "recall/search"')

    def expand(self, params: ExpandParams) -> ExpandResult:
        raise RpcError(ErrorCode.method_not_found, 'unknown method "recall/expand"')

    def health(self, params: HealthParams) -> HealthResult:
        raise NotImplementedError

    def refresh(self, params: RefreshParams) -> HealthResult:
        """Default for adapters without an index: report health unchanged."""
        return self.health(HealthParams(deadline=params.deadline))

    def shutdown(self) -> None:
        """Release resources before the process exits."""


def log(message: str) -> None:
    """Write one diagnostic line to stderr (the broker captures, never parses it)."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def run(adapter: Adapter) -> None:
    """Serve ``adapter`` on stdin/stdout until shutdown or end of input, then exit 0.

    The process exits at once: a handler thread abandoned by a cancel may still
    be running, and waiting for it would only make the broker wait too.
    """
    anyio.run(serve, adapter)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


async def serve(
    adapter: Adapter,
    receive: Callable[[], Awaitable[bytes]] | None = None,
    send: Callable[[bytes], None] | None = None,
) -> None:
    """Serve one connection. ``receive``/``send`` default to this process's stdio."""
    session = _Session(adapter, send or _write_stdout)
    reader = FrameReader(receive or await _stdin_receiver())
    await session.run(reader)


class _Session:
    def __init__(self, adapter: Adapter, send: Callable[[bytes], None]) -> None:
        self.adapter = adapter
        self._send = send
        self._lock = threading.Lock()
        self._in_flight: dict[bytes, anyio.CancelScope] = {}
        self._cancel_requested: set[bytes] = set()
        self._initialized = False
        self._closed = False

    def write(self, message: dict[str, Any]) -> None:
        with self._lock:
            if self._closed:
                return
            self._send(encode_frame(message))

    async def run(self, reader: FrameReader) -> None:
        async with anyio.create_task_group() as tasks:
            while True:
                try:
                    frame = await reader.read()
                except FrameError as exc:
                    self.write(error_frame(None, RpcError(ErrorCode.parse_error, str(exc))))
                    continue
                if frame is None:  # end of input: cancel what is in flight
                    self._closed = True
                    tasks.cancel_scope.cancel()
                    return
                method = frame.get("method")
                if method is None:
                    continue  # adapters never send requests, so responses are stray
                if method == Method.cancel:
                    self._cancel(frame.get("params"))
                elif method == Method.shutdown:
                    await self._shutdown(frame)
                    return
                elif "id" not in frame or frame["id"] is None:
                    continue  # unknown notification: ignored
                elif method == Method.initialize:
                    # handled inline: nothing else is dispatched before the handshake ends
                    key = orjson.dumps(frame["id"])
                    await self._handle(frame, key, anyio.CancelScope())
                else:
                    key = orjson.dumps(frame["id"])
                    scope = anyio.CancelScope()
                    self._in_flight[key] = scope
                    tasks.start_soon(self._handle, frame, key, scope)

    def _cancel(self, params: Any) -> None:
        if not isinstance(params, dict) or "id" not in params:
            return
        key = orjson.dumps(params["id"])
        scope = self._in_flight.get(key)
        if scope is not None:
            self._cancel_requested.add(key)
            scope.cancel()

    async def _shutdown(self, frame: dict[str, Any]) -> None:
        await _call(self.adapter.shutdown)
        if "id" in frame:
            self.write(result_frame(frame["id"], {}))
        self._closed = True  # nothing is written after the shutdown reply
        while self._in_flight:  # in-flight work drains, its results discarded
            await anyio.sleep(0.01)

    async def _handle(self, frame: dict[str, Any], key: bytes, scope: anyio.CancelScope) -> None:
        request_id = frame["id"]
        try:
            reply = await self._dispatch(frame, scope, key)
        except RpcError as exc:
            reply = error_frame(request_id, exc)
        except Exception as exc:  # an adapter bug is an internal error, not a crash
            reply = error_frame(
                request_id, RpcError(ErrorCode.internal_error, f"{type(exc).__name__}: {exc}")
            )
        finally:
            self._in_flight.pop(key, None)
            self._cancel_requested.discard(key)
        self.write(reply)

    async def _dispatch(
        self, frame: dict[str, Any], scope: anyio.CancelScope, key: bytes
    ) -> dict[str, Any]:
        request_id = frame["id"]
        method = frame["method"]
        params_model = PARAMS_MODEL.get(method)
        if params_model is None:
            raise RpcError(ErrorCode.method_not_found, f'unknown method "{method}"')
        try:
            params = params_model.model_validate(frame.get("params") or {})
        except WireValidationError as exc:
            raise RpcError(ErrorCode.invalid_params, _validation_message(exc)) from None

        if method == Method.initialize:
            assert isinstance(params, InitializeParams)
            version = negotiate_version(params.protocol_version_min, params.protocol_version_max)
            manifest = await _call(self.adapter.initialize, params)
            manifest = _checked_result(method, manifest)
            manifest["protocol_version"] = version
            self._initialized = True
            return result_frame(request_id, manifest)

        if not self._initialized:
            raise RpcError(ErrorCode.invalid_request, f"{method} before recall/initialize")

        deadline = getattr(params, "deadline", None)
        if method in DEADLINE_METHODS and (deadline is None or deadline < _NO_DEADLINE_BEFORE):
            raise RpcError(ErrorCode.invalid_params, "request carries no deadline")
        handlers: dict[str, Callable[..., Any]] = {
            Method.search: self.adapter.search,
            Method.expand: self.adapter.expand,
            Method.health: self.adapter.health,
            Method.refresh: self.adapter.refresh,
        }
        handler = handlers[method]

        if deadline is not None:
            remaining = (deadline - datetime.now(UTC)).total_seconds()
            scope.deadline = anyio.current_time() + max(remaining, 0.0)
        result: Any = None
        with scope:
            result = await _call(handler, params)
        if scope.cancelled_caught:
            if key in self._cancel_requested:
                raise RpcError(ErrorCode.deadline_exceeded, "request cancelled")
            raise RpcError(ErrorCode.deadline_exceeded, "deadline exceeded")
        return result_frame(request_id, _checked_result(method, result))


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)


def _checked_result(method: str, result: Any) -> dict[str, Any]:
    model = RESULT_MODEL[method]
    try:
        if isinstance(result, model):
            return result.to_wire()
        if isinstance(result, WireModel):
            result = result.to_wire()
        return model.model_validate(result).to_wire()
    except WireValidationError as exc:
        raise RpcError(
            ErrorCode.internal_error, f"adapter produced an invalid {method} result: "
            + _validation_message(exc)
        ) from None


def _validation_message(exc: WireValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "params"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def _write_stdout(data: bytes) -> None:
    stream = sys.stdout.buffer
    stream.write(data)
    stream.flush()


async def _stdin_receiver() -> Callable[[], Awaitable[bytes]]:
    """Pump stdin from a daemon thread so a pending read never blocks exit."""
    send, receive = anyio.create_memory_object_stream[bytes](math.inf)
    token = anyio.lowlevel.current_token()
    fd = sys.stdin.fileno()

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            try:
                anyio.from_thread.run_sync(send.send_nowait, chunk, token=token)
            except Exception:
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="stdin-pump", daemon=True).start()

    async def next_chunk() -> bytes:
        try:
            return await receive.receive()
        except anyio.EndOfStream:
            return b""

    return next_chunk
