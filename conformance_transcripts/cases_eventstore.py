"""Conformance cases for the eventstore adapter (``python -m adapters.eventstore``).

Re-record with

    python conformance_transcripts/record.py eventstore conformance_transcripts/cases_eventstore.py

Needs Polign Recall 0.23+ installed beside this project (``scripts/install-polign.sh``).

The suite is self-contained: each case that reads memory carries a Polign data
directory as its ``fixture/``. Importing this module builds that directory
with Polign's own client from ``STATEMENTS`` (typed statements with fixed
observation instants, so event ids and answers are the same on every run),
stops the ``polign-server`` the client started, and drops its runtime files
(``runtime.json``, locks, ``server.log``). A replay copies the directory, and
the adapter's ``recall mcp`` starts a fresh ``polign-server`` for the copy;
that server outlives the adapter, so whoever replays must stop it (its pid is
in the copy's ``runtime.json``; the replay test stops it by pid).

Searches without ``as_of`` are evaluated now: their ``days_ago`` and
``diagnostics.as_of`` are declared volatile, and ``search-as-of`` pins the
instant instead, masking nothing.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from adapter_sdk.conformance import FAR_DEADLINE, CaseSpec
from adapter_sdk.protocol import Method, notification_frame, request_frame

ARGV = [sys.executable, "-m", "adapters.eventstore"]
SOURCE_ID = "memory"

# (subject, predicate, value, observed_at). Polign's forget cannot be dated, so
# nothing is withdrawn: a withdrawal would carry the recording's clock.
STATEMENTS = [
    ("user", "prefers_editor", "vim", "2024-01-01T10:00:00Z"),
    ("user", "uses_technology", "postgres", "2024-02-01T10:00:00Z"),
    ("user", "note", "the editor config lives in the dotfiles repository", "2024-02-03T10:00:00Z"),
    ("user", "uses_technology", "fly.io", "2024-02-04T10:00:00Z"),
    ("user", "deployment_target", "fly.io", "2024-02-04T10:00:00Z"),
    ("user", "prefers_editor", "neovim", "2024-06-01T10:00:00Z"),
]
# Event ids are derived from the statement (Polign's eventID), so they are fixed.
NEOVIM = "user/prefers_editor#m-97c7b5b40a76bb80ede60206"
UNKNOWN_EVENT = "user/prefers_editor#m-000000000000000000000000"
BETWEEN = "2024-03-01T00:00:00Z"  # after fly.io, before neovim
BEFORE_ANYTHING = "2023-06-01T00:00:00Z"
RUNTIME_FILES = ("runtime.json", "runtime.json.lock", "local.lock", "server.log")

# Clock readings, this machine's Polign binary (path, version) and a hash of the
# fixture copy's absolute path: they differ between runs or machines.
NOW_DEPENDENT = ("/result/diagnostics/as_of", "/result/candidates/*/metadata/days_ago")
HEALTH_VOLATILE = [
    "/result/checked_at",
    "/result/last_success_at",
    "/result/diagnostics/store_identity",
    "/result/diagnostics/polign_binary",
    "/result/diagnostics/polign_version",
    "/result/diagnostics/server_version",
    "/result/diagnostics/mcp_startup_ms",
]
BINARY_PATH = "/result/executable_requirements/*/command"


def _seed_store() -> Path:
    """A Polign data directory holding STATEMENTS, with no server running for it."""
    from polign_recall import Client

    from adapters.eventstore.binary import find_polign_server, locate

    binary = locate(None)
    root = Path(tempfile.mkdtemp(prefix="recall-eventstore-fixture-"))
    atexit.register(shutil.rmtree, root, True)
    store = root / "store"
    server_dir = find_polign_server(None, binary)
    env = {"PATH": os.pathsep.join(filter(None, (server_dir, os.environ.get("PATH"))))}
    # Polign's client runs $RECALL_BIN, else the first `recall`, which may be this project's CLI.
    previous = os.environ.get("RECALL_BIN")
    os.environ["RECALL_BIN"] = binary.path
    try:
        with Client(local_dir=store, typed=True, write=True, env=env, timeout=30) as client:
            for subject, predicate, value, observed_at in STATEMENTS:
                client.remember(subject, predicate, value, observed_at=observed_at)
    finally:
        _stop_server(store)
        if previous is None:
            del os.environ["RECALL_BIN"]
        else:
            os.environ["RECALL_BIN"] = previous
    for name in RUNTIME_FILES:
        (store / name).unlink(missing_ok=True)
    return store


def _stop_server(store: Path) -> None:
    try:
        pid = int(json.loads((store / "runtime.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return
    _stop_pid(pid)


def _stop_pid(pid: int) -> None:
    """SIGTERM (a clean shutdown releases Polign's lease), then wait for the exit."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    give_up = time.monotonic() + 5
    while _running(pid) and time.monotonic() < give_up:
        time.sleep(0.05)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _stop_servers_of_case_copies(known: set[int]) -> None:
    """Stop each polign-server this run started for a case's fixture copy, then drop the copy.

    The recorder removes a case's scratch directory while that server still
    writes into it, so the directory may outlive the case too.
    """
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in known:
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not argv[0].endswith(b"polign-server") or b"-runtime-file" not in argv:
            continue
        run_root = Path(os.fsdecode(argv[argv.index(b"-runtime-file") + 1])).parent.parent
        if run_root.name.startswith("recall-conformance-"):
            _stop_pid(int(entry.name))
            shutil.rmtree(run_root, ignore_errors=True)


_RUNNING_BEFORE = {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
atexit.register(_stop_servers_of_case_copies, _RUNNING_BEFORE)
STORE = _seed_store()


def initialize(
    *, versions: tuple[int, int] = (1, 1), location: str = "${FIXTURE}", **settings: Any
) -> dict[str, Any]:
    return request_frame(
        1,
        Method.initialize,
        {
            "protocol_version_min": versions[0],
            "protocol_version_max": versions[1],
            "workdir": "${WORKDIR}",
            "source_id": SOURCE_ID,
            "location": location,
            "settings": settings,
        },
    )


def search(request_id: int, query: str, *, as_of: str | None = None, **filters: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"query": query, "filters": filters, "limit": 10, "deadline": FAR_DEADLINE}
    if as_of is not None:
        params["as_of"] = as_of
    return request_frame(request_id, Method.search, params)


def expand(request_id: int, local: str, detail: str, budget_bytes: int = 4096) -> dict[str, Any]:
    params = {
        "locator": f"{SOURCE_ID}:{local}",
        "detail": detail,
        "budget_bytes": budget_bytes,
        "deadline": FAR_DEADLINE,
    }
    return request_frame(request_id, Method.expand, params)


def health(request_id: int) -> dict[str, Any]:
    return request_frame(request_id, Method.health, {"deadline": FAR_DEADLINE})


# A location that exists nowhere: the cases refused before the store is opened never look.
NO_STORE = "${WORKDIR}/no-store"

CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1; the manifest declares beliefs and notes, as_of as "
        "snapshot, and Polign's binary as an executable requirement.",
        [initialize()],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "version-rejection",
        "A range the adapter cannot speak (2..3) is refused with -32602 and no manifest.",
        [initialize(versions=(2, 3), location=NO_STORE)],
    ),
    CaseSpec(
        "bad-settings",
        "Settings are checked at the handshake, each refusal -32602 naming the key: an unknown "
        "key, an unknown backend, and a `recall mcp` setting given to transport serve.",
        [
            initialize(location=NO_STORE, colour="blue"),
            {**initialize(location=NO_STORE, backend="sqlite"), "id": 2},
            {
                **initialize(location="http://127.0.0.1:9", transport="serve", collection="work"),
                "id": 3,
            },
        ],
    ),
    CaseSpec(
        "search-ranked",
        "Evaluated now: the live belief ranks first with the value it replaced as a superseded "
        "record after it (superseded_by, valid_to); a belief held under two predicates lists "
        "the other under elsewhere; notes rank after typed beliefs.",
        [
            initialize(),
            search(2, "editor"),
            search(3, "fly.io"),
        ],
        fixture=STORE,
        volatile=[*NOW_DEPENDENT, BINARY_PATH],
    ),
    CaseSpec(
        "search-as-of",
        "Folded at 2024-03-01, before neovim was stated, vim is the current editor and "
        "nothing is superseded; a multi-valued predicate holds both its values.",
        [
            initialize(),
            search(2, "editor", as_of=BETWEEN),
            search(3, "technology", as_of=BETWEEN),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "search-empty",
        "Folded at 2023-06-01, before anything was stated, memory holds no belief: an empty "
        "success.",
        [initialize(), search(2, "editor", as_of=BEFORE_ANYTHING)],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "search-skipped",
        "Searches the source cannot answer are skipped before Polign is asked, each with its "
        "reason: a record type it does not hold, a project filter, a query with no words.",
        [
            initialize(),
            search(2, "editor", record_types=["task"]),
            search(3, "editor", project="infra"),
            search(4, "?!"),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "search-unavailable",
        "A `recall serve` source whose Recall key is not set: the handshake succeeds, the "
        "search is -32000 naming the variable to set, and health says unavailable.",
        [
            initialize(
                location="http://127.0.0.1:9",
                transport="serve",
                api_key_env="RECALL_CONFORMANCE_UNSET_KEY",
            ),
            search(2, "editor"),
            health(3),
        ],
        volatile=["/result/checked_at"],
    ),
    CaseSpec(
        "expand-details",
        "Expand the current editor belief at summary, excerpt, full and context (the pair's "
        "history, oldest first, cited event marked), then full within 160 bytes: whole "
        "lines kept, the lines cut counted.",
        [
            initialize(),
            expand(2, NEOVIM, "summary"),
            expand(3, NEOVIM, "excerpt"),
            expand(4, NEOVIM, "full"),
            expand(5, NEOVIM, "context"),
            expand(6, NEOVIM, "full", budget_bytes=160),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "expand-expired",
        "An event id not in the pair's history is -32003; a locator without subject, "
        "predicate and event id is -32002.",
        [
            initialize(),
            expand(2, UNKNOWN_EVENT, "full"),
            expand(3, "prefers_editor", "full"),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "health",
        "Health reports healthy and complete once Polign answers and its predicate registry "
        "is readable.",
        [initialize(), health(2)],
        fixture=STORE,
        volatile=[*HEALTH_VOLATILE, BINARY_PATH],
    ),
    CaseSpec(
        "cancel-inflight",
        "The first search starts Polign's server; cancelled in flight, it is answered with "
        "-32007, never a late result.",
        [
            initialize(),
            search(2, "editor"),
            notification_frame(Method.cancel, {"id": 2}),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "shutdown",
        "recall/shutdown after a search is answered with {} and nothing is written after it.",
        [initialize(), search(2, "editor", as_of=BETWEEN), request_frame(3, Method.shutdown, {})],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
]
