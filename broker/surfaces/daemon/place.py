"""Where a resident broker listens: a private folder and a name derived from its configuration.

Standard library only: the thin client imports this on every command.

The folder is ``$XDG_RUNTIME_DIR/recall`` (the per-user runtime folder the
login manager creates, mode 0700), else ``/tmp/recall-<uid>``. Either is
created 0700 and used only if it is a real folder (not a symlink) owned by this
user that nobody else can enter; anything else is refused.

One broker serves one configuration: its name is a digest of every input that
decides what a command would read (the user configuration file, the state and
cache folders, the nearest project ``recall.toml``, the interpreter and the
environment variables adapters see), so two configurations never share one.
"""

from __future__ import annotations

import os
import stat
import sys

from broker.environment import DAEMON_ENV, DAEMON_IDLE_ENV, SERVER_ENV

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Mapping

RUNTIME_FOLDER = "recall"
PROJECT_FILE_NAME = "recall.toml"
SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with its terminating NUL
KEY_LENGTH = 20

# What adapters inherit that can change an answer; volatile shell variables are left out.
ENVIRONMENT_NAMES = ("PATH", "HOME", "TZ", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONPATH")
ENVIRONMENT_PREFIX = "RECALL_"
# These choose how a command is run, not what it answers.
TRANSPORT_NAMES = frozenset({DAEMON_ENV, DAEMON_IDLE_ENV, SERVER_ENV})


class UnusablePlace(Exception):
    """No safe folder or name for a socket: commands run in process."""


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
    """``folder``, created 0700, after checking nobody else owns or can enter it."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnusablePlace(f"cannot create {folder}: {exc.strerror or exc}") from None
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise UnusablePlace(f"{folder} is not a folder (a symlink or file is in its place)")
    if info.st_uid != os.getuid():
        raise UnusablePlace(f"{folder} belongs to uid {info.st_uid}, not to this user")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder


def configuration_key(environ: Mapping[str, str], cwd: str) -> str:
    home = environ.get("HOME", "")
    identity = (
        ("config", _xdg(environ, "XDG_CONFIG_HOME", ".config", home)),
        ("state", _xdg(environ, "XDG_STATE_HOME", ".local/state", home)),
        ("cache", _xdg(environ, "XDG_CACHE_HOME", ".cache", home)),
        ("project", nearest_project_file(cwd)),
        ("interpreter", sys.executable),
        ("code", os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        ("environment", tuple(sorted(
            (name, value)
            for name, value in environ.items()
            if (name in ENVIRONMENT_NAMES or name.startswith(ENVIRONMENT_PREFIX))
            and name not in TRANSPORT_NAMES
        ))),
    )
    # repr of strings in tuples names each value unambiguously (no json: see client.py)
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
