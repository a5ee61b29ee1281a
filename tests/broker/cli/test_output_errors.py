"""An output the system will not take is one line on stderr and exit code 1, never a
stack trace."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.broker.cli.conftest import RECALL


def recall_writing_to(stdout: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RECALL), *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60,
        env={**os.environ, "RECALL_DAEMON": "0"},
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to write to")
@pytest.mark.parametrize("args", [("version",), ("--help",), ("completion", "bash")])
def test_a_full_disk_is_one_line_and_exit_code_1(args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        done = recall_writing_to(full.fileno(), *args)
    assert (done.returncode, done.stderr) == (1, "recall: No space left on device\n")


def test_a_reader_that_went_away_gets_nothing_more_and_no_stack_trace() -> None:
    read, write = os.pipe()
    os.close(read)  # like `recall ... | head` once head has what it wanted
    try:
        done = recall_writing_to(write, "completion", "bash")
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (1, "")
