"""The command line reaches the resident broker through the standard library alone."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from broker.warm.daemon.socket_location import sha256_hex
from broker.warm.daemon.thin_client import wanted

PROBE = """
import sys
at_start = set(sys.modules)  # what the interpreter's site hooks loaded
import broker.surfaces.cli, broker.warm.daemon.thin_client
loaded = {name.split(".")[0] for name in set(sys.modules) - at_start}
print(" ".join(sorted(loaded - set(sys.stdlib_module_names) - {"broker"})))
"""

# Modules that cost a command milliseconds to import and that the thin path can do without.
HEAVY = """
import sys
import broker.surfaces.cli, broker.warm.daemon.thin_client
print(" ".join(sorted({"socket", "hashlib", "asyncio", "argparse", "typing", "re", "enum"} & set(sys.modules))))
"""


def test_the_thin_path_imports_nothing_beyond_the_standard_library():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_the_thin_path_skips_the_costly_standard_modules():
    done = subprocess.run([sys.executable, "-c", HEAVY], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_the_installed_command_imports_no_more_than_the_thin_path():
    # an installer's entry-point wrapper imports ``re`` (and with it ``enum``) first
    command = Path(sys.executable).with_name("recall")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(command), "--help"], capture_output=True, text=True, check=True
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "broker.surfaces.cli" in imported
    assert sorted(imported & {"re", "enum"}) == []


def test_the_socket_name_digest_is_sha256():
    for data in (b"", b"config", bytes(range(256)) * 4):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    "argv",
    [
        ["query", "restore"],
        ["expand", "notes:a.md#L1-L2"],
        ["sources", "--json"],
        ["refresh", "--source", "notes"],
        ["query", "--", "--server"],  # after '--' it is the question, not a flag
    ],
)
def test_commands_that_talk_to_sources_go_to_the_resident_broker(argv):
    assert wanted(argv, {}, stderr_is_terminal=False)


@pytest.mark.parametrize(
    ("argv", "environ"),
    [
        (["query", "--no-daemon", "restore"], {}),
        (["query", "--no-d", "restore"], {}),  # argparse takes an unambiguous prefix
        (["query", "restore"], {"RECALL_DAEMON": "0"}),
        (["query", "restore"], {"RECALL_DAEMON": "off"}),
        (["query", "--server", "http://127.0.0.1:8765", "restore"], {}),
        (["query", "--server=http://127.0.0.1:8765", "restore"], {}),
        (["query", "restore"], {"RECALL_SERVER": "http://127.0.0.1:8765"}),
        (["query", "--help"], {}),
        (["query", "-h"], {}),
        (["init", "--notes", "/tmp"], {}),
        (["doctor"], {}),
        (["serve"], {}),
    ],
)
def test_other_paths_and_commands_run_in_process(argv, environ):
    assert not wanted(argv, environ, stderr_is_terminal=False)


def test_refresh_on_a_terminal_runs_in_process_to_draw_its_progress():
    assert not wanted(["refresh"], {}, stderr_is_terminal=True)
    assert wanted(["query", "restore"], {}, stderr_is_terminal=True)
