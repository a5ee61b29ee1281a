"""Find Polign's `recall` binary, never mistaking this project's own `recall` CLI for it.

Both programs are called `recall`. Polign's prints a bare version (``0.23.0``)
for ``-version``; ours is a Python console script that prints ``recall
<version>`` (and rejects ``-version`` with ``recall: unknown command``). A candidate is run only after its file shows it is not our
script, and adopted only when its version output is Polign's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

MIN_VERSION = (0, 23)
INSTALL_COMMAND = "pip install polign-recall"
SETTING = "polign_binary"
SIDE_BY_SIDE_NAME = "polign-recall"
VERSION_TIMEOUT_S = 5.0

_POLIGN_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?")
_OUR_CLI_MARKER = b"broker.surfaces.cli"


class BinaryUnavailable(Exception):
    """Polign's binary cannot be used; the message says what to set or install."""


@dataclass(frozen=True)
class PolignBinary:
    path: str
    version: str


def locate(explicit: str | None) -> PolignBinary:
    """The configured binary, verified; else the first verified candidate found."""
    if explicit is not None:
        try:
            return verify(explicit)
        except BinaryUnavailable as exc:
            raise BinaryUnavailable(
                f"setting {SETTING} = {explicit!r}: {exc}; correct the setting, or install "
                f"Polign's binary with `{INSTALL_COMMAND}`"
            ) from None
    rejected: list[str] = []
    for candidate in _candidates():
        try:
            return verify(candidate)
        except BinaryUnavailable as exc:
            rejected.append(f"{candidate} ({exc})")
    passed_over = f"; passed over: {'; '.join(rejected)}" if rejected else ""
    raise BinaryUnavailable(
        f"Polign Recall's `recall` binary was not found. Install it with `{INSTALL_COMMAND}` "
        f"(keep it beside this project's own `recall` as `{SIDE_BY_SIDE_NAME}`), "
        f"or name it with the setting {SETTING}{passed_over}"
    )


def verify(path: str) -> PolignBinary:
    """Adopt ``path`` only if it is Polign's binary at a supported version."""
    file = Path(path)
    if not file.is_file():
        raise BinaryUnavailable("no such file")
    if not os.access(file, os.X_OK):
        raise BinaryUnavailable("not executable")
    if _is_our_cli(file):
        raise BinaryUnavailable("this is recall-broker's own `recall` CLI, not Polign's")
    try:
        done = subprocess.run(
            [str(file), "-version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            errors="replace",
        )
    except subprocess.TimeoutExpired:
        raise BinaryUnavailable(
            f"`-version` did not answer within {VERSION_TIMEOUT_S:g}s"
        ) from None
    except OSError as exc:
        raise BinaryUnavailable(f"cannot run it: {exc.strerror or exc}") from None
    printed = (done.stdout or done.stderr).strip()
    if printed.startswith(("recall ", "recall:")):
        raise BinaryUnavailable(
            f"it prints {printed[:60]!r}, which is recall-broker's own CLI, not Polign's"
        )
    if printed == "dev":
        return PolignBinary(str(file), printed)
    match = _POLIGN_VERSION.fullmatch(printed)
    if done.returncode != 0 or match is None:
        raise BinaryUnavailable(f"`-version` printed {printed[:60]!r}, not a Polign Recall version")
    if tuple(int(part) for part in match.groups()[:2]) < MIN_VERSION:
        raise BinaryUnavailable(
            f"Polign Recall {printed} is older than {'.'.join(map(str, MIN_VERSION))}, "
            f"which this adapter needs; upgrade with `{INSTALL_COMMAND} -U`"
        )
    return PolignBinary(str(file), printed)


def find_polign_server(explicit: str | None, binary: PolignBinary) -> str | None:
    """Directory holding `polign-server`, which Polign starts for a local data directory."""
    if explicit is not None:
        if not Path(explicit).is_file():
            raise BinaryUnavailable(f"setting polign_server = {explicit!r}: no such file")
        return str(Path(explicit).parent)
    for directory in (Path(binary.path).parent, Path(sysconfig.get_path("scripts"))):
        if (directory / _exe("polign-server")).is_file():
            return str(directory)
    return None


def _candidates() -> Iterator[str]:
    """Places pip and users put Polign's binary, side-by-side name first, each once."""
    directories = [Path(sysconfig.get_path("scripts"))]
    spec = find_spec("polign_recall")
    if spec is not None and spec.origin:
        # `pip install --target DIR` puts the binary in DIR/bin beside the package.
        directories.append(Path(spec.origin).parent.parent / "bin")
    directories += [Path(entry) for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    seen: set[str] = set()
    configured = os.environ.get("RECALL_BIN")  # Polign's own client honours this variable
    names = (SIDE_BY_SIDE_NAME, "recall")
    paths = ([Path(configured)] if configured else []) + [
        directory / _exe(name) for name in names for directory in directories
    ]
    for path in paths:
        if not path.is_file():
            continue
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            yield str(path)


def _is_our_cli(file: Path) -> bool:
    try:
        with file.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and _OUR_CLI_MARKER in head


def _exe(name: str) -> str:
    return name + (".exe" if sys.platform == "win32" else "")
