"""The session served under anyio, for an adapter with any ``async def`` handler.

Each request is a task in one task group, bounded by a cancel scope that its
deadline or a ``recall/cancel`` ends; a plain handler runs in a worker thread
the scope abandons when it ends.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread

from adapter_sdk.cancellation import NEVER_CANCELLED, Cancellation, serve_with
from adapter_sdk.protocol import ErrorCode, FrameError, FrameReader, RpcError
from adapter_sdk.session import Adapter, Session, Step, failure, seconds_left


class _Task:
    """One request's task: the scope that bounds it and what its handler is told."""

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.cancellation = Cancellation()

    def cancel(self) -> None:
        self.scope.cancel()
        self.cancellation.cancel()


class AsyncSession:
    def __init__(self, adapter: Adapter, send: Callable[[bytes], None]) -> None:
        self.adapter = adapter
        self.session: Session[_Task] = Session(adapter, send)

    async def run(self, reader: FrameReader) -> None:
        session = self.session
        async with anyio.create_task_group() as tasks:
            while True:
                try:
                    frame = await reader.read()
                except FrameError as exc:
                    session.unreadable(exc)
                    continue
                if frame is None:  # end of input: cancel what is in flight
                    session.close()
                    tasks.cancel_scope.cancel()
                    return
                step = session.receive(frame)
                if step is Step.shutdown:
                    await self._shutdown(frame)
                    return
                if step is Step.initialize:
                    await self._initialize(frame)
                elif step is Step.request:
                    key, task = session.key(frame), _Task()
                    session.begin(key, task)
                    tasks.start_soon(self._answer, frame, key, task)

    async def _initialize(self, frame: dict[str, Any]) -> None:
        try:
            params, version = self.session.handshake(frame)
            manifest = await _call(self.adapter.initialize, params)
            reply = self.session.handshaken(frame, manifest, version)
        except Exception as exc:
            reply = failure(frame["id"], exc)
        self.session.write(reply)

    async def _answer(self, frame: dict[str, Any], key: bytes, task: _Task) -> None:
        try:
            reply = await self._outcome(frame, key, task)
        except Exception as exc:
            reply = failure(frame["id"], exc)
        finally:
            self.session.end(key)
        self.session.write(reply)

    async def _outcome(self, frame: dict[str, Any], key: bytes, task: _Task) -> dict[str, Any]:
        call = self.session.call(frame)
        if call.deadline is not None:
            task.scope.deadline = anyio.current_time() + max(seconds_left(call.deadline), 0.0)
        result: Any = None
        with task.scope:
            result = await _call(call.handler, call.params, cancellation=task.cancellation)
        if task.scope.cancelled_caught:
            task.cancellation.cancel()
            if self.session.cancel_requested(key):
                raise RpcError(ErrorCode.deadline_exceeded, "request cancelled")
            raise RpcError(ErrorCode.deadline_exceeded, "deadline exceeded")
        return self.session.answered(frame, call, result)

    async def _shutdown(self, frame: dict[str, Any]) -> None:
        await _call(self.adapter.shutdown)
        self.session.shut(frame)
        while self.session.busy():  # in-flight work drains, its results discarded
            await anyio.sleep(0.01)


async def _call(fn: Callable[..., Any], *args: Any, cancellation: Cancellation | None = None) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    return await anyio.to_thread.run_sync(
        serve_with, cancellation or NEVER_CANCELLED, fn, *args, abandon_on_cancel=True
    )


async def stdin_receiver(fd: int) -> Callable[[], Awaitable[bytes]]:
    """Pump ``fd`` from a daemon thread so a pending read never blocks exit."""
    import math
    import os
    import threading

    import anyio.from_thread
    import anyio.lowlevel

    send, receive = anyio.create_memory_object_stream[bytes](math.inf)
    token = anyio.lowlevel.current_token()

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
