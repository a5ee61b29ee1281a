"""Adapter processes launched before the broker is imported, for one cold command.

A cold ``recall query`` spends most of its time importing the broker, and an
adapter spends most of its start-up importing itself; started first, the adapter
boots on another CPU meanwhile. :func:`launch` starts a process exactly as
:func:`broker.supervise.process.spawn` does (its own session, pipes for stdin,
stdout and stderr, the workdir created 0700). :func:`start` does so ahead of
time and, given a greeting, writes the handshake the spawn would write, so the
adapter has opened its source by the time the broker asks anything (a source a
project file declares is never greeted: its settings are vetted first); given a
request ``ahead`` too, it writes that next: the health probe the broker makes
first, answered while the broker is still importing the code that reads the
answer (the search still waits for it, as the plan orders). The process is kept
under what ``spawn`` will be asked for, in the :class:`Prestarted` the command
owns and hands to its supervisor, which takes it (:meth:`Prestarted.take`), with
the request written ahead, if it was greeted with the spawn's own handshake or
not at all; :meth:`Prestarted.discard` ends and reaps every one never taken, so
none outlives the command. Standard library only: this runs before anything else.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from broker import parent_death
from broker.adapter_environment import adapter_environment

# (source_uid, argv, env, workdir, cwd, pass_env): what a spawn must be asked for to adopt
# a process
Key = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], str, str | None, tuple[str, ...]]
DISCARD_WAIT = 2.0
# A pipe holds at least a page, so this much is written at once, whether or not the
# adapter reads yet; more could wait on an adapter that never reads: a longer greeting
# is left to the spawn to write, a request that does not fit is not written ahead.
MAX_GREETING_BYTES = 4096
AHEAD_ID = 2  # the id of a request written ahead: the handshake is request 1
# (method, params, frame): a request written ahead, and what the spawn is told it asked
Ahead = tuple[str, Any, bytes]


class Launched:
    """A process started ahead of its spawn: the handshake it was greeted with (empty:
    none), and the request written to it next as ``(request id, method, params)``."""

    __slots__ = ("process", "started_ns", "greeting", "ahead")

    def __init__(self, process: subprocess.Popen[bytes], started_ns: int, greeting: bytes) -> None:
        self.process = process
        self.started_ns = started_ns  # perf_counter_ns at launch
        self.greeting = greeting
        self.ahead: tuple[int, str, Any] | None = None


def key(
    source_uid: str, argv: Sequence[str], env: Mapping[str, str], workdir: Path | str, cwd: str | None,
    pass_env: Sequence[str] = (),
) -> Key:
    return (source_uid, tuple(argv), tuple(sorted(env.items())), str(workdir), cwd, tuple(pass_env))


def resolve_command(command: str, env: Mapping[str, str]) -> str | None:
    """The program ``command`` names: itself when it holds a path, else found on
    ``env``'s PATH; None when it is not there."""
    if os.sep in command:
        return command
    return shutil.which(command, path=env.get("PATH", os.defpath))


def launch(command: str, argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> subprocess.Popen[bytes]:
    """Start ``command`` with ``argv[1:]`` and exactly the environment ``env`` (made by
    :func:`broker.adapter_environment.adapter_environment`) in a session of its own, so
    its process group holds everything it starts, killed when this process dies
    (:mod:`broker.parent_death`); raises OSError when it cannot be started."""
    return subprocess.Popen(
        [command, *argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=dict(env), cwd=cwd, start_new_session=True, bufsize=0,
        preexec_fn=parent_death.death_hook(),
    )


def _launched(
    argv: Sequence[str], environment: Mapping[str, str], workdir: Path | str, cwd: str | None, greeting: bytes
) -> Launched | None:
    if len(greeting) > MAX_GREETING_BYTES:
        greeting = b""  # launched all the same; its spawn writes the handshake
    command = resolve_command(argv[0], environment)
    if command is None:
        return None
    try:
        Path(workdir).mkdir(mode=0o700, parents=True, exist_ok=True)
        started_ns = time.perf_counter_ns()
        process = launch(command, argv, environment, cwd)
    except OSError:
        return None
    if greeting and not _write(process, greeting):
        _end(process)
        return None
    return Launched(process, started_ns, greeting)


class Prestarted:
    """The processes one command started ahead of their spawn, by what a spawn must be
    asked for to adopt each; the command discards what its broker did not take."""

    def __init__(self) -> None:
        self._started: dict[Key, Launched] = {}

    def start(
        self, source_uid: str, argv: Sequence[str], env: Mapping[str, str], workdir: Path | str, cwd: str | None,
        greeting: bytes = b"", ahead: Ahead | None = None, pass_env: Sequence[str] = (),
    ) -> None:
        """Launch one source's adapter ahead of its spawn, unless one is launched for it
        already, and write it ``greeting`` (its handshake request, if given) and then
        ``ahead`` (a request framed under :data:`AHEAD_ID`, if given, once). Anything
        that stops it (no such program, a workdir that cannot be made, an adapter gone
        before it was greeted) is left for the spawn to meet and report."""
        wanted = key(source_uid, argv, env, workdir, cwd, pass_env)
        if not argv or not argv[0]:
            return
        environment = adapter_environment(os.environ, pass_env, env)
        launched = self._started.get(wanted) or _launched(argv, environment, workdir, cwd, greeting)
        if launched is None:
            return
        self._started[wanted] = launched
        if ahead is None or not launched.greeting or launched.ahead is not None:
            return
        method, params, frame = ahead
        if len(launched.greeting) + len(frame) > MAX_GREETING_BYTES:
            return  # the broker asks it itself
        if not _write(launched.process, frame):  # gone, or left with part of a frame
            del self._started[wanted]
            _end(launched.process)
            return
        launched.ahead = (AHEAD_ID, method, params)

    def take(self, wanted: Key, greeting: bytes) -> Launched | None:
        """The process started for ``wanted``, if one was, still runs, and was greeted with
        ``greeting`` or not at all; it is the caller's from here on. One greeted otherwise
        is ended."""
        found = self._started.pop(wanted, None)
        if found is None:
            return None
        if found.process.poll() is not None or found.greeting not in (b"", greeting):
            _end(found.process)
            return None
        return found

    def discard(self) -> None:
        """End every process started and never taken, with everything in its group."""
        while self._started:
            _, launched = self._started.popitem()
            _end(launched.process)


def _write(process: subprocess.Popen[bytes], data: bytes) -> bool:
    """Whether ``data`` (no more than a pipe holds) went to the process's stdin whole."""
    assert process.stdin is not None
    try:
        return process.stdin.write(data) == len(data)
    except OSError:
        return False


def _end(process: subprocess.Popen[bytes]) -> None:
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(DISCARD_WAIT)
    except subprocess.TimeoutExpired:
        pass
