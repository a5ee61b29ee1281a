"""A private HOME for loading configuration: its XDG folders below it, a project checkout in it.

``PrivateHome.under(folder)`` makes ``folder/home`` with an empty ``project/``
and an environment naming only those folders (and ``PATH``, and no resident
broker). A test suite subclasses it with how it writes and loads its files.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from tests.support.recall_workspace import RECALL


@dataclass
class PrivateHome:
    root: Path
    environ: dict[str, str]

    @classmethod
    def under(cls, folder: Path) -> Self:
        root = folder / "home"
        (root / "project").mkdir(parents=True)
        environ = {
            "HOME": str(root),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "PATH": os.environ.get("PATH", ""),
            "RECALL_DAEMON": "0",
        }
        return cls(root, environ)

    @property
    def config_dir(self) -> Path:
        return Path(self.environ["XDG_CONFIG_HOME"]) / "recall"

    @property
    def user_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def project_dir(self) -> Path:
        return self.root / "project"

    @property
    def project_file(self) -> Path:
        return self.project_dir / "recall.toml"

    def write_project(self, text: str) -> Path:
        self.project_dir.mkdir(parents=True, exist_ok=True)
        self.project_file.write_text(text)
        return self.project_file

    def run_recall(self, *args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        """The installed ``recall`` in ``cwd``, this home's environment over the test's own."""
        return subprocess.run(
            [RECALL, *args],
            cwd=cwd,
            env={**os.environ, **self.environ},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
