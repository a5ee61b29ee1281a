"""A real, tiny, full disk: a 64 KiB tmpfs mounted for one test (needs the right to mount).

``full_disk`` yields the mount point and unmounts it afterwards; the test is
skipped where mounting is not allowed. ``fill(folder)`` takes every free page,
so the next write that needs a new page is refused by the kernel, and one that
starts in a file's partly used last page is cut short (a short count, as on a
real disk that fills up mid-write).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SIZE = "64k"
PAGE = 4096


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    point = tmp_path / "disk"
    point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs", str(point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def fill(folder: Path) -> None:
    """Write zeros into ``folder`` until the file system refuses more."""
    handle = os.open(folder / ".filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(handle, bytes(PAGE))
    except OSError:
        pass
    finally:
        os.close(handle)


def room_left_in_last_page(size: int) -> int:
    return -size % PAGE
