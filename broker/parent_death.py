"""An adapter process dies with the process that started it, whatever it does with stdin.

A broker ends its adapters itself when it can (:meth:`broker.supervise.process.
AdapterProcess.stop` signals each adapter's process group), and an adapter built
on the SDK leaves when its stdin closes. Neither helps when the broker is killed
outright (``kill -9``, the OOM killer) and the adapter ignores the end of its
stdin: it would be re-parented to init and run on. So on Linux each adapter is
started with ``PR_SET_PDEATHSIG`` set to ``SIGKILL``: the kernel kills it the
moment the thread that started it ends.

Why a ``preexec_fn`` and not a launcher or a watcher:

* a launcher program (``setpriv --pdeathsig``) is one more program that must be
  installed and one more ``exec`` per adapter; a Python launcher costs a whole
  interpreter start;
* a watcher process that kills the broker's groups once it sees the broker gone
  would have to track process-group ids, which the system reuses: after a
  group ended, it could kill a stranger's;
* the usual hazard of ``preexec_fn`` in a threaded program is a lock held by
  another thread at ``fork``, which the child then waits on forever. The hook
  here takes no lock and allocates nothing worth naming: it calls a C function
  resolved in the parent beforehand, with integer arguments, and reads its
  parent's pid. It costs the spawn a ``fork`` where ``vfork`` would do: measured,
  about 1 ms of this process's CPU and 1 ms of the child's per adapter, and
  loading ``ctypes`` once costs a command about 1.7 ms.

The signal follows the *thread* that forked, not the process, so it is asked for
only from the main thread, where every recall entry point runs its event loop and
spawns its adapters; a spawn from any other thread (whose end would kill a healthy
adapter) gets its own process group only. A parent that died between ``fork`` and
``prctl`` is caught by comparing the parent pid afterwards. Elsewhere than Linux
there is no such call, and adapters keep the process-group stop alone.

Standard library only: :mod:`broker.warm.prestart` launches adapters before the broker
is imported.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_prctl: Callable[..., int] | None = None


def death_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child killed when this thread ends, or None where
    none applies (not Linux, not the main thread, no ``prctl`` to call)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    prctl = _resolved_prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def die_with_parent() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return die_with_parent


def _resolved_prctl() -> Callable[..., int] | None:
    global _prctl
    if _prctl is None:
        import ctypes

        try:
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            return None
    return _prctl
