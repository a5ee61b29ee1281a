"""recall init, run as the installed command."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from broker.config import load_config
from broker.config.init import SEMANTIC_INSTALL, semantic_extra_missing
from tests.support.full_disk import fill, full_disk

from .conftest import Home

__all__ = ["full_disk"]  # the fixture, used by name

UID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{16}$")
# with the semantic leg installed (the default), init --notes adds the notes ranked by meaning too
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
    uids = {s.source_id: s.source_uid for s in load_config(cwd=home.root, environ=home.environ).sources}
    assert done.stdout == (
        f"created {home.user_file}\n"
        f"added notes ({uids['notes']}) {notes}\n"
        + (f"added notes-meaning ({uids['notes-meaning']}) {notes}\n" if SEMANTIC else "")
        + "\n"
        "Next:\n"
        + ("  recall refresh\n" if SEMANTIC else "  recall refresh --source notes\n")
        + ("" if SEMANTIC else f"  optional, to also rank notes by meaning: {SEMANTIC_INSTALL}, then recall init --semantic\n")
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


def test_init_with_force_adds_the_source_to_the_file_and_keeps_its_comments(home: Home) -> None:
    home.write_user("# mine\n")
    done = home.recall("init", "--notes", str(notes_dir(home)), "--force", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["action"] == "updated"
    assert home.user_file.read_text().startswith("# mine\n")
    config = load_config(cwd=home.root, environ=home.environ)
    assert config.source("notes") is not None and "notes" in config.profile().sources


def test_init_json_reports_the_sources_and_next_steps(home: Home) -> None:
    notes = notes_dir(home)
    todo = home.root / "todo.txt"
    todo.write_text("(A) call Ana\n")
    done = home.recall("init", "--notes", str(notes), "--tasks", str(todo), "--json")
    report = json.loads(done.stdout)
    config = load_config(cwd=home.root, environ=home.environ)
    uids = {s.source_id: s.source_uid for s in config.sources}
    steps = report.pop("next")
    assert report.pop("sources") == [
        {"change": "added", "source_id": s.source_id, "source_uid": s.source_uid, "location": s.location}
        for s in config.sources
    ]
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


# -- init over an existing configuration: only the sources named change -------------

HAND_ADDED = """
# my journal, added by hand
[[sources]]
source_uid = "01J8ZKQ4M7JOURNL"
source_id = "journal"
adapter = "notes"
location = "{location}"
location_kind = "path"
sensitivity = "internal"
"""


def started(home: Home) -> tuple[Path, Path, dict[str, str]]:
    """init --notes --tasks, a source added by hand, and a built notes index."""
    notes = notes_dir(home)
    (notes / "a.md").write_text("# Alpha\n\nbody\n")
    todo = home.root / "todo.txt"
    todo.write_text("(A) call Ana\n")
    assert home.recall("init", "--notes", str(notes), "--tasks", str(todo)).returncode == 0
    journal = home.root / "journal"
    journal.mkdir()
    with home.user_file.open("a") as out:
        out.write(HAND_ADDED.format(location=journal))
    refreshed = home.recall("refresh", "--source", "notes")
    assert refreshed.returncode == 0, refreshed.stderr
    uids = {s.source_id: s.source_uid for s in load_config(cwd=home.root, environ=home.environ).sources}
    return notes, todo, uids


def index_folders(home: Home, uid: str) -> list[Path]:
    return sorted((home.root / "state" / "recall").glob(f"*/adapters/{uid}"))


def test_init_force_with_the_same_notes_keeps_every_source_its_uid_and_its_index(home: Home) -> None:
    notes, todo, uids = started(home)
    notes_index = index_folders(home, uids["notes"])
    assert notes_index
    before = home.user_file.read_text()
    done = home.recall("init", "--notes", str(notes), "--force")
    assert done.returncode == 0, done.stderr
    assert {s.source_id: s.source_uid for s in load_config(cwd=home.root, environ=home.environ).sources} == uids
    assert home.user_file.read_text() == before
    assert all(p.is_dir() for p in notes_index)
    assert done.stdout.splitlines()[: 1 + len(uids)] == [
        f"unchanged {home.user_file}",
        f"kept notes ({uids['notes']}) {notes}",
        f"kept tasks ({uids['tasks']}) {todo}",
        *([f"kept notes-meaning ({uids['notes-meaning']}) {notes}"] if SEMANTIC else []),
        f"kept journal ({uids['journal']}) {home.root / 'journal'}",
    ]


def test_init_force_with_another_notes_folder_replaces_only_the_notes_source(home: Home) -> None:
    notes, todo, uids = started(home)
    old_index = index_folders(home, uids["notes"])
    elsewhere = home.root / "notes-2"
    elsewhere.mkdir()
    done = home.recall("init", "--notes", str(elsewhere), "--force", "--json")
    assert done.returncode == 0, done.stderr
    config = load_config(cwd=home.root, environ=home.environ)
    now = {s.source_id: s.source_uid for s in config.sources}
    assert now["notes"] != uids["notes"] and config.source("notes").location == str(elsewhere)
    assert (now["tasks"], now["journal"]) == (uids["tasks"], uids["journal"])
    assert "# my journal, added by hand" in home.user_file.read_text()
    report = json.loads(done.stdout)
    changes = {c["source_id"]: c["change"] for c in report["sources"]}
    assert changes == {"notes": "replaced", "tasks": "kept", "journal": "kept",
                       **({"notes-meaning": "replaced"} if SEMANTIC else {})}
    notes_change = next(c for c in report["sources"] if c["source_id"] == "notes")
    assert notes_change["was"] == {"source_id": "notes", "source_uid": uids["notes"], "location": str(notes)}
    assert old_index and not any(p.exists() for p in old_index)
    assert report["removed_indexes"] and all(str(p) in report["removed_indexes"] for p in old_index)


def test_init_semantic_adds_the_meaning_leg_beside_the_notes_source_and_keeps_the_rest(home: Home) -> None:
    notes = notes_dir(home)
    journal = home.root / "journal"
    journal.mkdir()
    mine = (
        "# my recall configuration\n"
        '[[sources]]\nsource_uid = "01J8ZKQ4M7NOTESX"\nsource_id = "notes"\nadapter = "notes"\n'
        f'location = "{notes}"\nlocation_kind = "path"\nsensitivity = "internal"\n'
        + HAND_ADDED.format(location=journal)
        + '\n[profiles.default]\nsources = ["notes", "journal"]  # both\nmax_sensitivity = "internal"\n'
    )
    home.write_user(mine)
    done = home.recall("init", "--semantic")
    if not SEMANTIC:
        assert done.returncode == 1 and SEMANTIC_INSTALL in done.stderr
        assert home.user_file.read_text() == mine
        return
    assert done.returncode == 0, done.stderr
    config = load_config(cwd=home.root, environ=home.environ)
    semantic = config.source("notes-meaning")
    assert semantic is not None and semantic.location == str(notes)
    assert semantic.settings == {"lexical_source": "notes"}
    assert config.profile().sources == ["notes", "journal", "notes-meaning"]
    assert [(s.source_id, s.source_uid) for s in config.sources][:2] == [
        ("notes", "01J8ZKQ4M7NOTESX"), ("journal", "01J8ZKQ4M7JOURNL")]
    assert home.user_file.read_text().startswith(mine.split("\n[profiles.default]")[0])
    assert done.stdout.splitlines()[:4] == [
        f"updated {home.user_file}",
        f"kept notes (01J8ZKQ4M7NOTESX) {notes}",
        f"kept journal (01J8ZKQ4M7JOURNL) {journal}",
        f"added notes-meaning ({semantic.source_uid}) {notes}",
    ]
    again = home.recall("init", "--semantic")
    assert again.returncode == 0 and again.stdout.startswith(f"unchanged {home.user_file}\n")


def test_init_refuses_a_file_that_is_not_toml_and_leaves_it(home: Home) -> None:
    home.write_user("[[sources]\nbroken")
    done = home.recall("init", "--notes", str(notes_dir(home)), "--force")
    assert done.returncode == 1 and "is not valid TOML" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert home.user_file.read_text() == "[[sources]\nbroken"


def test_a_full_disk_leaves_the_configuration_as_it_was_and_says_so_in_one_line(
    home: Home, full_disk: Path
) -> None:
    home.config_dir.parent.mkdir(parents=True, exist_ok=True)
    home.config_dir.symlink_to(full_disk)
    notes = notes_dir(home)
    assert home.recall("init", "--notes", str(notes)).returncode == 0
    before = home.user_file.read_bytes()
    fill(full_disk)
    todo = home.root / "todo.txt"
    todo.write_text("(A) call Ana\n")
    done = home.recall("init", "--tasks", str(todo), "--force")
    assert done.returncode == 1
    assert done.stderr == (
        f"recall: could not write configuration {full_disk / 'config.toml'}: No space left on device\n")
    assert home.user_file.read_bytes() == before
    assert sorted(p.name for p in full_disk.iterdir()) == [".filler", "config.toml"]
