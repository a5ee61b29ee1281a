"""Run an adapter: framing, dispatch, concurrency, cancellation and deadlines.

An adapter author subclasses :class:`Adapter`, fills in the handlers, and calls
:func:`run`. Handlers may be ``async def`` or plain ``def``; plain ones run in a
worker thread so a slow search never blocks ``recall/cancel``.

What the server guarantees on the wire:

* requests are dispatched concurrently, each bounded by its own ``deadline``;
* ``recall/cancel`` (or the deadline) ends a request with error -32007 and
  its late result, if any, is discarded; a handler that wants to stop its
  work early (rather than finish it for nobody) asks
  :func:`current_cancellation` and may register a callback on it;
* a search/expand/health/refresh without a deadline is refused with -32602;
* params are validated before dispatch and results before the reply; a search
  answered as plain data is checked candidate by candidate, and one that does
  not fit is passed on as it is, for the broker to drop, count and name while
  the rest of the answer stands;
* unknown methods get -32601; anything thrown becomes -32603 with its message;
* ``recall/shutdown`` replies ``{}``, drains in-flight work, and the process exits 0;
* end of stdin cancels whatever is in flight.

An adapter whose handlers are all plain ``def`` is served by threads alone
(:class:`_ThreadedSession`): importing and starting an event loop costs more
CPU than a whole cold query's handlers, and the process starts on every CLI
query. An adapter with any ``async def`` handler runs under anyio
(:class:`_Session`). Both give the same replies on the wire.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from adapter_sdk.collector import keep_what_is_built
from adapter_sdk.protocol import (
    DEADLINE_METHODS,
    PARAMS_MODEL,
    RESULT_MODEL,
    Candidate,
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
from adapter_sdk.workers import Workers

if TYPE_CHECKING:
    import anyio

_NO_DEADLINE_BEFORE = datetime(1970, 1, 2, tzinfo=UTC)
_HANDLERS = ("initialize", "search", "expand", "health", "refresh", "shutdown")


class Cancellation:
    """Whether the caller of one request has given up on it (``recall/cancel``, or its
    deadline passed). Its reply is already sent; the handler may stop its work."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requested = False
        self._callbacks: list[Callable[[], None]] = []

    @property
    def requested(self) -> bool:
        return self._requested

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` (from another thread) when the request is cancelled, at once
        if it already is; returns a function that unregisters it."""
        with self._lock:
            if not self._requested:
                self._callbacks.append(callback)
                return lambda: self._forget(callback)
        callback()
        return lambda: None

    def cancel(self) -> None:
        with self._lock:
            if self._requested:
                return
            self._requested = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def _forget(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


_NEVER_CANCELLED = Cancellation()
_serving = threading.local()
# Each request is answered by one thread and its handler run by another (which the
# answering one stops waiting for at the deadline); both are reused across requests.
_WORKERS = Workers("recall-request")


def current_cancellation() -> Cancellation:
    """The cancellation of the request the calling handler thread is serving (one that
    is never requested outside a request)."""
    cancellation: Cancellation = getattr(_serving, "cancellation", _NEVER_CANCELLED)
    return cancellation


def _serve_with(cancellation: Cancellation, fn: Callable[..., Any], *args: Any) -> Any:
    _serving.cancellation = cancellation
    try:
        return fn(*args)
    finally:
        _serving.cancellation = _NEVER_CANCELLED


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
    if any(inspect.iscoroutinefunction(getattr(adapter, name)) for name in _HANDLERS):
        import anyio

        anyio.run(serve, adapter)
    else:
        _ThreadedSession(adapter, _write_stdout).run(_blocking_reader(sys.stdin.fileno()))
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
        self._cancellations: dict[bytes, Cancellation] = {}
        self._cancel_requested: set[bytes] = set()
        self._initialized = False
        self._closed = False

    def write(self, message: dict[str, Any]) -> None:
        with self._lock:
            if self._closed:
                return
            self._send(encode_frame(message))

    async def run(self, reader: FrameReader) -> None:
        import anyio

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
            cancellation = self._cancellations.get(key)
            if cancellation is not None:
                cancellation.cancel()

    async def _shutdown(self, frame: dict[str, Any]) -> None:
        import anyio

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
            self._cancellations.pop(key, None)
            self._cancel_requested.discard(key)
        self.write(reply)

    async def _dispatch(
        self, frame: dict[str, Any], scope: anyio.CancelScope, key: bytes
    ) -> dict[str, Any]:
        import anyio

        request_id = frame["id"]
        method, params = _validated_params(frame)
        if method == Method.initialize:
            assert isinstance(params, InitializeParams)
            version = negotiate_version(params.protocol_version_min, params.protocol_version_max)
            manifest = _manifest(await _call(self.adapter.initialize, params), version)
            self._initialized = True
            keep_what_is_built()  # the adapter's start-up lives as long as the process
            return result_frame(request_id, manifest)

        handler, deadline = _handler(self.adapter, method, params, self._initialized)
        if deadline is not None:
            scope.deadline = anyio.current_time() + max(_seconds_left(deadline), 0.0)
        result: Any = None
        cancellation = self._cancellations.setdefault(key, Cancellation())
        with scope:
            result = await _call(handler, params, cancellation=cancellation)
        if scope.cancelled_caught:
            cancellation.cancel()
            if key in self._cancel_requested:
                raise RpcError(ErrorCode.deadline_exceeded, "request cancelled")
            raise RpcError(ErrorCode.deadline_exceeded, "deadline exceeded")
        return result_frame(request_id, _checked_result(method, result))


class _ThreadedSession:
    """The same protocol served by threads: the caller's thread reads frames and
    runs the handshake; every other request gets a thread that waits on a
    handler thread, so a cancel or deadline answers at once and the late result
    is discarded."""

    def __init__(self, adapter: Adapter, send: Callable[[bytes], None]) -> None:
        self.adapter = adapter
        self._send = send
        self._lock = threading.Lock()
        self._idle = threading.Condition()  # guards _in_flight; notified as it shrinks
        self._in_flight: dict[bytes, _Request] = {}
        self._initialized = False
        self._closed = False

    def write(self, message: dict[str, Any]) -> None:
        with self._lock:
            if self._closed:
                return
            self._send(encode_frame(message))

    def run(self, next_frame: Callable[[], dict[str, Any] | None]) -> None:
        while True:
            try:
                frame = next_frame()
            except FrameError as exc:
                self.write(error_frame(None, RpcError(ErrorCode.parse_error, str(exc))))
                continue
            if frame is None:  # end of input: what is in flight is abandoned unanswered
                with self._lock:
                    self._closed = True
                return
            method = frame.get("method")
            if method is None:
                continue  # adapters never send requests, so responses are stray
            if method == Method.cancel:
                self._cancel(frame.get("params"))
            elif method == Method.shutdown:
                self._shutdown(frame)
                return
            elif "id" not in frame or frame["id"] is None:
                continue  # unknown notification: ignored
            elif method == Method.initialize:
                # handled inline: nothing else is dispatched before the handshake ends
                self.write(_reply(frame["id"], self._initialize, frame))
            else:
                request = _Request(frame)
                with self._idle:
                    self._in_flight[request.key] = request
                _WORKERS.run(self._answer, request)

    def _initialize(self, frame: dict[str, Any]) -> dict[str, Any]:
        _, params = _validated_params(frame)
        assert isinstance(params, InitializeParams)
        version = negotiate_version(params.protocol_version_min, params.protocol_version_max)
        manifest = _manifest(self.adapter.initialize(params), version)
        self._initialized = True
        keep_what_is_built()  # the adapter's start-up lives as long as the process
        return result_frame(frame["id"], manifest)

    def _answer(self, request: _Request) -> None:
        try:
            reply = _reply(request.frame["id"], self._dispatch, request)
        finally:
            with self._idle:
                self._in_flight.pop(request.key, None)
                self._idle.notify_all()
        self.write(reply)

    def _dispatch(self, request: _Request) -> dict[str, Any]:
        method, params = _validated_params(request.frame)
        handler, deadline = _handler(self.adapter, method, params, self._initialized)
        result = request.outcome(handler, params, deadline)
        return result_frame(request.frame["id"], _checked_result(method, result))

    def _cancel(self, params: Any) -> None:
        if not isinstance(params, dict) or "id" not in params:
            return
        with self._idle:
            request = self._in_flight.get(orjson.dumps(params["id"]))
        if request is not None:
            request.cancel()

    def _shutdown(self, frame: dict[str, Any]) -> None:
        self.adapter.shutdown()
        if "id" in frame:
            self.write(result_frame(frame["id"], {}))
        with self._lock:
            self._closed = True  # nothing is written after the shutdown reply
        with self._idle:  # in-flight work drains, its results discarded
            self._idle.wait_for(lambda: not self._in_flight)


class _Request:
    """One request in flight: its handler's outcome, or why it will never be used."""

    def __init__(self, frame: dict[str, Any]) -> None:
        self.frame = frame
        self.key = orjson.dumps(frame["id"])
        self._settled = threading.Event()  # the handler returned, or a cancel arrived
        self._cancelled = False
        self.cancellation = Cancellation()
        self._result: Any = None
        self._error: BaseException | None = None

    def cancel(self) -> None:
        self._cancelled = True
        self._settled.set()
        self.cancellation.cancel()

    def outcome(self, handler: Callable[..., Any], params: WireModel, deadline: datetime | None) -> Any:
        """Run ``handler`` in its own thread; its result, unless cancelled or out of time first."""
        timeout = None if deadline is None else _seconds_left(deadline)
        if not self._cancelled and (timeout is None or timeout > 0):
            _WORKERS.run(self._run, handler, params)
            self._settled.wait(timeout)
        if self._cancelled:
            raise RpcError(ErrorCode.deadline_exceeded, "request cancelled")
        if not self._settled.is_set():
            self.cancellation.cancel()
            raise RpcError(ErrorCode.deadline_exceeded, "deadline exceeded")
        if self._error is not None:
            raise self._error
        return self._result

    def _run(self, handler: Callable[..., Any], params: WireModel) -> None:
        try:
            self._result = _serve_with(self.cancellation, handler, params)
        except BaseException as exc:  # handed to the waiting thread, which reports it
            self._error = exc
        self._settled.set()


def _reply(request_id: Any, build: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """``build(*args)``'s reply frame, or the error frame for what it raised."""
    try:
        return build(*args)
    except RpcError as exc:
        return error_frame(request_id, exc)
    except Exception as exc:  # an adapter bug is an internal error, not a crash
        return error_frame(
            request_id, RpcError(ErrorCode.internal_error, f"{type(exc).__name__}: {exc}")
        )


def _validated_params(frame: dict[str, Any]) -> tuple[str, WireModel]:
    method = frame["method"]
    params_model = PARAMS_MODEL.get(method)
    if params_model is None:
        raise RpcError(ErrorCode.method_not_found, f'unknown method "{method}"')
    try:
        return method, params_model.model_validate(frame.get("params") or {})
    except WireValidationError as exc:
        raise RpcError(ErrorCode.invalid_params, _validation_message(exc)) from None


def _manifest(manifest: Any, version: int) -> dict[str, Any]:
    wire = _checked_result(Method.initialize, manifest)
    wire["protocol_version"] = version
    return wire


def _handler(
    adapter: Adapter, method: str, params: WireModel, initialized: bool
) -> tuple[Callable[..., Any], datetime | None]:
    """The handler for a request after the handshake, and the request's deadline."""
    if not initialized:
        raise RpcError(ErrorCode.invalid_request, f"{method} before recall/initialize")
    deadline = getattr(params, "deadline", None)
    if method in DEADLINE_METHODS and (deadline is None or deadline < _NO_DEADLINE_BEFORE):
        raise RpcError(ErrorCode.invalid_params, "request carries no deadline")
    handlers: dict[str, Callable[..., Any]] = {
        Method.search: adapter.search,
        Method.expand: adapter.expand,
        Method.health: adapter.health,
        Method.refresh: adapter.refresh,
    }
    return handlers[method], deadline


def _seconds_left(deadline: datetime) -> float:
    return (deadline - datetime.now(UTC)).total_seconds()


async def _call(fn: Callable[..., Any], *args: Any, cancellation: Cancellation | None = None) -> Any:
    import anyio.to_thread

    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    return await anyio.to_thread.run_sync(
        _serve_with, cancellation or _NEVER_CANCELLED, fn, *args, abandon_on_cancel=True
    )


def _checked_result(method: str, result: Any) -> dict[str, Any]:
    model = RESULT_MODEL[method]
    try:
        if isinstance(result, model):
            return result.to_wire()
        if isinstance(result, WireModel):
            result = result.to_wire()
        if method == Method.search and isinstance(result, dict) and isinstance(result.get("candidates"), list):
            return _checked_search(result)
        return model.model_validate(result).to_wire()
    except WireValidationError as exc:
        raise RpcError(
            ErrorCode.internal_error, f"adapter produced an invalid {method} result: "
            + _validation_message(exc)
        ) from None


def _checked_search(result: dict[str, Any]) -> dict[str, Any]:
    """A search answer given as plain data: its envelope checked whole, each candidate on
    its own; one that does not fit goes as it is (the broker drops and names it)."""
    wire: dict[str, Any] = SearchResult.model_validate({**result, "candidates": []}).to_wire()
    checked = []
    for candidate in result["candidates"]:
        try:
            checked.append(Candidate.model_validate(candidate).to_wire())
        except WireValidationError:
            checked.append(candidate)
    wire["candidates"] = checked
    return wire


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


def _blocking_reader(fd: int) -> Callable[[], dict[str, Any] | None]:
    """The next frame read from ``fd`` (None at end of input), blocking the caller.

    :class:`FrameReader` is written for async callers; its receive callable here
    returns without ever suspending, so each read completes on its first step.
    """

    async def receive() -> bytes:
        try:
            return os.read(fd, 1 << 16)
        except OSError:
            return b""

    reader = FrameReader(receive)

    def next_frame() -> dict[str, Any] | None:
        step = reader.read()
        try:
            step.send(None)
        except StopIteration as done:
            frame: dict[str, Any] | None = done.value
            return frame
        step.close()
        raise RuntimeError("frame reader suspended without an event loop")

    return next_frame


async def _stdin_receiver() -> Callable[[], Awaitable[bytes]]:
    """Pump stdin from a daemon thread so a pending read never blocks exit."""
    import math

    import anyio
    import anyio.from_thread
    import anyio.lowlevel

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
