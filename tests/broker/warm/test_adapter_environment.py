"""What an adapter sees of the environment, through the real CLI and a real resident broker.

An adapter sees the base and what is declared for it, nothing else; a resident
broker is keyed by the values of exactly those variables, so a shell that differs
in one of them gets a broker of its own and the same answer it gets in process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.broker.warm.conftest import Resident
from tests.support.fixture_config import settings_table, source_table

ENVIRONMENT_ADAPTER = Path(__file__).resolve().parents[2] / "fixtures" / "environment_adapter.py"


def configure(resident: Resident) -> None:
    """One source of the environment adapter: its registration declares REGISTERED_VAR,
    the source SOURCE_VAR, and its ``dsn_env`` setting names DSN_VAR."""
    lines = [
        "[adapters.environment]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(ENVIRONMENT_ADAPTER))}]",
        'freshness_modes = ["live"]',
        'pass_env = ["REGISTERED_VAR"]',
        "",
        *source_table("UIDENVIRONMENT01", "env", "environment", resident.root, location_kind="path",
                      sensitivity="internal", timeout_ms=5000, pass_env=["SOURCE_VAR"]),
        *settings_table({"dsn_env": "DSN_VAR"}),
        "",
        "[profiles.default]",
        'sources = ["env"]',
        'max_sensitivity = "internal"',
    ]
    resident.config_file.write_text("\n".join(lines) + "\n")


def seen(done, name: str) -> str:  # done: subprocess.CompletedProcess[str]
    assert done.returncode == 0, done.stderr
    titles = [result["title"] for result in json.loads(done.stdout)["results"]]
    assert len(titles) == 1, done.stdout
    return titles[0].removeprefix(f"{name}=") if "=" in titles[0] else "<unset>"


def start(resident: Resident, shell: dict[str, str]) -> dict:
    """``recall daemon start`` in ``shell``: the broker's status once it listens."""
    done = resident.recall("daemon", "start", "--json", env=shell)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def status(resident: Resident, shell: dict[str, str]) -> dict:
    done = resident.recall("daemon", "status", "--json", env=shell)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def ask(resident: Resident, name: str, shell: dict[str, str], *, cold: bool = False) -> str:
    extra = {"RECALL_DAEMON": "0"} if cold else {}
    return seen(resident.recall("query", name, "--json", env={**shell, **extra}), name)


def test_an_adapter_sees_what_is_declared_for_it_and_nothing_else(resident: Resident) -> None:
    configure(resident)
    shell = {"REGISTERED_VAR": "r", "SOURCE_VAR": "s", "DSN_VAR": "d", "UNDECLARED_VAR": "secret",
             "PGPASSWORD": "not-for-this-adapter"}
    expected = {"REGISTERED_VAR": "r", "SOURCE_VAR": "s", "DSN_VAR": "d", "UNDECLARED_VAR": "<unset>",
                "PGPASSWORD": "<unset>", "HOME": resident.env["HOME"], "RECALL_DAEMON": "<unset>"}
    for name, value in expected.items():
        assert ask(resident, name, shell, cold=True) == value, name
    assert start(resident, shell)["running"]
    for name, value in expected.items():
        assert ask(resident, name, shell) == value, name
    assert status(resident, shell)["commands_served"] == len(expected)
    assert len(resident.sockets()) == 1


@pytest.mark.parametrize("variable", ["REGISTERED_VAR", "SOURCE_VAR", "DSN_VAR"])
def test_two_shells_differing_in_a_declared_variable_get_their_own_broker_and_answer(
    resident: Resident, variable: str
) -> None:
    configure(resident)
    first, second = {variable: "first shell"}, {variable: "second shell"}
    assert start(resident, first)["pid"] != start(resident, second)["pid"]

    for shell in (first, second, first):
        assert ask(resident, variable, shell) == ask(resident, variable, shell, cold=True) == shell[variable]
    assert status(resident, first)["commands_served"] == 2
    assert status(resident, second)["commands_served"] == 1
    assert len(resident.sockets()) == 2


def test_a_variable_no_adapter_may_see_does_not_split_brokers(resident: Resident) -> None:
    configure(resident)
    assert start(resident, {"UNDECLARED_VAR": "a"})["pid"] == start(resident, {"UNDECLARED_VAR": "b"})["pid"]
    assert len(resident.sockets()) == 1
