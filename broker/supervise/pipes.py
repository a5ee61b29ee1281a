"""A started ``subprocess.Popen`` driven by the event loop: its pipes read and written
without blocking (``anyio.wait_readable`` / ``wait_writable``), its exit awaited.

Adapters are launched by :func:`broker.warm.prestart.launch`, sometimes before any
event loop exists, so the loop adopts the process rather than starting it.
The broker is the only one to reap it (``poll``), so what :attr:`returncode`
says is never overtaken by a watcher thread.
"""

from __future__ import annotations

import os
import subprocess
from typing import IO

import anyio
import anyio.lowlevel

EXIT_POLL_FIRST = 0.001
EXIT_POLL_MOST = 0.02


class _Pipe:
    """Our end of one pipe, made non-blocking; closing it wakes whoever waits on it."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._fd = pipe.fileno()
        os.set_blocking(self._fd, False)
        self._closed = False

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            anyio.notify_closing(self._fd)
            self._pipe.close()


class PipeReceiveStream(_Pipe):
    async def receive(self, max_bytes: int = 65536) -> bytes:
        """Up to ``max_bytes``; raises ``anyio.EndOfStream`` once the other end closed."""
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            await anyio.lowlevel.checkpoint()
            return data


class PipeSendStream(_Pipe):
    async def send(self, data: bytes) -> None:
        """All of ``data``; raises ``anyio.BrokenResourceError`` once the reader is gone."""
        view = memoryview(data)
        while view:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except OSError as exc:  # EPIPE: the process closed its stdin or exited
                raise anyio.BrokenResourceError from exc
            view = view[written:]
        await anyio.lowlevel.checkpoint()


class PipeProcess:
    """What the supervisor uses of a process: its pid, streams, exit status and end."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self._popen = popen
        self.pid = popen.pid
        self.stdin = PipeSendStream(popen.stdin)
        self.stdout = PipeReceiveStream(popen.stdout)
        self.stderr = PipeReceiveStream(popen.stderr)

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended (reaping it), else None."""
        return self._popen.poll()

    async def wait(self) -> int:
        """The exit status once the process has ended: woken by the kernel where it gives
        a descriptor for the process (Linux), else polled. Polling noticed an adapter's
        exit 4-7 ms late, on the path of every cold command's exit."""
        if (code := self._popen.poll()) is not None:
            return code
        ended = _exit_descriptor(self.pid)
        if ended is not None:
            try:
                await anyio.wait_readable(ended)  # readable once the process has ended
            finally:
                os.close(ended)
        delay = EXIT_POLL_FIRST
        while (code := self._popen.poll()) is None:
            await anyio.sleep(delay)
            delay = min(delay * 2, EXIT_POLL_MOST)
        return code


def _exit_descriptor(pid: int) -> int | None:
    """A descriptor that turns readable when ``pid`` ends (a pidfd); None where the
    system has none. ``pid`` is still this process's child, unreaped, so it names it."""
    open_pidfd = getattr(os, "pidfd_open", None)
    if open_pidfd is None:
        return None
    try:
        descriptor: int = open_pidfd(pid)
    except OSError:
        return None
    return descriptor
