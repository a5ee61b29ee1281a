"""Conformance cases for the eventstore adapter (``python -m adapters.eventstore``).

Re-record with

    python conformance_transcripts/record.py eventstore conformance_transcripts/cases_eventstore.py

Needs Polign Recall 0.23+ installed beside this project (``scripts/install-polign.sh``).

The suite is self-contained: each case that reads memory carries a Polign data
directory as its ``fixture/``. Importing this module builds that directory
with Polign's own client from ``STATEMENTS`` (typed statements with fixed
observation instants, so event ids and answers are the same on every run),
stops the ``polign-server`` the client started, and drops its runtime files
(``runtime.json``, locks, ``server.log``). That server keeps its leases, locks
and log inside the store it serves, so these cases declare ``writable_fixture``:
a replay copies the directory, and the adapter's ``recall mcp`` starts a fresh
``polign-server`` for the copy. That server outlives the adapter; the replay
stops it by the pid in the copy's ``runtime.json``.

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
from dataclasses import replace
from pathlib import Path

from adapter_sdk.conformance import CaseSpec
from adapter_sdk.conformance.cases import CaseRequests, cancel_inflight, shutdown, version_rejection
from adapter_sdk.conformance.detached import running

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
    while running(pid) and time.monotonic() < give_up:
        time.sleep(0.05)


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
MEMORY = CaseRequests(SOURCE_ID)
# A location that exists nowhere: the cases refused before the store is opened never look.
NO_STORE = CaseRequests(SOURCE_ID, "${WORKDIR}/no-store")
# A `recall serve` address nothing listens on.
UNREACHABLE_SERVE = CaseRequests(SOURCE_ID, "http://127.0.0.1:9")

CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1; the manifest declares beliefs and notes, as_of as "
        "snapshot, and Polign's binary as an executable requirement.",
        [MEMORY.initialize()],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    version_rejection(NO_STORE),
    CaseSpec(
        "bad-settings",
        "Settings are checked at the handshake, each refusal -32602 naming the key: an unknown "
        "key, an unknown backend, and a `recall mcp` setting given to transport serve.",
        [
            NO_STORE.initialize(colour="blue"),
            {**NO_STORE.initialize(backend="sqlite"), "id": 2},
            {**UNREACHABLE_SERVE.initialize(transport="serve", collection="work"), "id": 3},
        ],
    ),
    CaseSpec(
        "search-ranked",
        "Evaluated now: the live belief ranks first with the value it replaced as a superseded "
        "record after it (superseded_by, valid_to); a belief held under two predicates lists "
        "the other under elsewhere; notes rank after typed beliefs.",
        [
            MEMORY.initialize(),
            MEMORY.search(2, "editor"),
            MEMORY.search(3, "fly.io"),
        ],
        fixture=STORE,
        volatile=[*NOW_DEPENDENT, BINARY_PATH],
    ),
    CaseSpec(
        "search-as-of",
        "Folded at 2024-03-01, before neovim was stated, vim is the current editor and "
        "nothing is superseded; a multi-valued predicate holds both its values.",
        [
            MEMORY.initialize(),
            MEMORY.search(2, "editor", as_of=BETWEEN),
            MEMORY.search(3, "technology", as_of=BETWEEN),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "search-empty",
        "Folded at 2023-06-01, before anything was stated, memory holds no belief: an empty "
        "success.",
        [MEMORY.initialize(), MEMORY.search(2, "editor", as_of=BEFORE_ANYTHING)],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "search-skipped",
        "Searches the source cannot answer are skipped before Polign is asked, each with its "
        "reason: a record type it does not hold, a project filter, a query with no words.",
        [
            MEMORY.initialize(),
            MEMORY.search(2, "editor", record_types=["task"]),
            MEMORY.search(3, "editor", project="infra"),
            MEMORY.search(4, "?!"),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "search-unavailable",
        "A `recall serve` source whose Recall key is not set: the handshake succeeds, the "
        "search is -32000 naming the variable to set, and health says unavailable.",
        [
            UNREACHABLE_SERVE.initialize(transport="serve", api_key_env="RECALL_CONFORMANCE_UNSET_KEY"),
            UNREACHABLE_SERVE.search(2, "editor"),
            UNREACHABLE_SERVE.health(3),
        ],
        volatile=["/result/checked_at"],
    ),
    CaseSpec(
        "expand-details",
        "Expand the current editor belief at summary, excerpt, full and context (the pair's "
        "history, oldest first, cited event marked), then full within 160 bytes: whole "
        "lines kept, the lines cut counted.",
        [
            MEMORY.initialize(),
            MEMORY.expand(2, NEOVIM, "summary"),
            MEMORY.expand(3, NEOVIM, "excerpt"),
            MEMORY.expand(4, NEOVIM, "full"),
            MEMORY.expand(5, NEOVIM, "context"),
            MEMORY.expand(6, NEOVIM, "full", budget_bytes=160),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "expand-expired",
        "An event id not in the pair's history is -32003; a locator without subject, "
        "predicate and event id is -32002.",
        [
            MEMORY.initialize(),
            MEMORY.expand(2, UNKNOWN_EVENT, "full"),
            MEMORY.expand(3, "prefers_editor", "full"),
        ],
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    CaseSpec(
        "health",
        "Health reports healthy and complete once Polign answers and its predicate registry "
        "is readable.",
        [MEMORY.initialize(), MEMORY.health(2)],
        fixture=STORE,
        volatile=[*HEALTH_VOLATILE, BINARY_PATH],
    ),
    cancel_inflight(
        MEMORY,
        "editor",
        description="The first search starts Polign's server; cancelled in flight, it is "
        "answered with -32007, never a late result.",
        fixture=STORE,
        volatile=[BINARY_PATH],
    ),
    shutdown(MEMORY, "editor", as_of=BETWEEN, fixture=STORE, volatile=[BINARY_PATH]),
]
# Polign's server writes into the store it serves: a case that opens it replays on a copy.
CASES = [replace(spec, writable_fixture=True) if spec.fixture is not None else spec for spec in CASES]
