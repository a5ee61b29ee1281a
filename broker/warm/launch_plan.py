"""The adapters a cold query started last time, started again before anything is imported.

A cold ``recall query`` can name the adapters it will ask only once it has loaded
its configuration, and by then it has spent most of its start-up importing; the
adapters' own start is what it then waits for. So each query remembers what it
launched, per configuration (the resident broker's key, :mod:`broker.surfaces.
daemon.place`) and per shape of command line (its ``--profile`` and ``--scope``
flags, as typed), and the next one with that shape launches the same processes
first thing, and writes each of the user's own sources the handshake it was sent
last time (:mod:`broker.warm.prestart`).

A remembered plan is a guess, never an instruction:

* it is used only while every configuration file it was made from is as it was
  (the user file, ``adapters.d`` and its files, the project file), so an adapter
  removed from the configuration is not started again;
* a process it started is used only if the query's own plan asks for exactly
  that process (:meth:`broker.warm.prestart.Prestarted.take` compares source, command,
  environment and workdir, and the handshake it was greeted with, if any); any
  other is ended with the command;
* it is read only from the private runtime folder, as a regular file owned by
  this user that nobody else can write, and written there atomically.

Standard library only, and no ``json``: this runs before the broker is imported.
Fields are NUL-separated, which no path, argument, environment value or JSON frame
can hold.
"""

from __future__ import annotations

import os
import stat

from broker.environment import SERVER_ENV
from broker.warm.argv_flags import before_operands, names
from broker.warm.daemon.socket_location import UnusablePlace, place_for, sha256_hex

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from broker.config import Config
    from broker.static_eligibility import Launch
    from broker.warm.prestart import Prestarted

FORMAT = "recall-launch-plan/3"
SHAPE_FLAGS = ("--profile", "--scope")
# a command line with one of these does not run a local broker, or runs none at all
NOT_LOCAL = ("--server", "--auth-token-env", "--help", "-h")
MAX_PLAN_BYTES = 1 << 16


class Plan:
    """Where one command line's shape keeps its launches, and what was found there."""

    __slots__ = ("path", "found")

    def __init__(self, path: str) -> None:
        self.path = path
        self.found: bytes | None = None

    def launch(self, prestarted: Prestarted) -> int:
        """Start what the plan names into ``prestarted`` if its configuration files are
        unchanged; how many."""
        self.found = _read_private(self.path)
        if self.found is None:
            return 0
        parsed = decode(self.found)
        if parsed is None:
            return 0
        files, launches = parsed
        if any(file_state(path) != state for path, state in files):
            return 0
        for source_uid, argv, env, workdir, cwd, greeting, pass_env in launches:
            prestarted.start(source_uid, argv, dict(env), workdir, cwd, greeting, pass_env=pass_env)
        return len(launches)

    def keep(self, config: Config, launches: list[Launch]) -> None:
        """Remember ``launches`` for the next command of this shape (if they differ)."""
        data = encode([(path, file_state(path)) for path in configuration_files(config)], launches)
        if data == self.found or len(data) > MAX_PLAN_BYTES:
            return
        try:
            _write_private(self.path, data)
        except OSError:
            pass  # a plan is only a head start; the query goes on without one


def for_command(args: list[str], environ: Mapping[str, str], cwd: str) -> Plan | None:
    """The plan of a ``recall query`` with arguments ``args``; None where none applies
    (help, a remote server, or no private runtime folder)."""
    if environ.get(SERVER_ENV):
        return None
    shape: list[str] = []
    words = before_operands(args)
    for arg in words:
        if names(arg, NOT_LOCAL):
            return None
        name, has_value, value = arg.partition("=")
        if name in SHAPE_FLAGS:
            shape += [name, value if has_value else next(words, "")]
    try:
        place = place_for(environ, cwd)
    except (UnusablePlace, OSError):
        return None
    digest = sha256_hex("\0".join(shape).encode("utf-8", "surrogateescape"))[:12]
    return Plan(os.path.join(place.folder, f"{place.key}-{digest}.plan"))


def configuration_files(config: Config) -> list[str]:
    """The files a configuration was read from, and those whose appearing would change it."""
    paths = config.paths
    files = [paths.config_file, paths.adapters_dir, *(f.path for f in config.files)]
    if paths.project_file is not None:
        files.append(paths.project_file)
    return list(dict.fromkeys(str(path) for path in files))


# (mtime_ns, size, inode) as text, or "-" while the file does not exist
def file_state(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return "-"
    return f"{info.st_mtime_ns}:{info.st_size}:{info.st_ino}"


def encode(files: Iterable[tuple[str, str]], launches: Iterable[Launch]) -> bytes:
    fields = [FORMAT]
    files, launches = list(files), list(launches)
    fields.append(str(len(files)))
    for path, state in files:
        fields += [path, state]
    fields.append(str(len(launches)))
    for source_uid, argv, env, workdir, cwd, greeting, pass_env in launches:
        fields += [source_uid, workdir, "" if cwd is None else "=" + cwd, str(len(argv)), *argv]
        fields.append(str(len(env)))
        for name, value in env:
            fields += [name, value]
        fields.append(greeting.decode("utf-8", "surrogateescape"))
        fields += [str(len(pass_env)), *pass_env]
    return "\0".join(fields).encode("utf-8", "surrogateescape")


def decode(data: bytes) -> tuple[list[tuple[str, str]], list[Launch]] | None:
    """The files and launches ``data`` holds; None when it is not a plan of this format."""
    fields = iter(data.decode("utf-8", "surrogateescape").split("\0"))
    # lists, not generators, are filled from ``fields``: in a generator the StopIteration
    # of a cut-off file would become a RuntimeError
    try:
        if next(fields) != FORMAT:
            return None
        files = [(next(fields), next(fields)) for _ in range(int(next(fields)))]
        launches: list[Launch] = []
        for _ in range(int(next(fields))):
            source_uid, workdir, cwd = next(fields), next(fields), next(fields)
            argv = tuple([next(fields) for _ in range(int(next(fields)))])
            env = tuple([(next(fields), next(fields)) for _ in range(int(next(fields)))])
            greeting = next(fields).encode("utf-8", "surrogateescape")
            pass_env = tuple([next(fields) for _ in range(int(next(fields)))])
            launches.append((source_uid, argv, env, workdir, cwd[1:] if cwd else None, greeting, pass_env))
    except (StopIteration, ValueError):
        return None
    if next(fields, None) is not None:
        return None
    return files, launches


def _read_private(path: str) -> bytes | None:
    """The file's bytes if it is a regular file of this user's that only they can write."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            return None
        data = os.read(descriptor, MAX_PLAN_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    return data if len(data) <= MAX_PLAN_BYTES else None


def _write_private(path: str, data: bytes) -> None:
    temporary = f"{path}.{os.getpid()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.write(descriptor, data)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except OSError:
        os.unlink(temporary)
        raise
