"""Several processes running one script at the same moment, as commands started together do."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

# Each copy sleeps to the next boundary of this many seconds before running the script,
# so all of them start it within a millisecond or two of each other, past their imports.
SLOT_S = 0.3
_ALIGN = f"import time; time.sleep({SLOT_S} - time.time() % {SLOT_S})\n"


@dataclass(frozen=True)
class Finished:
    code: int
    stdout: str
    stderr: str


def run_together(script: str, *args: str, copies: int, timeout: float = 60) -> list[Finished]:
    """Run ``script`` (Python source; ``sys.argv[1:]`` is ``args``) in ``copies`` processes
    at once; how each ended."""
    processes = [
        subprocess.Popen([sys.executable, "-c", _ALIGN + script, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(copies)
    ]
    done = [process.communicate(timeout=timeout) for process in processes]
    return [Finished(process.returncode, out, err) for process, (out, err) in zip(processes, done, strict=True)]
