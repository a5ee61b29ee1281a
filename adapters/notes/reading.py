"""Read a note's bytes only if the file actually opened lies inside the notes folder.

A path that was a note when it was indexed may have been replaced by a
symbolic link (to ``~/.ssh/id_ed25519``, say) by the time it is read again.
Checking the path first and opening it afterwards leaves a window in which the
link can be swapped in, so the check is made on what was opened: the file is
opened (never blocking, in case it became a FIFO), and the descriptor's own
path, as the kernel reports it in ``/proc/self/fd``, must lie inside the real
root. Where the kernel offers no such path, the note is opened one component
at a time with ``O_NOFOLLOW``, so no symbolic link is followed at all.
"""

from __future__ import annotations

import os
import stat

from adapter_sdk.folder.scan import inside

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class OutsideRoot(OSError):
    """The path resolves to a file outside the notes folder (or not to a regular file)."""


def read_inside(root: str, rel: str, limit: int, real_root: str | None = None) -> bytes:
    """Up to ``limit`` bytes of ``root/rel``; :class:`OutsideRoot` when what opened is not
    a regular file inside ``root`` (whose real path is ``real_root``, when the caller
    already knows it), any other :class:`OSError` as it happened."""
    fd = _open_checked(real_root or os.path.realpath(root), root, rel)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OutsideRoot(f"{rel} is not a regular file")
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_checked(real_root: str, root: str, rel: str) -> int:
    fd = os.open(os.path.join(root, rel), _FLAGS)
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        os.close(fd)
        return _open_without_links(root, rel)
    if not inside(opened, real_root):
        os.close(fd)
        raise OutsideRoot(f"{rel} resolves outside the notes folder")
    return fd


def _open_without_links(root: str, rel: str) -> int:
    """Open ``root/rel`` refusing a symbolic link at any component below the root."""
    directory = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        parts = rel.split("/")
        for part in parts[:-1]:
            try:
                child = os.open(part, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_DIRECTORY", 0),
                                dir_fd=directory)
            except OSError as exc:
                raise OutsideRoot(f"{rel}: {part} is a link or not a folder") from exc
            os.close(directory)
            directory = child
        try:
            return os.open(parts[-1], _FLAGS | os.O_NOFOLLOW, dir_fd=directory)
        except OSError as exc:
            if os.path.islink(os.path.join(root, rel)):
                raise OutsideRoot(f"{rel} is a symbolic link") from exc
            raise
    finally:
        os.close(directory)
