"""Small things a new user meets in the first minutes: typos, completion, version."""

from __future__ import annotations

import re
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


def test_init_force_removes_the_indexes_of_the_sources_it_replaces(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "XDG_CONFIG_HOME": f"{tmp_path}/c", "XDG_STATE_HOME": f"{tmp_path}/s",
           "XDG_CACHE_HOME": f"{tmp_path}/k", "RECALL_DAEMON": "0"}
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nbody\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(RECALL), *args], env=env, capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)

    assert run("init", "--notes", str(notes)).returncode == 0
    assert run("refresh").returncode == 0
    before = sorted((tmp_path / "s").glob("recall/*/adapters/*"))
    assert before, "refresh keeps the notes index in the source's workdir"
    elsewhere = tmp_path / "notes-2"
    elsewhere.mkdir()
    replaced = run("init", "--force", "--notes", str(elsewhere))
    assert replaced.returncode == 0, replaced.stderr
    assert re.search(r"removed \d+ index folders", replaced.stdout), replaced.stdout
    assert not any(p.exists() for p in before)


def _home_env(tmp_path: Path) -> dict[str, str]:
    import os

    return {**os.environ, "XDG_CONFIG_HOME": f"{tmp_path}/c", "XDG_STATE_HOME": f"{tmp_path}/s",
            "XDG_CACHE_HOME": f"{tmp_path}/k", "RECALL_DAEMON": "0"}


def test_sources_with_nothing_configured_says_how_to_start(tmp_path: Path) -> None:
    done = subprocess.run([str(RECALL), "sources"], env=_home_env(tmp_path), capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0
    assert "nothing is configured yet" in done.stdout and "recall init --notes" in done.stdout


def test_a_note_in_full_width_letters_is_found_by_plain_words(tmp_path: Path) -> None:
    env = _home_env(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "upgrade.md").write_text("# Ｐｏｓｔｇｒｅｓ upgrade\n\nThe ｍｉｇｒａｔｉｏｎ window is Saturday.\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(RECALL), *args], env=env, capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)

    assert run("init", "--notes", str(notes)).returncode == 0
    assert run("refresh").returncode == 0
    found = run("query", "postgres migration")
    assert found.returncode == 0, found.stdout + found.stderr
    assert "notes:upgrade.md" in found.stdout


def test_part_of_a_cjk_run_finds_its_note(tmp_path: Path) -> None:
    env = _home_env(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "backup.md").write_text("# 数据库备份恢复手册\n\n每周日凌晨进行全量备份。\n")
    (notes / "other.md").write_text("# 会议记录\n\n讨论了招聘计划。\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(RECALL), *args], env=env, capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)

    assert run("init", "--notes", str(notes)).returncode == 0
    assert run("refresh").returncode == 0
    found = run("query", "备份")
    assert found.returncode == 0, found.stdout + found.stderr
    assert "notes:backup.md" in found.stdout and "other.md" not in found.stdout
