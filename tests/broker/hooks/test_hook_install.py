"""``recall hook install|uninstall claude-code``: one entry in the settings file, everything else kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.full_disk import fill, full_disk

__all__ = ["full_disk"]  # the fixture, used by name

RECALL = str(Path(sys.executable).parent / "recall")

UNRELATED = """{
    "permissions": {
        "allow": ["Bash(npm run test:*)"],
        "deny": ["Read(./.env)"]
    },
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash"}]}
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "~/bin/branch-note", "timeout": 5}]}
        ]
    },
    "model": "opus"
}
"""


def recall(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "RECALL_DAEMON": "0"}
    return subprocess.run([RECALL, "hook", *args], capture_output=True, text=True, env=env,
                          cwd=cwd or home, timeout=60)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(UNRELATED)
    return tmp_path


def settings(home: Path) -> dict:
    return json.loads((home / ".claude" / "settings.json").read_text())


def ours(data: dict) -> list[dict]:
    return [
        hook
        for group in data.get("hooks", {}).get("UserPromptSubmit", [])
        for hook in group["hooks"]
        if "hook claude-code" in hook["command"]
    ]


def test_install_adds_one_entry_and_keeps_every_other_byte(home):
    done = recall(home, "install", "claude-code")
    assert done.returncode == 0, done.stderr
    after = settings(home)
    (entry,) = ours(after)
    assert entry["type"] == "command"
    assert entry["command"] == f"{RECALL} hook claude-code"
    assert entry["timeout"] > 2
    before = json.loads(UNRELATED)
    assert after["permissions"] == before["permissions"]
    assert after["env"] == before["env"] and after["model"] == before["model"]
    assert after["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert before["hooks"]["UserPromptSubmit"][0] in after["hooks"]["UserPromptSubmit"]
    lines = (home / ".claude" / "settings.json").read_text().splitlines()
    for line in UNRELATED.splitlines():  # the neighbour before the new entry gains a comma
        assert line in lines or line + "," in lines


def test_install_twice_changes_nothing(home):
    recall(home, "install", "claude-code")
    first = (home / ".claude" / "settings.json").read_bytes()
    again = recall(home, "install", "claude-code")
    assert again.returncode == 0
    assert "already installed" in again.stdout
    assert (home / ".claude" / "settings.json").read_bytes() == first


def test_install_with_other_flags_replaces_the_entry_in_place(home):
    recall(home, "install", "claude-code")
    recall(home, "install", "claude-code", "--budget-ms", "1500", "--profile", "work")
    (entry,) = ours(settings(home))
    assert entry["command"].endswith("hook claude-code --profile work --budget-ms 1500")


def test_uninstall_restores_the_file_byte_for_byte(home):
    recall(home, "install", "claude-code")
    done = recall(home, "uninstall", "claude-code")
    assert done.returncode == 0, done.stderr
    assert (home / ".claude" / "settings.json").read_text() == UNRELATED
    again = recall(home, "uninstall", "claude-code")
    assert "not installed" in again.stdout


def test_a_settings_file_install_created_is_removed_by_uninstall(tmp_path):
    recall(tmp_path, "install", "claude-code")
    assert ours(settings(tmp_path))
    recall(tmp_path, "uninstall", "claude-code")
    assert not (tmp_path / ".claude" / "settings.json").exists()


def test_dry_run_shows_the_change_and_writes_nothing(home):
    done = recall(home, "install", "claude-code", "--dry-run")
    assert done.returncode == 0, done.stderr
    added = [line for line in done.stdout.splitlines() if line.startswith("+") and '"command"' in line]
    assert f'+                        "command": "{RECALL} hook claude-code",' in added
    removed = [line[1:] for line in done.stdout.splitlines() if line.startswith("-") and line[:3] != "---"]
    assert [line + "," for line in removed] == [
        line[1:] for line in done.stdout.splitlines() if line.startswith("+") and line.endswith("},")
    ]
    assert (home / ".claude" / "settings.json").read_text() == UNRELATED


def test_project_scope_writes_the_project_settings(home, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    done = recall(home, "install", "claude-code", "--project", cwd=project)
    assert done.returncode == 0, done.stderr
    assert ours(json.loads((project / ".claude" / "settings.json").read_text()))
    assert (home / ".claude" / "settings.json").read_text() == UNRELATED


def test_a_settings_file_that_is_not_json_is_refused_and_left_alone(home):
    (home / ".claude" / "settings.json").write_text("{ not json")
    done = recall(home, "install", "claude-code")
    assert done.returncode == 1
    assert "not valid JSON" in done.stderr
    assert (home / ".claude" / "settings.json").read_text() == "{ not json"


def test_install_needs_a_known_host(home):
    done = recall(home, "install")
    assert done.returncode == 1
    assert "name the host" in done.stderr


def test_a_symlinked_settings_file_is_edited_through_its_link(home):
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude-settings.json"
    link = home / ".claude" / "settings.json"
    link.rename(target)
    link.symlink_to(target)
    installed = recall(home, "install", "claude-code")
    assert installed.returncode == 0, installed.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert ours(json.loads(target.read_text()))
    removed = recall(home, "uninstall", "claude-code")
    assert removed.returncode == 0, removed.stderr
    assert link.is_symlink() and target.read_text() == UNRELATED
    assert sorted(p.name for p in dotfiles.iterdir()) == ["claude-settings.json"]


def test_an_empty_object_comes_back_exactly_after_install_and_uninstall(home):
    path = home / ".claude" / "settings.json"
    path.write_text("{}\n")
    recall(home, "install", "claude-code")
    assert ours(settings(home))
    done = recall(home, "uninstall", "claude-code")
    assert done.returncode == 0, done.stderr
    assert path.read_text() == "{}\n"


def test_a_settings_file_that_is_not_utf8_is_refused_in_one_line_and_left_alone(home):
    path = home / ".claude" / "settings.json"
    latin1 = '{"env": {"NAME": "Jos\xe9"}}\n'.encode("latin-1")
    path.write_bytes(latin1)
    for action in ("install", "uninstall"):
        done = recall(home, action, "claude-code")
        assert done.returncode == 1
        assert done.stderr == f"recall: {path} is not valid UTF-8 (at byte offset 21); fix it first, nothing was changed\n"
        assert path.read_bytes() == latin1


def test_a_repeated_hooks_key_is_refused_rather_than_written_where_it_is_ignored(home):
    path = home / ".claude" / "settings.json"
    twice = '{"hooks": {}, "model": "opus", "hooks": {"PreToolUse": []}}\n'
    path.write_text(twice)
    done = recall(home, "install", "claude-code")
    assert done.returncode == 1
    assert "has the key 'hooks' 2 times" in done.stderr and len(done.stderr.splitlines()) == 1
    assert path.read_text() == twice


WRAPPER = {"type": "command", "command": 'bash -c "recall hook claude-code | tee -a ~/hook.log"'}


def test_a_users_own_wrapper_around_recall_is_never_taken_for_ours(home):
    path = home / ".claude" / "settings.json"
    mine = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [WRAPPER]}]}}, indent=2) + "\n"
    path.write_text(mine)
    installed = recall(home, "install", "claude-code")
    assert installed.returncode == 0, installed.stderr
    assert WRAPPER in settings(home)["hooks"]["UserPromptSubmit"][0]["hooks"]
    assert len(ours(settings(home))) == 2
    removed = recall(home, "uninstall", "claude-code")
    assert removed.returncode == 0, removed.stderr
    assert path.read_text() == mine
    again = recall(home, "uninstall", "claude-code")
    assert "not installed" in again.stdout and path.read_text() == mine


def test_an_entry_installed_with_another_command_is_removed_when_named(home):
    done = recall(home, "install", "claude-code", "--command", "/opt/tools/rc", "--limit", "3")
    assert done.returncode == 0, done.stderr
    assert recall(home, "uninstall", "claude-code").stdout.endswith("nothing to change\n")
    removed = recall(home, "uninstall", "claude-code", "--command", "/opt/tools/rc")
    assert removed.returncode == 0, removed.stderr
    assert (home / ".claude" / "settings.json").read_text() == UNRELATED


def test_a_full_disk_refuses_the_install_in_one_line_and_leaves_the_file(home, full_disk):
    path = home / ".claude" / "settings.json"
    (full_disk / "settings.json").write_text(UNRELATED)
    path.unlink()
    path.symlink_to(full_disk / "settings.json")
    fill(full_disk)
    done = recall(home, "install", "claude-code")
    assert done.returncode == 1
    assert done.stderr == (
        f"recall: could not write settings file {full_disk / 'settings.json'}: No space left on device\n")
    assert path.read_text() == UNRELATED
    assert sorted(p.name for p in full_disk.iterdir()) == [".filler", "settings.json"]
