"""Whether the caller of one request still wants its answer.

A handler runs in a thread of its own; :func:`current_cancellation` tells it
which request it serves, so it can stop work whose reply is already sent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


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


NEVER_CANCELLED = Cancellation()
_serving = threading.local()


def current_cancellation() -> Cancellation:
    """The cancellation of the request the calling handler thread is serving (one that
    is never requested outside a request)."""
    cancellation: Cancellation = getattr(_serving, "cancellation", NEVER_CANCELLED)
    return cancellation


def serve_with(cancellation: Cancellation, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in this thread, as the handler of the request ``cancellation`` belongs to."""
    _serving.cancellation = cancellation
    try:
        return fn(*args)
    finally:
        _serving.cancellation = NEVER_CANCELLED
