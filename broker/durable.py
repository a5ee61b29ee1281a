"""Writes of state that happen whole or not at all.

Two shapes, one rule: when the disk refuses part of a write, the file is left
exactly as it was and the caller gets a :class:`WriteRefused` that names the
file and the reason (``could not write claims queue /…/queue.jsonl: No space
left on device``), which a command prints as its one line with exit code 1.

- :func:`replace_file` writes the new content to a temporary file in the
  same folder, checks every count, flushes, fsyncs, gives it the original's
  mode and renames it over the original. A symlink is followed: the target
  is replaced and the link stays a link (a dotfiles repository keeps working).
- :func:`append` adds bytes at the end, writing again after every short count;
  on any error the file is truncated back to its previous length (or removed
  when this call created it).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from broker.errors import RecallError

DEFAULT_MODE = 0o600


class WriteRefused(RecallError):
    """The disk refused (part of) a write; the file is as it was before."""

    def __init__(self, what: str, path: Path | str, reason: str) -> None:
        super().__init__(f"could not write {what} {path}: {reason}")
        self.path = Path(path)


def replace_file(path: Path, data: bytes, *, what: str, new_mode: int = DEFAULT_MODE,
                 exclusive: bool = False) -> Path:
    """Replace ``path`` (through its symlinks) with ``data``, all or nothing; the file written.

    The original's permission bits are kept; a new file gets ``new_mode``. With
    ``exclusive`` the file must not exist yet, and a file created meanwhile is
    never clobbered (``FileExistsError``).
    """
    target = Path(os.path.realpath(path))
    folder = target.parent
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    except OSError as exc:
        raise WriteRefused(what, target, _reason(exc)) from None
    import tempfile

    try:
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise WriteRefused(what, target, _reason(exc)) from None
    temporary = Path(name)
    try:
        try:
            _write_all(handle, data)
            os.fchmod(handle, mode)
            os.fsync(handle)
        finally:
            os.close(handle)
        if exclusive:
            os.link(temporary, target)
        else:
            os.replace(temporary, target)
        _sync_folder(folder)
    except FileExistsError:
        raise
    except OSError as exc:
        raise WriteRefused(what, target, _reason(exc)) from None
    finally:
        _remove_quietly(temporary)
    return target


def append(path: Path, data: bytes, *, what: str, new_mode: int = DEFAULT_MODE) -> None:
    """Append ``data`` to ``path`` (created with ``new_mode`` if missing), all or nothing.

    Callers serialise appends to one file (a lock); a failed append is undone by
    truncating the file back to the length it had, so a reader never sees half a line.
    """
    try:
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, new_mode)
        created = True
    except FileExistsError:
        created = False
        try:
            handle = os.open(path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise WriteRefused(what, path, _reason(exc)) from None
    except OSError as exc:
        raise WriteRefused(what, path, _reason(exc)) from None
    try:
        length = os.fstat(handle).st_size
        try:
            _write_all(handle, data)
            os.fsync(handle)
        except OSError as exc:
            undone = _undo(handle, path, length, created)
            raise WriteRefused(what, path, _reason(exc) + undone) from None
    finally:
        os.close(handle)
    if created:
        _sync_folder(path.parent)


def _write_all(handle: int, data: bytes) -> None:
    """Every byte of ``data``, writing again after each short count."""
    view = memoryview(data)
    while view:
        written = os.write(handle, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _undo(handle: int, path: Path, length: int, created: bool) -> str:
    """Give the file back its previous length (or remove it); what the user must know if not."""
    try:
        if created:
            os.unlink(path)
        else:
            os.ftruncate(handle, length)
            os.fsync(handle)
    except OSError as exc:
        return f" (and it could not be cut back to {length} bytes: {_reason(exc)})"
    return ""


def _sync_folder(folder: Path) -> None:
    """Make a rename or a new name durable; a folder that cannot be opened for it is left as is."""
    try:
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass  # some file systems cannot sync a folder; the rename itself is done
    finally:
        os.close(handle)


def _remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass  # already renamed, or a stray temporary file: the original is intact either way


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
