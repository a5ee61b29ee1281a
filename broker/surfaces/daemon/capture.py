"""Per-thread standard streams, so concurrent commands in one broker keep their bytes apart.

The resident broker runs each command in a worker thread. Commands write to
``sys.stdout`` and ``sys.stderr`` as they would in their own process; a
:class:`RoutedStream` installed in their place sends each write to the
buffer of the thread that made it, or to the original stream outside a
command. :class:`RoutedInput` does the same for ``sys.stdin``: a command
reads the bytes its client sent as its standard input.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, TextIO


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

    def fileno(self) -> int:
        """The original stream's descriptor outside a command; inside one, whose output
        is a buffer, ``io.UnsupportedOperation`` as for any stream without one."""
        return self._target().fileno()

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


class RoutedInput(io.TextIOBase):
    """A text stream that reads the calling thread's given input when it has one."""

    def __init__(self, original: TextIO) -> None:
        self._original = original
        self._local = threading.local()

    def _source(self) -> TextIO:
        given: TextIO | None = getattr(self._local, "given", None)
        return given if given is not None else self._original

    @property
    def buffer(self) -> BinaryIO:
        return self._source().buffer

    def read(self, size: int | None = -1) -> str:
        return self._source().read(-1 if size is None else size)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return self._source().readline(-1 if size is None else size)

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._source().isatty()

    @contextmanager
    def given(self, data: bytes) -> Iterator[None]:
        self._local.given = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
        try:
            yield
        finally:
            self._local.given = None


def install() -> tuple[RoutedStream, RoutedStream, RoutedInput]:
    """Route ``sys.stdout``, ``sys.stderr`` and ``sys.stdin`` of this process by thread."""
    out, err, inp = RoutedStream(sys.stdout), RoutedStream(sys.stderr), RoutedInput(sys.stdin)
    sys.stdout, sys.stderr, sys.stdin = out, err, inp  # type: ignore[assignment]
    return out, err, inp
