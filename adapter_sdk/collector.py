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
from collections.abc import Iterator
from contextlib import contextmanager

# The young generation is collected every this many allocations, not every 700.
YOUNG_THRESHOLD = 10_000


def start_quietly() -> None:
    """Call first thing in a process that imports much before it works."""
    gc.set_threshold(YOUNG_THRESHOLD)


def keep_what_is_built() -> None:
    """Everything allocated so far lives as long as the process: the collector never
    walks it again. Call once start-up is done (an adapter after its handshake).
    Objects are still freed when dropped; a garbage cycle already made now would
    never be collected, so call it where nothing is left half done."""
    gc.freeze()


@contextmanager
def loading() -> Iterator[None]:
    """Build a large structure with the collector off, and keep what was built
    (``keep_what_is_built``) at the end, so it is never walked either.

    The garbage cycles made before are collected first, so none is kept; another
    thread's ``loading`` overlapping this one may end the pause early, never extend
    it: the collector is turned back on by whichever turned it off.
    """
    gc.collect()  # cheap after ``keep_what_is_built``: it walks only what is newer
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
