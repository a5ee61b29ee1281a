"""Small things a new user meets in the first minutes: typos, completion, version."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RECALL = Path(sys.executable).parent / "recall"


def recall(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RECALL), *args], capture_output=True, text=True, timeout=60)


def test_a_mistyped_command_suggests_the_close_one() -> None:
    done = recall("qurey", "backups")
    assert done.returncode == 1
    assert "did you mean 'query'?" in done.stderr


def test_an_unrelated_word_gets_no_suggestion_but_a_pointer_to_help() -> None:
    done = recall("zzzz")
    assert done.returncode == 1
    assert "did you mean" not in done.stderr and "recall --help" in done.stderr


def test_bash_completion_completes_commands_and_a_commands_flags() -> None:
    script = recall("completion", "bash")
    assert script.returncode == 0
    probe = (
        f"{script.stdout}\n"
        "COMP_WORDS=(recall qu); COMP_CWORD=1; _recall; echo \"${COMPREPLY[@]}\"\n"
        "COMP_WORDS=(recall query --as); COMP_CWORD=2; _recall; echo \"${COMPREPLY[@]}\"\n"
    )
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["query", "--as-of"]


def test_zsh_and_fish_scripts_name_every_command() -> None:
    from broker.surfaces.cli import COMMANDS

    for shell in ("zsh", "fish"):
        script = recall("completion", shell).stdout
        for name in COMMANDS:
            assert name in script, (shell, name)


def test_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    done = recall("version")
    assert done.returncode == 0
    assert done.stdout.startswith(f"recall {version('recall-broker')}")
    assert "unknown" not in done.stdout
