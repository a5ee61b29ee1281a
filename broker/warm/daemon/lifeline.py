"""What a resident broker lives on; it leaves within seconds once any of it is gone.

A broker serves one configuration from one installed program through one socket.
When the configuration it loaded changes or is removed, its state folder is removed,
its socket file is removed or replaced, or the program it runs from is changed or
uninstalled, no command will reach it any more, or none should: it would keep its
adapters warm for nobody until its idle limit. :meth:`Lifeline.broken` says why it
should leave; the server asks every ``CHECK_SECONDS`` (a few hundred ``stat`` calls,
well under a millisecond's work each second).
"""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from broker.config import Config
from broker.warm.daemon.fingerprint import Fingerprint, module_files

CHECK_SECONDS = 1.0
DISTRIBUTION = "recall-broker"
# The packages whose code a broker runs; adapters' own code is in the fingerprint.
PROGRAM_PACKAGES = ("broker", "adapter_sdk")

# (inode, mtime_ns, size); None while the file does not exist
Identity = tuple[int, int, int] | None


def identity(path: Path | str) -> Identity:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def inode(path: str) -> int | None:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None


@dataclass
class Lifeline:
    socket_path: str
    socket_inode: int | None
    fingerprint: Fingerprint
    state_root: Path
    state_inode: int | None  # None: it could not be created, so it is not watched
    program: dict[Path, Identity] = field(default_factory=dict)

    @classmethod
    def of(cls, config: Config, fingerprint: Fingerprint, socket_path: str) -> Lifeline:
        """What the broker serving ``config`` at ``socket_path`` lives on, as it is now.
        The state folder is created if it is not there yet (its adapters would create it)."""
        state_root = config.paths.state_root
        with suppress(OSError):
            state_root.mkdir(mode=0o700, parents=True, exist_ok=True)
        return cls(
            socket_path=socket_path,
            socket_inode=inode(socket_path),
            fingerprint=fingerprint,
            state_root=state_root,
            state_inode=inode(str(state_root)),
            program={path: identity(path) for path in program_files()},
        )

    def broken(self) -> str | None:
        """Why the broker should leave now, as a sentence; None while all is as it was."""
        now = inode(self.socket_path)
        if now != self.socket_inode:
            return f"its socket {self.socket_path} was {'removed' if now is None else 'replaced'}"
        state = inode(str(self.state_root))
        if self.state_inode is not None and state != self.state_inode:
            return f"its state folder {self.state_root} was {'removed' if state is None else 'replaced'}"
        for path, known in self.program.items():
            if identity(path) != known:
                return f"the installed program changed ({path})"
        return self.fingerprint.change()


def program_files() -> list[Path]:
    """The files that say which program a broker runs: the distribution's record (rewritten
    by every install, removed by an uninstall) and the code of its own packages (edited in
    place in an editable install)."""
    files = [file for package in PROGRAM_PACKAGES for file in module_files(package)]
    record = distribution_record()
    if record is not None:
        files.append(record)
    return files


def distribution_record() -> Path | None:
    from importlib import metadata

    try:
        listed = metadata.distribution(DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        return None  # run from a source tree: its code files are all there is
    for entry in listed:
        if entry.name == "RECORD":
            return Path(str(entry.locate()))
    return None
