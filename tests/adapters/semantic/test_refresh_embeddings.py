"""``recall refresh`` builds the leg's embeddings: it shows the chunks left on a terminal
(and nothing on stderr otherwise), and a refresh killed mid-build loses at most the batch
in flight, the next one embedding only what the store lacks."""

from __future__ import annotations

import os
import select
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from broker.config.init import semantic_extra_missing
from tests.support.recall_home import RECALL, RecallHome, write_note

pytestmark = pytest.mark.skipif(
    bool(semantic_extra_missing()) and os.environ.get("RECALL_TEST_SEMANTIC") != "1",
    reason=f"the semantic leg's model is missing: {semantic_extra_missing()}",
)

NOTES = 600  # one chunk each: a build of three batches, seconds long even on two idle cores
# each chunk fills the model's window of word pieces, so no machine embeds the lot within
# the first second, when the refresh first asks what is left
VOYAGE = " ".join(f"leg {leg} of the voyage called at harbour {leg * 7} under a grey sky" for leg in range(6))


def _home(root: Path, count: int = NOTES) -> RecallHome:
    notes = root / "notes"
    for n in range(count):
        write_note(notes, f"n{n:03d}.md", f"# Crate {n}\n\nCrate {n} left the dock on day {n % 30} for port {n % 11}; {VOYAGE}.\n")
    return RecallHome.build(root, notes={"notes": notes}, others={"notes-meaning": ("semantic", notes)})


def _store(home: RecallHome) -> Path:
    found = list((home.root / "state").rglob("embeddings.sqlite3"))
    assert len(found) == 1, found
    return found[0]


def _rows(store: Path) -> dict[str, int]:
    """Each stored embedding's key and the row it was written to (rewriting one moves it)."""
    with sqlite3.connect(store) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'embeddings'").fetchone() is None:
            return {}  # the adapter has opened the file and not yet made its table
        return dict(conn.execute("SELECT key, rowid FROM embeddings").fetchall())


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether the process has exited (a zombie counts: its parent is gone)."""
    stop = time.monotonic() + within
    while time.monotonic() < stop:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def _refresh_on_a_terminal(home: RecallHome) -> tuple[int, str, str]:
    """Run ``recall refresh`` with stderr on a pseudo-terminal (stdout a pipe)."""
    main, terminal = os.openpty()
    process = subprocess.Popen([RECALL, "refresh"], stdout=subprocess.PIPE, stderr=terminal,
                               env=home.env, cwd=home.root)
    os.close(terminal)
    shown = bytearray()
    try:
        while True:  # read as it is written: a full terminal buffer would stall the command
            ready, _, _ = select.select([main], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the command closed its end
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
        stdout = process.stdout.read().decode() if process.stdout else ""
        return process.wait(timeout=120), stdout, shown.decode(errors="replace")
    finally:
        os.close(main)
        if process.poll() is None:
            process.kill()


def test_refresh_shows_the_chunks_left_to_embed_on_a_terminal(tmp_path: Path) -> None:
    home = _home(tmp_path)  # a build of seconds: the chunks left are asked every second
    code, stdout, terminal = _refresh_on_a_terminal(home)
    assert code == 0, stdout + terminal
    assert "chunks not embedded yet)" in terminal, terminal
    assert "notes-meaning refreshed in" in terminal
    assert "notes-meaning  up to date" in stdout


def test_sources_count_the_chunks_left_until_a_quiet_refresh_embeds_them(tmp_path: Path) -> None:
    home = _home(tmp_path, count=150)
    listed = home.recall("sources", "--json")
    assert listed.code == 3, listed.stdout + listed.stderr
    leg = {s["source_id"]: s for s in listed.json["sources"]}["notes-meaning"]
    assert leg["status"] == "degraded" and leg["health"]["coverage"] == "partial"
    assert 0 < leg["health"]["diagnostics"]["pending_chunks"] <= 150
    refreshed = home.recall("refresh", timeout=300)
    assert refreshed.code == 0, refreshed.stdout + refreshed.stderr
    assert refreshed.stderr == ""  # progress is for a terminal only
    assert "notes-meaning  up to date" in refreshed.stdout
    listed = home.recall("sources", "--json")
    assert listed.code == 0, listed.stdout
    leg = {s["source_id"]: s for s in listed.json["sources"]}["notes-meaning"]
    assert leg["status"] == "healthy" and leg["health"]["diagnostics"]["pending_chunks"] == 0


def test_a_killed_refresh_is_resumed_and_only_what_is_missing_is_embedded(tmp_path: Path) -> None:
    home = _home(tmp_path)
    process = subprocess.Popen([RECALL, "refresh"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=home.env, cwd=home.root)
    try:
        stop = time.monotonic() + 300
        while not list((home.root / "state").rglob("embeddings.sqlite3")) or len(_rows(_store(home))) < 256:
            assert process.poll() is None, "the refresh ended before it was killed"
            assert time.monotonic() < stop, "no batch was stored in time"
            time.sleep(0.1)
        adapters = _children(process.pid)
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
    assert adapters and all(_gone(pid) for pid in adapters), "an adapter outlived its killed broker"
    kept = _rows(_store(home))
    assert 256 <= len(kept) < NOTES

    refreshed = home.recall("refresh", "--json", timeout=300)

    assert refreshed.code == 0, refreshed.stdout + refreshed.stderr
    row = {r["source_id"]: r for r in refreshed.json["sources"]}["notes-meaning"]
    assert row["health"]["coverage"] == "complete" and row["health"]["indexed_count"] == NOTES
    after = _rows(_store(home))
    assert len(after) == NOTES
    assert {key: after[key] for key in kept} == kept  # none of them embedded again
