"""Request threads are reused: what a handler keeps per thread serves later requests."""

from __future__ import annotations

import threading
import time

from adapter_sdk.workers import Workers


def _run_and_wait(workers: Workers, fn: object) -> None:
    done = threading.Event()

    def call() -> None:
        fn()  # type: ignore[operator]
        done.set()

    workers.run(call)
    assert done.wait(5)


def _settle(workers: Workers, idle: int) -> None:
    deadline = time.monotonic() + 5
    while workers.idle() != idle and time.monotonic() < deadline:
        time.sleep(0.005)
    assert workers.idle() == idle


def test_a_finished_worker_serves_the_next_call() -> None:
    workers = Workers("test")
    seen: list[int] = []
    for _ in range(5):
        _run_and_wait(workers, lambda: seen.append(threading.get_ident()))
        _settle(workers, 1)
    assert len(set(seen)) == 1


def test_a_busy_worker_never_delays_another_call() -> None:
    workers = Workers("test")
    release = threading.Event()
    workers.run(release.wait)
    ran = threading.Event()
    workers.run(ran.set)  # the first worker is still busy: this one gets a thread of its own
    assert ran.wait(5)
    release.set()
    _settle(workers, 2)


def test_an_idle_worker_exits_after_its_wait() -> None:
    workers = Workers("test", idle_exit_s=0.05)
    names: list[threading.Thread] = []
    _run_and_wait(workers, lambda: names.append(threading.current_thread()))
    names[0].join(5)
    assert not names[0].is_alive()
    assert workers.idle() == 0
    _run_and_wait(workers, lambda: names.append(threading.current_thread()))  # a new one starts
    assert names[1] is not names[0]


def test_a_call_raising_ends_only_its_own_worker() -> None:
    workers = Workers("test")
    hook, caught = threading.excepthook, threading.Event()
    threading.excepthook = lambda args: caught.set()
    try:
        workers.run(lambda: 1 / 0)
        assert caught.wait(5)
    finally:
        threading.excepthook = hook
    assert workers.idle() == 0
    ran = threading.Event()
    workers.run(ran.set)
    assert ran.wait(5)
