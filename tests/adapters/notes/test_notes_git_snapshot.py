"""``as_of`` in a git work tree: answers come from the notes as committed at that instant."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .adapter_process import NotesProcess, RpcFailure
from .conftest import write_note

BEFORE_FIRST = "2024-01-01T00:00:00Z"
FIRST_AT = "2024-03-01T12:00:00Z"
BETWEEN = "2024-04-01T00:00:00Z"
SECOND_AT = "2024-06-01T12:00:00Z"
AFTER_SECOND = "2024-09-01T00:00:00Z"
PROTOCOL_LOCATOR = re.compile(r"^[^:]+:.+$")

BACKUP_V1 = """\
    ---
    valid_until: 2024-12-31
    ---
    # Backup

    Nightly restic snapshots go to the offsite bucket.
    """
BACKUP_V2 = BACKUP_V1.replace("restic snapshots", "borg archives")
BACKUP_UNCOMMITTED = BACKUP_V1.replace("restic snapshots", "kopia snapshots")
OLD_PLAN = "# Old plan\n\nStay on PostgreSQL 15 for the whole year.\n"
NEW_PLAN = """\
    ---
    valid_from: 2024-07-01
    supersedes: old-plan
    ---
    # New plan

    Upgrade PostgreSQL 15 to 16 on the main host.
    """


def git(repo: Path, *args: str, at: str | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    if at is not None:
        env.update(GIT_AUTHOR_DATE=at, GIT_COMMITTER_DATE=at)
    result = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=Notes", "-c", "user.email=notes@example.org", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def commit_all(repo: Path, message: str, at: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, at=at)
    return git(repo, "rev-parse", "HEAD")


@dataclass
class History:
    repo: Path
    notes: Path
    first: str
    second: str


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """Two commits under ``repo/notes`` (a folder inside the work tree), then uncommitted edits."""
    repo = tmp_path_factory.mktemp("git") / "repo"
    notes = repo / "notes"
    notes.mkdir(parents=True)
    git(repo, "init", "-q")
    # fresh mtimes: git must see every edit
    write_note(notes, "runbooks/backup.md", BACKUP_V1, mtime=None)
    write_note(notes, "decisions/old-plan.md", OLD_PLAN, mtime=None)
    write_note(repo, "elsewhere/restic.md", "# Outside\n\nrestic outside the notes folder\n", mtime=None)
    first = commit_all(repo, "first", FIRST_AT)
    write_note(notes, "runbooks/backup.md", BACKUP_V2, mtime=None)
    write_note(notes, "decisions/new-plan.md", NEW_PLAN, mtime=None)
    second = commit_all(repo, "second", SECOND_AT)
    write_note(notes, "runbooks/backup.md", BACKUP_UNCOMMITTED, mtime=None)
    write_note(notes, "scratch.md", "# Scratch\n\nborg kopia comparison\n", mtime=None)
    return History(repo, notes, first, second)


@pytest.fixture(scope="module")
def snapshots(history: History, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotesProcess]:
    proc = NotesProcess()
    try:
        proc.manifest = proc.initialize(
            str(history.notes), str(tmp_path_factory.mktemp("work")), {"git_snapshots": True}
        )
        yield proc
    finally:
        proc.close()


def sources(result: dict) -> set[str]:
    return {c["source_record_id"] for c in result["candidates"]}


def test_folder_inside_someone_elses_work_tree_filters_unless_opted_in(
    history: History, tmp_path: Path
) -> None:
    proc = NotesProcess()
    try:
        manifest = proc.initialize(str(history.notes), str(tmp_path / "work"))
    finally:
        proc.close()
    assert manifest["as_of_support"] == "filter"


def test_work_tree_root_answers_from_snapshots_by_default(history: History, tmp_path: Path) -> None:
    proc = NotesProcess()
    try:
        assert proc.initialize(str(history.repo), str(tmp_path / "work"))["as_of_support"] == "snapshot"
        refused = proc.initialize(str(history.repo), str(tmp_path / "work2"), {"git_snapshots": False})
        assert refused["as_of_support"] == "filter"
    finally:
        proc.close()


def test_manifest_declares_snapshot_in_a_git_work_tree(snapshots: NotesProcess) -> None:
    assert snapshots.manifest["as_of_support"] == "snapshot"
    assert snapshots.health()["diagnostics"]["as_of"] == "git_snapshot"


def test_as_of_before_the_first_commit_is_an_empty_success(snapshots: NotesProcess) -> None:
    result = snapshots.search("restic", as_of=BEFORE_FIRST)
    assert result["outcome"] == "success"
    assert result["candidates"] == []
    assert result["diagnostics"]["as_of"] == "before_first_commit"


def test_as_of_between_commits_answers_from_the_first(snapshots: NotesProcess, history: History) -> None:
    result = snapshots.search("restic", as_of=BETWEEN)
    assert result["diagnostics"]["as_of"] == "git_snapshot"
    assert result["diagnostics"]["snapshot_commit"] == history.first[:12]
    assert sources(result) == {"runbooks/backup.md"}
    top = result["candidates"][0]
    assert top["locator"] == f"notes:runbooks/backup.md#L4-L6@{history.first[:12]}"
    assert top["source_revision"] == f"git:{history.first[:12]}"
    assert "restic snapshots" in top["excerpt"]
    assert top["event_time"] == "2024-03-01T12:00:00Z"
    assert snapshots.search("borg", as_of=BETWEEN)["candidates"] == []


def test_as_of_after_the_last_commit_leaves_out_uncommitted_edits(
    snapshots: NotesProcess, history: History
) -> None:
    result = snapshots.search("borg", as_of=AFTER_SECOND)
    assert result["diagnostics"]["snapshot_commit"] == history.second[:12]
    assert sources(result) == {"runbooks/backup.md"}  # not scratch.md, which is untracked
    assert snapshots.search("kopia", as_of=AFTER_SECOND)["candidates"] == []
    assert sources(snapshots.search("kopia")) == {"runbooks/backup.md", "scratch.md"}


def test_snapshot_holds_only_the_notes_folder(snapshots: NotesProcess) -> None:
    result = snapshots.search("restic outside", as_of=BETWEEN)
    assert "elsewhere/restic.md" not in sources(result)
    assert result["diagnostics"]["indexed_count"] == 2


def test_snapshot_index_is_built_once_and_reused(snapshots: NotesProcess) -> None:
    snapshots.search("upgrade", as_of="2024-07-01T00:00:00Z")
    again = snapshots.search("postgresql", as_of="2024-08-01T00:00:00Z")
    assert again["diagnostics"]["snapshot_built"] is False


def test_snapshot_locator_passes_the_protocol_pattern_and_expands_as_committed(
    snapshots: NotesProcess, history: History
) -> None:
    locator = snapshots.search("restic", as_of=BETWEEN)["candidates"][0]["locator"]
    assert PROTOCOL_LOCATOR.match(locator)
    expanded = snapshots.expand(locator, "full")
    assert expanded["content"] == "# Backup\n\nNightly restic snapshots go to the offsite bucket."
    assert expanded["source_revision"] == f"git:{history.first[:12]}"
    assert expanded["provenance"] == "runbooks/backup.md:L4-L6"


def test_snapshot_locator_of_an_unknown_commit_is_expired(snapshots: NotesProcess) -> None:
    with pytest.raises(RpcFailure) as failure:
        snapshots.expand("notes:runbooks/backup.md#L4-L6@0123456789ab", "full")
    assert failure.value.code == -32003


def test_snapshot_results_carry_validity(snapshots: NotesProcess) -> None:
    top = snapshots.search("restic", as_of=BETWEEN)["candidates"][0]
    assert top["valid_to"] == "2024-12-31T23:59:59.999999Z"


def test_successor_committed_later_does_not_supersede_in_an_earlier_snapshot(
    snapshots: NotesProcess,
) -> None:
    early = snapshots.search("postgresql", as_of=BETWEEN)["candidates"]
    assert [c["source_record_id"] for c in early] == ["decisions/old-plan.md"]
    assert "superseded_by" not in early[0]["metadata"]


def test_successor_in_the_snapshot_names_itself_on_the_old_note(snapshots: NotesProcess, history: History) -> None:
    later = snapshots.search("postgresql", as_of=AFTER_SECOND)["candidates"]
    by_path = {c["source_record_id"]: c for c in later}
    assert by_path["decisions/old-plan.md"]["metadata"]["superseded_by"] == "notes:decisions/new-plan.md"
    assert by_path["decisions/new-plan.md"]["metadata"]["supersedes"] == ["notes:decisions/old-plan.md"]
    assert by_path["decisions/new-plan.md"]["valid_from"] == "2024-07-01T00:00:00Z"


def test_committed_successor_not_yet_valid_at_as_of_does_not_supersede(snapshots: NotesProcess) -> None:
    # committed on June 1, valid from July 1
    result = snapshots.search("postgresql", as_of="2024-06-15T00:00:00Z")
    by_path = {c["source_record_id"]: c for c in result["candidates"]}
    assert set(by_path) == {"decisions/old-plan.md", "decisions/new-plan.md"}
    assert "superseded_by" not in by_path["decisions/old-plan.md"]["metadata"]


def test_old_snapshot_indexes_are_pruned(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    instants = [f"2024-0{month}-01T00:00:00Z" for month in range(1, 7)]
    for month, instant in enumerate(instants, start=1):
        write_note(repo, "log.md", f"# Log\n\nwatermelon month {month}\n", mtime=None)
        commit_all(repo, f"month {month}", instant)
    work = tmp_path / "work"
    proc = NotesProcess()
    try:
        proc.initialize(str(repo), str(work))
        locators = [proc.search("watermelon", as_of=instant)["candidates"][0]["locator"] for instant in instants]
        assert proc.health()["diagnostics"]["snapshot_indexes"] == 4
        assert len(list((work / "snapshots").glob("*.sqlite3"))) == 4
        # a pruned snapshot is rebuilt from git when its locator is expanded
        assert "watermelon month 1" in proc.expand(locators[0], "full")["content"]
    finally:
        proc.close()


def test_folder_at_the_top_of_the_work_tree_is_snapshotted(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write_note(repo, "a.md", "# A\n\nkestrel sighting\n")
    commit = commit_all(repo, "one", FIRST_AT)
    proc = NotesProcess()
    try:
        proc.initialize(str(repo), str(tmp_path / "work"))
        top = proc.search("kestrel", as_of=BETWEEN)["candidates"][0]
        assert top["locator"] == f"notes:a.md#L1-L3@{commit[:12]}"
    finally:
        proc.close()


def test_without_git_a_work_tree_falls_back_to_filtering(history: History, tmp_path: Path) -> None:
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    proc = NotesProcess(env={"PATH": str(empty_path)})
    try:
        manifest = proc.initialize(str(history.notes), str(tmp_path / "work"), {"git_snapshots": True})
        assert manifest["as_of_support"] == "filter"
        diagnostics = proc.health()["diagnostics"]
        assert diagnostics["as_of"] == "filter_on_mtime"
        assert "git program is not on PATH" in diagnostics["as_of_snapshot_unavailable"]
        result = proc.search("kopia", as_of="2099-01-01T00:00:00Z")
        assert result["diagnostics"]["as_of"] == "filter_on_mtime"
        assert "runbooks/backup.md" in sources(result)  # the uncommitted text: no snapshot to ask
    finally:
        proc.close()


def test_repository_created_later_is_found_at_the_next_handshake(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write_note(root, "a.md", "# A\n\nkestrel sighting\n", mtime=None)
    work = tmp_path / "work"
    manifests = []
    for step in range(2):
        if step == 1:
            git(root, "init", "-q")
            commit_all(root, "one", FIRST_AT)
        proc = NotesProcess()
        try:
            manifests.append(proc.initialize(str(root), str(work))["as_of_support"])
        finally:
            proc.close()
    assert manifests == ["filter", "snapshot"]


def test_committed_note_over_the_size_limit_is_declined_not_partial(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write_note(repo, "small.md", "# Small\n\nkestrel\n", mtime=None)
    write_note(repo, "big.md", "# Big\n\n" + "kestrel " * 200, mtime=None)
    commit_all(repo, "one", FIRST_AT)
    proc = NotesProcess()
    try:
        proc.initialize(str(repo), str(tmp_path / "work"), {"max_file_bytes": 512})
        result = proc.search("kestrel", as_of=BETWEEN)
        assert result["outcome"] == "success"
        assert result["diagnostics"]["declined_count"] == 1
        assert sources(result) == {"small.md"}
    finally:
        proc.close()
