"""Only this user reaches the resident broker: file modes first, the peer's uid behind them."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from broker.warm.daemon.peer_credentials import peer_uid, same_user
from broker.warm.daemon.socket_location import UnusablePlace, private_folder

NOBODY = 65534
# Another user cannot run this checkout's interpreter; the system one will do for a client.
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
as_root = pytest.mark.skipif(
    os.getuid() != 0 or SYSTEM_PYTHON is None, reason="switching to another uid needs root and a system python3"
)

# Runs as another user with the system interpreter and no access to this checkout.
INTRUDER = """
import socket, sys
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.settimeout(20)
try:
    connection.connect(sys.argv[1])
except PermissionError:
    print("permission denied"); sys.exit(0)
body = b"sources"
received = b""
try:
    connection.sendall(b"POST /v1/cli HTTP/1.1\\r\\nHost: localhost\\r\\nContent-Type: application/x-recall-argv\\r\\n"
                       b"X-Recall-Version: 0.1.0\\r\\n"
                       b"Content-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(body) + body)
    while chunk := connection.recv(65536):
        received += chunk
except (BrokenPipeError, ConnectionResetError):
    pass
print("answered" if received else "hung up")
"""


def test_peer_uid_is_the_uid_of_the_process_on_the_other_end():
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert peer_uid(left) == os.getuid()
        assert same_user(left)


@as_root
def test_a_peer_of_another_uid_is_not_the_same_user():
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = f"/tmp/recall-peer-{os.getpid()}.sock"
    listener.bind(path)
    os.chmod(path, 0o777)
    listener.listen(1)
    try:
        child = subprocess.Popen(
            [str(SYSTEM_PYTHON), "-I", "-c", f"import socket,time; s=socket.socket(socket.AF_UNIX); s.connect({path!r}); time.sleep(5)"],
            user=NOBODY,
        )
        connection, _ = listener.accept()
        with connection:
            assert peer_uid(connection) == NOBODY
            assert not same_user(connection)
        child.kill()
        child.wait()
    finally:
        listener.close()
        os.unlink(path)


def _intrude(socket_path: Path) -> str:
    done = subprocess.run(
        [str(SYSTEM_PYTHON), "-I", "-c", INTRUDER, str(socket_path)],
        user=NOBODY, capture_output=True, text=True, timeout=60, cwd="/",
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@as_root
def test_another_user_cannot_open_the_socket(resident):
    resident.start()
    (socket_path,) = resident.sockets()
    os.chmod(resident.runtime, 0o755)  # the runtime folder itself is usually 0700 too
    assert _intrude(socket_path) == "permission denied"


@as_root
def test_another_user_is_hung_up_on_even_through_loosened_modes(resident):
    resident.start()
    resident.recall("query", "restore")
    (socket_path,) = resident.sockets()
    os.chmod(resident.runtime, 0o755)
    os.chmod(socket_path.parent, 0o755)
    os.chmod(socket_path, 0o777)
    assert _intrude(socket_path) == "hung up"
    os.chmod(socket_path, 0o600)  # this user's client refuses a socket others can write to
    assert resident.status()["commands_served"] == 1


def test_a_runtime_folder_that_is_a_symlink_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "recall").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnusablePlace, match="not a folder"):
        private_folder(str(tmp_path / "recall"))


@as_root
def test_a_runtime_folder_owned_by_another_user_is_refused(tmp_path):
    folder = tmp_path / "recall"
    folder.mkdir(mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    with pytest.raises(UnusablePlace, match="belongs to uid"):
        private_folder(str(folder))


def test_a_folder_others_can_enter_is_closed_before_use(tmp_path):
    folder = tmp_path / "recall"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    private_folder(str(folder))
    assert oct(folder.stat().st_mode & 0o777) == oct(0o700)
