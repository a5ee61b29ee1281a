"""``recall serve`` against hostile network peers (attacks 4 and 6), on real loopback sockets.

A peer that sends headers and then its body a byte at a time holds its own
connection and nothing else: the body is read under the request timeout and
before a concurrency slot is taken, and health never waits for a slot.
"""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from broker.surfaces.http.guard import MAX_IN_FLIGHT

from .conftest import RECALL, Machine

SLOW_CLIENTS = MAX_IN_FLIGHT + 8
REQUEST_TIMEOUT_S = 3
SLOW_HEAD = (
    b"POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100000\r\n\r\n"
)


def user_notes(machine: Machine) -> None:
    notes = machine.home / "notes"
    notes.mkdir()
    (notes / "drill.md").write_text("# Drill\n\nThe restore drill finished in 31 minutes.\n")
    machine.write_user(
        '[[sources]]\nsource_uid = "01J8ZKQ4M7NOTESX"\nsource_id = "notes"\nadapter = "notes"\n'
        f"location = {json.dumps(str(notes))}\n"
    )


@pytest.fixture
def server(machine: Machine) -> Iterator[str]:
    user_notes(machine)
    process = subprocess.Popen(
        [RECALL, "serve", "--addr", "127.0.0.1:0", "--request-timeout", str(REQUEST_TIMEOUT_S)],
        cwd=machine.home, env=machine.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    banner = process.stdout.readline()
    assert "recall serve profile" in banner, process.stderr.read() if process.stderr else banner
    yield banner.split()[-1]
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)


class SlowClient:
    """Sends a query's headers, then its body one byte a second until told to stop."""

    def __init__(self, base: str, stop: threading.Event) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.socket = socket.create_connection((host, int(port)))
        self.socket.sendall(SLOW_HEAD)
        self.stop = stop
        self.answer = b""
        self.thread = threading.Thread(target=self.dribble, daemon=True)
        self.thread.start()

    def dribble(self) -> None:
        try:
            while not self.stop.is_set():
                readable, _, _ = select.select([self.socket], [], [], 1.0)
                if readable:
                    self.answer = self.socket.recv(4096)
                    return
                self.socket.send(b" ")
        except OSError:
            return
        finally:
            self.socket.close()


def test_slow_request_bodies_do_not_stall_the_server(server: str) -> None:
    stop = threading.Event()
    slow = [SlowClient(server, stop) for _ in range(SLOW_CLIENTS)]
    try:
        with httpx.Client(base_url=server, timeout=30) as client:
            health = client.get("/v1/health")
            assert health.status_code == 200
            answered = client.post("/v1/query", json={"query": "restore drill"})
            assert answered.status_code == 200, answered.text
            assert answered.json()["results"][0]["primary"]["locator"].startswith("notes:drill.md")
        for peer in slow:
            peer.thread.join(timeout=60)
        statuses = {peer.answer.split(b"\r\n", 1)[0] for peer in slow}
        assert statuses == {b"HTTP/1.1 408 Request Timeout"}
    finally:
        stop.set()


def test_no_token_file_is_left_when_the_listener_cannot_bind(machine: Machine) -> None:
    user_notes(machine)
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("0.0.0.0", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        result = machine.recall("serve", "--addr", f"0.0.0.0:{port}", cwd=machine.home, timeout=30)
    finally:
        taken.close()
    assert result.returncode == 1
    assert "cannot listen" in result.stderr
    assert not (machine.state_root / "default" / "serve-token").exists()


def test_the_token_file_is_written_once_the_listener_is_bound(machine: Machine) -> None:
    user_notes(machine)
    process = subprocess.Popen(
        [RECALL, "serve", "--addr", "0.0.0.0:0"], cwd=machine.home, env=machine.env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        process.stdout.readline()
        said = process.stdout.readline()
        token_file = Path(said.split("bearer token written to ", 1)[1].split(" (", 1)[0])
        assert token_file == machine.state_root / "default" / "serve-token"
        assert token_file.stat().st_mode & 0o777 == 0o600
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
