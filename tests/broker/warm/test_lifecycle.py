"""The resident broker starts on demand, once, leaves when idle, and is replaced when out of date.

A command that finds none runs in process and starts one as it ends, for the commands after it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from broker.warm.daemon.thin_client import ARGV_TYPE, VERSION_HEADER, request

from .conftest import RECALL, alive, broker_pids, wait_for_starts, wait_gone


def test_a_command_runs_in_process_and_starts_the_broker_for_the_next_one(resident):
    assert not resident.status()["running"]
    assert resident.recall("query", "restore", "drill").returncode == 0
    first = resident.started_broker()
    assert resident.status()["commands_served"] == 0
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert resident.pid() == first
    assert resident.status()["commands_served"] == 2


def test_the_broker_starts_only_once_the_command_that_started_it_has_ended(resident, tmp_path):
    """Its start never competes with that command, and holds none of its output: a reader
    of the command's stdout sees the end of it while the command still runs."""
    script = tmp_path / "command.py"
    script.write_text(START_THEN_LINGER)
    command = subprocess.Popen([sys.executable, str(script), str(resident.root)], env=resident.env,
                               cwd=resident.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert command.stdout is not None
    assert command.stdout.read() == b"listening: False\n"  # end of output, the command lingering
    assert command.poll() is None
    assert command.wait(timeout=60) == 0, command.stderr.read() if command.stderr else ""
    assert resident.started_broker()


# Ask for a broker as a command that finds none does, print, close stdout, and linger:
# nothing may listen while this process lives.
START_THEN_LINGER = """
import os, sys, time
from broker.warm.daemon.thin_client import listening, start_after_exit
from broker.warm.daemon.socket_location import place_for
place = place_for(os.environ, sys.argv[1])
start_after_exit(place)
time.sleep(1.0)
print("listening:", listening(place.socket), flush=True)
os.close(1)
sys.stdout = None
time.sleep(1.5)
if listening(place.socket):
    sys.exit("a broker listened before the command that started it ended")
"""


def test_socket_is_private_to_this_user(resident):
    resident.recall("query", "restore")
    resident.started_broker()
    (socket_path,) = resident.sockets()
    assert oct(socket_path.stat().st_mode & 0o777) == oct(0o600)
    assert oct(socket_path.parent.stat().st_mode & 0o777) == oct(0o700)


def test_no_daemon_flag_and_switch_run_in_process(resident):
    assert resident.recall("query", "--no-daemon", "restore", "drill").returncode == 0
    assert resident.recall("query", "restore", "drill", env={"RECALL_DAEMON": "0"}).returncode == 0
    assert resident.sockets() == []
    assert broker_pids(resident.runtime) == []


def test_two_commands_started_together_start_one_broker(resident):
    _three_queries_at_once(resident)
    resident.started_broker()
    assert len(broker_pids(resident.runtime)) == 1
    served = resident.status()["commands_served"]
    _three_queries_at_once(resident)
    assert resident.status()["commands_served"] == served + 3


def _three_queries_at_once(resident) -> None:
    commands = [
        subprocess.Popen([RECALL, "query", "restore", "drill"], env=resident.env, cwd=resident.root,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [command.communicate(timeout=120) for command in commands]
    assert [command.returncode for command in commands] == [0, 0, 0], outputs


def test_changed_configuration_replaces_the_broker(resident):
    old = resident.start()
    resident.config_file.write_text(resident.config_file.read_text() + "\n# edited\n")
    run = resident.recall("query", "restore", "drill")
    assert run.returncode == 0, run.stderr
    assert "restore.md" in run.stdout
    assert wait_gone(old)
    assert resident.started_broker() != old


def test_changed_adapter_program_replaces_the_broker(resident):
    old = resident.start()
    later = time.time() + 5
    os.utime(resident.adapter_script, (later, later))
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert wait_gone(old)
    assert resident.started_broker() != old


def test_a_client_of_another_version_retires_the_broker(resident):
    old = resident.start()
    (socket_path,) = resident.sockets()
    status, _, body = request(str(socket_path), "POST", "/v1/cli", b"query\0restore",
                              {"Content-Type": ARGV_TYPE, VERSION_HEADER: "0.0.0-older"})
    assert status == 409 and b"resident_stale" in body and b"0.0.0-older" in body
    assert wait_gone(old)
    assert resident.sockets() == []
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert resident.started_broker() != old


def test_idle_broker_leaves_and_frees_its_socket(resident):
    resident.env["RECALL_DAEMON_IDLE_SECONDS"] = "1"
    pid = resident.start()
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert wait_gone(pid)
    assert resident.sockets() == []
    assert not resident.status()["running"]


def test_stop_ends_the_broker_and_its_adapters(resident):
    pid = resident.start()
    adapters = _children(pid)
    assert adapters, "daemon start returns once the broker has started the profile's adapters"
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert set(_children(pid)) == set(adapters), "the broker keeps its adapters running between commands"
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
    wait_for_starts(resident.runtime)  # the broker it started in the background could not start
    (failed,) = (resident.runtime / "recall").glob("*.failed")
    stamp = failed.stat().st_mtime_ns
    log = failed.with_suffix(".log")
    log.write_text("")
    second = resident.recall("query", "restore", "drill")
    assert (second.returncode, second.stderr) == (cold.returncode, cold.stderr)
    assert log.read_text() == "", "no second broker was started"
    assert failed.stat().st_mtime_ns == stamp
    assert broker_pids(resident.runtime) == []


def test_daemon_start_reports_a_broker_that_cannot_start(resident):
    resident.config_file.write_text(resident.config_file.read_text() + "\n[profiles.default\n")
    done = resident.recall("daemon", "start")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert "could not start: " in line and "malformed TOML" in line and "its log: " in line
    assert broker_pids(resident.runtime) == []


def test_daemon_start_leaves_a_running_broker_alone(resident):
    first = resident.start()
    assert resident.start() == first
    assert len(broker_pids(resident.runtime)) == 1


def test_a_terminated_broker_frees_its_socket(resident):
    pid = resident.start()
    os.kill(pid, signal.SIGTERM)
    assert wait_gone(pid)
    assert resident.sockets() == []
    assert resident.recall("query", "restore", "drill").returncode == 0
    assert resident.started_broker() != pid


def test_stop_right_after_a_command_stops_the_broker_it_started(resident):
    """As a script's last line: the broker the command starts as it ends is stopped too."""
    assert resident.recall("query", "restore", "drill").returncode == 0
    stopped = resident.recall("daemon", "stop")
    assert stopped.returncode == 0 and "stopped the resident broker" in stopped.stdout, stopped.stdout
    assert broker_pids(resident.runtime) == []
