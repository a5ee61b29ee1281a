"""A folder the real ``recall`` runs in, and ``recall serve`` started there as a child process.

``workspace_environ(root)`` is the environment of such a folder: its own HOME and
XDG folders below ``root``, this checkout importable, no resident broker (one would
outlive the tests). A test suite writes its configuration into
``root/config/recall`` and holds the folder as a :class:`Workspace`;
:func:`start_server` serves it on an ephemeral loopback port, and a fixture
yields from :func:`serving` to keep a server for its scope.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

RECALL = str(Path(sys.executable).parent / "recall")
CHECKOUT = Path(__file__).resolve().parents[2]


def workspace_environ(root: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "RECALL_DAEMON": "0",
        "HOME": str(root / "home"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CACHE_HOME": str(root / "cache"),
        "PYTHONPATH": str(CHECKOUT),
    }


@dataclass
class Workspace:
    root: Path
    env: dict[str, str]

    def recall(self, *args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [RECALL, *args], input=stdin, capture_output=True, text=True, env=self.env, timeout=timeout,
            cwd=self.root,
        )


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    first_lines: list[str]
    stderr: str = ""

    def stop(self) -> int:
        """SIGTERM, wait for the graceful shutdown, keep what it wrote to stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, self.stderr = self.process.communicate(timeout=15)
        return self.process.returncode


def start_server(
    ws: Workspace, *args: str, env: dict[str, str] | None = None, lines: int = 1, path: str = ""
) -> Served:
    """``recall serve`` on an ephemeral loopback port; the URL is read from its first line.

    ``path`` is appended to that URL: the page's tests ask for ``/`` and append a page's path.
    """
    process = subprocess.Popen(
        [RECALL, "serve", "--addr", "127.0.0.1:0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or ws.env, cwd=ws.root,
    )
    assert process.stdout is not None
    first = [process.stdout.readline() for _ in range(lines)]
    if not first[0]:
        process.wait(timeout=10)
        raise AssertionError(f"recall serve did not start: {process.stderr.read() if process.stderr else ''}")
    url = first[0].rsplit(" at ", 1)[1].strip() + path
    return Served(url, process, first)


def serving(ws: Workspace, *args: str, env: dict[str, str] | None = None, path: str = "") -> Iterator[Served]:
    """A server for as long as the fixture that yields from this lasts."""
    served = start_server(ws, *args, env=env, path=path)
    yield served
    served.stop()
