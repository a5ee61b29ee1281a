"""The streams a command reads and writes: its standard input, output and error.

Every command is handed one :class:`Streams` and writes only to it, so the same
command runs in its own process (the process's streams, :meth:`Streams.of_process`)
or in the resident broker beside others (buffers of its own request,
:meth:`Streams.in_memory`) without anything rebinding ``sys.stdout``.

Standard library only, and no ``dataclasses``: the thin path builds one before
anything else is imported.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from io import StringIO
    from typing import Any, TextIO


class Streams:
    """A command's standard streams and whether each is a terminal; frozen once made."""

    __slots__ = ("stdin", "stdout", "stderr", "stdin_is_terminal", "stdout_is_terminal", "stderr_is_terminal")

    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    stdin_is_terminal: bool
    stdout_is_terminal: bool
    stderr_is_terminal: bool

    def __init__(
        self, stdin: TextIO, stdout: TextIO, stderr: TextIO, *,
        stdin_is_terminal: bool = False, stdout_is_terminal: bool = False, stderr_is_terminal: bool = False,
    ) -> None:
        for name, value in (
            ("stdin", stdin), ("stdout", stdout), ("stderr", stderr),
            ("stdin_is_terminal", stdin_is_terminal), ("stdout_is_terminal", stdout_is_terminal),
            ("stderr_is_terminal", stderr_is_terminal),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Streams are frozen: cannot set {name}")

    @classmethod
    def of_process(cls) -> Streams:
        """This process's own standard streams."""
        return cls(
            sys.stdin, sys.stdout, sys.stderr,
            stdin_is_terminal=_is_terminal(sys.stdin),
            stdout_is_terminal=_is_terminal(sys.stdout),
            stderr_is_terminal=_is_terminal(sys.stderr),
        )

    @classmethod
    def in_memory(cls, stdin: bytes = b"") -> tuple[Streams, StringIO, StringIO]:
        """Streams that read ``stdin`` and keep what is written, none a terminal; with the
        buffers of standard output and error."""
        import io

        stdout, stderr = io.StringIO(), io.StringIO()
        given = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="replace")
        return cls(given, stdout, stderr), stdout, stderr

    def reading(self, stdin: bytes) -> Streams:
        """These streams, with standard input replaced by ``stdin`` (bytes read from it already)."""
        import io

        encoding = getattr(self.stdin, "encoding", None) or "utf-8"
        errors = getattr(self.stdin, "errors", None) or "strict"
        given = io.TextIOWrapper(io.BytesIO(stdin), encoding=encoding, errors=errors)
        return Streams(
            given, self.stdout, self.stderr,
            stdout_is_terminal=self.stdout_is_terminal, stderr_is_terminal=self.stderr_is_terminal,
        )


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError):
        return False
