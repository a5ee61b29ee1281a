"""Who is on the other end of a Unix socket, from the kernel (``SO_PEERCRED``).

Both ends ask. The broker hangs up on a connection from another user before
reading a byte: the socket file is 0600 inside a 0700 folder, and this check
holds even when those modes were loosened, and keeps root's broker from
serving a process that connected through a path root opened up. The thin
client asks before it sends a byte: whatever listens at the broker's path must
have been started by this user, or it learns nothing of the command.

Standard library only, and the C socket module alone: the thin client imports
this on every command.
"""

from __future__ import annotations

import _socket
import os
import sys

_UCRED_SIZE = 12  # struct ucred: pid_t pid, uid_t uid, gid_t gid; four bytes each


def peer_uid(sock: _socket.socket) -> int:
    """The uid of the process on the other end: the one that connected, or, seen from
    a client, the one that was listening."""
    ucred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, _UCRED_SIZE)
    return int.from_bytes(ucred[4:8], sys.byteorder)


def same_user(sock: _socket.socket) -> bool:
    try:
        return peer_uid(sock) == os.getuid()
    except OSError:
        return False
