"""'recall daemon list' shows every resident broker of this user, whatever its configuration,
and 'recall daemon stop --all' stops them all.

Both look at every process of the user, so the scenario runs in a PID namespace of its
own (``unshare``): there, the user's processes are this test's alone, and whatever it
started ends with the namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from .conftest import RECALL

UNSHARE = shutil.which("unshare")


def _namespaces_work() -> bool:
    if os.getuid() != 0 or UNSHARE is None:
        return False
    done = subprocess.run([UNSHARE, "--pid", "--fork", "--mount-proc", "true"], capture_output=True)
    return done.returncode == 0


pytestmark = pytest.mark.skipif(not _namespaces_work(), reason="needs root and unshare for a PID namespace")

# Runs as PID 1 of the namespace: starts a broker for each of two configurations, then
# lists them from a third (which has none) and stops them all; prints what each step said.
SCENARIO = r"""
import json, subprocess, sys
recall, cwd, environments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
first, second, third = environments
def run(env, *args):
    done = subprocess.run([recall, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    return {"code": done.returncode, "out": done.stdout, "err": done.stderr}
steps = {
    "first": run(first, "daemon", "start", "--json"),
    "second": run(second, "daemon", "start", "--json"),
    "list": run(third, "daemon", "list", "--json"),
    "table": run(third, "daemon", "list"),
    "stop": run(third, "daemon", "stop", "--all", "--json"),
    "after": run(third, "daemon", "list", "--json"),
    "again": run(third, "daemon", "stop", "--all"),
}
print(json.dumps(steps))
"""


def test_every_broker_of_the_user_is_listed_and_stopped(resident):
    second_config = resident.root / "second-config"
    shutil.copytree(resident.config_file.parent.parent, second_config)
    environments = [
        resident.env,
        {**resident.env, "XDG_CONFIG_HOME": str(second_config)},
        {**resident.env, "XDG_CONFIG_HOME": str(resident.root / "no-broker-here")},
    ]
    done = subprocess.run(
        [str(UNSHARE), "--pid", "--fork", "--mount-proc", sys.executable, "-c", SCENARIO,
         RECALL, str(resident.root), json.dumps(environments)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)
    for name in ("first", "second", "list", "table", "stop", "after", "again"):
        assert steps[name]["code"] == 0, (name, steps[name]["err"])
    started = {json.loads(steps[name]["out"])["pid"] for name in ("first", "second")}
    listed = json.loads(steps["list"]["out"])["brokers"]
    assert {broker["pid"] for broker in listed} == started
    assert {broker["config_file"] for broker in listed} == {
        str(resident.config_file), str(second_config / "recall" / "config.toml")}
    for broker in listed:
        assert broker["answering"] and broker["idle_seconds"] >= 0 and broker["started_at"] > 0
        assert broker["memory_bytes"] > 20_000_000, "the broker and its warm adapters"
    table = steps["table"]["out"].splitlines()
    assert table[0].split() == ["PID", "STARTED", "IDLE", "MEMORY", "CONFIGURATION"]
    assert len(table) == 3 and all(str(resident.root) in line for line in table[1:])
    assert sorted(json.loads(steps["stop"]["out"])["stopped"]) == sorted(started)
    assert json.loads(steps["after"]["out"])["brokers"] == []
    assert "no resident broker was running" in steps["again"]["out"]
