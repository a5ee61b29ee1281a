"""The collector is kept off start-up and loading work, and never off for good."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator

import orjson
import pytest

from adapter_sdk.collector import YOUNG_THRESHOLD, keep_what_is_built, loading, start_quietly


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_loading_keeps_what_it_built_and_turns_the_collector_back_on() -> None:
    before = gc.get_freeze_count()
    with loading():
        assert not gc.isenabled()
        built = [[n] for n in range(5_000)]  # lists: objects the collector tracks
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(built)


def test_loading_collects_the_cycles_made_before_it_rather_than_keeping_them() -> None:
    collected: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            collected.append(info["collected"])

    first, second = Node(), Node()
    first.other, second.other = second, first
    del first, second  # a cycle: only the collector frees it
    gc.callbacks.append(count)
    try:
        with loading():
            pass
    finally:
        gc.callbacks.remove(count)
    assert sum(collected) >= 2


def test_loading_leaves_a_collector_someone_else_turned_off_off() -> None:
    gc.disable()
    with loading():
        pass
    assert not gc.isenabled()


def test_what_is_kept_is_still_freed_when_dropped() -> None:
    built = [[n] for n in range(100)]  # lists: objects the collector tracks
    keep_what_is_built()
    kept = gc.get_freeze_count()
    del built
    assert gc.get_freeze_count() <= kept - 100


def test_an_adapter_keeps_what_its_handshake_built() -> None:
    from adapter_sdk import server
    from adapter_sdk.protocol import InitializeParams, Manifest, handshake_frame

    class Loading(server.Adapter):
        def initialize(self, params: InitializeParams) -> Manifest:
            self.index = [[n] for n in range(1_000)]  # what a real adapter opens or loads
            return Manifest(
                protocol_version=1, adapter_id="toy/1", display_name="Toy", record_types=["note"],
                query_modes=["lexical"], freshness_modes=["live"], as_of_support="none",
                relevance_basis="lexical_span", capabilities=["search"], sensitivity="internal",
            )

    replies: list[bytes] = []
    session = server._ThreadedSession(Loading(), replies.append)
    frames = iter([orjson.loads(handshake_frame(InitializeParams(
        protocol_version_min=1, protocol_version_max=1, workdir="/nonexistent", source_id="toy",
    ))), None])
    gc.unfreeze()
    usual = gc.get_threshold()
    start_quietly()  # as an adapter's entry point does
    session.run(lambda: next(frames))
    assert b'"result"' in replies[0]
    assert gc.get_freeze_count() >= 1_000
    assert gc.get_threshold() == usual  # its requests are collected as often as ever


def collector_of(*arguments: str) -> str:
    """What the ``recall`` command's collector is set to as the command runs."""
    probe = (
        "import gc\n"
        "import broker.surfaces.cli as cli\n"
        "import broker.warm.daemon.thin_client as client\n"
        "def dispatch(argv, io, **_):\n"
        "    print(gc.isenabled(), gc.get_threshold()[0])\n"
        "    return 0\n"
        "cli.dispatch = dispatch\n"
        "client.forward = lambda argv: (None, None)\n"
        f"cli.main({list(arguments)!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    return done.stdout.strip()


def test_a_command_that_ends_within_seconds_runs_without_the_collector() -> None:
    assert collector_of("query", "backup").startswith("False ")


@pytest.mark.parametrize("command", ["serve", "mcp", "daemon", "refresh", "eval"])
def test_a_lasting_command_keeps_collecting(command: str) -> None:
    assert collector_of(command) == f"True {YOUNG_THRESHOLD}"


def test_loads_overlapping_in_threads_leave_the_collector_as_they_found_it() -> None:
    import threading

    gc.enable()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    while_second_loads: list[bool] = []

    def first() -> None:
        with loading():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with loading():
            second_in.set()
            first_out.wait(5)  # the first load ends while this one still runs
            while_second_loads.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert while_second_loads == [False]  # one pause for both: it ends with the last
    assert gc.isenabled()
