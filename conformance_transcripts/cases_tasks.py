"""Conformance cases for the tasks adapter (``python -m adapters.tasks``).

Re-record with

    python conformance_transcripts/record.py tasks conformance_transcripts/cases_tasks.py

The source is a todo.txt file with its done.txt, written from ``TODO_TXT`` and
``DONE_TXT`` below, so the suite needs nothing installed. Two cases use
Taskwarrior mode without Taskwarrior: ``cancel-inflight`` points
``task_binary`` at a stand-in program in the fixture that never answers (so the
search is still running when ``recall/cancel`` arrives), and
``search-unavailable`` names a program that does not exist.
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path

from adapter_sdk.conformance import CaseSpec
from adapter_sdk.conformance.cases import CaseRequests, cancel_inflight, shutdown, version_rejection

ARGV = [sys.executable, "-m", "adapters.tasks"]
SOURCE_ID = "todo"

TODO_TXT = """\
(A) 2025-01-10 Run the quarterly restore drill for the wiki database +infra @backup due:2030-01-15
(B) 2025-02-01 Upgrade PostgreSQL 15 to 16 on db-main +infra @db
2025-04-01 Prepare the on-call handover notes for Priya +team @oncall
2025-05-01 Rotate the restic repository keys for the backup bucket +infra @backup
x 2025-03-01 2025-01-20 Renew the TLS certificate for wiki.example.org +infra
"""

DONE_TXT = """\
x 2024-12-01 2024-11-15 Restore the wiki database from the nightly backup +infra @backup
"""

# Ids are derived from each line's creation date and description (adapters/tasks/todotxt.py).
DRILL = "6f210724eb90"  # the restore drill
MISSING = "0123456789ab"  # well formed, in no list

# A stand-in for `task` that never answers: the search it serves stays in flight.
STALLING_TASK = "#!/bin/sh\nexec sleep 60\n"

CANDIDATE_CLOCKS = ("/result/candidates/*/observed_at", "/result/candidates/*/confirmed_at")
SEARCH_ELAPSED = "/result/diagnostics/elapsed_ms"
HEALTH_CLOCKS = ("/result/checked_at", "/result/last_success_at")
# A hash of the fixture's absolute path, which is new on every run.
STORE_IDENTITY = "/result/diagnostics/store_identity"
# The stand-in program's absolute path, echoed back by the manifest.
PROGRAM_PATH = "/result/executable_requirements/*/command"


def _write_fixtures() -> tuple[Path, Path]:
    root = Path(tempfile.mkdtemp(prefix="recall-tasks-fixture-"))
    atexit.register(shutil.rmtree, root, True)
    todo = root / "todotxt"
    todo.mkdir()
    (todo / "todo.txt").write_text(TODO_TXT, encoding="utf-8")
    (todo / "done.txt").write_text(DONE_TXT, encoding="utf-8")
    taskwarrior = root / "taskwarrior"
    (taskwarrior / "data").mkdir(parents=True)
    (taskwarrior / "data" / "pending.data").write_text("", encoding="utf-8")
    stalling = taskwarrior / "stalling-task"
    stalling.write_text(STALLING_TASK, encoding="utf-8")
    stalling.chmod(0o755)
    return todo, taskwarrior


TODO_FIXTURE, TASKWARRIOR_FIXTURE = _write_fixtures()
TODO = CaseRequests(SOURCE_ID, "${FIXTURE}/todo.txt")
TASKWARRIOR = CaseRequests(SOURCE_ID, "${FIXTURE}/data")
SEARCH_VOLATILE = [*CANDIDATE_CLOCKS, SEARCH_ELAPSED]

CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1; the manifest declares a live task source in todo.txt "
        "mode with exact, lexical and structured queries and as_of as a filter.",
        [TODO.initialize()],
        fixture=TODO_FIXTURE,
    ),
    version_rejection(TODO, fixture=TODO_FIXTURE),
    CaseSpec(
        "bad-settings",
        "Settings are checked at the handshake: an unknown key, then an unknown mode, are "
        "each refused with -32602 naming the key and the accepted values.",
        [TODO.initialize(colour="blue"), {**TODO.initialize(mode="orgmode"), "id": 2}],
        fixture=TODO_FIXTURE,
    ),
    CaseSpec(
        "search-ranked",
        "Free text matching an open and a completed task ranks both with stable locators, "
        "stated validity and the store watermark; a stable id is an exact-identifier hit; a "
        "project filter narrows to that project.",
        [
            TODO.initialize(),
            TODO.search(2, "restore the wiki database"),
            TODO.search(3, DRILL),
            TODO.search(4, "backup", project="infra"),
        ],
        fixture=TODO_FIXTURE,
        volatile=SEARCH_VOLATILE,
    ),
    CaseSpec(
        "search-as-of",
        "as_of filters on entry and completion: at 2025-02-15 the certificate renewal "
        "(completed 2025-03-01) was still open and the on-call handover (entered 2025-04-01) "
        "did not exist yet.",
        [
            TODO.initialize(),
            TODO.search(2, "wiki certificate", as_of="2025-02-15T00:00:00Z"),
            TODO.search(3, "handover", as_of="2025-02-15T00:00:00Z"),
        ],
        fixture=TODO_FIXTURE,
        volatile=SEARCH_VOLATILE,
    ),
    CaseSpec(
        "search-empty",
        "A query nothing matches is an empty success: the whole list was searched.",
        [TODO.initialize(), TODO.search(2, "zeppelin")],
        fixture=TODO_FIXTURE,
        volatile=[SEARCH_ELAPSED],
    ),
    CaseSpec(
        "search-skipped",
        "Searches the source cannot answer are skipped before retrieval, each with its reason: "
        "a record type it does not hold, an entities filter, and a query with no words (only punctuation).",
        [
            TODO.initialize(),
            TODO.search(2, "backup", record_types=["email"]),
            TODO.search(3, "backup", entities=["priya"]),
            TODO.search(4, "?!"),
        ],
        fixture=TODO_FIXTURE,
    ),
    CaseSpec(
        "search-unavailable",
        "A Taskwarrior source whose program is not installed: the handshake succeeds, the "
        "search is -32000 naming the missing program and the setting to fix, and health says "
        "unavailable, never an empty success.",
        [
            TASKWARRIOR.initialize(mode="taskwarrior", task_binary="recall-conformance-no-such-task"),
            TASKWARRIOR.search(2, "backup"),
            TASKWARRIOR.health(3),
        ],
        fixture=TASKWARRIOR_FIXTURE,
        volatile=[*HEALTH_CLOCKS, STORE_IDENTITY],
    ),
    CaseSpec(
        "expand-details",
        "Expand one task at summary, excerpt, full and context (its project's other tasks), "
        "then full within 120 bytes: truncated at budget_bytes and marked.",
        [
            TODO.initialize(),
            TODO.expand(2, DRILL, "summary"),
            TODO.expand(3, DRILL, "excerpt"),
            TODO.expand(4, DRILL, "full"),
            TODO.expand(5, DRILL, "context"),
            TODO.expand(6, DRILL, "full", budget_bytes=120),
        ],
        fixture=TODO_FIXTURE,
    ),
    CaseSpec(
        "expand-expired",
        "A well-formed id no longer in the list is -32003 (search again); a locator that names "
        "no task is -32002; a budget below a task's minimum is -32006.",
        [
            TODO.initialize(),
            TODO.expand(2, MISSING, "full"),
            TODO.expand(3, "not-a-task-id", "full"),
            TODO.expand(4, DRILL, "full", budget_bytes=10),
        ],
        fixture=TODO_FIXTURE,
    ),
    CaseSpec(
        "health",
        "Health reports healthy, complete coverage, record counts by status and the content "
        "watermark of the list.",
        [TODO.initialize(), TODO.health(2)],
        fixture=TODO_FIXTURE,
        volatile=[*HEALTH_CLOCKS, STORE_IDENTITY],
    ),
    cancel_inflight(
        TASKWARRIOR,
        "backup",
        settings={"mode": "taskwarrior", "task_binary": "${FIXTURE}/stalling-task"},
        description="A search held by a task program that never answers is cancelled in flight "
        "and answered with -32007, never a late result.",
        fixture=TASKWARRIOR_FIXTURE,
        volatile=[PROGRAM_PATH],
    ),
    shutdown(TODO, "handover", fixture=TODO_FIXTURE, volatile=SEARCH_VOLATILE),
]
