"""Conformance cases for the semantic adapter (``python -m adapters.semantic``).

Re-record with

    python conformance_transcripts/record.py semantic conformance_transcripts/cases_semantic.py

Recording and replaying need the semantic extra and its model package. The
fixture is a small folder of notes whose embeddings are stored beside them
(``.embeddings/``, a folder the scan skips) before recording, so every search
answers from a complete index: without it the first searches would race the
background build. Similarities are floating point from the query's embedding,
so the fields carrying them are volatile; the order and the admitted chunks
are the contract.
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from adapter_sdk.conformance import CaseSpec
from adapter_sdk.conformance.cases import CaseRequests, cancel_inflight, shutdown, version_rejection

ARGV = [sys.executable, "-m", "adapters.semantic"]
SOURCE_ID = "meaning"
STORE = ".embeddings"

NOTES = {
    "formatting/skip.md": "# Leaving code alone\n\nLines ending in `# fmt: skip` and blocks between"
    " `# fmt: off` and `# fmt: on` are never reformatted.\n",
    "ops/docker.md": "# Container images\n\nOfficial images are published on Docker Hub, tagged"
    " with each release number.\n\n## Running one\n\nMount the project at /src and run the"
    " check inside a throwaway container.\n",
    "style/quotes.md": "# Strings\n\nDouble quotes are preferred over single quotes.\n",
    # the background a question's similarities are measured against (adapters/semantic/admission.py)
    "life/garden.md": "# Garden\n\nTomatoes want full sun and deep watering twice a week.\n",
    "life/travel.md": "# Travel\n\nThe night train to Vienna leaves at ten; book a couchette early.\n",
    # uses a word of the paraphrase searched below ("file"): a question none of whose words
    # a note near it holds admits nothing by meaning alone
    "team/budget.md": "# Budget\n\nThe hosting bill rose by a fifth after the storage upgrade; the"
    " invoice is a file in the shared drive.\n",
    "team/oncall.md": "# On call\n\nThe pager rotates every Monday at nine.\n",
    "team/hiring.md": "# Hiring\n\nTwo interviews, then a paid trial day with the team.\n",
}
DOCKER = "ops/docker.md#L1-L3"
SCORES = (
    "/result/candidates/*/local_score",
    "/result/candidates/*/relevance",
    "/result/candidates/*/metadata/similarity",
    "/result/diagnostics/best_similarity",
    "/result/candidates/*/metadata/margin",
    "/result/candidates/*/metadata/least_similarity",
    "/result/diagnostics/admission/background",
    "/result/diagnostics/admission/least_similarity",
)
OBSERVED = ("/result/candidates/*/observed_at",)
HEALTH_VOLATILE = ("/result/checked_at", "/result/last_success_at")


def _write_fixture() -> Path:
    from adapters.semantic.index import VectorIndex

    root = Path(tempfile.mkdtemp(prefix="recall-semantic-fixture-"))
    atexit.register(shutil.rmtree, root, True)
    for relative, text in NOTES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    index = VectorIndex(str(root), str(root / STORE))
    pending = index.prepare()
    if pending is not None:
        index.embed(pending)
    conn = sqlite3.connect(root / STORE / "embeddings.sqlite3")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("VACUUM")
    conn.close()
    return root


FIXTURE = _write_fixture()
FOLDER = CaseRequests(SOURCE_ID)
SETTINGS = {"lexical_source": "notes", "store_dir": f"${{FIXTURE}}/{STORE}"}
SEARCH_VOLATILE = [*SCORES, *OBSERVED]

CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1; the manifest declares an indexed document source "
        "ranked by meaning, relevance basis vector_similarity, with search and expand.",
        [FOLDER.initialize(**SETTINGS)],
        fixture=FIXTURE,
    ),
    version_rejection(FOLDER, fixture=FIXTURE),
    CaseSpec(
        "bad-settings",
        "Settings are checked at the handshake: an unknown key is -32602 naming it.",
        [FOLDER.initialize(colour="blue")],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-ranked",
        "A question sharing no word with the note finds it by meaning; each candidate names "
        "the lexical source's chunk it projects (derived_from) and carries its similarity.",
        [
            FOLDER.initialize(**SETTINGS),
            FOLDER.search(2, "how do I stop the formatter from touching part of my file"),
            FOLDER.search(3, "where are the container builds published"),
        ],
        fixture=FIXTURE,
        volatile=SEARCH_VOLATILE,
    ),
    CaseSpec(
        "search-empty",
        "A question about nothing in the folder has no chunk standing above its background "
        "similarity by the margin: an empty success over a complete index.",
        [FOLDER.initialize(**SETTINGS), FOLDER.search(2, "sourdough starter hydration ratio")],
        fixture=FIXTURE,
        volatile=list(SCORES),
    ),
    CaseSpec(
        "search-skipped",
        "A record type the source does not hold is skipped before retrieval, with its reason.",
        [FOLDER.initialize(**SETTINGS), FOLDER.search(2, "docker images", record_types=["task"])],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "expand-details",
        "Expand the container-images section at summary, excerpt, full and context, then full "
        "within 80 bytes; a line range spanning no section is -32003.",
        [
            FOLDER.initialize(**SETTINGS),
            FOLDER.expand(2, DOCKER, "summary"),
            FOLDER.expand(3, DOCKER, "excerpt"),
            FOLDER.expand(4, DOCKER, "full"),
            FOLDER.expand(5, DOCKER, "context"),
            FOLDER.expand(6, DOCKER, "full", budget_bytes=80),
            FOLDER.expand(7, "ops/docker.md#L2-L9", "full"),
        ],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "health",
        "Health reports healthy and complete with the model and counts; a refresh of an "
        "unchanged folder embeds nothing and stays complete.",
        [FOLDER.initialize(**SETTINGS), FOLDER.health(2), FOLDER.refresh(3, full=False)],
        fixture=FIXTURE,
        volatile=list(HEALTH_VOLATILE),
    ),
    cancel_inflight(
        FOLDER, "where are the container builds published", settings=SETTINGS, fixture=FIXTURE,
        description="A search cancelled while the model loads for its first question answers -32007.",
    ),
    shutdown(FOLDER, "double quotes", fixture=FIXTURE, volatile=SEARCH_VOLATILE),
]
# The leg opens its embedding store (in the fixture, so replays need not embed) for
# writing: a case that opens it replays on a copy, never on the committed files.
CASES = [replace(spec, writable_fixture=True) if spec.fixture is not None else spec for spec in CASES]
