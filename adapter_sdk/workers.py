"""Request threads that serve more than one request.

Every request runs on a thread of its own, so a slow handler never holds up
another. A thread that finished waits a while for the next request instead of
exiting: what an adapter keeps per thread (the notes index's SQLite connection
and its page cache) then serves many searches, where a fresh thread per request
would open a connection for each and leave the last one's for the garbage
collector to close.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

IDLE_EXIT_S = 60.0


class _Slot:
    """One waiting worker: the work handed to it, and the event that wakes it."""

    __slots__ = ("wake", "job")

    def __init__(self) -> None:
        self.wake = threading.Event()
        self.job: tuple[Callable[..., Any], tuple[Any, ...]] | None = None


class Workers:
    """Run each call on an idle worker thread, or on a new one when none is idle."""

    def __init__(self, name: str, idle_exit_s: float = IDLE_EXIT_S) -> None:
        self.name = name
        self.idle_exit_s = idle_exit_s
        self._lock = threading.Lock()
        self._idle: list[_Slot] = []  # the last to finish is handed work first: its caches are warm

    def run(self, fn: Callable[..., Any], *args: Any) -> None:
        with self._lock:
            if self._idle:
                slot = self._idle.pop()
                slot.job = (fn, args)
                slot.wake.set()
                return
        threading.Thread(target=self._work, args=(fn, args), name=self.name, daemon=True).start()

    def idle(self) -> int:
        """How many workers wait for a request now."""
        with self._lock:
            return len(self._idle)

    def _work(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        slot = _Slot()
        while True:
            fn(*args)  # what it raises ends this worker, reported as any thread's exception is
            fn = args = None  # type: ignore[assignment]  # hold nothing of a finished request
            with self._lock:
                slot.wake.clear()
                self._idle.append(slot)
            if not slot.wake.wait(self.idle_exit_s):
                with self._lock:
                    if slot in self._idle:
                        self._idle.remove(slot)
                        return
                slot.wake.wait()  # handed work just as the wait ran out
            assert slot.job is not None
            (fn, args), slot.job = slot.job, None
