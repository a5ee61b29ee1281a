"""Adapters learn that a long-lived broker spawned them, and only then.

The resident broker marks itself at start (``adapter_sdk.residence``): its
adapters inherit the mark, naming their parent; a cold command's adapters never
carry a mark naming theirs, not even from a shell that inherited one. The mark
leaves the key the thin client computes as it was: the next command reaches the
broker that marked itself.
"""

from __future__ import annotations

import subprocess
import sys

from adapter_sdk.residence import LONG_LIVED_ENV, long_lived, mark_long_lived
from tests.broker.warm.conftest import Resident
from tests.broker.warm.test_adapter_environment import ask, configure, start, status


def test_only_an_adapter_of_the_resident_broker_is_told_it_is_long_lived(resident: Resident) -> None:
    configure(resident)
    inherited = {LONG_LIVED_ENV: "4242"}  # a shell started from a broker's process tree
    assert ask(resident, LONG_LIVED_ENV, {}, cold=True) == "<unset>"
    assert ask(resident, LONG_LIVED_ENV, inherited, cold=True) == "4242"  # naming another process

    broker = start(resident, {})["pid"]
    assert ask(resident, LONG_LIVED_ENV, {}) == str(broker)  # its parent's id: believed
    assert ask(resident, LONG_LIVED_ENV, {}) == str(broker)
    assert status(resident, {})["commands_served"] == 2  # reached by the key it started under
    assert len(resident.sockets()) == 1


CHILD = "import sys; from adapter_sdk.residence import long_lived; print(long_lived())"


def test_a_mark_is_believed_from_the_parent_that_set_it_only() -> None:
    environ: dict[str, str] = {}
    mark_long_lived(environ)
    assert not long_lived(environ)  # this process marked itself: it is no adapter of its own
    child = subprocess.run([sys.executable, "-c", CHILD], env={**environ, "PYTHONPATH": ":".join(sys.path)},
                           capture_output=True, text=True, check=True)
    assert child.stdout.strip() == "True"
    grandchild = subprocess.run(
        [sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {CHILD!r}])"],
        env={**environ, "PYTHONPATH": ":".join(sys.path)}, capture_output=True, text=True, check=True,
    )
    assert grandchild.stdout.strip() == "False"
