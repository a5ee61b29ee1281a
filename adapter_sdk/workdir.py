"""State an adapter keeps in its workdir, shared with other processes of the same source.

Two commands started at once each run the source's adapter, on one workdir: whatever
checks, deletes or creates a file there (an index found missing, corrupt or of another
format) does it under :func:`exclusive`, so no process reads a file half made or
deletes one another has just made. A write another process holds for longer than a
statement waits (:func:`held_elsewhere`) is its work under way, not a failure.

Work that takes long and that one process can do for all (building an index, bringing
it up to date) is done under a :func:`lease`: the process holding it does the work,
and another one finding it held leaves that work to it rather than doing it twice.
How long the holder has had it (:func:`held_for`) tells the other whether that work
is likely a short one it may wait for.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def exclusive(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Hold a lock on ``folder`` (an advisory ``flock``, released when the block ends or the
    process dies) against every other process taking it."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


@contextmanager
def lease(folder: str | os.PathLike[str], name: str) -> Iterator[bool]:
    """Try to take the lease ``name`` on ``folder`` without waiting; yields whether this
    process holds it now. It is an advisory ``flock`` on ``<folder>/<name>.lock``, let go
    when the block ends or the process dies (a killed build leaves no lease behind).
    Within one process a lease is taken by one thread of work at a time: a second
    ``lease`` of the same name is refused like another process's. Taking it stamps the
    lock file's mtime (see :func:`held_for`)."""
    descriptor = os.open(_lock_path(folder, name), os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
        else:
            os.utime(descriptor)
            yield True
    finally:
        os.close(descriptor)


def held_for(folder: str | os.PathLike[str], name: str) -> float:
    """Seconds since the lease ``name`` on ``folder`` was last taken: while another process
    holds it, how long that process has been at its work (0 if it was never taken)."""
    try:
        taken = os.stat(_lock_path(folder, name), follow_symlinks=False).st_mtime
    except FileNotFoundError:
        return 0.0
    return max(0.0, time.time() - taken)


def _lock_path(folder: str | os.PathLike[str], name: str) -> str:
    return os.path.join(folder, f"{name}.lock")


def held_elsewhere(exc: BaseException) -> bool:
    """Whether ``exc`` says another connection held an SQLite database for writing longer
    than the statement waited (SQLITE_BUSY)."""
    return isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode == sqlite3.SQLITE_BUSY
