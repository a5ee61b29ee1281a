"""The broker's files in its folder are never opened through a symlink.

A symlink left in the folder (planted while it was loose, say) at the name of the
broker's log, start lock or failed-start mark, pointing at a private file of the
user's, is replaced by the broker's own file; the file it pointed at is untouched.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from broker.warm.daemon.socket_location import configuration_key

from .conftest import broker_pids

PRIVATE = "ssh-ed25519 AAAA... the user's own, mode 0600\n"


@pytest.fixture
def private_file(tmp_path: Path) -> Path:
    path = tmp_path / "id_ed25519.pub"
    path.write_text(PRIVATE)
    path.chmod(0o600)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    return path


def _plant(resident, private_file: Path, *suffixes: str) -> list[Path]:
    folder = resident.runtime / "recall"
    folder.mkdir(mode=0o700, exist_ok=True)
    key = configuration_key(resident.env, str(resident.root))
    links = [folder / f"{key}.{suffix}" for suffix in suffixes]
    for link in links:
        link.symlink_to(private_file)
    return links


def _untouched(path: Path) -> bool:
    info = path.stat()
    return path.read_text() == PRIVATE and info.st_mtime_ns == 1_000_000_000 and stat.S_IMODE(info.st_mode) == 0o600


def _own_regular_file(path: Path) -> bool:
    info = path.lstat()
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o600


def test_daemon_start_replaces_symlinks_at_its_log_and_lock(resident, private_file):
    links = _plant(resident, private_file, "log", "lock")
    resident.start()
    assert _untouched(private_file)
    assert all(_own_regular_file(link) for link in links)


def test_a_background_start_replaces_symlinks_at_its_log_and_lock(resident, private_file):
    links = _plant(resident, private_file, "log", "lock")
    assert resident.recall("query", "restore", "drill").returncode == 0
    resident.started_broker()
    assert _untouched(private_file)
    assert all(_own_regular_file(link) for link in links)


def test_a_failed_start_replaces_a_symlink_at_its_mark(resident, private_file):
    resident.config_file.write_text(resident.config_file.read_text() + "\n[profiles.default\n")
    links = _plant(resident, private_file, "log", "lock", "failed")
    assert resident.recall("daemon", "start").returncode == 1
    assert _untouched(private_file)
    assert all(_own_regular_file(link) for link in links)
    assert broker_pids(resident.runtime) == []
