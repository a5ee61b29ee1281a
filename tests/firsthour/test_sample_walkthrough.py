"""What a new user sees on the bundled sample: the README tells the truth, and every
locator the human output prints can be pasted into ``recall expand``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECALL = Path(sys.executable).parent / "recall"
SAMPLE = ROOT / "examples" / "sample"


@pytest.fixture(scope="module")
def recall(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("sample-home")
    env = {**os.environ, "XDG_CONFIG_HOME": f"{home}/c", "XDG_STATE_HOME": f"{home}/s",
           "XDG_CACHE_HOME": f"{home}/k", "RECALL_DAEMON": "0"}
    env.pop("RECALL_SERVER", None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(RECALL), *args], env=env, capture_output=True, text=True,
                              cwd=home, timeout=120)

    assert run("init", "--notes", str(SAMPLE / "notes"), "--tasks", str(SAMPLE / "todo.txt")).returncode == 0
    assert run("refresh").returncode == 0
    return run


def test_readme_sample_output_is_what_the_sample_prints() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_sample.py"), "--check"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr


def test_every_locator_in_the_suppressed_block_expands(recall) -> None:
    shown = recall("query", "how do we restore the database from a backup")
    assert shown.returncode == 0, shown.stderr
    block = shown.stdout.split("\nsuppressed\n", 1)[1]
    locators = re.findall(r"(?:lineage|successor) (\S+)", block)
    assert locators, shown.stdout
    for locator in locators:
        expanded = recall("expand", locator)
        assert expanded.returncode == 0, (locator, expanded.stderr)
        assert expanded.stdout.strip()


def test_every_result_locator_expands(recall) -> None:
    shown = recall("query", "postgres upgrade plan")
    assert shown.returncode == 0, shown.stderr
    locators = re.findall(r"^\d+\. (\S+)$", shown.stdout, flags=re.M)
    assert locators
    for locator in locators:
        assert recall("expand", locator).returncode == 0, locator


def test_every_command_in_the_quickstart_works() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_quickstart.py")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
