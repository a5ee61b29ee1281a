"""Where a resident broker listens: a private folder and a name derived from its configuration.

Standard library only: the thin client imports this on every command.

The folder is ``$XDG_RUNTIME_DIR/recall`` (the per-user runtime folder the
login manager creates, mode 0700), else ``/tmp/recall-<uid>``. Either is
created 0700 and used only if it is a real folder (not a symlink) owned by this
user that nobody else can write to: a folder another user could write to may
hold what they planted (a socket that answers commands, a symlink to one of the
user's files), so it is refused, never repaired into trust (:class:`UntrustedPlace`).
A folder others can merely enter is closed to them.

Inside it, nothing is taken on trust either: the socket must be this user's
(:func:`socket_file_is_own`) and the broker's files are opened without
following symlinks, a fresh file replacing whatever was in its place
(:func:`fresh_file`, :func:`open_lock_file`).

One broker serves one configuration: its name is a digest of every input that
decides what a command would read (the user configuration file, the state and
cache folders, the nearest project ``recall.toml``, the interpreter and the
environment variables adapters see), so two configurations never share one.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from broker.adapter_environment import configuration_texts, key_environment

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Mapping

RUNTIME_FOLDER = "recall"
PROJECT_FILE_NAME = "recall.toml"
SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with its terminating NUL
KEY_LENGTH = 20


class UnusablePlace(Exception):
    """No safe folder or name for a socket: commands run in process."""


class UntrustedPlace(UnusablePlace):
    """The broker's folder or socket is not this user's alone: someone else could have
    put it there. Commands run in process, and say so (the message names the path)."""


# Mode bits that let another user plant or replace entries (or take over a socket).
WRITABLE_BY_OTHERS = 0o022
OWN_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC


class Place:
    """The files of one configuration's resident broker."""

    __slots__ = ("folder", "key", "cwd")

    def __init__(self, folder: str, key: str, cwd: str) -> None:
        self.folder = folder
        self.key = key
        self.cwd = cwd  # the working folder the key was made for

    @property
    def socket(self) -> str:
        return os.path.join(self.folder, f"{self.key}.sock")

    @property
    def lock(self) -> str:
        return os.path.join(self.folder, f"{self.key}.lock")

    @property
    def log(self) -> str:
        return os.path.join(self.folder, f"{self.key}.log")

    @property
    def failed(self) -> str:
        """Touched when a broker could not start (its log says why)."""
        return os.path.join(self.folder, f"{self.key}.failed")


def place_for(environ: Mapping[str, str], cwd: str) -> Place:
    """The resident broker's place for this environment and working folder."""
    key = configuration_key(environ, cwd)
    for folder in candidate_folders(environ):
        if len(os.path.join(folder, f"{key}.sock")) <= SOCKET_PATH_MAX:
            return Place(private_folder(folder), key, cwd)
    raise UnusablePlace(f"no runtime folder short enough for a socket path (limit {SOCKET_PATH_MAX} bytes)")


def candidate_folders(environ: Mapping[str, str]) -> list[str]:
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    fallback = os.path.join("/tmp", f"recall-{os.getuid()}")
    if runtime and os.path.isabs(runtime):
        return [os.path.join(runtime, RUNTIME_FOLDER), fallback]
    return [fallback]


def private_folder(folder: str) -> str:
    """``folder``, created 0700, after checking it is a folder of this user's that nobody
    else can write to (:class:`UntrustedPlace` otherwise); one others can only enter is
    closed to them."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnusablePlace(f"cannot create {folder}: {exc.strerror or exc}") from None
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise UntrustedPlace(f"{folder} is not a folder (a symlink or file is in its place)")
    if info.st_uid != os.getuid():
        raise UntrustedPlace(f"{folder} belongs to uid {info.st_uid}, not to this user")
    if info.st_mode & WRITABLE_BY_OTHERS:
        raise UntrustedPlace(
            f"{folder} is writable by other users (mode {stat.S_IMODE(info.st_mode):04o}): "
            "remove it, or check what is in it and make it 0700"
        )
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)  # others could enter but not write: nothing of theirs is in it
    return folder


def socket_file_is_own(path: str) -> bool:
    """Whether a socket of this user's, that no one else can write to, is at ``path``;
    False when nothing or something else of this user's is (a broker start replaces it).

    Raises :class:`UntrustedPlace` for anything another user owns or could take over."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if info.st_uid != os.getuid():
        raise UntrustedPlace(f"{path} belongs to uid {info.st_uid}, not to this user")
    if not stat.S_ISSOCK(info.st_mode):
        return False
    if info.st_mode & WRITABLE_BY_OTHERS:
        raise UntrustedPlace(f"{path} is writable by other users (mode {stat.S_IMODE(info.st_mode):04o})")
    return True


def fresh_file(path: str) -> int:
    """A new empty file at ``path``, 0600, open for writing: whatever was in its place
    (a symlink, another user's file, a second name of a file elsewhere) is unlinked
    first, never followed or truncated. The folder is private, so nothing can take its
    place again between the two steps."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | OWN_FILE_FLAGS, 0o600)


def open_lock_file(path: str) -> int:
    """The start lock at ``path``, a regular file of this user's with no other name:
    kept when it is one (other commands may hold it), replaced when anything else is
    in its place."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | OWN_FILE_FLAGS, 0o600)
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # ELOOP: a symlink, not followed
            raise
        return fresh_file(path)
    info = os.fstat(descriptor)
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_nlink == 1:
        return descriptor
    os.close(descriptor)
    return fresh_file(path)


def read_own_file(path: str, limit: int) -> bytes:
    """Up to ``limit`` bytes from the end of the regular file of this user's at ``path``;
    a symlink is not followed, anything else reads as empty."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | OWN_FILE_FLAGS)  # a FIFO must not hang it
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return b""
        os.lseek(descriptor, max(0, info.st_size - limit), os.SEEK_SET)
        return os.read(descriptor, limit)
    finally:
        os.close(descriptor)


def modified_at(path: str) -> float | None:
    """When the regular file of this user's at ``path`` last changed; None for anything else."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        return None
    return info.st_mtime


def configuration_key(environ: Mapping[str, str], cwd: str) -> str:
    home = environ.get("HOME", "")
    config_home = _xdg(environ, "XDG_CONFIG_HOME", ".config", home)
    project = nearest_project_file(cwd)
    identity = (
        ("config", config_home),
        ("state", _xdg(environ, "XDG_STATE_HOME", ".local/state", home)),
        ("cache", _xdg(environ, "XDG_CACHE_HOME", ".cache", home)),
        ("project", project),
        ("interpreter", sys.executable),
        ("code", os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        # every variable an adapter of this configuration may see (broker.adapter_environment)
        ("environment", key_environment(environ, configuration_texts(config_home, project))),
    )
    # repr of strings in tuples names each value unambiguously (no json: see thin_client.py)
    return sha256_hex(repr(identity).encode("utf-8", "surrogateescape"))[:KEY_LENGTH]


def sha256_hex(data: bytes) -> str:
    """SHA-256 from the interpreter's own implementation where it has one: ``hashlib``
    loads OpenSSL first, which costs a command more than the whole digest."""
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # CPython 3.12 and later
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()


def _xdg(environ: Mapping[str, str], name: str, default: str, home: str) -> str:
    value = environ.get(name, "")
    if value:
        if not os.path.isabs(value):
            raise UnusablePlace(f"{name} is not absolute")  # the in-process path reports it
        return value
    if not os.path.isabs(home):
        raise UnusablePlace("HOME is not an absolute path")
    return os.path.join(home, default)


def nearest_project_file(cwd: str) -> str:
    """The project file the configuration loader would pick up from ``cwd``, or ``""``."""
    directory = os.path.abspath(cwd)
    while True:
        candidate = os.path.join(directory, PROJECT_FILE_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return ""
        directory = parent
