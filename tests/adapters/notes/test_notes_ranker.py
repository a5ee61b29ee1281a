"""The ranker (``adapters/notes/ranker.py``): a tantivy index beside the SQLite one that
ranks large folders, used only while it holds exactly what the SQLite index does."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from adapters.notes.adapter import INDEX_FILE
from adapters.notes.ranker import RANKER_DIR
from adapters.notes.store import Store

from .adapter_process import NotesProcess, RpcFailure
from .conftest import OLD_MTIME

NOTES = 60
GIVE_UP_S = 30


def _corpus(root: Path) -> None:
    for index in range(NOTES):
        path = root / f"area{index % 3}" / f"note-{index:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"# Note {index}\n\nThe heron{index} nests by the pond; we restore the backup nightly.\n\n"
            f"## Gear\n\nA scope and marker{index} boots.\n"
        )
        os.utime(path, (OLD_MTIME, OLD_MTIME))


def _ranked_by_ranker(adapter: NotesProcess, query: str) -> dict[str, Any]:
    """Search until the ranker has caught up and ranks the answer."""
    give_up = time.monotonic() + GIVE_UP_S
    while True:
        result = adapter.search(query)
        if result["diagnostics"]["ranked_by"] == "tantivy":
            return result
        assert time.monotonic() < give_up, result["diagnostics"].get("ranker_unused")
        time.sleep(0.05)


def _records(result: dict[str, Any]) -> list[str]:
    return [c["source_record_id"] for c in result["candidates"]]


def _indexed(tmp_path: Path) -> tuple[Store, Path, Path]:
    """The corpus indexed in process: the store, the notes folder and the workdir."""
    from adapters.notes.settings import NotesSettings
    from adapters.notes.sync import sync

    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root)
    work.mkdir()
    store = Store(str(work / INDEX_FILE), str(root), NotesSettings().digest)
    store.open()
    sync(store, str(root), NotesSettings())
    return store, root, work


@pytest.fixture
def ranked(tmp_path: Path) -> tuple[NotesProcess, Path, Path]:
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root)
    adapter = NotesProcess()
    adapter.initialize(str(root), str(work), {"watch": False, "ranker": "tantivy"})
    assert adapter.refresh()["coverage"] == "complete"
    yield adapter, root, work
    adapter.close()


def test_refresh_builds_the_ranker_and_it_finds_what_fts5_finds(
    ranked: tuple[NotesProcess, Path, Path], tmp_path: Path
) -> None:
    adapter, root, work = ranked
    assert (work / RANKER_DIR).is_dir()
    by_ranker = adapter.search("heron17 nests")
    assert by_ranker["diagnostics"]["ranked_by"] == "tantivy"
    plain = NotesProcess()
    try:
        plain.initialize(str(root), str(tmp_path / "plain"), {"watch": False, "ranker": "fts5"})
        plain.refresh()
        by_fts5 = plain.search("heron17 nests")
        assert by_fts5["diagnostics"]["ranked_by"] == "fts5"
        assert not (tmp_path / "plain" / RANKER_DIR).exists()
    finally:
        plain.close()
    assert _records(by_ranker)[0] == _records(by_fts5)[0] == "area2/note-017.md"
    assert sorted(_records(by_ranker)) == sorted(_records(by_fts5))
    # the journal of the build was applied and dropped: it does not grow with the folder
    with sqlite3.connect(work / INDEX_FILE) as conn:
        assert conn.execute("SELECT count(*) FROM rank_journal").fetchone()[0] == 0


def test_an_edit_is_never_ranked_from_the_ranker_before_it_is_applied(
    ranked: tuple[NotesProcess, Path, Path],
) -> None:
    import tantivy

    adapter, root, work = ranked
    # the ranker is built and current (its folder is the adapter's to replace until then)
    assert _records(_ranked_by_ranker(adapter, "heron5"))[0] == "area2/note-005.md"
    # another process holds the ranker's writer, so this adapter cannot apply the edit
    held = tantivy.Index.open(str(work / RANKER_DIR)).writer(16_000_000, 1)
    path = root / "area2" / "note-005.md"
    path.write_text(path.read_text().replace("heron5 ", "egret5 "))
    edited = adapter.search("egret5")
    assert edited["diagnostics"]["ranked_by"] == "fts5"
    assert edited["diagnostics"]["ranker_unused"] == "changes not yet applied"
    assert _records(edited) == ["area2/note-005.md"]
    assert "area2/note-005.md" not in _records(adapter.search("heron5"))
    assert "ranker_error" not in adapter.health()["diagnostics"]  # contention is no failure
    del held
    assert _records(_ranked_by_ranker(adapter, "egret5")) == ["area2/note-005.md"]
    assert "area2/note-005.md" not in _records(_ranked_by_ranker(adapter, "heron5"))


def test_a_short_lived_adapter_applies_an_edit_itself_and_ranks_with_the_ranker(
    ranked: tuple[NotesProcess, Path, Path],
) -> None:
    adapter, root, work = ranked
    adapter.close()
    path = root / "area1" / "note-004.md"
    path.write_text(path.read_text() + "\nA kingfisher flew past.\n")
    cold = NotesProcess()  # as a cold query starts it: no refresh, not kept warm
    try:
        cold.initialize(str(root), str(work), {"watch": False, "ranker": "tantivy"})
        result = cold.search("kingfisher")
        assert result["diagnostics"]["ranked_by"] == "tantivy"
        assert _records(result) == ["area1/note-004.md"]
    finally:
        cold.close()
    later = NotesProcess()  # and what it applied stays applied for the next one
    try:
        later.initialize(str(root), str(work), {"watch": False, "ranker": "tantivy"})
        assert later.search("kingfisher")["diagnostics"]["ranked_by"] == "tantivy"
    finally:
        later.close()


def test_a_warm_adapter_applies_an_edit_on_its_own_thread(
    ranked: tuple[NotesProcess, Path, Path],
) -> None:
    adapter, root, _ = ranked
    path = root / "area0" / "note-006.md"
    path.write_text(path.read_text() + "\nA bittern boomed.\n")
    assert _records(adapter.search("bittern")) == ["area0/note-006.md"]  # whichever ranks it
    assert _records(_ranked_by_ranker(adapter, "bittern")) == ["area0/note-006.md"]


def test_a_rebuilt_index_file_is_not_ranked_by_the_ranker_of_the_old_one(
    ranked: tuple[NotesProcess, Path, Path],
) -> None:
    adapter, root, work = ranked
    adapter.close()
    for suffix in ("", "-wal", "-shm"):
        (work / (INDEX_FILE + suffix)).unlink(missing_ok=True)
    (root / "area0" / "note-000.md").unlink()
    again = NotesProcess()
    try:
        again.initialize(str(root), str(work), {"watch": False, "ranker": "tantivy"})
        again.refresh()  # the index is built afresh; so is the ranker, for this file
        result = _ranked_by_ranker(again, "heron0 nests")
        assert "area0/note-000.md" not in _records(result)
    finally:
        again.close()


def test_a_small_folder_is_ranked_by_fts5_and_keeps_no_ranker(tmp_path: Path) -> None:
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root)
    built = NotesProcess()
    try:
        built.initialize(str(root), str(work), {"watch": False, "ranker": "tantivy"})
        built.refresh()
        assert (work / RANKER_DIR).is_dir()
    finally:
        built.close()
    adapter = NotesProcess()
    try:
        adapter.initialize(str(root), str(work), {"watch": False})  # "auto": 120 chunks is small
        adapter.refresh()
        result = adapter.search("heron3 nests")
        assert result["diagnostics"]["ranked_by"] == "fts5"
        assert "ranker_unused" not in result["diagnostics"]
        assert not (work / RANKER_DIR).exists()
        (root / "area0" / "note-003.md").unlink()
        adapter.refresh()
        with sqlite3.connect(work / INDEX_FILE) as conn:
            assert conn.execute("SELECT count(*) FROM rank_journal").fetchone()[0] == 0
    finally:
        adapter.close()


def test_a_filtered_search_is_ranked_by_fts5(ranked: tuple[NotesProcess, Path, Path]) -> None:
    adapter, _, _ = ranked
    result = adapter.search("heron9 nests", filters={"since": "2020-01-01T00:00:00Z"})
    assert result["diagnostics"]["ranked_by"] == "fts5"
    assert _records(result)[0] == "area0/note-009.md"


def test_an_unknown_ranker_setting_is_refused_naming_the_choices(tmp_path: Path) -> None:
    adapter = NotesProcess()
    try:
        with pytest.raises(RpcFailure) as refused:
            adapter.initialize(str(tmp_path), str(tmp_path / "work"), {"ranker": "bm25"})
        assert refused.value.code == -32602
        assert "auto, tantivy, fts5" in str(refused.value)
    finally:
        adapter.close()


def test_a_stopped_first_build_resumes_and_applies_what_changed_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adapters.notes import ranker as ranking
    from adapters.notes.settings import NotesSettings
    from adapters.notes.sync import sync

    store, root, work = _indexed(tmp_path)
    monkeypatch.setattr(ranking, "BUILD_BATCH", 50)  # 120 chunks: three commits
    first = ranking.Ranker(str(work), store)
    first.may_build = True
    first.stop()  # the process is leaving: its build stops after the first commit
    first.catch_up()
    assert first.current(store.conn()) == "first build under way"
    (root / "area0" / "note-000.md").unlink()  # its chunks were in the committed part
    sync(store, str(root), NotesSettings())
    later = ranking.Ranker(str(work), store)
    later.may_build = True
    later.catch_up()
    # current: it holds as many chunks as the index (118), none twice, nothing pending
    assert later.current(store.conn()) is None
    assert later.pool('"heron0"', 10) == []
    assert later.pool('"heron59"', 10) != []


def test_a_damaged_ranker_is_answered_around_and_built_again(
    ranked: tuple[NotesProcess, Path, Path],
) -> None:
    adapter, root, work = ranked
    assert adapter.search("heron7 nests")["diagnostics"]["ranked_by"] == "tantivy"
    adapter.close()
    for segment in (work / RANKER_DIR).iterdir():  # its files are lost
        if segment.suffix in {".idx", ".term", ".fast"}:
            segment.unlink()
    again = NotesProcess()
    try:
        again.initialize(str(root), str(work), {"watch": False, "ranker": "tantivy"})
        result = again.search("heron7 nests")
        assert result["outcome"] == "success"
        assert result["diagnostics"]["ranked_by"] == "fts5"
        assert result["diagnostics"]["ranker_unused"] == "unreadable"
        assert _records(result)[0] == "area1/note-007.md"
        assert "could not be read" in again.health()["diagnostics"]["ranker_error"]
        assert again.refresh()["coverage"] == "complete"  # index work builds it again
        assert _records(_ranked_by_ranker(again, "heron7 nests"))[0] == "area1/note-007.md"
    finally:
        again.close()


def test_a_short_lived_adapter_with_no_ranker_keeps_no_journal(tmp_path: Path) -> None:
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root)
    adapter = NotesProcess()  # never refreshed nor kept warm: it builds no ranker
    try:
        adapter.initialize(str(root), str(work), {"watch": False, "ranker": "tantivy"})
        result = adapter.search("heron3 nests")  # waits for the first build of the index
        assert result["diagnostics"]["ranker_unused"] == "not built"
        (root / "area0" / "note-003.md").unlink()
        adapter.search("heron3 nests")
        with sqlite3.connect(work / INDEX_FILE) as conn:
            assert conn.execute("SELECT count(*) FROM rank_journal").fetchone()[0] == 0
        assert not (work / RANKER_DIR).exists()
    finally:
        adapter.close()


def test_waiting_for_the_ranker_covers_a_catch_up_its_thread_has_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh waits for the ranker's build; the wait must not end in the instant
    between the ranker's thread taking the wanted catch-up and starting it."""
    import threading

    from adapters.notes.ranker import Ranker
    from adapters.notes.settings import NotesSettings

    store = Store(str(tmp_path / INDEX_FILE), str(tmp_path), NotesSettings().digest)
    store.open()
    ranker = Ranker(str(tmp_path), store)
    taken, release = threading.Event(), threading.Event()

    def catch_up() -> None:  # the thread has taken the work and not yet begun it
        taken.set()
        release.wait(5)

    monkeypatch.setattr(ranker, "catch_up", catch_up)
    ranker.nudge()
    assert taken.wait(5)
    assert ranker.wait_idle(0.2) is False
    release.set()
    assert ranker.wait_idle(5) is True
    ranker.stop()


def test_the_ranker_asked_for_while_its_journal_is_trimmed_is_built_once_that_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The catch-up's upkeep trims the journal of a process that builds no ranker while a
    refresh, on another thread, asks for the ranker: the build waits for the trim rather
    than being dropped, so the refresh does not answer complete without its ranker."""
    import threading

    from adapters.notes.ranker import Ranker

    store, _, work = _indexed(tmp_path)
    ranker = Ranker(str(work), store)
    trimming, trimmed = threading.Event(), threading.Event()
    trim_journal = Ranker._trim_journal

    def slow_trim(self: Ranker) -> None:
        trimming.set()
        trimmed.wait(5)
        trim_journal(self)

    monkeypatch.setattr(Ranker, "_trim_journal", slow_trim)
    upkeep = threading.Thread(target=ranker.forget_journal)  # as the catch-up's thread does
    upkeep.start()
    try:
        assert trimming.wait(5)
        ranker.may_build = True  # as a refresh does
        ranker.nudge()
        time.sleep(0.2)  # the ranker's thread meets the trim under way
        trimmed.set()
        upkeep.join(5)
        assert ranker.wait_idle(30)
        assert ranker.current(store.conn()) is None
    finally:
        trimmed.set()
        ranker.stop()


def test_trimming_the_journal_leaves_a_ranker_built_since_the_caller_looked(tmp_path: Path) -> None:
    from adapters.notes.ranker import Ranker

    store, _, work = _indexed(tmp_path)
    ranker = Ranker(str(work), store)
    ranker.may_build = True
    ranker.catch_up()  # built while the catch-up's upkeep decided there was none
    ranker.forget_journal()
    assert ranker.exists()
    assert ranker.current(store.conn()) is None


def test_a_ranker_another_process_writes_is_left_to_it_and_the_refresh_waits(tmp_path: Path) -> None:
    """Two processes building one ranker at once pulled its files from under each other
    (a build starts the folder afresh): now the one finding it written elsewhere waits,
    and its refresh returns with the ranker built, not before."""
    import threading

    from adapters.notes.ranker import RANK_LEASE
    from tests.support.lease_holder import lease_held_elsewhere, let_go

    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root)
    adapter = NotesProcess()
    try:
        with lease_held_elsewhere(work, RANK_LEASE) as holder:
            adapter.initialize(str(root), str(work), {"watch": False, "ranker": "tantivy"})
            let_go_at = time.monotonic() + 1.5
            seen_built_while_held: list[bool] = []

            def let_go_later() -> None:
                time.sleep(max(0.0, let_go_at - time.monotonic()))
                seen_built_while_held.append((work / RANKER_DIR).exists())
                let_go(holder)

            releaser = threading.Thread(target=let_go_later)
            releaser.start()
            refreshed = adapter.refresh()
            returned_at = time.monotonic()
            releaser.join()
        assert returned_at >= let_go_at, "the refresh returned while another process wrote the ranker"
        assert seen_built_while_held == [False]
        assert refreshed["coverage"] == "complete"
        assert "ranker_error" not in refreshed["diagnostics"]
        assert adapter.search("heron17 nests")["diagnostics"]["ranked_by"] == "tantivy"
    finally:
        adapter.close()
