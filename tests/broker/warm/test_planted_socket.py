"""A socket another user planted at the broker's path learns nothing of a command.

The attack: a runtime folder another user could write to (the ``/tmp/recall-<uid>``
fallback, left loose once) holds a socket uid 65534 listens on, at the name the
user's broker would use. It answers like a broker. Whatever state the folder is in
now (still loose; closed again with the socket kept; the socket file handed to the
user), the command refuses it in one line naming it, answers in process, and sends
the planted server nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.warm.daemon.socket_location import configuration_key

from .conftest import broker_pids
from .test_same_output import masked

NOBODY = 65534
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
SETPRIV = shutil.which("setpriv")
pytestmark = pytest.mark.skipif(
    os.getuid() != 0 or SYSTEM_PYTHON is None or SETPRIV is None,
    reason="planting a socket as another uid needs root, setpriv and a system python3",
)

# Runs as uid 65534 with the system interpreter: listens at the broker's path, answers
# every connection like a broker would, and once its stdin closes prints how many
# connections it had and how many bytes they sent.
PLANTED_SERVER = r"""
import os, select, socket, sys
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
server.listen(8)
print("listening", flush=True)
connections = received = 0
body = b"PLANTED ANSWER\n"
reply = (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Recall-Exit-Code: 0\r\n"
         b"X-Recall-Stdout-Bytes: %d\r\n\r\n" % (len(body), len(body))) + body
while True:
    ready, _, _ = select.select([server, sys.stdin], [], [])
    if sys.stdin in ready:
        break
    connection, _ = server.accept()
    connections += 1
    connection.settimeout(5)
    try:
        received += len(connection.recv(1 << 20))
        connection.sendall(reply)
    except OSError:
        pass
    connection.close()
print(connections, received, flush=True)
"""


class PlantedServer:
    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self.process = subprocess.Popen(
            [str(SETPRIV), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             str(SYSTEM_PYTHON), "-I", "-c", PLANTED_SERVER, str(socket_path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "listening\n", self.process.stderr.read() if self.process.stderr else ""

    def finish(self) -> tuple[int, int]:
        """Connections made and bytes received, the server stopped."""
        out, err = self.process.communicate(timeout=30)
        connections, received = out.split()
        return int(connections), int(received)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def planted(resident) -> Iterator[PlantedServer]:
    """A loose runtime folder of this user's with uid 65534's socket at the broker's name."""
    os.chmod(resident.runtime, 0o755)  # the other user reaches the folder below it
    folder = resident.runtime / "recall"
    folder.mkdir()
    os.chmod(folder, 0o777)
    key = configuration_key(resident.env, str(resident.root))
    server = PlantedServer(folder / f"{key}.sock")
    try:
        yield server
    finally:
        server.kill()


COMMANDS = [
    (("query", "restore", "drill"), None),
    (("hook", "pre-reply", "--json"), json.dumps({"prompt": "how do we run the quarterly restore drill"})),
]


@pytest.mark.parametrize(("argv", "stdin"), COMMANDS, ids=["query", "hook"])
def test_a_loose_runtime_folder_is_refused_and_the_command_answers_in_process(resident, planted, argv, stdin):
    folder = planted.socket_path.parent
    cold = resident.cold(*argv, stdin=stdin)
    done = resident.recall(*argv, stdin=stdin)
    assert planted.finish() == (0, 0), "the planted server was sent the command"
    assert done.returncode == cold.returncode == 0
    assert masked(done.stdout) == masked(cold.stdout)
    assert "PLANTED" not in done.stdout and "restore drill" in done.stdout.lower()
    refusal = done.stderr.replace(cold.stderr, "", 1).splitlines()
    assert len(refusal) == 1 and str(folder) in refusal[0] and "writable by other users" in refusal[0], done.stderr
    assert folder.stat().st_mode & 0o777 == 0o777, "the folder was not made to look private"
    assert broker_pids(resident.runtime) == [], "no broker is started in a folder others can write to"


def test_a_socket_planted_before_the_folder_was_closed_is_refused(resident, planted):
    os.chmod(planted.socket_path.parent, 0o700)  # what the user, or an earlier recall, did
    done = resident.recall("query", "restore", "drill")
    assert planted.finish() == (0, 0)
    assert done.returncode == 0 and "restore.md" in done.stdout and "PLANTED" not in done.stdout
    assert f"{planted.socket_path} belongs to uid {NOBODY}" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_a_socket_answered_by_another_user_is_refused_before_a_byte_is_sent(resident, planted):
    """The socket file passes for the user's own (root handed it over); the kernel says
    who listens on it."""
    os.chown(planted.socket_path, os.getuid(), os.getgid())
    os.chmod(planted.socket_path, 0o600)
    os.chmod(planted.socket_path.parent, 0o700)
    done = resident.recall("query", "restore", "drill")
    status = resident.recall("daemon", "status")
    connections, received = planted.finish()
    assert received == 0, "the planted server was sent the command"
    assert done.returncode == 0 and "restore.md" in done.stdout and "PLANTED" not in done.stdout
    assert f"answered by a process of uid {NOBODY}" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert status.returncode == 1 and status.stderr.count("\n") == 1 and f"uid {NOBODY}" in status.stderr
    assert connections == 2  # each asked the kernel who listens, and sent nothing
