"""Who is on the other end of a Unix socket, from the kernel (``SO_PEERCRED``).

The socket file is 0600 inside a 0700 folder, so the file system already
keeps other users out; this check holds even when those modes were loosened,
and it is what keeps root's broker from serving a process that connected
through a path root opened up.
"""

from __future__ import annotations

import os
import socket
import struct

_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process that connected (or created the pair)."""
    _, uid, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    return int(uid)


def same_user(sock: socket.socket) -> bool:
    try:
        return peer_uid(sock) == os.getuid()
    except OSError:
        return False
