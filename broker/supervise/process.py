"""One adapter process: spawn, the stdio connection, and a bounded way to end it.

An :class:`AdapterProcess` owns the child (started in its own session, so its
process group holds everything it starts), a stdout reader that routes reply
frames to waiting requests, and an stderr drain. It knows nothing of
deadlines or retries; :mod:`broker.supervise.adapter_client` decides those.
"""

from __future__ import annotations

import os
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import TaskGroup

from adapter_sdk.protocol import (
    FrameError,
    FrameReader,
    InitializeParams,
    Manifest,
    Method,
    SearchOutcome,
    WireModel,
    encode_frame,
    handshake_frame,
    notification_frame,
    request_frame,
)
from broker.adapter_environment import adapter_environment
from broker.supervise.failure import AdapterFailure, FailureReason
from broker.supervise.pipes import PipeProcess, PipeReceiveStream
from broker.warm import prestart

STDERR_TAIL_LINES = 64
STDERR_LINE_BYTES = 1024
VIOLATION_LOG_SIZE = 16
GROUP_POLL_INTERVAL = 0.02
REAP_WAIT = 5.0  # for the report of a child already dead
_READ_CHUNK = 1 << 16


@dataclass(frozen=True)
class AdapterSpec:
    """How to start one source's adapter and what to tell it at the handshake.

    The adapter sees the base environment, the variables ``pass_env`` names and the
    values ``env`` sets, nothing else (:mod:`broker.adapter_environment`)."""

    source_uid: str
    source_id: str
    argv: list[str]
    env: dict[str, str]
    workdir: Path
    init_params: InitializeParams
    cwd: str | None = None
    pass_env: tuple[str, ...] = ()


@dataclass
class Capture:
    """What a source's processes said besides protocol: stderr lines and violations.

    Kept per source across respawns, so the lines a crashed process wrote are
    still there after its successor starts.
    """

    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_TAIL_LINES))
    violations: int = 0
    violation_log: deque[str] = field(default_factory=lambda: deque(maxlen=VIOLATION_LOG_SIZE))

    def stderr_line(self, raw: bytes) -> None:
        line = raw[:STDERR_LINE_BYTES].rstrip(b"\r\n").decode("utf-8", errors="replace")
        if line.strip():
            self.stderr_tail.append(line)

    def violation(self, what: str) -> None:
        self.violations += 1
        self.violation_log.append(what[:240])

    def last_stderr_line(self) -> str | None:
        return self.stderr_tail[-1] if self.stderr_tail else None


@dataclass(eq=False)
class Pending:
    """A request on the wire. ``done`` is set by its reply or by the connection's loss."""

    request_id: int
    sent: bool = False  # the frame reached the pipe (or may have: cancelled mid-write)
    done: anyio.Event = field(default_factory=anyio.Event)
    reply: dict[str, Any] | None = None
    lost: str | None = None

    @property
    def key(self) -> bytes:
        return orjson.dumps(self.request_id)


class AdapterProcess:
    def __init__(
        self, process: PipeProcess, source_id: str, capture: Capture, started_ns: int, *, greeted: bool = False,
        ahead: tuple[int, str, WireModel] | None = None,
    ):
        self.process = process
        # written at launch (``broker.warm.prestart``): the handshake, and perhaps one request
        # more, ``ahead`` (request id, method, params)
        self.greeted = greeted
        self.pid = process.pid
        self.source_id = source_id
        self.capture = capture
        self.started_ns = started_ns
        self.manifest: Manifest | None = None
        self.slots: anyio.Semaphore | None = None
        self.cold_start_ns = 0
        self.cold_reported = False
        self.eof = False
        self.retired = False
        self.gone = anyio.Event()
        self._pending: dict[bytes, Pending] = {}
        self._last_id = 1  # the handshake is request 1
        self._ahead: tuple[str, WireModel, Pending] | None = None
        if ahead is not None:
            request_id, method, params = ahead
            self._ahead = (method, params, self._opened(Pending(request_id, sent=True)))
            self._last_id = request_id
        self._write_lock = anyio.Lock()
        self._readers = anyio.CancelScope()
        self._stopping = False

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def alive(self) -> bool:
        return not self.retired and not self.eof and self.process.returncode is None

    # -- requests --------------------------------------------------------

    def open_handshake(self) -> Pending:
        return self._opened(Pending(1))

    def open_request(self) -> Pending:
        self._last_id += 1
        return self._opened(Pending(self._last_id))

    def _opened(self, pending: Pending) -> Pending:
        if self.retired or self.eof:
            pending.done.set()
        self._pending[pending.key] = pending
        return pending

    def written_ahead(self) -> Pending | None:
        """The request written at launch after the handshake, while unanswered."""
        if self._ahead is None or self._ahead[2].done.is_set():
            return None
        return self._ahead[2]

    def take_ahead(self, method: str, params: WireModel) -> Pending | None:
        """The request written at launch, if it is this very call: the same method and
        params but for a deadline no later than ``params``'. The first call of its
        method takes it or passes it over for good: a later one would get an old answer."""
        if self._ahead is None or self._ahead[0] != method:
            return None
        _, ahead_params, pending = self._ahead
        self._ahead = None
        if type(ahead_params) is not type(params):
            return None
        deadline = params.deadline  # type: ignore[attr-defined]
        if ahead_params.deadline > deadline:  # type: ignore[attr-defined]
            return None
        if ahead_params.model_copy(update={"deadline": deadline}).to_wire() != params.to_wire():
            return None
        return pending

    def forget(self, pending: Pending) -> None:
        self._pending.pop(pending.key, None)

    async def send_handshake(self, pending: Pending, frame: bytes) -> bool:
        """Write the handshake ``frame`` (``handshake_frame``), unless the process was
        greeted with it at launch."""
        if self.greeted:
            pending.sent = True
            return not self.retired
        return await self._send(frame, pending)

    async def send_request(self, pending: Pending, method: str, params: dict[str, Any]) -> bool:
        return await self._send(encode_frame(request_frame(pending.request_id, method, params)), pending)

    async def send_cancel(self, pending: Pending) -> bool:
        return await self._send(encode_frame(notification_frame(Method.cancel, {"id": pending.request_id})))

    async def _send(self, frame: bytes, pending: Pending | None = None) -> bool:
        """Write one frame; False when the adapter can no longer be written to."""
        stdin = self.process.stdin
        if stdin is None or self.retired:
            return False
        try:
            async with self._write_lock:
                if pending is not None:
                    pending.sent = True
                await stdin.send(frame)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True

    def lose(self, why: str | None) -> None:
        """Release every waiting request: no reply will come.

        ``why`` explains a deliberate stop; None means the adapter went away.
        """
        for pending in self._pending.values():
            if not pending.done.is_set():
                pending.lost = why
                pending.done.set()

    def retire(self, why: str) -> None:
        self.retired = True
        self.lose(why)

    # -- background readers ---------------------------------------------

    async def pump(self) -> None:
        """Read stdout frames and drain stderr until the process is stopped."""
        with self._readers:
            async with anyio.create_task_group() as readers:
                readers.start_soon(self._read_frames)
                readers.start_soon(self._drain_stderr)

    async def _read_frames(self) -> None:
        assert self.process.stdout is not None
        reader = FrameReader(_chunks(self.process.stdout))
        while True:
            try:
                frame = await reader.read()
            except FrameError as exc:
                self._violation(str(exc))
                continue
            if frame is None:
                break
            self._route(frame)
        self.eof = True
        self.lose(None)

    def _route(self, frame: dict[str, Any]) -> None:
        if "method" in frame:
            self._violation(f"adapter sent {frame['method']!r}; adapters only answer requests")
            return
        key = orjson.dumps(frame.get("id"))
        pending = self._pending.get(key)
        if pending is None or pending.done.is_set():
            self._violation(f"reply to unknown or already answered id {key.decode()[:40]}")
            return
        pending.reply = frame
        pending.done.set()

    def _violation(self, what: str) -> None:
        if self.manifest is None:
            what = f"before the handshake reply: {what}"
        self.capture.violation(what)

    async def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        receive = _chunks(self.process.stderr)
        partial = bytearray()
        while chunk := await receive():
            partial.extend(chunk)
            *lines, rest = partial.split(b"\n")
            for line in lines:
                self.capture.stderr_line(bytes(line))
            partial = bytearray(rest)
            if len(partial) > STDERR_LINE_BYTES:
                self.capture.stderr_line(bytes(partial))
                partial.clear()
        if partial:
            self.capture.stderr_line(bytes(partial))

    # -- ending ---------------------------------------------------------

    async def exit_status(self, wait: float) -> int | None:
        """The exit status, waiting up to ``wait`` seconds for the process to end."""
        with anyio.move_on_after(wait):
            await self.process.wait()
        return self.process.returncode

    async def stop(self, term_grace: float, *, shutdown: bool) -> None:
        """End the process and everything in its group; bounded, idempotent, uncancellable.

        With ``shutdown`` the adapter is first asked to exit (``recall/shutdown``)
        and given ``term_grace`` to do so; otherwise stdin is closed and a quarter
        of the grace allowed. Then SIGTERM, then SIGKILL, to the whole group, each
        after ``term_grace``. Finally the group is swept with SIGKILL, because a
        clean exit of the adapter says nothing of the helpers it started.
        """
        if self._stopping:
            await self.gone.wait()
            return
        self._stopping = True
        with anyio.CancelScope(shield=True):
            try:
                if shutdown and self.alive and self.manifest is not None:
                    with anyio.move_on_after(term_grace):
                        await self._request_shutdown()
                self.retire("the adapter process was stopped")
                await self._close_stdin()
                first_wait = term_grace if shutdown else term_grace / 4
                if await self.exit_status(first_wait) is None:
                    self._signal_group(signal.SIGTERM)
                    self._signal_group(signal.SIGCONT)  # a stopped process only sees SIGTERM once continued
                    if await self.exit_status(term_grace) is None:
                        self._signal_group(signal.SIGKILL)
                        await self.exit_status(term_grace)
            finally:
                self._signal_group(signal.SIGKILL)
                with anyio.move_on_after(term_grace):
                    while _group_has_live_members(self.pid):
                        await anyio.sleep(GROUP_POLL_INTERVAL)
                self._readers.cancel()
                self.retire("the adapter process was stopped")
                await self._release_pipes(term_grace)
                self.gone.set()

    async def _request_shutdown(self) -> None:
        pending = self.open_request()
        try:
            if await self.send_request(pending, Method.shutdown, {}):
                await pending.done.wait()
        finally:
            self.forget(pending)

    async def _close_stdin(self) -> None:
        if self.process.stdin is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self.process.stdin.aclose()

    async def _release_pipes(self, wait: float) -> None:
        """Close our ends of the pipes; a dead child is reaped, an unkillable one is not
        waited for."""
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stream.aclose()
        if self.process.returncode is None and not _running(self.pid):
            await self.exit_status(max(wait, REAP_WAIT))

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            # it left its group. Signal the pid directly: it is ours until reaped, and
            # reading returncode reaps it if it has ended, so a reused pid is never hit
            if self.process.returncode is None and _running(self.pid):
                with suppress(ProcessLookupError, PermissionError):
                    os.kill(self.pid, sig)


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs; a zombie awaiting its reaper does not. Unknown: it runs."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return not Path("/proc/self").exists()
    except (OSError, IndexError):
        return True
    return state != "Z"


def _group_has_live_members(pgid: int) -> bool:
    """Whether anything still runs in the group. Zombies do not count: they hold nothing."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    proc = Path("/proc")
    if not proc.is_dir():
        return True  # members exist, possibly only zombies; the caller's bound ends the wait
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _ppid, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if int(group) == pgid and state != "Z":
            return True
    return False


async def spawn(
    spec: AdapterSpec, capture: Capture, tasks: TaskGroup, prestarted: prestart.Prestarted | None = None
) -> AdapterProcess:
    """Start the adapter in its own process group (or adopt the one a cold command
    started for this very spec in ``prestarted``, greeted with its handshake or not
    at all, ``broker.warm.prestart``); its readers run in ``tasks``."""
    greeting = handshake_frame(spec.init_params)
    wanted = prestart.key(spec.source_uid, spec.argv, spec.env, spec.workdir, spec.cwd, spec.pass_env)
    launched = prestarted.take(wanted, greeting) if prestarted is not None else None
    if launched is not None:
        popen, started_ns = launched.process, launched.started_ns
    else:
        env = adapter_environment(os.environ, spec.pass_env, spec.env)
        command = _resolve_command(spec, env)
        try:
            spec.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise _spawn_failure(spec, f"cannot create its workdir {spec.workdir}: {exc}") from None
        started_ns = time.perf_counter_ns()
        try:
            popen = prestart.launch(command, spec.argv, env, spec.cwd)
        except OSError as exc:
            raise _spawn_failure(spec, f"cannot start {spec.argv[0]!r}: {exc}") from None
    greeted = launched is not None and launched.greeting == greeting
    adapter = AdapterProcess(
        PipeProcess(popen), spec.source_id, capture, started_ns, greeted=greeted,
        ahead=launched.ahead if launched is not None and greeted else None,
    )
    tasks.start_soon(adapter.pump)
    return adapter


def _resolve_command(spec: AdapterSpec, env: dict[str, str]) -> str:
    if not spec.argv or not spec.argv[0]:
        raise _spawn_failure(spec, "no adapter command is configured")
    found = prestart.resolve_command(spec.argv[0], env)
    if found is None:
        raise _spawn_failure(spec, f"command {spec.argv[0]!r} is not on PATH")
    return found


def _spawn_failure(spec: AdapterSpec, what: str) -> AdapterFailure:
    return AdapterFailure(
        SearchOutcome.unavailable,
        FailureReason.spawn_failed,
        f'source "{spec.source_id}": {what}; check the adapter command and workdir in the '
        "configuration",
    )


def _chunks(stream: PipeReceiveStream) -> Callable[[], Awaitable[bytes]]:
    async def receive() -> bytes:
        try:
            return await stream.receive(_READ_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            return b""

    return receive
