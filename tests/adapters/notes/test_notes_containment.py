"""A note swapped for a symbolic link to a file outside the folder is never read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.notes.reading import OutsideRoot, read_inside
from tests.support.fixture_config import source_table

from .adapter_process import NotesProcess, RpcFailure
from .conftest import write_note

RECALL = Path(sys.executable).parent / "recall"
SECRET = "hunter2-outside-the-notes-folder"


def _recall(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    env.pop("RECALL_SERVER", None)
    return subprocess.run([str(RECALL), *args], capture_output=True, text=True, env=env,
                          cwd=home, timeout=60)


def _configure(home: Path, notes: Path) -> None:
    lines = source_table("NOTES0000001", "notes", "notes", notes, sensitivity="internal")
    lines += ["[profiles.default]", 'sources = ["notes"]', 'max_sensitivity = "internal"']
    config = home / "config" / "recall" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("\n".join(lines) + "\n")


def test_expand_refuses_a_note_replaced_by_a_link_outside_the_folder(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write_note(notes, "a.md", "# Alpha\n\nosprey migration log\n")
    outside = write_note(tmp_path / "outside", "secret.md", f"# Secret\n\n{SECRET}\n")
    _configure(tmp_path, notes)
    found = _recall(tmp_path, "query", "osprey migration", "--json")
    assert found.returncode == 0, found.stderr
    (notes / "a.md").unlink()
    (notes / "a.md").symlink_to(outside)

    expanded = _recall(tmp_path, "expand", "notes:a.md#L1-L3")
    assert expanded.returncode == 4
    assert SECRET not in expanded.stdout + expanded.stderr
    assert "outside the notes folder" in expanded.stdout + expanded.stderr
    again = _recall(tmp_path, "query", SECRET, "--json")
    assert SECRET not in again.stdout


def test_search_never_returns_text_from_a_link_swapped_in(tmp_path: Path) -> None:
    notes, work = tmp_path / "notes", tmp_path / "work"
    write_note(notes, "a.md", f"# Alpha\n\nosprey {SECRET}\n")
    outside = write_note(tmp_path / "outside", "secret.md", f"# Alpha\n\nosprey {SECRET}\n")
    adapter = NotesProcess()
    try:
        adapter.initialize(str(notes), str(work), {"watch": False})
        assert adapter.search("osprey")["candidates"]
        (notes / "a.md").unlink()
        (notes / "a.md").symlink_to(outside)
        result = adapter.search("osprey")
        assert result["candidates"] == []
        assert adapter.health()["diagnostics"]["skipped_links_sample"] == ["a.md"]
        with pytest.raises(RpcFailure) as refused:
            adapter.expand("notes:a.md#L1-L3", "full")
        assert refused.value.code == -32003
    finally:
        adapter.close()


def test_reading_checks_the_file_opened_not_the_path(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    inside_target = write_note(root, "real.md", "# Real\n")
    (root / "alias.md").symlink_to(inside_target)
    (root / "escape.md").symlink_to(write_note(tmp_path / "outside", "x.md", SECRET))
    (root / "sub").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert read_inside(str(root), "alias.md", 100) == b"# Real\n"
    for rel in ("escape.md", "sub/x.md"):
        with pytest.raises(OutsideRoot):
            read_inside(str(root), rel, 100)


def test_the_folders_watched_are_those_a_scan_enters_and_none_outside(tmp_path: Path) -> None:
    from adapter_sdk.folder.scan import folders, scan
    from adapters.notes.settings import NotesSettings

    root, outside = tmp_path / "notes", tmp_path / "elsewhere"
    for folder in ("a/deep", "b", ".git/objects", "node_modules/pkg"):
        write_note(root / folder, "n.md", "# N\n")
    write_note(outside, "secret.md", "# Secret\n")
    (root / "to-elsewhere").symlink_to(outside, target_is_directory=True)
    (root / "to-b").symlink_to(root / "b", target_is_directory=True)  # inside: entered once
    (root / "loop").symlink_to(root, target_is_directory=True)

    settings = NotesSettings(exclude_dirs=(".git", "node_modules"))
    watched = folders(str(root), settings)
    assert watched[0] == str(root)
    listed = sorted(os.path.relpath(path, root) for path in watched[1:])
    assert len(listed) == 3 and {"a", "a/deep"} <= set(listed)
    assert listed[-1] in ("b", "to-b")  # whichever path reached it first
    assert set(scan(str(root), settings).dirs) == {"", *listed}
