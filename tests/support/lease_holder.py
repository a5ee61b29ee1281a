"""Another process holding one of a workdir's leases (``adapter_sdk.workdir.lease``), as a
second command indexing the same folder would, until the test lets it go."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Take the lease through the SDK, say so, keep it until standard input closes.
HOLD = """
import sys
from adapter_sdk.workdir import lease
with lease(sys.argv[1], sys.argv[2]) as held:
    print("held" if held else "refused", flush=True)
    sys.stdin.read()
"""


@contextmanager
def lease_held_elsewhere(folder: Path, name: str) -> Iterator[subprocess.Popen[str]]:
    """A process that holds lease ``name`` on ``folder`` for the block; close its stdin
    (or leave the block) to let go."""
    folder.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder), name],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield holder
    finally:
        if holder.stdin is not None and not holder.stdin.closed:
            holder.stdin.close()
        holder.wait(timeout=30)


def let_go(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    assert holder.wait(timeout=30) == 0
