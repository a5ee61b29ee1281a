"""Every resident broker of this user, whatever configuration or runtime folder it serves.

``recall daemon status`` and ``stop`` reach the broker of the current environment
by its socket; a user with brokers of other configurations (temporary ones, a
test run's, another project's) needs them all. They are found among the running
processes (Linux ``/proc``): a process of this user whose command line runs
``daemon run`` of recall. Each is asked about itself over its socket, through the
same checks as any command; one that does not answer (its socket was removed) is
still listed, from what ``/proc`` says, and stopped with ``SIGTERM``.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Any

PROC = "/proc"
ENTRY_POINTS = ("broker.surfaces.cli", "recall")  # ``python -m broker.surfaces.cli`` or the script


@dataclass(frozen=True)
class Broker:
    pid: int
    socket: str | None  # from its command line; None when started without ``--socket``
    started_at: float  # seconds since the epoch
    memory_bytes: int  # resident memory of the broker and every process it started
    state: dict[str, Any] | None  # what it says about itself; None when it does not answer

    def as_json(self) -> dict[str, Any]:
        state = self.state or {}
        return {
            "pid": self.pid,
            "socket": self.socket,
            "answering": self.state is not None,
            "config_file": state.get("config_file"),
            "project_file": state.get("project_file"),
            "started_at": self.started_at,
            "idle_seconds": state.get("idle_seconds"),
            "memory_bytes": self.memory_bytes,
        }


@dataclass(frozen=True)
class Process:
    pid: int
    parent: int
    argv: list[str]
    started_at: float
    resident_bytes: int


def running_brokers() -> list[Broker]:
    """This user's resident brokers, oldest first."""
    processes = {process.pid: process for process in own_processes()}
    children: dict[int, list[int]] = {}
    for process in processes.values():
        children.setdefault(process.parent, []).append(process.pid)
    found = []
    for process in processes.values():
        socket_path = broker_socket(process.argv)
        if socket_path is None:
            continue
        memory = sum(processes[pid].resident_bytes for pid in tree(process.pid, children) if pid in processes)
        found.append(Broker(process.pid, socket_path or None, process.started_at, memory, ask(socket_path)))
    return sorted(found, key=lambda broker: (broker.started_at, broker.pid))


def broker_socket(argv: list[str]) -> str | None:
    """The socket path of a broker's command line, ``""`` if it names none; None when
    ``argv`` is not a resident broker's."""
    for at in range(1, len(argv) - 1):
        if argv[at : at + 2] == ["daemon", "run"] and os.path.basename(argv[at - 1]) in ENTRY_POINTS:
            rest = argv[at + 2 :]
            for index, arg in enumerate(rest):
                if arg == "--socket" and index + 1 < len(rest):
                    return rest[index + 1]
                if arg.startswith("--socket="):
                    return arg.split("=", 1)[1]
            return ""
    return None


def ask(socket_path: str) -> dict[str, Any] | None:
    from broker.warm.daemon.socket_location import UnusablePlace
    from broker.warm.daemon.thin_client import NotListening, exchange

    if not socket_path:
        return None
    try:
        status, state = exchange(socket_path, "GET", "/v1/daemon")
    except (NotListening, UnusablePlace, OSError):
        return None
    return state if status == 200 and isinstance(state, dict) else None


def stop_all(brokers: list[Broker], wait_seconds: float) -> list[int]:
    """Ask each broker to leave (one that does not answer is sent ``SIGTERM``), then wait
    for all of them; the pids still running after ``wait_seconds`` are sent ``SIGTERM`` and
    returned."""
    from broker.warm.daemon.socket_location import UnusablePlace
    from broker.warm.daemon.thin_client import NotListening, exchange

    for broker in brokers:
        try:
            if broker.state is None or broker.socket is None:
                raise NotListening(str(broker.socket))
            exchange(broker.socket, "POST", "/v1/daemon/stop")
        except (NotListening, UnusablePlace, OSError):
            terminate(broker.pid)
    deadline = time.monotonic() + wait_seconds
    left = [broker.pid for broker in brokers]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [pid for pid in left if running(pid)]
    for pid in left:
        terminate(pid)
    return left


def terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def running(pid: int) -> bool:
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def tree(root: int, children: dict[int, list[int]]) -> list[int]:
    """``root`` and all its descendants."""
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending += children.get(pid, [])
    return found


def own_processes() -> list[Process]:
    """Every process of this user that ``/proc`` shows."""
    uid, page, ticks, booted = os.getuid(), os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_CLK_TCK"), boot_time()
    found = []
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            with open(f"{PROC}/{entry.name}/cmdline", "rb") as handle:
                argv = handle.read().decode("utf-8", "surrogateescape").split("\0")[:-1]
            with open(f"{PROC}/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            with open(f"{PROC}/{entry.name}/statm", "rb") as handle:
                resident_pages = int(handle.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # it ended while being read
        # after the command name: state, ppid, ... starttime is the 20th field
        found.append(Process(int(entry.name), int(fields[1]), argv, booted + int(fields[19]) / ticks,
                             resident_pages * page))
    return found


def boot_time() -> float:
    with open(f"{PROC}/stat", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0
