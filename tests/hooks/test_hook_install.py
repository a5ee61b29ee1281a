"""``recall hook install|uninstall claude-code``: one entry in the settings file, everything else kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
