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
(:mod:`adapter_sdk.thread_driver`): importing and starting an event loop costs
more CPU than a whole cold query's handlers, and the process starts on every
CLI query. An adapter with any ``async def`` handler runs under anyio
(:mod:`adapter_sdk.async_driver`). Both drive one session
(:mod:`adapter_sdk.session`), which decides every reply, so both give the same
replies on the wire.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Awaitable, Callable

from adapter_sdk.cancellation import Cancellation, current_cancellation
from adapter_sdk.protocol import FrameReader
from adapter_sdk.session import HANDLERS, Adapter
from adapter_sdk.thread_driver import ThreadedSession as _ThreadedSession
from adapter_sdk.thread_driver import blocking_reader


def log(message: str) -> None:
    """Write one diagnostic line to stderr (the broker captures, never parses it)."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def run(adapter: Adapter) -> None:
    """Serve ``adapter`` on stdin/stdout until shutdown or end of input, then exit 0.

    The process exits at once: a handler thread abandoned by a cancel may still
    be running, and waiting for it would only make the broker wait too.
    """
    if any(inspect.iscoroutinefunction(getattr(adapter, name)) for name in HANDLERS):
        import anyio

        anyio.run(serve, adapter)
    else:
        _ThreadedSession(adapter, _write_stdout).run(blocking_reader(sys.stdin.fileno()))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


async def serve(
    adapter: Adapter,
    receive: Callable[[], Awaitable[bytes]] | None = None,
    send: Callable[[bytes], None] | None = None,
) -> None:
    """Serve one connection under anyio. ``receive``/``send`` default to this process's stdio."""
    from adapter_sdk.async_driver import AsyncSession, stdin_receiver

    session = AsyncSession(adapter, send or _write_stdout)
    reader = FrameReader(receive or await stdin_receiver(sys.stdin.fileno()))
    await session.run(reader)


def _write_stdout(data: bytes) -> None:
    stream = sys.stdout.buffer
    stream.write(data)
    stream.flush()


__all__ = ["Adapter", "Cancellation", "current_cancellation", "log", "run", "serve"]
