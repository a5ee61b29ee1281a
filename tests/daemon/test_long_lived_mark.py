"""Adapters learn that a long-lived broker spawned them, and only then.

The resident broker marks itself at start (``adapter_sdk.residence``); its adapters
inherit the mark, a cold command's adapters never see it (not even from a shell
that inherited one), and the mark does not key the resident broker: a shell that
carries it reaches the broker of the shell that does not.
"""

from __future__ import annotations

from adapter_sdk.residence import LONG_LIVED_ENV
from tests.daemon.conftest import Resident
from tests.daemon.test_adapter_environment import ask, configure, start


def test_only_an_adapter_of_the_resident_broker_is_told_it_is_long_lived(resident: Resident) -> None:
    configure(resident)
    inherited = {LONG_LIVED_ENV: "4242"}  # a shell started from a broker's process tree
    assert ask(resident, LONG_LIVED_ENV, {}, cold=True) == "<unset>"
    assert ask(resident, LONG_LIVED_ENV, inherited, cold=True) == "<unset>"

    broker = start(resident, {})["pid"]
    assert ask(resident, LONG_LIVED_ENV, {}) == str(broker)
    assert start(resident, inherited)["pid"] == broker  # the same key, the same broker
    assert ask(resident, LONG_LIVED_ENV, inherited) == str(broker)
    assert len(resident.sockets()) == 1
