"""Conformance cases for the notes adapter (``python -m adapters.notes``).

Re-record with

    python conformance_transcripts/record.py notes conformance_transcripts/cases_notes.py

The source is a small folder of markdown and text notes written from
``NOTES`` below: headings to chunk at, front matter with a title, aliases,
tags, validity and a supersession, and one longer note that a tight
``max_file_bytes`` setting declines (``search-declined``).

A note's modification time is whatever the checkout gave the file, so the
candidate field that carries it (``event_time``) is declared volatile.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

from adapter_sdk.conformance import CaseSpec
from adapter_sdk.conformance.cases import CaseRequests, cancel_inflight, shutdown, version_rejection

ARGV = [sys.executable, "-m", "adapters.notes"]
SOURCE_ID = "notes"

NOTES = {
    "runbooks/backup-restore.md": """\
---
title: Backup and restore runbook
aliases: [restore runbook]
tags: [infra, backup]
---
# Backup and restore runbook

Nightly restic snapshots of the wiki database go to the offsite bucket.

## Restore drill

Once a quarter, restore the wiki database from the latest snapshot into the
staging host and time it. The last drill restored in 42 minutes.

## Retention

Keep 7 daily, 4 weekly and 12 monthly snapshots; prune on Sundays.
""",
    "decisions/2024-db-plan.md": """\
---
title: Database plan 2024
valid_from: 2024-01-15
---
# Database plan 2024

Stay on PostgreSQL 15 for the whole year; no major upgrade before 2025.
""",
    "decisions/2025-db-upgrade.md": """\
---
title: Database upgrade 2025
valid_from: 2025-02-01
supersedes: [decisions/2024-db-plan.md]
---
# Database upgrade 2025

Upgrade PostgreSQL 15 to 16 on db-main with pg_upgrade, rehearsed on the
staging replica first.
""",
    "oncall/handover.txt": """\
On-call handover checklist

Page the secondary before leaving, hand over open incidents, and note any
silenced alerts with their expiry.
""",
    "archive/meeting-2023.md": """\
---
title: Infra sync 2023
valid_until: 2023-12-31
---
# Infra sync 2023

Discussed moving the wiki to a managed database; decided against it for now.
"""
    + "\n".join(f"- action item {n}: follow up on the wiki migration estimate" for n in range(1, 41))
    + "\n",
}

RESTORE_DRILL = "runbooks/backup-restore.md#L10-L13"
WRITTEN_AT = 1735689600  # 2025-01-01T00:00:00Z
LONG_NOTE_LIMIT = 1024  # bytes: archive/meeting-2023.md is longer, every other note shorter

CANDIDATE_VOLATILE = (
    "/result/candidates/*/observed_at",
    "/result/candidates/*/confirmed_at",
    "/result/candidates/*/event_time",
)
# when a search follows the handshake at once, the first build may still be running and is
# then counted with the search's own catch-up: how many files each read is timing
FRESHNESS_VOLATILE = (
    "/result/diagnostics/freshness/checked_at",
    "/result/diagnostics/freshness/full_check_at",
    "/result/diagnostics/files_read",
    "/result/diagnostics/files_reindexed",
)
SEARCH_ELAPSED = ("/result/diagnostics/elapsed_ms", "/result/diagnostics/sync_ms", *FRESHNESS_VOLATILE)
HEALTH_VOLATILE = (
    "/result/checked_at",
    "/result/last_success_at",
    "/result/diagnostics/store_identity",
    "/result/diagnostics/folder",
    "/result/diagnostics/sync_ms",
    *FRESHNESS_VOLATILE,
)


def _write_fixture() -> Path:
    root = Path(tempfile.mkdtemp(prefix="recall-notes-fixture-"))
    atexit.register(shutil.rmtree, root, True)
    for relative, text in NOTES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        # An old modification time: a note changed within the last seconds is re-read on
        # every search (it could change again within the same mtime), which shows in counts.
        os.utime(path, (WRITTEN_AT, WRITTEN_AT))
    return root


FIXTURE = _write_fixture()
FOLDER = CaseRequests(SOURCE_ID)
SEARCH_VOLATILE = [*CANDIDATE_VOLATILE, *SEARCH_ELAPSED]

CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1; the manifest declares an indexed document source "
        "with lexical and exact queries, as_of as a filter and checkpoints.",
        [FOLDER.initialize()],
        fixture=FIXTURE,
    ),
    version_rejection(FOLDER, fixture=FIXTURE),
    CaseSpec(
        "bad-settings",
        "Settings are checked at the handshake, each refusal -32602 naming the key: an "
        "unknown key, then a max_file_bytes that is not a positive integer.",
        [FOLDER.initialize(colour="blue"), {**FOLDER.initialize(max_file_bytes=0), "id": 2}],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-ranked",
        "Free text ranks the matching sections with stable line-range locators and matched "
        "excerpts; an alias is an exact-identifier hit; a superseded decision carries its "
        "successor.",
        [
            FOLDER.initialize(),
            FOLDER.search(2, "restore the wiki database"),
            FOLDER.search(3, "restore runbook"),
            FOLDER.search(4, "postgresql upgrade"),
        ],
        fixture=FIXTURE,
        volatile=SEARCH_VOLATILE,
    ),
    CaseSpec(
        "search-empty",
        "A query nothing matches is an empty success: the whole folder was searched.",
        [FOLDER.initialize(), FOLDER.search(2, "zeppelin")],
        fixture=FIXTURE,
        volatile=list(SEARCH_ELAPSED),
    ),
    CaseSpec(
        "search-skipped",
        "A record type the source does not hold is skipped before retrieval, with its reason.",
        [FOLDER.initialize(), FOLDER.search(2, "restore", record_types=["task"])],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-declined",
        "With max_file_bytes below one note's size, that note is declined: health lists it "
        "with the reason and the setting that would admit it, searches succeed and coverage "
        "stays complete.",
        [FOLDER.initialize(max_file_bytes=LONG_NOTE_LIMIT), FOLDER.search(2, "wiki database"), FOLDER.health(3)],
        fixture=FIXTURE,
        volatile=[*SEARCH_VOLATILE, *HEALTH_VOLATILE],
    ),
    CaseSpec(
        "expand-details",
        "Expand the restore-drill section at summary, excerpt, full and context, then full "
        "within 80 bytes: truncated at budget_bytes; a note's bare path expands the whole note.",
        [
            FOLDER.initialize(),
            FOLDER.expand(2, RESTORE_DRILL, "summary"),
            FOLDER.expand(3, RESTORE_DRILL, "excerpt"),
            FOLDER.expand(4, RESTORE_DRILL, "full"),
            FOLDER.expand(5, RESTORE_DRILL, "context"),
            FOLDER.expand(6, RESTORE_DRILL, "full", budget_bytes=80),
            FOLDER.expand(7, "runbooks/backup-restore.md", "full"),
        ],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "expand-expired",
        "A line range that no longer spans one section, and a note that is not in the folder, "
        "are -32003; a locator whose line range does not parse is -32002; a budget below the "
        "minimum is -32006.",
        [
            FOLDER.initialize(),
            FOLDER.expand(2, "runbooks/backup-restore.md#L10-L12", "full"),
            FOLDER.expand(3, "runbooks/gone.md#L1-L3", "full"),
            FOLDER.expand(4, "runbooks/backup-restore.md#L10", "full"),
            FOLDER.expand(5, RESTORE_DRILL, "full", budget_bytes=10),
        ],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "health",
        "Health reports healthy and complete with the index generation, watermark and "
        "counts; a refresh of an unchanged folder leaves the checkpoint unchanged.",
        [FOLDER.initialize(), FOLDER.health(2), FOLDER.refresh(3, full=False)],
        fixture=FIXTURE,
        volatile=list(HEALTH_VOLATILE),
    ),
    cancel_inflight(FOLDER, "restore the wiki database", fixture=FIXTURE),
    shutdown(FOLDER, "handover checklist", fixture=FIXTURE, volatile=SEARCH_VOLATILE),
]
