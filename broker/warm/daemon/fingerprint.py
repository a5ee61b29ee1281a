"""What a resident broker was started with, so it can tell when it no longer matches.

A broker answers only while three things are as they were when it loaded its
configuration: the configuration files (the user file, ``adapters.d`` and the
project file, including their appearing or vanishing), the installed version
the client reports, and the programs and code of every registered adapter.
Checking costs a few dozen ``stat`` calls, so it is done before every command.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from broker import __version__
from broker.config import Config

# (mtime_ns, size, inode); None while the file does not exist
FileState = tuple[int, int, int] | None


def file_state(path: Path) -> FileState:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


@dataclass(frozen=True)
class Fingerprint:
    files: dict[Path, FileState]

    @classmethod
    def of(cls, config: Config) -> Fingerprint:
        return cls({path: file_state(path) for path in watched_files(config)})

    def change(self) -> str | None:
        """What differs from now, as a sentence; None when nothing does."""
        for path, state in self.files.items():
            now = file_state(path)
            if now != state:
                what = "appeared" if state is None else "was removed" if now is None else "changed"
                return f"{path} {what} since the resident broker started"
        return None


def version_change(client_version: str) -> str | None:
    if client_version == __version__:
        return None
    return f"recall {client_version} is installed; the resident broker runs {__version__}"


def watched_files(config: Config) -> list[Path]:
    paths = config.paths
    files = [paths.config_file, paths.adapters_dir, *(f.path for f in config.files)]
    if paths.project_file is not None:
        files.append(paths.project_file)
    for registration in config.adapters.values():
        files += adapter_files(registration.argv, registration.env)
    return list(dict.fromkeys(files))


def adapter_files(argv: list[str], env: dict[str, str]) -> list[Path]:
    """The program an adapter runs and the code it loads that recall can name."""
    if not argv:
        return []
    files: list[Path] = []
    program = shutil.which(argv[0], path=env.get("PATH", os.environ.get("PATH")))
    if program:
        files.append(Path(program))
    rest = argv[1:]
    if len(rest) >= 2 and rest[0] == "-m":
        files += module_files(rest[1])
        files += module_files("adapter_sdk")
    elif rest and rest[0].endswith(".py"):
        files.append(Path(rest[0]))
    return files


def module_files(name: str) -> list[Path]:
    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None or spec.origin is None:
        return []
    origin = Path(spec.origin)
    if spec.submodule_search_locations:
        return sorted(origin.parent.rglob("*.py"))
    return [origin]
