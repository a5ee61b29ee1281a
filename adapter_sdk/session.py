"""The protocol's session, free of I/O: what each frame means and what it is answered with.

Both drivers (:mod:`adapter_sdk.async_driver` under anyio, and
:mod:`adapter_sdk.thread_driver` on threads alone) read frames, hand each to
:meth:`Session.receive`, and do what the returned :class:`Step` says; the
session keeps the handshake state, the requests in flight and which of them
were cancelled, validates params and results, and shapes every reply. The
drivers own the reading, the threads or tasks, and the waiting.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Generic, Protocol, TypeVar

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
HANDLERS = ("initialize", "search", "expand", "health", "refresh", "shutdown")


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


class Step(Enum):
    """What a driver does with a frame the session has read."""

    done = "done"  # nothing more: a stray response, an ignored notification, a cancel
    shutdown = "shutdown"  # shut the adapter down, then :meth:`Session.shut`
    initialize = "initialize"  # the handshake, answered before the next frame is read
    request = "request"  # a request answered on its own, beside the others


class InFlight(Protocol):
    """A driver's handle on one request it serves."""

    def cancel(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Call:
    """A request ready to run: its handler, validated params and deadline."""

    method: str
    handler: Callable[..., Any]
    params: WireModel
    deadline: datetime | None


H = TypeVar("H", bound=InFlight)


class Session(Generic[H]):
    """One connection's protocol state. Safe to use from the drivers' threads."""

    def __init__(self, adapter: Adapter, send: Callable[[bytes], None]) -> None:
        self.adapter = adapter
        self._send = send
        self._write_lock = threading.Lock()
        self._closed = False
        self._initialized = False
        self._idle = threading.Condition()  # guards what is in flight; notified as it shrinks
        self._in_flight: dict[bytes, H] = {}
        self._cancel_requested: set[bytes] = set()

    # -- frames in

    def receive(self, frame: dict[str, Any]) -> Step:
        """What ``frame`` asks of the driver; a cancel is carried out here."""
        method = frame.get("method")
        if method is None:
            return Step.done  # adapters never send requests, so responses are stray
        if method == Method.cancel:
            self._cancel(frame.get("params"))
            return Step.done
        if method == Method.shutdown:
            return Step.shutdown
        if "id" not in frame or frame["id"] is None:
            return Step.done  # unknown notification: ignored
        if method == Method.initialize:
            return Step.initialize  # nothing else is dispatched before the handshake ends
        return Step.request

    def unreadable(self, error: FrameError) -> None:
        """Answer a frame that could not be decoded."""
        self.write(error_frame(None, RpcError(ErrorCode.parse_error, str(error))))

    # -- the handshake

    def handshake(self, frame: dict[str, Any]) -> tuple[InitializeParams, int]:
        """The initialize request's params and the protocol version both sides speak."""
        _, params = _validated_params(frame)
        assert isinstance(params, InitializeParams)
        return params, negotiate_version(params.protocol_version_min, params.protocol_version_max)

    def handshaken(self, frame: dict[str, Any], manifest: Any, version: int) -> dict[str, Any]:
        """The reply to the handshake whose adapter answered with ``manifest``."""
        wire = _checked_result(Method.initialize, manifest)
        wire["protocol_version"] = version
        self._initialized = True
        keep_what_is_built()  # the adapter's start-up lives as long as the process
        return result_frame(frame["id"], wire)

    # -- requests

    @staticmethod
    def key(frame: dict[str, Any]) -> bytes:
        """The identity a cancel names a request by."""
        return orjson.dumps(frame["id"])

    def begin(self, key: bytes, handle: H) -> None:
        with self._idle:
            self._in_flight[key] = handle

    def call(self, frame: dict[str, Any]) -> Call:
        """The handler a request after the handshake runs, with its params and deadline."""
        method, params = _validated_params(frame)
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
        return Call(method, handlers[method], params, deadline)

    def answered(self, frame: dict[str, Any], call: Call, result: Any) -> dict[str, Any]:
        """The reply carrying ``result``, once checked against the method's result model."""
        return result_frame(frame["id"], _checked_result(call.method, result))

    def cancel_requested(self, key: bytes) -> bool:
        """Whether the request ended because a ``recall/cancel`` named it."""
        with self._idle:
            return key in self._cancel_requested

    def end(self, key: bytes) -> None:
        """The request is answered (or abandoned): it is no longer in flight."""
        with self._idle:
            self._in_flight.pop(key, None)
            self._cancel_requested.discard(key)
            self._idle.notify_all()

    def busy(self) -> bool:
        with self._idle:
            return bool(self._in_flight)

    def wait_until_idle(self) -> None:
        """Block until nothing is in flight (for a driver whose caller may block)."""
        with self._idle:
            self._idle.wait_for(lambda: not self._in_flight)

    def _cancel(self, params: Any) -> None:
        if not isinstance(params, dict) or "id" not in params:
            return
        key = orjson.dumps(params["id"])
        with self._idle:
            handle = self._in_flight.get(key)
            if handle is None:
                return
            self._cancel_requested.add(key)
        handle.cancel()

    # -- frames out

    def write(self, message: dict[str, Any]) -> None:
        """Send ``message`` unless the session is closed."""
        with self._write_lock:
            if self._closed:
                return
            self._send(encode_frame(message))

    def shut(self, frame: dict[str, Any]) -> None:
        """Answer the shutdown request; nothing is written after it."""
        if "id" in frame:
            self.write(result_frame(frame["id"], {}))
        self.close()

    def close(self) -> None:
        with self._write_lock:
            self._closed = True


def failure(request_id: Any, error: Exception) -> dict[str, Any]:
    """The error reply for what a request raised: an adapter bug is an internal error, not a crash."""
    if isinstance(error, RpcError):
        return error_frame(request_id, error)
    return error_frame(request_id, RpcError(ErrorCode.internal_error, f"{type(error).__name__}: {error}"))


def seconds_left(deadline: datetime) -> float:
    return (deadline - datetime.now(UTC)).total_seconds()


def _validated_params(frame: dict[str, Any]) -> tuple[str, WireModel]:
    method = frame["method"]
    params_model = PARAMS_MODEL.get(method)
    if params_model is None:
        raise RpcError(ErrorCode.method_not_found, f'unknown method "{method}"')
    try:
        return method, params_model.model_validate(frame.get("params") or {})
    except WireValidationError as exc:
        raise RpcError(ErrorCode.invalid_params, _validation_message(exc)) from None


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
