"""Waiting for an adapter process to end: its status, however and whenever it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import anyio
import pytest

from broker.supervise.pipes import PipeProcess


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _started(code: str) -> PipeProcess:
    return PipeProcess(subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
    ))


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.anyio
async def test_the_status_of_a_process_ending_later_is_the_one_it_exits_with() -> None:
    process = _started("import time, sys; time.sleep(0.2); sys.exit(3)")
    assert process.returncode is None
    assert await process.wait() == 3
    assert await process.wait() == 3  # reaped once, told again


@pytest.mark.anyio
async def test_a_killed_process_is_reported_by_its_signal() -> None:
    process = _started("import time; time.sleep(30)")
    os.killpg(process.pid, signal.SIGKILL)
    assert await process.wait() == -signal.SIGKILL


@pytest.mark.anyio
async def test_a_wait_given_up_leaves_nothing_open_and_can_be_taken_up_again() -> None:
    process = _started("import sys; sys.stdin.read()")
    before = _open_descriptors()
    with anyio.move_on_after(0.1):
        await process.wait()
    assert process.returncode is None
    assert _open_descriptors() == before
    os.killpg(process.pid, signal.SIGTERM)
    assert await process.wait() == -signal.SIGTERM
