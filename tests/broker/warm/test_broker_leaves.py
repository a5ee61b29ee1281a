"""A broker leaves within seconds, without waiting for a command, once what it serves is gone.

Temporary configurations (a test run's, a throw-away project's) used to leave their
brokers and warm adapters running against deleted folders until the idle limit. No
command sent here: the broker notices by itself.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

import pytest

from .conftest import alive, wait_gone

LEAVES_WITHIN_SECONDS = 5.0


def installed_record() -> Path | None:
    """The RECORD file of the installed distribution, which every install rewrites."""
    from importlib import metadata

    try:
        listed = metadata.distribution("recall-broker").files or []
    except metadata.PackageNotFoundError:
        return None
    return next((Path(str(entry.locate())) for entry in listed if entry.name == "RECORD"), None)


def _leaves(resident, pid: int) -> None:
    assert wait_gone(pid, LEAVES_WITHIN_SECONDS), f"the broker was still running after {LEAVES_WITHIN_SECONDS}s"


def _said(resident, why: str) -> None:
    (log,) = (resident.runtime / "recall").glob("*.log")
    assert f"resident broker left: {why}" in log.read_text()


def test_a_broker_leaves_when_its_configuration_file_is_removed(resident):
    pid = resident.start()
    resident.config_file.unlink()
    _leaves(resident, pid)
    _said(resident, f"{resident.config_file} was removed")
    assert resident.sockets() == []


def test_a_broker_leaves_when_its_state_folder_is_removed(resident):
    pid = resident.start()
    state = Path(resident.env["XDG_STATE_HOME"]) / "recall"
    assert state.is_dir()
    shutil.rmtree(state)
    _leaves(resident, pid)
    _said(resident, f"its state folder {state} was removed")


def test_a_broker_leaves_when_its_whole_temporary_configuration_is_removed(resident):
    pid = resident.start()
    adapters = _children(pid)
    assert adapters
    for folder in ("config", "state", "cache"):
        shutil.rmtree(resident.root / folder, ignore_errors=True)
    _leaves(resident, pid)
    assert not any(alive(child) for child in adapters)


def test_a_broker_leaves_when_its_socket_file_is_removed(resident):
    pid = resident.start()
    (socket_path,) = resident.sockets()
    socket_path.unlink()
    _leaves(resident, pid)
    _said(resident, f"its socket {socket_path} was removed")


def test_a_broker_leaves_when_its_socket_file_is_replaced_and_leaves_the_new_one(resident):
    pid = resident.start()
    (socket_path,) = resident.sockets()
    successor = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with successor:
        staging = socket_path.with_name("successor")
        successor.bind(str(staging))
        os.replace(staging, socket_path)
        successors = socket_path.stat().st_ino
        _leaves(resident, pid)
        _said(resident, f"its socket {socket_path} was replaced")
        assert socket_path.stat().st_ino == successors, "the successor's socket was left in place"


@pytest.mark.skipif(installed_record() is None, reason="recall is not installed as a distribution")
def test_a_broker_leaves_when_the_installed_program_changes(resident):
    pid = resident.start()
    record = installed_record()
    assert record is not None
    later = time.time() + 1
    os.utime(record, (later, later))  # what any reinstall or upgrade does to it
    _leaves(resident, pid)
    _said(resident, f"the installed program changed ({record})")


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found
