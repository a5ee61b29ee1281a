"""Run one supervisor scenario under a child watcher that reports exits late, as a loaded machine does.

``python late_reaper.py SCENARIO TMPDIR`` prints the pid of each adapter it
started; asyncio's own warnings go to stderr, which the test reads. Scenarios:
  cancelled_spawn   a spawn whose caller is cancelled while the child starts
  dead_before_stop  an adapter that died on its own, stopped before its exit is reported
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import anyio

from broker.supervise.process import Capture, spawn
from tests.broker.supervise.conftest import RAW_ADAPTER, spec_for

REPORT_DELAY = 0.4  # well inside the stop's grace: a stop that waits for the reaper sees it


class LateReaper(asyncio.ThreadedChildWatcher):
    def _do_waitpid(self, loop, expected_pid, callback, args):  # type: ignore[no-untyped-def]
        time.sleep(REPORT_DELAY)
        super()._do_waitpid(loop, expected_pid, callback, args)


async def cancelled_spawn(tmp: Path) -> None:
    async with anyio.create_task_group() as tasks:
        adapter = None
        with anyio.CancelScope() as scope:
            scope.cancel()
            adapter = await spawn(spec_for(tmp, RAW_ADAPTER, "plain"), Capture(), tasks)
            await anyio.sleep(0)  # where the caller takes its cancellation
        if adapter is not None:
            print(adapter.pid)
            await adapter.stop(2.0, shutdown=False)
        tasks.cancel_scope.cancel()


async def dead_before_stop(tmp: Path) -> None:
    async with anyio.create_task_group() as tasks:
        adapter = await spawn(spec_for(tmp, RAW_ADAPTER, "plain"), Capture(), tasks)
        print(adapter.pid)
        os.kill(adapter.pid, signal.SIGKILL)
        await adapter.stop(0.02, shutdown=False)
        tasks.cancel_scope.cancel()


if __name__ == "__main__":
    asyncio.set_child_watcher(LateReaper())
    scenario, tmp = sys.argv[1], Path(sys.argv[2])
    anyio.run({"cancelled_spawn": cancelled_spawn, "dead_before_stop": dead_before_stop}[scenario], tmp)
    time.sleep(REPORT_DELAY * 2)  # let any late report arrive, to a loop that is now closed
