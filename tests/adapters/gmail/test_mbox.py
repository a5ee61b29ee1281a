from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from datetime import timedelta
from pathlib import Path

import pytest

from adapters.gmail.mbox_index import MboxIndex
from tests.support.together import run_together

from .adapter_process import AdapterError, AdapterProcess
from .conftest import OpenAdapter
from .mailbox import (
    DRILL,
    LUNCH,
    PG16,
    SPAM,
    THREADS,
    Mail,
    Thread,
    at,
    by_id,
    mbox_bytes,
    mbox_entry,
)

REPLY = Mail("18c2a0f4e5b6c7b3", "Sam Okafor <sam@example.org>", "infra@example.org",
             "Re: PostgreSQL 16 upgrade plan for db-main", at("2025-03-20T09:00:00"),
             ("INBOX", "UNREAD"), plain="Post-upgrade vacuum finished; replication lag is zero.\n")
NEW_THREAD = Thread("18c2a0f4e5b6c707", (
    Mail("18c2a0f4e5b6c7g1", "Priya Raman <priya@example.org>", "infra@example.org",
         "Retention policy for restic snapshots", at("2025-03-21T08:00:00"), ("INBOX",),
         plain="Proposal: keep 7 daily, 4 weekly and 12 monthly snapshots.\n"),
))
MALFORMED = b"From 1@xxx Thu Mar 06 00:00:00 +0000 2025\nthis line is no header at all\n\n"


def _ids(result: dict) -> list[str]:
    return [c["source_record_id"] for c in result["candidates"]]


def test_mbox_manifest_is_indexed_with_checkpoint(mbox_reader: AdapterProcess) -> None:
    manifest = mbox_reader.manifest
    assert manifest["freshness_modes"] == ["indexed"]
    assert manifest["capabilities"] == ["search", "expand", "checkpoint"]
    assert (manifest["sensitivity"], manifest["as_of_support"]) == ("confidential", "filter")


def test_threads_are_grouped_by_gmail_thread_id_with_api_locators(mbox_reader: AdapterProcess) -> None:
    result = mbox_reader.search("restore drill")
    assert result["outcome"] == "success"
    assert _ids(result)[0] == DRILL  # X-GM-THRID in decimal is the API's hex id
    drill = result["candidates"][0]
    assert drill["locator"] == f"mail:thread/{DRILL}"
    assert drill["metadata"]["message_count"] == 2
    assert drill["metadata"]["labels"] == ["INBOX", "IMPORTANT", "UNREAD"]
    assert "42 minutes" not in str(result)


def test_body_matches_are_found_and_measured_over_the_body_held(mbox_reader: AdapterProcess) -> None:
    result = mbox_reader.search("restore drill")
    lunch = next(c for c in result["candidates"] if c["source_record_id"] == LUNCH)
    assert 0 < lunch["relevance"] < 1
    assert lunch["excerpt_kind"] == "preview"


def test_words_meet_at_their_stem_in_matching_and_relevance(mbox_reader: AdapterProcess) -> None:
    plural, singular = mbox_reader.search("restore drills"), mbox_reader.search("restore drill")
    assert _ids(plural) == _ids(singular)
    assert [c["relevance"] for c in plural["candidates"]] == [c["relevance"] for c in singular["candidates"]]


def test_spam_and_trash_are_left_out(mbox_reader: AdapterProcess) -> None:
    assert SPAM not in _ids(mbox_reader.search("cheap software"))


def test_appended_mail_is_indexed_from_the_stored_offset(
    open_adapter: OpenAdapter, mbox_file: Path
) -> None:
    adapter = open_adapter(mbox_file)
    first = adapter.search("upgrade")
    assert first["diagnostics"]["index_action"] == "built"
    appended = mbox_entry(REPLY, by_id(PG16)) + mbox_entry(NEW_THREAD.messages[0], NEW_THREAD)
    with mbox_file.open("ab") as handle:
        handle.write(appended)
    second = adapter.search("replication lag")
    assert second["diagnostics"]["index_action"] == "appended"
    assert second["diagnostics"]["bytes_read"] == len(appended)
    assert second["diagnostics"]["messages_indexed_now"] == 2
    assert _ids(second) == [PG16]
    assert second["candidates"][0]["metadata"]["message_count"] == 3
    third = adapter.search("retention snapshots")
    assert third["diagnostics"]["index_action"] == "unchanged"
    assert _ids(third)[0] == NEW_THREAD.thread_id  # the others hold only "snapshot"


def test_a_rewritten_mbox_is_rebuilt(
    open_adapter: OpenAdapter, mbox_file: Path, tmp_path: Path
) -> None:
    adapter = open_adapter(mbox_file)
    adapter.search("upgrade")
    mbox_file.write_bytes(mbox_bytes(tuple(t for t in THREADS if t.thread_id != PG16)))
    result = adapter.search("upgrade")
    assert result["diagnostics"]["index_action"] == "rebuilt"
    assert result["candidates"] == [] and result["outcome"] == "success"


def test_index_survives_a_restart_without_rereading(
    open_adapter: OpenAdapter, mbox_file: Path, tmp_path: Path
) -> None:
    open_adapter(mbox_file, workdir=tmp_path / "wd").search("upgrade")
    again = open_adapter(mbox_file, workdir=tmp_path / "wd").search("upgrade")
    assert again["diagnostics"]["index_action"] == "unchanged"
    assert _ids(again) == [PG16]


def test_malformed_messages_are_counted_and_the_rest_indexed(
    open_adapter: OpenAdapter, tmp_path: Path
) -> None:
    path = tmp_path / "broken.mbox"
    path.write_bytes(b"garbage before any separator\n" + MALFORMED
                     + mbox_bytes())
    adapter = open_adapter(path)
    result = adapter.search("restore drill")
    assert result["outcome"] == "partial"
    assert result["diagnostics"]["malformed_messages"] == 2
    assert result["diagnostics"]["coverage_reason"] == "malformed_messages"
    assert _ids(result)[0] == DRILL
    health = adapter.health()
    assert (health["status"], health["coverage"]) == ("degraded", "partial")
    assert health["failed_count"] == 2 and health["indexed_count"] == 8


def test_expand_reads_the_thread_from_its_offsets(
    open_adapter: OpenAdapter, mbox_file: Path
) -> None:
    adapter = open_adapter(mbox_file)
    expanded = adapter.expand(f"mail:thread/{PG16}", "full")
    assert "pg_upgrade --link from 15 to 16" in expanded["content"]
    assert "Rehearsed on the staging replica: 11 minutes of downtime." in expanded["content"]
    assert expanded["provenance"] == f"{mbox_file.name} thread {PG16} (2 messages)"
    with pytest.raises(AdapterError) as error:
        adapter.expand("mail:thread/18c2a0f4e5b6ffff")
    assert error.value.code == -32003


def test_as_of_leaves_out_later_messages_and_threads(mbox_reader: AdapterProcess) -> None:
    result = mbox_reader.search("restore drill", as_of="2025-03-04T12:00:00Z")
    assert _ids(result) == [DRILL]
    assert result["candidates"][0]["metadata"]["message_count"] == 1


def test_since_and_until_select_messages_by_date(mbox_reader: AdapterProcess) -> None:
    result = mbox_reader.search(
        "restore drill", filters={"since": "2025-03-06T00:00:00Z", "until": "2025-03-31T00:00:00Z"})
    assert _ids(result) == [LUNCH]


def test_refresh_reports_checkpoint_progress(open_adapter: OpenAdapter, mbox_file: Path) -> None:
    adapter = open_adapter(mbox_file)
    assert adapter.refresh()["checkpoint_progress"] == "advanced"
    assert adapter.refresh()["checkpoint_progress"] == "unchanged"
    rebuilt = adapter.refresh(full=True)
    assert rebuilt["checkpoint_progress"] == "unchanged"
    assert rebuilt["diagnostics"]["index_action"] == "rebuilt"


def test_health_names_the_store_by_the_mbox_realpath(
    open_adapter: OpenAdapter, mbox_file: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link.mbox"
    link.symlink_to(mbox_file)
    health = open_adapter(link).health()
    real = os.path.realpath(mbox_file)
    assert health["diagnostics"]["store_identity"] == (
        "mbox:" + hashlib.sha256(real.encode()).hexdigest()[:16])
    assert (health["status"], health["record_count"]) == ("healthy", 6)
    assert health["source_watermark"] == (
        "messages=8 threads=6 newest=2025-03-17T17:00:00+00:00")


def test_missing_mbox_is_unavailable(open_adapter: OpenAdapter, tmp_path: Path) -> None:
    adapter = open_adapter(tmp_path / "gone.mbox")
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32000 and "gone.mbox" in error.value.message
    assert adapter.health()["status"] == "unavailable"


def test_the_mbox_is_never_written(open_adapter: OpenAdapter, mbox_file: Path) -> None:
    before = (mbox_file.read_bytes(), mbox_file.stat().st_mtime_ns)
    adapter = open_adapter(mbox_file)
    adapter.search("restore drill")
    adapter.expand(f"mail:thread/{DRILL}")
    adapter.refresh(full=True)
    assert (mbox_file.read_bytes(), mbox_file.stat().st_mtime_ns) == before


def _many_threads(count: int) -> tuple[Thread, ...]:
    """``count`` threads whose one message holds every word of "relay drill vault", and one
    dense in two of them."""
    threads = tuple(
        Thread(f"18d{n:013x}", (Mail(f"18d{n:013x}", "Ops <ops@example.org>", "infra@example.org",
                                     f"Run {n}", at("2025-03-01T08:00:00"), ("INBOX",),
                                     plain="The relay drill checks the vault.\n"),))
        for n in range(count)
    )
    dense = Thread("18e0000000000001", (Mail("18e0000000000001", "Ops <ops@example.org>",
                                             "infra@example.org", "Dense", at("2025-03-02T08:00:00"),
                                             ("INBOX",), plain="relay relay drill drill relay\n"),))
    return (*threads, dense)


@pytest.mark.parametrize(("count", "tier"), [(205, "every_term"), (3, "admission_rule")])
def test_messages_holding_every_term_fill_the_pool_before_messages_holding_some(
    open_adapter: OpenAdapter, tmp_path: Path, count: int, tier: str
) -> None:
    path = tmp_path / "many.mbox"
    path.write_bytes(mbox_bytes(_many_threads(count)))
    result = open_adapter(path).search("relay drill vault", limit=20)
    assert result["diagnostics"]["admitted_by"] == tier
    assert ("18e0000000000001" in _ids(result)) is (tier == "admission_rule")


def test_processes_opening_one_new_index_at_once_all_find_it_whole(tmp_path: Path) -> None:
    """Commands started together each run the mailbox's adapter on one workdir: none may
    read the schema another is still creating, nor delete one another has just made."""
    mbox = tmp_path / "mail.mbox"
    mbox.write_bytes(mbox_bytes(THREADS))
    for attempt in range(6):
        workdir = tmp_path / f"work-{attempt}"
        done = run_together(OPEN_AND_COUNT, str(mbox), str(workdir), copies=4)
        assert [(run.code, run.stdout) for run in done] == [(0, "0 0\n")] * 4, done


# Open the index; read its tables, print two counts.
OPEN_AND_COUNT = """
import sys
from pathlib import Path
from adapters.gmail.mbox_index import MboxIndex
with MboxIndex(Path(sys.argv[1]), Path(sys.argv[2])).connection() as conn:
    for table in ("meta", "messages", "message_text", "malformed"):
        conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    print(*(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("messages", "malformed")))
"""


def test_processes_indexing_one_mailbox_at_once_index_each_message_once(tmp_path: Path) -> None:
    """Two commands at once each run the mailbox's adapter: what one indexed, the other
    does not index again."""
    threads = tuple(
        Thread(f"18c2a0f4e5b7{number:04x}", tuple(
            Mail(f"18c2a0f4e5b7{number:04x}{reply:02x}", "Sam Okafor <sam@example.org>", "infra@example.org",
                 f"Restore drill {number}", at("2025-03-20T09:00:00") + timedelta(minutes=reply), ("INBOX",),
                 plain=f"Drill {number}, step {reply}: restored the snapshot and compared checksums.\n")
            for reply in range(20)
        ))
        for number in range(60)
    )
    mbox = tmp_path / "mail.mbox"
    mbox.write_bytes(mbox_bytes(threads))
    for attempt in range(3):
        workdir = tmp_path / f"work-{attempt}"
        done = run_together(SYNC_AND_INDEX, str(mbox), str(workdir), copies=3)
        assert [run.code for run in done] == [0] * 3, done
        with MboxIndex(mbox, workdir).connection() as conn:
            rows = conn.execute("SELECT count(*), count(DISTINCT message_id) FROM messages").fetchone()
            texts = conn.execute("SELECT count(*) FROM message_text").fetchone()[0]
        assert rows[0] == rows[1] == texts == 1200, done


# Bring the mailbox's index up to date.
SYNC_AND_INDEX = """
import sys, time
from pathlib import Path
from adapters.gmail.mbox_index import MboxIndex
MboxIndex(Path(sys.argv[1]), Path(sys.argv[2])).sync(time.monotonic() + 30)
"""


def test_a_mailbox_another_process_is_indexing_is_searched_as_it_stands_not_waited_on(tmp_path: Path) -> None:
    """While another process holds the index for writing, a sync waits until its own stop
    time at most, then reports the index incomplete (a search answers partial from it)."""
    mbox = tmp_path / "mail.mbox"
    mbox.write_bytes(mbox_bytes(THREADS))
    index = MboxIndex(mbox, tmp_path / "work")
    with index.connection():
        pass  # the index file exists, empty
    other = sqlite3.connect(index.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    started = time.monotonic()
    report = index.sync(started + 0.3)
    waited = time.monotonic() - started
    assert (report.action, report.complete, report.messages_indexed) == ("locked", False, 0)
    assert 0.25 <= waited < 2.0
    other.execute("ROLLBACK")
    assert index.sync(time.monotonic() + 5).complete
