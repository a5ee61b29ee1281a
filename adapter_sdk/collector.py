"""Keeping Python's cyclic garbage collector off the work of starting and loading.

The collector walks every object young enough to be in a generation it
collects, and by default collects the youngest every 700 allocations. Starting
an adapter (imports, opening an index) and loading a snapshot of thousands of
records allocate hundreds of thousands of objects that all live on, none of
them garbage: the collector walks each several times as it promotes it, for
nothing (about 100 ms of a cold query over a todo.txt of 10,000 tasks).
Reference counting frees what is dropped whatever the collector does; only
reference cycles wait for it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The young generation is collected every this many allocations, not every 700.
YOUNG_THRESHOLD = 10_000


_usual_threshold: tuple[int, int, int] | None = None  # what ``start_quietly`` replaced


def start_quietly() -> None:
    """Call first thing in a process that imports much before it works."""
    global _usual_threshold
    if _usual_threshold is None:
        _usual_threshold = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD)


def keep_what_is_built() -> None:
    """Take everything allocated so far for what it mostly is once start-up is done
    (an adapter after its handshake): kept as long as the process. The collector
    never walks it again; objects are still freed when dropped, but a garbage cycle
    already made now is never collected, so call it where nothing is left half done.
    Young objects are collected as often as before ``start_quietly`` again: under
    concurrent requests a collection of 10,000 at once is a pause they all wait on."""
    global _usual_threshold
    gc.freeze()
    if _usual_threshold is not None:
        gc.set_threshold(*_usual_threshold)
        _usual_threshold = None


class _Pause:
    """The loads under way in any thread: the first turns the collector off, the last
    keeps what they built and turns it back on, if it was on before the first."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.was_enabled = False


_PAUSE = _Pause()


@contextmanager
def loading() -> Iterator[None]:
    """Build a large structure with the collector off, and keep what was built
    (``keep_what_is_built``) at the end, so it is never walked either.

    The garbage cycles made before are collected first, so none is kept; a cycle
    another thread makes during the load is kept with it. Loads in several threads
    at once share one pause.
    """
    gc.collect()  # cheap after ``keep_what_is_built``: it walks only what is newer
    with _PAUSE.lock:
        if _PAUSE.depth == 0:
            _PAUSE.was_enabled = gc.isenabled()
            gc.disable()
        _PAUSE.depth += 1
    try:
        yield
    finally:
        with _PAUSE.lock:
            _PAUSE.depth -= 1
            if _PAUSE.depth == 0:
                gc.freeze()
                if _PAUSE.was_enabled:
                    gc.enable()
