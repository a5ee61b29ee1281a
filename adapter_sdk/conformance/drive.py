"""Run an adapter process and drive one transcript through it in lockstep.

Flow ``lockstep``: lines go out in file order; before sending a request while
an earlier request is still awaiting, wait for one frame (any frame, not
matched by id); a notification such as ``recall/cancel`` goes out at once.
After the last line, wait for one frame if a request is awaiting, then close
stdin and drain stdout until end of stream. Every frame read counts, so an
adapter that talks after its last expected reply fails on the count.

The process runs in its own process group and is always stopped: stdin
closed, a grace period for a clean exit, then SIGTERM and SIGKILL to the
whole group, so nothing it started outlives the case.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from adapter_sdk.protocol import MAX_FRAME_BYTES, FrameError, decode_frame

FRAME_TIMEOUT = 20.0
DRAIN_TIMEOUT = 2.0
STOP_GRACE = 2.0
TERM_GRACE = 1.0
MAX_FRAMES = 1024
STDERR_KEEP = 64 * 1024


@dataclass
class Exchange:
    """What one drive produced. ``stopped`` is why it ended early, or ""."""

    frames: list[bytes] = field(default_factory=list)
    stopped: str = ""
    stderr: str = ""


class _StreamEnd(Exception):
    """Stdout ended: at end of stream (``eof``) or because a limit was broken."""

    def __init__(self, reason: str, *, eof: bool = False) -> None:
        super().__init__(reason)
        self.eof = eof


class AdapterProcess:
    """One adapter under test, on pipes, in its own process group."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        if not argv:
            raise ValueError("no adapter command given")
        merged = dict(os.environ)
        merged.update(env or {})
        self._process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=merged,
            start_new_session=True,
        )
        self._frames: queue.Queue[bytes | Exception] = queue.Queue()
        self._stderr = bytearray()
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def send(self, line: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(line + b"\n")
        stdin.flush()

    def next_frame(self, timeout: float) -> bytes:
        """The next non-blank stdout line; raises TimeoutError or _StreamEnd."""
        try:
            item = self._frames.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            raise TimeoutError from None
        if isinstance(item, Exception):
            self._frames.put(item)  # the end stays the end for later reads
            raise item
        return item

    def close_stdin(self) -> None:
        stdin = self._process.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.close()
            except OSError:
                pass

    def stop(self) -> None:
        """Close stdin, allow a clean exit, then terminate the whole group."""
        self.close_stdin()
        try:
            self._process.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGTERM)
            try:
                self._process.wait(timeout=TERM_GRACE)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self._process.wait()
        # Whatever the adapter left running in its group goes with it.
        self._signal_group(signal.SIGKILL)
        streams = (self._process.stdout, self._process.stderr)
        for reader, stream in zip(self._readers, streams, strict=True):
            reader.join(timeout=1.0)
            # A descendant that left the group may still hold the pipe; closing
            # it under a blocked reader would block here too, so leave it.
            if stream is not None and not reader.is_alive():
                stream.close()

    def stderr_text(self) -> str:
        return bytes(self._stderr).decode("utf-8", errors="replace")

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self._process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def _read_stdout(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        count = 0
        while True:
            line = stdout.readline(MAX_FRAME_BYTES + 2)
            if not line:
                self._frames.put(_StreamEnd("the adapter closed stdout", eof=True))
                return
            if not line.endswith(b"\n") and len(line) > MAX_FRAME_BYTES:
                self._frames.put(
                    _StreamEnd(f"the adapter wrote a frame over the {MAX_FRAME_BYTES}-byte limit")
                )
                return
            stripped = line.strip()
            if not stripped:
                continue
            self._frames.put(stripped)
            count += 1
            if count >= MAX_FRAMES:
                self._frames.put(_StreamEnd(f"the adapter wrote more than {MAX_FRAMES} frames"))
                return

    def _read_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        while chunk := os.read(stderr.fileno(), 8192):
            self._stderr.extend(chunk)
            if len(self._stderr) > STDERR_KEEP:
                del self._stderr[: len(self._stderr) - STDERR_KEEP]


def is_notification(line: bytes) -> bool:
    """Whether a request line expects no response. Raises FrameError if it is not a request."""
    frame = decode_frame(line)
    if frame is None or "method" not in frame:
        raise FrameError("request line is not a JSON-RPC request or notification")
    return frame.get("id") is None


def drive_lockstep(process: AdapterProcess, requests: Sequence[bytes], deadline: float) -> Exchange:
    """Send ``requests`` under flow lockstep and collect every frame until EOF.

    ``deadline`` (a ``time.monotonic()`` instant) bounds the whole exchange;
    each wait is also bounded by :data:`FRAME_TIMEOUT`.
    """
    exchange = Exchange()

    def await_one() -> bool:
        wait = min(FRAME_TIMEOUT, deadline - time.monotonic())
        try:
            exchange.frames.append(process.next_frame(wait))
            return True
        except TimeoutError:
            exchange.stopped = f"no response within {max(wait, 0.0):.1f}s"
        except _StreamEnd as end:
            exchange.stopped = f"{end} with a request outstanding"
        return False

    awaiting = False
    for number, line in enumerate(requests, start=1):
        try:
            notification = is_notification(line)
        except FrameError as exc:
            exchange.stopped = f"request {number}: {exc}"
            return exchange
        if awaiting and not notification:
            if not await_one():
                return exchange
            awaiting = False
        try:
            process.send(line)
        except OSError as exc:
            exchange.stopped = f"writing request {number}: {exc}"
            return exchange
        awaiting = awaiting or not notification
    if awaiting and not await_one():
        return exchange

    process.close_stdin()
    drain_until = min(time.monotonic() + DRAIN_TIMEOUT, deadline)
    while True:
        try:
            exchange.frames.append(process.next_frame(drain_until - time.monotonic()))
        except TimeoutError:
            return exchange
        except _StreamEnd as end:
            if not end.eof:
                exchange.stopped = str(end)
            return exchange


def run_exchange(
    argv: Sequence[str],
    requests: Sequence[bytes],
    *,
    env: Mapping[str, str] | None,
    timeout: float,
) -> Exchange:
    """Start the adapter, drive ``requests`` through it, and always stop it.

    Raises OSError when the command cannot be started.
    """
    deadline = time.monotonic() + timeout
    process = AdapterProcess(argv, env)
    try:
        exchange = drive_lockstep(process, requests, deadline)
    finally:
        process.stop()
    exchange.stderr = process.stderr_text()
    return exchange
