"""recall init, run as the installed command."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from broker.config import load_config
from broker.config.init import SEMANTIC_INSTALL, semantic_extra_missing

from .conftest import Home

UID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{16}$")
# with the semantic extra installed, init --notes adds the notes ranked by meaning too
SEMANTIC = not semantic_extra_missing()


def notes_dir(home: Home) -> Path:
    path = home.root / "notes"
    path.mkdir(exist_ok=True)
    return path


def test_init_writes_a_config_that_loads_with_a_notes_source(home: Home) -> None:
    notes = notes_dir(home)
    done = home.recall("init", "--notes", str(notes))
    assert done.returncode == 0, done.stderr
    config = load_config(cwd=home.root, environ=home.environ)
    source = config.source("notes")
    assert source is not None and source.adapter == "notes"
    assert source.location == str(notes) and UID.match(source.source_uid)
    assert config.profile().sources == (["notes", "notes-meaning"] if SEMANTIC else ["notes"])
    assert config.profile().max_sensitivity.value == "internal"


def test_init_turns_on_the_semantic_leg_when_its_extra_is_installed_else_says_how(home: Home) -> None:
    notes = notes_dir(home)
    done = home.recall("init", "--notes", str(notes))
    config = load_config(cwd=home.root, environ=home.environ)
    semantic = config.source("notes-meaning")
    if SEMANTIC:
        assert semantic is not None and semantic.adapter == "semantic"
        assert semantic.location == str(notes) and semantic.settings == {"lexical_source": "notes"}
        assert SEMANTIC_INSTALL not in done.stdout
    else:
        assert semantic is None
        assert SEMANTIC_INSTALL in done.stdout


def test_init_prints_what_it_created_and_the_next_steps(home: Home) -> None:
    notes = notes_dir(home)
    done = home.recall("init", "--notes", str(notes))
    uid = load_config(cwd=home.root, environ=home.environ).sources[0].source_uid
    assert done.stdout == (
        f"created {home.user_file}\n"
        f"notes source notes ({uid})\n"
        f"notes directory {notes}\n"
        "\n"
        "Next:\n"
        + ("  recall refresh\n" if SEMANTIC else "  recall refresh --source notes\n")
        + ("" if SEMANTIC else f"  optional, to also rank notes by meaning: {SEMANTIC_INSTALL}, then recall init again\n")
        + '  recall query "what did we decide"\n'
    )


def test_init_writes_the_file_0600_in_a_0700_directory(home: Home) -> None:
    home.recall("init", "--notes", str(notes_dir(home)))
    assert stat.S_IMODE(home.user_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.config_dir.stat().st_mode) == 0o700


def test_init_refuses_to_overwrite_without_force(home: Home) -> None:
    home.write_user("# mine\n")
    done = home.recall("init", "--notes", str(notes_dir(home)))
    assert done.returncode == 1
    assert "already exists" in done.stderr and "--force" in done.stderr
    assert home.user_file.read_text() == "# mine\n"
    assert list(home.config_dir.iterdir()) == [home.user_file]


def test_init_with_force_replaces_the_file(home: Home) -> None:
    home.write_user("# mine\n")
    done = home.recall("init", "--notes", str(notes_dir(home)), "--force", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["action"] == "replaced"
    assert load_config(cwd=home.root, environ=home.environ).source("notes") is not None


def test_init_json_reports_the_sources_and_next_steps(home: Home) -> None:
    notes = notes_dir(home)
    todo = home.root / "todo.txt"
    todo.write_text("(A) call Ana\n")
    done = home.recall("init", "--notes", str(notes), "--tasks", str(todo), "--json")
    report = json.loads(done.stdout)
    config = load_config(cwd=home.root, environ=home.environ)
    uids = {s.source_id: s.source_uid for s in config.sources}
    steps = report.pop("next")
    report.pop("semantic", None)  # present only where the semantic extra is installed
    assert report == {
        "action": "created",
        "config_path": str(home.user_file),
        "notes": {"source_id": "notes", "source_uid": uids["notes"], "location": str(notes)},
        "tasks": {"source_id": "tasks", "source_uid": uids["tasks"], "location": str(todo)},
        "removed_indexes": [],
    }
    assert steps[0] == ("recall refresh" if SEMANTIC else "recall refresh --source notes")
    assert steps[-1] == 'recall query "what did we decide"'
    if semantic_extra_missing():
        assert SEMANTIC_INSTALL in steps[1]


def test_init_accepts_a_taskwarrior_data_directory(home: Home) -> None:
    data = home.root / ".task"
    data.mkdir()
    done = home.recall("init", "--tasks", "~/.task")
    assert done.returncode == 0, done.stderr
    tasks = load_config(cwd=home.root, environ=home.environ).source("tasks")
    assert tasks is not None and tasks.location == str(data) and tasks.freshness_mode == "live"


def test_init_refuses_a_tasks_file_that_is_not_todo_txt(home: Home) -> None:
    other = home.root / "tasks.json"
    other.write_text("{}")
    done = home.recall("init", "--tasks", str(other))
    assert done.returncode == 1 and "todo.txt" in done.stderr
    assert not home.user_file.exists()


def test_init_refuses_a_notes_directory_that_does_not_exist(home: Home) -> None:
    done = home.recall("init", "--notes", str(home.root / "missing"))
    assert done.returncode == 1 and "not an existing directory" in done.stderr


def test_init_without_sources_and_without_a_terminal_is_a_usage_error(home: Home) -> None:
    done = home.recall("init")
    assert done.returncode == 1 and "--notes" in done.stderr
    assert not home.user_file.exists()


def test_init_resolves_a_relative_notes_directory(home: Home) -> None:
    notes_dir(home)
    home.recall("init", "--notes", "notes", cwd=home.root)
    source = load_config(cwd=home.root, environ=home.environ).source("notes")
    assert source is not None and source.location == str(home.root / "notes")


def test_commented_examples_become_valid_sources_when_uncommented(home: Home) -> None:
    home.recall("init", "--notes", str(notes_dir(home)))
    text = home.user_file.read_text()
    for marker in ('# source_id = "gmail"', '# source_id = "events"', '# source_id = "tasks"'):
        assert marker in text
    uncommented = re.sub(r"^# ((\[\[sources\]\])|(\w+ = .*))$", r"\1", text, flags=re.M)
    home.user_file.write_text(uncommented)
    config = load_config(cwd=home.root, environ=home.environ)
    semantic = ["notes-meaning"] if SEMANTIC else []
    assert [s.source_id for s in config.sources] == ["notes", *semantic, "tasks", "gmail", "events"]
    assert len({s.source_uid for s in config.sources}) == 4 + len(semantic)
