"""One index lifecycle for the leg: ``recall refresh`` builds the embeddings, a running
adapter (a resident broker's) embeds a note written while it runs, and health never says
complete while chunks are pending."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter_sdk.residence import LONG_LIVED_ENV
from broker.config.init import semantic_extra_missing
from tests.broker.warm.conftest import alive, broker_pids, wait_for_starts, wait_gone
from tests.support.adapter_process import AdapterProcess
from tests.support.recall_home import RecallHome, write_note

pytestmark = pytest.mark.skipif(
    bool(semantic_extra_missing()) and os.environ.get("RECALL_TEST_SEMANTIC") != "1",
    reason=f"the semantic leg's model is missing: {semantic_extra_missing()}",
)

# shares no content word with the question below: only the leg can find it
PERMISSIONS = ("# Shell scripts\n\nTo let a script run as a program, give its owner the right to"
               " execute it with chmod u+x, then start it by its path.\n")
QUESTION = "make my bash file runnable"
# enough other notes for a background: in a folder of three, the note sharing no word
# with the question must clear the meaning-only margin over a median of three similarities;
# and one of them uses a word of the question ("file"), as a real folder would: a question
# none of whose words any nearby note holds is about something the folder does not hold
OTHER = {
    "garden.md": "# Garden\n\nTomatoes want full sun and deep watering twice a week.\n",
    "travel.md": "# Travel\n\nThe night train to Vienna leaves at ten; book a couchette early.\n",
    "budget.md": "# Budget\n\nThe hosting bill rose by a fifth after the storage upgrade; the invoice"
    " is a file in the shared drive.\n",
    "hiring.md": "# Hiring\n\nTwo interviews, then a paid trial day with the team.\n",
    "coffee.md": "# Coffee\n\nThe grinder on the third floor needs new burrs.\n",
    "bikes.md": "# Bikes\n\nThe shed by the gate is locked after eight in the evening.\n",
}


def _home(root: Path) -> RecallHome:
    notes = root / "notes"
    for name, text in OTHER.items():
        write_note(notes, name, text)
    home = RecallHome.build(root, notes={"notes": notes}, others={"notes-meaning": ("semantic", notes)})
    return home


def test_refresh_builds_the_embeddings_and_a_cold_query_finds_a_paraphrase(tmp_path: Path) -> None:
    home = _home(tmp_path)
    write_note(tmp_path / "notes", "scripts.md", PERMISSIONS)
    refreshed = home.recall("refresh", "--json")
    assert refreshed.code == 0, refreshed.stderr
    row = {r["source_id"]: r for r in refreshed.json["sources"]}["notes-meaning"]
    assert row["status"] == "refreshed" and row.get("reason") is None
    assert row["health"]["coverage"] == "complete"
    assert row["health"]["indexed_count"] == len(OTHER) + 1
    assert row["health"]["diagnostics"]["pending_chunks"] == 0
    found = home.recall("query", QUESTION, "--json")
    assert found.code == 0, found.stdout + found.stderr
    assert found.json["results"][0]["locator"] == "notes-meaning:scripts.md#L1-L3"
    assert found.json["coverage"] == "complete"


def test_a_cold_query_maps_what_refresh_served_and_still_sees_a_later_note(tmp_path: Path) -> None:
    for name, text in OTHER.items():  # written long ago: a matching stat can be trusted
        write_note(tmp_path / "notes", name, text, modified="2024-01-01")
    home = RecallHome.build(tmp_path, notes={"notes": tmp_path / "notes"},
                            others={"notes-meaning": ("semantic", tmp_path / "notes")})
    assert home.recall("refresh").code == 0
    served = list(tmp_path.rglob("served-*.npy"))
    assert len(served) == 1  # refresh keeps what it serves for the next cold start
    saved_at = served[0].stat().st_mtime_ns

    cold = home.recall("query", "tomatoes in full sun", "--explain")
    assert cold.code == 0 and "coverage complete" in cold.stdout, cold.stdout + cold.stderr
    assert "snapshot=mapped from the served file" in cold.stdout
    assert served[0].stat().st_mtime_ns == saved_at  # a one-shot query maps it, never rewrites it

    write_note(tmp_path / "notes", "scripts.md", PERMISSIONS)  # after the save: the file no longer matches
    unsaved = home.recall("query", QUESTION, "--json")
    # the leg never serves the old snapshot as complete: either the note is not embedded yet
    # and it says so, or (a slow machine's broker reached it late) it was embedded first
    if unsaved.code == 0:
        assert unsaved.json["results"][0]["locator"] == "notes-meaning:scripts.md#L1-L3", unsaved.stdout
    else:
        assert unsaved.code == 3 and unsaved.json["source_summary"]["degraded"] == ["notes-meaning (partial)"]
    assert home.recall("refresh").code == 0
    assert served[0].stat().st_mtime_ns != saved_at
    found = home.recall("query", QUESTION, "--json")
    assert found.code == 0 and found.json["coverage"] == "complete", found.stdout + found.stderr
    assert found.json["results"][0]["locator"] == "notes-meaning:scripts.md#L1-L3"


def test_refresh_says_what_it_built_not_that_there_is_nothing_to_index(tmp_path: Path) -> None:
    home = _home(tmp_path)
    refreshed = home.recall("refresh")
    assert refreshed.code == 0, refreshed.stderr
    assert "nothing to index" not in refreshed.stdout
    line = next(line for line in refreshed.stdout.splitlines() if "notes-meaning" in line)
    assert f"up to date, {len(OTHER)} records" in line, refreshed.stdout


def test_a_running_adapter_embeds_a_note_written_after_it_started(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    for name, text in OTHER.items():
        write_note(notes, name, text)
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        proc.initialize(str(notes), str(tmp_path / "work"), {"lexical_source": "notes"})
        proc.refresh()
        assert proc.search(QUESTION)["candidates"] == []
        write_note(notes, "scripts.md", PERMISSIONS)
        result = proc.search(QUESTION)
        assert [c["source_record_id"] for c in result["candidates"]][:1] == ["scripts.md"]
        assert result["outcome"] == "success"
        health = proc.health()
        assert health["coverage"] == "complete" and health["indexed_count"] == len(OTHER) + 1
        (notes / "scripts.md").write_text(PERMISSIONS.replace("chmod u+x", "chmod 700") + "\nMore.\n")
        again = proc.search(QUESTION)
        assert "scripts.md#L1-L5" in again["candidates"][0]["locator"]
    finally:
        proc.close()


def test_health_is_partial_with_the_pending_count_while_chunks_are_embedded(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    for n in range(200):  # more than the model embeds in the moment before the first health
        write_note(notes, f"n{n}.md", f"# Note {n}\n\n" + f"words about container image {n} " * 40)
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        proc.initialize(str(notes), str(tmp_path / "work"))
        health = proc.health()
        assert health["coverage"] == "partial" and health["status"] == "degraded"
        assert 0 < health["diagnostics"]["pending_chunks"] <= 200
        assert "not embedded yet" in health["diagnostics"]["detail"]
        done = proc.refresh()
        assert done["coverage"] == "complete" and done["diagnostics"]["pending_chunks"] == 0
        assert done["checkpoint_progress"] == "advanced" and done["indexed_count"] == 200
    finally:
        proc.close()


def test_health_says_complete_only_once_a_scan_has_found_nothing_left(tmp_path: Path) -> None:
    """Every note touched, a watching adapter scans the folder again: while it does, health
    is partial; once the scan finds every chunk embedded already, it is complete."""
    notes = tmp_path / "notes"
    body = "Pallets are counted at dawn and again at dusk by the night shift.\n" * 150
    for n in range(300):
        write_note(notes, f"n{n:03d}.md", f"# Pallets {n}\n\n{body}")
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt",
                          env={LONG_LIVED_ENV: str(os.getpid())})
    try:
        proc.initialize(str(notes), str(tmp_path / "work"))
        assert proc.refresh()["coverage"] == "complete"
        for path in notes.iterdir():
            os.utime(path)
        seen = []
        stop = time.monotonic() + 60
        while not seen or seen[-1]["coverage"] != "complete" or all(h["coverage"] == "complete" for h in seen):
            assert time.monotonic() < stop, seen[-1]
            seen.append(proc.health())
        scanning = [h for h in seen if h["diagnostics"].get("detail") == "checking the folder for changed notes"]
        assert scanning and all(h["coverage"] == "partial" for h in scanning)
        assert all(not h["diagnostics"]["building"] for h in seen if h["coverage"] == "complete")
        assert seen[-1]["diagnostics"]["pending_chunks"] == 0 and seen[-1]["indexed_count"] == 300
    finally:
        proc.close()


@pytest.fixture
def resident_home(tmp_path: Path) -> Iterator[RecallHome]:
    runtime = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: socket paths are bounded
    home = _home(tmp_path)
    home.env.update({"RECALL_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)})
    try:
        yield home
    finally:
        wait_for_starts(runtime)
        pids = broker_pids(runtime)
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGTERM)
        left = [pid for pid in pids if not wait_gone(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["rm", "-rf", str(runtime)], check=False)
        assert not left, f"resident brokers outlived their test: {left}"


def _leg_health(home: RecallHome) -> dict[str, Any]:
    listed = home.recall("sources", "--json")
    assert listed.code in (0, 3), listed.stdout + listed.stderr
    return {s["source_id"]: s for s in listed.json["sources"]}["notes-meaning"]["health"]


def _wait_until_complete(home: RecallHome, indexed: int) -> dict[str, Any]:
    stop = time.monotonic() + 120
    while True:
        health = _leg_health(home)
        if health["coverage"] == "complete" and health["indexed_count"] == indexed:
            return health
        assert time.monotonic() < stop, f"the leg did not reach {indexed} chunks: {health}"
        time.sleep(0.3)


def _leg_locators(home: RecallHome, question: str) -> list[str]:
    found = home.recall("query", question, "--json")
    assert found.code in (0, 2), found.stdout + found.stderr
    assert found.json["coverage"] == "complete", found.stdout
    return [r["locator"] for r in found.json["results"] if r["locator"].startswith("notes-meaning:")]


def test_a_resident_broker_embeds_added_and_edited_notes_and_drops_deleted_ones(
    resident_home: RecallHome,
) -> None:
    home = resident_home
    started = home.recall("daemon", "start", "--json")
    assert started.code == 0, started.stderr
    health = _wait_until_complete(home, indexed=len(OTHER))
    assert health["diagnostics"]["pending_chunks"] == 0 and health["diagnostics"]["building"] is False
    assert _leg_locators(home, QUESTION) == []

    write_note(home.root / "notes", "scripts.md", PERMISSIONS)
    time.sleep(0.2)  # past the racy window: the stat check sees a settled note
    assert _leg_locators(home, QUESTION)[:1] == ["notes-meaning:scripts.md#L1-L3"]

    (home.root / "notes" / "scripts.md").write_text("# Shell scripts\n\nKept in bin.\n\n" + PERMISSIONS[17:])
    time.sleep(0.2)
    edited = _leg_locators(home, QUESTION)
    assert edited[:1] == ["notes-meaning:scripts.md#L1-L5"]  # the new text's vector, not the old
    assert "notes-meaning:scripts.md#L1-L3" not in edited
    assert _wait_until_complete(home, indexed=len(OTHER) + 1)["record_count"] == len(OTHER) + 1

    (home.root / "notes" / "scripts.md").unlink()
    time.sleep(0.2)
    assert not any(locator.startswith("notes-meaning:scripts.md") for locator in _leg_locators(home, QUESTION))
    assert _wait_until_complete(home, indexed=len(OTHER))["record_count"] == len(OTHER)


def test_a_watching_adapter_embeds_an_older_note_edited_in_place_with_no_search(tmp_path: Path) -> None:
    """The check before a search sees only folder listings and recently edited notes;
    the watch (an adapter a long-lived broker keeps) sees every edit, and embeds it."""
    notes = tmp_path / "notes"
    for name, text in OTHER.items():
        write_note(notes, name, text, modified="2020-01-01")
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt",
                          env={LONG_LIVED_ENV: str(os.getpid())})
    try:
        proc.initialize(str(notes), str(tmp_path / "work"))
        assert proc.refresh()["indexed_count"] == len(OTHER)
        with (notes / "garden.md").open("a") as note:
            note.write("\n## Pests\n\nAphids leave when ladybirds arrive.\n")
        stop = time.monotonic() + 30
        while (health := proc.health())["indexed_count"] != len(OTHER) + 1:
            assert time.monotonic() < stop, f"the edit was not embedded: {health}"
            time.sleep(0.1)
        assert health["coverage"] == "complete" and health["diagnostics"]["pending_chunks"] == 0
    finally:
        proc.close()


def test_a_killed_build_resumes_with_what_it_had_stored(tmp_path: Path) -> None:
    import sqlite3

    notes, work = tmp_path / "notes", tmp_path / "work"
    for n in range(600):  # chunks that fill the model's window: the first batch of 256 is
        # stored seconds before the last chunk
        write_note(notes, f"n{n:03d}.md", f"# Note {n}\n\n" + f"Item {n} of the inventory sits on shelf {n % 17}. " * 5)
    first = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        first.initialize(str(notes), str(work))
        stop = time.monotonic() + 300
        stored = 0
        while stored < 256:  # the first batch is written to the store
            assert time.monotonic() < stop, "no batch was stored in time"
            time.sleep(0.2)
            with sqlite3.connect(work / "embeddings.sqlite3") as conn:
                stored = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        first.process.kill()
        first.process.wait()
    finally:
        first.close()
    with sqlite3.connect(work / "embeddings.sqlite3") as conn:
        stored = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    second = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        second.initialize(str(notes), str(work))
        pending = second.health()["diagnostics"]["pending_chunks"]
        assert pending == 600 - stored and 0 < pending < 600 - 255
        done = second.refresh()
        assert done["coverage"] == "complete" and done["indexed_count"] == 600
    finally:
        second.close()


def test_refresh_prepares_the_model_even_when_every_chunk_is_embedded(tmp_path: Path) -> None:
    """A store already complete (built on another machine, or before the model cache was
    emptied) still has its refresh prepare the model, so the next query does not."""
    notes = tmp_path / "notes"
    for name, text in OTHER.items():
        write_note(notes, name, text)
    for cache in ("first-models", "second-models"):
        proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt",
                              env={"RECALL_MODEL_CACHE": str(tmp_path / cache)})
        try:
            proc.initialize(str(notes), str(tmp_path / "work"))
            assert proc.refresh()["indexed_count"] == len(OTHER)
        finally:
            proc.close()
        prepared = [p.name for p in (tmp_path / cache).iterdir()]
        assert len(prepared) == 1 and prepared[0].startswith("onnx-prepared-"), prepared
