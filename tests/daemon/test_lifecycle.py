"""The resident broker starts on demand, once, leaves when idle, and is replaced when out of date."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from broker.surfaces.daemon.client import ARGV_TYPE, VERSION_HEADER, request

from .conftest import RECALL, alive, broker_pids, wait_gone


def test_a_command_starts_the_broker_and_the_next_one_reuses_it(resident):
    assert not resident.status()["running"]
    assert resident.recall("query", "restore", "drill").returncode == 0
    first = resident.pid()
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert resident.pid() == first
    assert resident.status()["commands_served"] == 2


def test_socket_is_private_to_this_user(resident):
    resident.recall("query", "restore")
    (socket_path,) = resident.sockets()
    assert oct(socket_path.stat().st_mode & 0o777) == oct(0o600)
    assert oct(socket_path.parent.stat().st_mode & 0o777) == oct(0o700)


def test_no_daemon_flag_and_switch_run_in_process(resident):
    assert resident.recall("query", "--no-daemon", "restore", "drill").returncode == 0
    assert resident.recall("query", "restore", "drill", env={"RECALL_DAEMON": "0"}).returncode == 0
    assert resident.sockets() == []
    assert broker_pids(resident.runtime) == []


def test_two_commands_started_together_start_one_broker(resident):
    commands = [
        subprocess.Popen([RECALL, "query", "restore", "drill"], env=resident.env, cwd=resident.root,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [command.communicate(timeout=120) for command in commands]
    assert [command.returncode for command in commands] == [0, 0, 0], outputs
    assert len(broker_pids(resident.runtime)) == 1
    assert resident.status()["commands_served"] == 3


def test_changed_configuration_replaces_the_broker(resident):
    resident.recall("query", "restore", "drill")
    old = resident.pid()
    resident.config_file.write_text(resident.config_file.read_text() + "\n# edited\n")
    run = resident.recall("query", "restore", "drill")
    assert run.returncode == 0, run.stderr
    assert "restore.md" in run.stdout
    assert wait_gone(old)
    assert resident.pid() != old


def test_changed_adapter_program_replaces_the_broker(resident):
    resident.recall("query", "restore", "drill")
    old = resident.pid()
    later = time.time() + 5
    os.utime(resident.adapter_script, (later, later))
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert wait_gone(old)
    assert resident.pid() != old


def test_a_client_of_another_version_retires_the_broker(resident):
    resident.recall("query", "restore", "drill")
    old = resident.pid()
    (socket_path,) = resident.sockets()
    status, _, body = request(str(socket_path), "POST", "/v1/cli", b"query\0restore",
                              {"Content-Type": ARGV_TYPE, VERSION_HEADER: "0.0.0-older"})
    assert status == 409 and b"resident_stale" in body and b"0.0.0-older" in body
    assert wait_gone(old)
    assert resident.sockets() == []
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert resident.pid() != old


def test_idle_broker_leaves_and_frees_its_socket(resident):
    resident.env["RECALL_DAEMON_IDLE_SECONDS"] = "1"
    assert resident.recall("query", "restore", "drill").returncode == 0
    pid = resident.pid()
    assert wait_gone(pid)
    assert resident.sockets() == []
    assert not resident.status()["running"]


def test_stop_ends_the_broker_and_its_adapters(resident):
    resident.recall("query", "restore", "drill")
    pid = resident.pid()
    adapters = _children(pid)
    assert adapters, "the broker keeps its adapters running between commands"
    stopped = resident.recall("daemon", "stop")
    assert stopped.returncode == 0
    assert f"pid {pid}" in stopped.stdout
    assert not alive(pid)
    assert not any(alive(child) for child in adapters)
    assert "no resident broker was running" in resident.recall("daemon", "stop").stdout


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def test_a_broken_configuration_is_reported_as_in_process_and_not_retried_at_once(resident):
    resident.config_file.write_text(resident.config_file.read_text() + "\n[profiles.default\n")
    cold = resident.cold("query", "restore", "drill")
    first = resident.recall("query", "restore", "drill")
    assert (first.returncode, first.stdout, first.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert first.returncode == 1 and "malformed TOML" in first.stderr
    (failed,) = (resident.runtime / "recall").glob("*.failed")
    stamp = failed.stat().st_mtime_ns
    log = failed.with_suffix(".log")
    log.write_text("")
    second = resident.recall("query", "restore", "drill")
    assert (second.returncode, second.stderr) == (cold.returncode, cold.stderr)
    assert log.read_text() == "", "no second broker was started"
    assert failed.stat().st_mtime_ns == stamp
    assert broker_pids(resident.runtime) == []


def test_a_terminated_broker_frees_its_socket(resident):
    resident.recall("query", "restore", "drill")
    pid = resident.pid()
    os.kill(pid, signal.SIGTERM)
    assert wait_gone(pid)
    assert resident.sockets() == []
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert resident.pid() != pid
