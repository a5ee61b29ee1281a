"""Conformance cases for the gmail adapter in mbox mode (``python -m adapters.gmail``).

Re-record with

    python conformance_transcripts/record.py gmail conformance_transcripts/cases_gmail.py

The source is a Google Takeout export, ``fixture/takeout.mbox``, written from
``MBOX`` below: four threads (Gmail thread ids in ``X-GM-THRID``, labels in
``X-Gmail-Labels``), one of them spam, which mbox mode leaves out as API mode's
default query does; ``search-partial`` appends a message cut short. API mode needs a Gmail account and is covered by the
adapter's own tests against a local server speaking the Gmail API's JSON.
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path

from adapter_sdk.conformance import CaseSpec
from adapter_sdk.conformance.cases import CaseRequests, cancel_inflight, shutdown, version_rejection

ARGV = [sys.executable, "-m", "adapters.gmail"]
SOURCE_ID = "mail"

MBOX = """\
From 1784310232427005697@xxx Mon Feb 10 08:00:00 +0000 2025
X-GM-THRID: 1784310232427005697
X-Gmail-Labels: Inbox,Opened
From: Tom Becker <tom@example.org>
To: infra@example.org
Subject: PostgreSQL 16 upgrade plan for db-main
Date: Mon, 10 Feb 2025 08:00:00 +0000
Message-ID: <pg16-plan@example.org>
Content-Type: text/plain; charset="utf-8"

Plan: pg_upgrade --link from 15 to 16 during the Saturday window at 06:00 UTC.
Rollback is the pre-upgrade snapshot.

From 1784310232427005697@xxx Wed Feb 12 16:00:00 +0000 2025
X-GM-THRID: 1784310232427005697
X-Gmail-Labels: Inbox,Opened
From: Priya Raman <priya@example.org>
To: infra@example.org
Subject: Re: PostgreSQL 16 upgrade plan for db-main
Date: Wed, 12 Feb 2025 16:00:00 +0000
Message-ID: <pg16-rehearsal@example.org>
In-Reply-To: <pg16-plan@example.org>
Content-Type: text/plain; charset="utf-8"

Rehearsed on the staging replica: 11 minutes of downtime.
Extensions all upgraded and verified.

From 1784310232427005696@xxx Tue Mar 04 09:00:00 +0000 2025
X-GM-THRID: 1784310232427005696
X-Gmail-Labels: Inbox,Important,Opened
From: Priya Raman <priya@example.org>
To: infra@example.org
Subject: Quarterly backup restore drill results
Date: Tue, 04 Mar 2025 09:00:00 +0000
Message-ID: <drill-results@example.org>
Content-Type: text/plain; charset="utf-8"

We restored the wiki database from last night's restic snapshot.
Restore took 42 minutes end to end; the runbook step for pg_restore needs the
--no-owner flag.

From 1784310232427005696@xxx Wed Mar 05 10:30:00 +0000 2025
X-GM-THRID: 1784310232427005696
X-Gmail-Labels: Inbox,Unread
From: Tom Becker <tom@example.org>
To: infra@example.org
Subject: Re: Quarterly backup restore drill results
Date: Wed, 05 Mar 2025 10:30:00 +0000
Message-ID: <drill-thanks@example.org>
In-Reply-To: <drill-results@example.org>
Content-Type: text/plain; charset="utf-8"

Thanks Priya. I updated the runbook and scheduled the next drill for June.

From 1784310232427005698@xxx Mon Mar 17 17:00:00 +0000 2025
X-GM-THRID: 1784310232427005698
X-Gmail-Labels: Inbox,Sent,Opened
From: Sam Okafor <sam@example.org>
To: infra@example.org
Subject: On-call handover for week 12
Date: Mon, 17 Mar 2025 17:00:00 +0000
Message-ID: <oncall-w12@example.org>
Content-Type: text/plain; charset="utf-8"

Handing over: two open incidents, the disk alert on db-main is silenced until
Friday.

From 1784310232427005699@xxx Tue Mar 18 07:00:00 +0000 2025
X-GM-THRID: 1784310232427005699
X-Gmail-Labels: Spam
From: Prize Desk <prizes@lottery.example>
To: infra@example.org
Subject: You won a backup restore prize
Date: Tue, 18 Mar 2025 07:00:00 +0000
Message-ID: <spam-1@lottery.example>
Content-Type: text/plain; charset="utf-8"

Claim your wiki database restore prize now.

"""

# Locators name threads by the hex id the API uses (X-GM-THRID is its decimal form).
DRILL_THREAD = "thread/18c324b3e4e80700"
PG16_THREAD_ID = "18c324b3e4e80701"
UNKNOWN_THREAD = "thread/18c324b3e4e807ff"

CANDIDATE_VOLATILE = ("/result/candidates/*/observed_at", "/result/candidates/*/confirmed_at")
LATENCIES = ("/result/diagnostics/elapsed_ms",)
HEALTH_VOLATILE = (
    "/result/checked_at",
    "/result/last_success_at",
    "/result/diagnostics/store_identity",
    "/result/index_generation",  # the index's build time in milliseconds
)


# An export cut short: a separator line with no message after it.
BROKEN_TAIL = "From 1784310232427005700@xxx Wed Mar 19 07:00:00 +0000 2025\n\n"


def _write_fixture(name: str, mbox: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"recall-gmail-{name}-"))
    atexit.register(shutil.rmtree, root, True)
    (root / "takeout.mbox").write_text(mbox, encoding="utf-8")
    return root


FIXTURE = _write_fixture("fixture", MBOX)
PARTIAL_FIXTURE = _write_fixture("partial", MBOX + BROKEN_TAIL)
MAILBOX = CaseRequests(SOURCE_ID, "${FIXTURE}/takeout.mbox")

SEARCH_VOLATILE = [*CANDIDATE_VOLATILE, *LATENCIES]

CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1; the manifest declares a mailbox source in mbox mode.",
        [MAILBOX.initialize()],
        fixture=FIXTURE,
    ),
    version_rejection(MAILBOX, fixture=FIXTURE),
    CaseSpec(
        "bad-settings",
        "Settings are checked at the handshake, each refusal -32602 naming the key: an "
        "unknown key, then an API-only setting given to an mbox source.",
        [MAILBOX.initialize(colour="blue"), {**MAILBOX.initialize(api_base="http://127.0.0.1:9"), "id": 2}],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-ranked",
        "Free text ranks whole threads with stable thread locators, spam left out; a thread "
        "id in the question is an exact-identifier hit.",
        [
            MAILBOX.initialize(),
            MAILBOX.search(2, "restore the wiki database"),
            MAILBOX.search(3, "pg_upgrade staging replica"),
            MAILBOX.search(4, PG16_THREAD_ID),
        ],
        fixture=FIXTURE,
        volatile=SEARCH_VOLATILE,
    ),
    CaseSpec(
        "search-empty",
        "A query nothing matches is an empty success: the whole export was searched.",
        [MAILBOX.initialize(), MAILBOX.search(2, "zeppelin")],
        fixture=FIXTURE,
        volatile=list(LATENCIES),
    ),
    CaseSpec(
        "search-skipped",
        "A record type the source does not hold is skipped before retrieval, with its reason.",
        [MAILBOX.initialize(), MAILBOX.search(2, "restore", record_types=["task"])],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-partial",
        "An export with a malformed message: searches are partial, naming the reason, and "
        "health is degraded with partial coverage and the failure counted.",
        [MAILBOX.initialize(), MAILBOX.search(2, "restore the wiki database"), MAILBOX.health(3)],
        fixture=PARTIAL_FIXTURE,
        volatile=[*SEARCH_VOLATILE, *HEALTH_VOLATILE],
    ),
    CaseSpec(
        "expand-details",
        "Expand the drill thread at summary, excerpt, full and context, then full within 200 "
        "bytes: truncated at budget_bytes.",
        [
            MAILBOX.initialize(),
            MAILBOX.expand(2, DRILL_THREAD, "summary"),
            MAILBOX.expand(3, DRILL_THREAD, "excerpt"),
            MAILBOX.expand(4, DRILL_THREAD, "full"),
            MAILBOX.expand(5, DRILL_THREAD, "context"),
            MAILBOX.expand(6, DRILL_THREAD, "full", budget_bytes=200),
        ],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "expand-expired",
        "A thread id not in the export is -32003; a locator that does not name a thread is "
        "-32002.",
        [
            MAILBOX.initialize(),
            MAILBOX.expand(2, UNKNOWN_THREAD, "full"),
            MAILBOX.expand(3, "18c324b3e4e80700", "full"),
        ],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "health",
        "Health reports healthy and complete coverage of the export, with message counts.",
        [MAILBOX.initialize(), MAILBOX.health(2)],
        fixture=FIXTURE,
        volatile=list(HEALTH_VOLATILE),
    ),
    cancel_inflight(MAILBOX, "restore the wiki database", fixture=FIXTURE),
    shutdown(MAILBOX, "handover", fixture=FIXTURE, volatile=SEARCH_VOLATILE),
]
