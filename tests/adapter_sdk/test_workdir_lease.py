"""``adapter_sdk.workdir.lease``: one process at a time holds a workdir's lease, and a
process that dies lets go of it."""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import pytest

from adapter_sdk.workdir import held_for, lease
from tests.support.lease_holder import lease_held_elsewhere, let_go


def test_a_lease_another_process_holds_is_refused_until_it_lets_go(tmp_path: Path) -> None:
    with lease_held_elsewhere(tmp_path, "index-work") as holder:
        with lease(tmp_path, "index-work") as held:
            assert held is False
        with lease(tmp_path, "rank-work") as other:  # each name is a lease of its own
            assert other is True
        let_go(holder)
    with lease(tmp_path, "index-work") as held:
        assert held is True
    assert stat.S_IMODE(os.stat(tmp_path / "index-work.lock").st_mode) == 0o600


def test_a_refused_taker_learns_how_long_the_holder_has_had_the_lease(tmp_path: Path) -> None:
    """What tells a waiting search whether the other process's work is a short one."""
    assert held_for(tmp_path, "index-work") == 0.0  # never taken
    with lease(tmp_path, "index-work"):
        pass
    old = time.time() - 60
    os.utime(tmp_path / "index-work.lock", (old, old))  # taken a minute ago, then let go
    with lease_held_elsewhere(tmp_path, "index-work") as holder:
        time.sleep(0.3)
        assert 0.3 <= held_for(tmp_path, "index-work") < 30, "the holder's taking was not stamped"
        let_go(holder)


def test_a_killed_holder_leaves_no_lease_behind(tmp_path: Path) -> None:
    with lease_held_elsewhere(tmp_path, "index-work") as holder:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        with lease(tmp_path, "index-work") as held:
            assert held is True


def test_a_second_taker_in_one_process_is_refused_too(tmp_path: Path) -> None:
    with lease(tmp_path, "index-work") as first:
        with lease(tmp_path, "index-work") as second:
            assert (first, second) == (True, False)


def test_a_link_planted_as_the_lock_file_is_not_followed(tmp_path: Path) -> None:
    """A workdir is the adapter's own, but a link left there must not make the lease
    create or truncate a file elsewhere."""
    target = tmp_path / "elsewhere.txt"
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "index-work.lock").symlink_to(target)
    with pytest.raises(OSError), lease(tmp_path / "work", "index-work"):
        pass
    assert not target.exists()
