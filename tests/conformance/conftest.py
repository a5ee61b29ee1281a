from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from adapter_sdk.conformance import record_suite

from .sample_cases import ARGV, CASES


@pytest.fixture(scope="session")
def recorded_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample adapter's suite, recorded once per session. Treat as read-only.

    Recorded without the recorder's own check: replaying it is what the tests do.
    """
    suite = tmp_path_factory.mktemp("recorded") / "sample"
    record_suite(suite, ARGV, CASES, verify=False)
    return suite


@pytest.fixture
def suite_copy(recorded_suite: Path, tmp_path: Path) -> Path:
    """A private copy of the recorded suite, for tests that edit a transcript."""
    copy = tmp_path / "sample"
    shutil.copytree(recorded_suite, copy)
    return copy


@pytest.fixture
def sample_argv() -> list[str]:
    return list(ARGV)


def is_running(pid: int) -> bool:
    """Whether a process exists and is not a zombie awaiting its reaper."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
