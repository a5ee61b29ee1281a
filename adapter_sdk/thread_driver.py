"""The session served by threads alone, for an adapter whose handlers are all plain ``def``.

The caller's thread reads frames and runs the handshake; every other request
gets a thread that waits on a handler thread, so a cancel or deadline answers
at once and the late result is discarded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from adapter_sdk.cancellation import Cancellation, serve_with
from adapter_sdk.protocol import ErrorCode, FrameError, FrameReader, RpcError
from adapter_sdk.session import Adapter, Call, Session, Step, failure, seconds_left
from adapter_sdk.workers import Workers

# Each request is answered by one thread and its handler run by another (which the
# answering one stops waiting for at the deadline); both are reused across requests.
_WORKERS = Workers("recall-request")


class ThreadedSession:
    def __init__(self, adapter: Adapter, send: Callable[[bytes], None]) -> None:
        self.adapter = adapter
        self.session: Session[_Request] = Session(adapter, send)

    def run(self, next_frame: Callable[[], dict[str, Any] | None]) -> None:
        session = self.session
        while True:
            try:
                frame = next_frame()
            except FrameError as exc:
                session.unreadable(exc)
                continue
            if frame is None:  # end of input: what is in flight is abandoned unanswered
                session.close()
                return
            step = session.receive(frame)
            if step is Step.shutdown:
                self.adapter.shutdown()
                session.shut(frame)
                session.wait_until_idle()  # in-flight work drains, its results discarded
                return
            if step is Step.initialize:
                session.write(self._initialize(frame))
            elif step is Step.request:
                request = _Request(frame, session.key(frame))
                session.begin(request.key, request)
                _WORKERS.run(self._answer, request)

    def _initialize(self, frame: dict[str, Any]) -> dict[str, Any]:
        try:
            params, version = self.session.handshake(frame)
            return self.session.handshaken(frame, self.adapter.initialize(params), version)
        except Exception as exc:
            return failure(frame["id"], exc)

    def _answer(self, request: _Request) -> None:
        try:
            call = self.session.call(request.frame)
            reply = self.session.answered(request.frame, call, request.outcome(call))
        except Exception as exc:
            reply = failure(request.frame["id"], exc)
        finally:
            self.session.end(request.key)
        self.session.write(reply)


class _Request:
    """One request in flight: its handler's outcome, or why it will never be used."""

    def __init__(self, frame: dict[str, Any], key: bytes) -> None:
        self.frame = frame
        self.key = key
        self._settled = threading.Event()  # the handler returned, or a cancel arrived
        self._cancelled = False
        self.cancellation = Cancellation()
        self._result: Any = None
        self._error: BaseException | None = None

    def cancel(self) -> None:
        self._cancelled = True
        self._settled.set()
        self.cancellation.cancel()

    def outcome(self, call: Call) -> Any:
        """Run the handler in its own thread; its result, unless cancelled or out of time first."""
        timeout = None if call.deadline is None else seconds_left(call.deadline)
        if not self._cancelled and (timeout is None or timeout > 0):
            _WORKERS.run(self._run, call.handler, call.params)
            self._settled.wait(timeout)
        if self._cancelled:
            raise RpcError(ErrorCode.deadline_exceeded, "request cancelled")
        if not self._settled.is_set():
            self.cancellation.cancel()
            raise RpcError(ErrorCode.deadline_exceeded, "deadline exceeded")
        if self._error is not None:
            raise self._error
        return self._result

    def _run(self, handler: Callable[..., Any], params: Any) -> None:
        try:
            self._result = serve_with(self.cancellation, handler, params)
        except BaseException as exc:  # handed to the waiting thread, which reports it
            self._error = exc
        self._settled.set()


def blocking_reader(fd: int) -> Callable[[], dict[str, Any] | None]:
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
