"""Per-thread standard output and error, so concurrent commands in one broker keep their bytes apart.

The resident broker runs each command in a worker thread. Commands write to
``sys.stdout`` and ``sys.stderr`` as they would in their own process; a
:class:`RoutedStream` installed in their place sends each write to the
buffer of the thread that made it, or to the original stream outside a
command.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class RoutedStream(io.TextIOBase):
    """A text stream that writes to the calling thread's buffer when it has one."""

    def __init__(self, original: TextIO) -> None:
        self._original = original
        self._local = threading.local()

    def _target(self) -> TextIO:
        buffer: io.StringIO | None = getattr(self._local, "buffer", None)
        return buffer if buffer is not None else self._original

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return self._target().isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._original.encoding or "utf-8"

    @contextmanager
    def captured(self) -> Iterator[io.StringIO]:
        buffer = io.StringIO()
        self._local.buffer = buffer
        try:
            yield buffer
        finally:
            self._local.buffer = None


def install() -> tuple[RoutedStream, RoutedStream]:
    """Route ``sys.stdout`` and ``sys.stderr`` of this process by thread."""
    out, err = RoutedStream(sys.stdout), RoutedStream(sys.stderr)
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    return out, err
