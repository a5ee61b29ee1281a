"""A large index run prepares notes in a worker process: the index it builds is the one an
inline run builds, a worker that dies costs nothing but time, and none outlives its run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapters.notes.settings import NotesSettings
from adapters.notes.store import Store
from adapters.notes.sync import BATCH_FILES, SyncReport, sync

from .conftest import NOTES, write_note

SPREAD = BATCH_FILES * 2 + 300  # three batches, so one is prepared while another is written


def _folder(root: Path) -> None:
    """Every kind of file the index treats differently, among enough notes for three batches."""
    for rel, text in NOTES.items():
        write_note(root, rel, text)
    for index in range(SPREAD):
        write_note(root, f"bulk/n{index:05d}.md", f"# Heron {index}\n\nwader number{index} by the pond\n")
    write_note(root, "crlf.md", "# Windows\r\n\r\nline ends\r\n")
    write_note(root, "fenced.md", "# Top\n\n```\n# not a heading\n```\n\n## Below\n\ntext\n")
    (root / "latin1.md").write_bytes(b"# Caf\xe9\n\nbad bytes\n")
    (root / "binary.md").write_bytes(b"# Bin\n\x00\x01")
    (root / "huge.md").write_text("# Huge\n\n" + "word " * 300_000)
    secret = root.parent / "secret.md"
    secret.write_text("# Secret\n\ntoken\n")
    (root / "escape.md").symlink_to(secret)


def _rows(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """The index's content, with the ids and clock readings that differ between runs left out."""
    conn = store.conn()
    queries = {
        "notes": "SELECT path, stem, project, size, mtime_ns, sha256, title, front, has_supersedes,"
        " has_problems, chunk_count, decode_problem FROM notes ORDER BY path",
        "chunks": "SELECT n.path, c.ordinal, c.start_line, c.end_line, c.heading, c.heading_path,"
        " c.preview, t.title, t.body FROM chunks c JOIN notes n ON n.id = c.note_id"
        " JOIN chunk_text t ON t.rowid = c.id ORDER BY n.path, c.ordinal",
        "identifiers": "SELECT n.path, i.key, i.kind FROM identifiers i JOIN notes n ON n.id = i.note_id"
        " ORDER BY n.path, i.key, i.kind",
        "failures": "SELECT path, reason FROM failures ORDER BY path",
        "declined": "SELECT path, reason, fix FROM declined ORDER BY path",
        "meta": "SELECT key, value FROM meta WHERE key IN ('content_digest', 'watermark', 'note_count',"
        " 'chunk_count') ORDER BY key",
    }
    return {name: conn.execute(sql).fetchall() for name, sql in queries.items()}


def _build(tmp_path: Path, name: str, root: Path, **options: object) -> tuple[Store, SyncReport]:
    settings = NotesSettings(max_file_bytes=1_000_000)
    store = Store(str(tmp_path / f"{name}.sqlite3"), str(root), settings.digest)
    store.open()
    return store, sync(store, str(root), settings, **options)  # type: ignore[arg-type]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    _folder(root)
    return root


def test_a_build_prepared_in_the_worker_is_the_build_made_inline(tmp_path: Path, folder: Path) -> None:
    inline, inline_report = _build(tmp_path, "inline", folder, parallel=False)
    apart, apart_report = _build(tmp_path, "apart", folder, parallel=True)
    assert inline_report.files_prepared_apart == 0
    assert apart_report.files_prepared_apart == apart_report.files_read > SPREAD
    assert _rows(apart) == _rows(inline)
    assert {path for path, _, _ in _rows(apart)["declined"]} == {"binary.md", "huge.md"}
    assert apart_report.skipped_links == ["escape.md"]


def test_a_bulk_edit_prepared_in_the_worker_replaces_every_note(tmp_path: Path, folder: Path) -> None:
    store, _ = _build(tmp_path, "index", folder, parallel=False)
    for path in (folder / "bulk").iterdir():
        path.write_text(path.read_text() + "\ncormorant landed\n")
    report = sync(store, str(folder), NotesSettings(max_file_bytes=1_000_000), parallel=True)
    assert report.files_reindexed == SPREAD
    hits = store.conn().execute("SELECT count(*) FROM chunk_text WHERE chunk_text MATCH 'cormorant'")
    assert hits.fetchone()[0] == SPREAD
    fresh, _ = _build(tmp_path, "fresh", folder, parallel=False)
    assert _rows(store) == _rows(fresh)


def _workers_of(pid: int) -> list[int]:
    """Process ids of the parse workers whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"adapters.notes.parse_worker" in cmdline:
            found.append(int(entry))
    return found


def test_a_worker_killed_mid_build_loses_nothing(tmp_path: Path, folder: Path) -> None:
    def kill_worker(report: SyncReport) -> None:
        if report.files_pending < SPREAD:  # after the first batch was written
            for pid in _workers_of(os.getpid()):
                os.kill(pid, signal.SIGKILL)

    store, report = _build(tmp_path, "apart", folder, parallel=True, progress=kill_worker)
    inline, _ = _build(tmp_path, "inline", folder, parallel=False)
    assert 0 < report.files_prepared_apart < report.files_read
    assert report.complete
    assert _rows(store) == _rows(inline)


def test_no_worker_outlives_a_killed_build(tmp_path: Path, folder: Path) -> None:
    """An adapter killed mid-build (its pipes close) takes its worker with it."""
    script = (
        "import sys\n"
        "from adapters.notes.settings import NotesSettings\n"
        "from adapters.notes.store import Store\n"
        "from adapters.notes.sync import sync\n"
        "def stall(report):\n"
        "    print('batch', flush=True)\n"
        "    sys.stdin.readline()\n"
        f"store = Store({str(tmp_path / 'i.sqlite3')!r}, {str(folder)!r}, NotesSettings().digest)\n"
        "store.open()\n"
        f"sync(store, {str(folder)!r}, NotesSettings(), parallel=True, progress=stall)\n"
    )
    builder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert builder.stdout is not None and builder.stdin is not None
        assert builder.stdout.readline() == b"batch\n"  # the folder is listed; no batch written yet
        builder.stdin.write(b"\n")
        builder.stdin.flush()
        assert builder.stdout.readline() == b"batch\n"  # one batch written, the next being prepared
        workers = _workers_of(builder.pid)
        assert len(workers) == 1
        builder.kill()
        builder.wait(timeout=30)
        end = time.monotonic() + 60
        while Path(f"/proc/{workers[0]}").exists() and _zombie_or_alive(workers[0]) and time.monotonic() < end:
            time.sleep(0.05)
        assert not _zombie_or_alive(workers[0]), "the parse worker outlived the killed build"
    finally:
        builder.kill()
        builder.wait()


def _zombie_or_alive(pid: int) -> bool:
    """Whether ``pid`` is still running (a reaped or exited-and-waited process is gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_worker_exits_when_its_input_closes(tmp_path: Path) -> None:
    worker = subprocess.Popen(
        [sys.executable, "-m", "adapters.notes.parse_worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert worker.stdin is not None
    worker.stdin.close()
    assert worker.wait(timeout=60) == 0


def test_rows_written_in_one_statement_keep_every_character(tmp_path: Path) -> None:
    """Rows travel to SQLite as JSON: quotes, backslashes, control characters and
    characters beyond the BMP come back exactly as written."""
    root = tmp_path / "notes"
    text = '# Odd "quoted" \\ back\\slash\n\ntab\there \x01 emoji \U0001f426 bird \u00e9t\u00e9 \u4e2d\n'
    write_note(root, "odd.md", text)
    store, _ = _build(tmp_path, "index", root, parallel=False)
    conn = store.conn()
    conn.row_factory = sqlite3.Row
    row = conn.execute("SELECT t.title, t.body, c.heading FROM chunks c JOIN chunk_text t ON t.rowid = c.id").fetchone()
    assert row["heading"] == 'Odd "quoted" \\ back\\slash'
    assert "tab\there \x01 emoji \U0001f426 bird" in row["body"]
