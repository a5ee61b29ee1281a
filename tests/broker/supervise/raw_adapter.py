"""An adapter that writes raw frames, misbehaving as its first argument says.

Scenarios (``plain`` behaves: it answers search, health and refresh, counting probes):
  exit_in_handshake   logs to stderr and exits 4 when asked to initialize
  hang                never answers a search, ignores recall/cancel, end of input
                      and SIGTERM, and starts a helper ``sleep`` in its group
  garbage             surrounds every reply with unusable output
  oversized           writes a 9 MiB line before each search reply
  unknown_id          answers search "then-right" with a wrong id, then the right one;
                      answers "only-wrong" with a wrong id only, and acknowledges cancel
  invalid_candidate   answers search with a candidate whose local_rank is 0, and a good one
  invalid_result      answers search with no outcome
  wrong_version       claims protocol version 2 in its manifest
  chatter             writes a line and a notification before the handshake reply
  slow_health         answers health only after a minute
  slow_refresh        takes four seconds over a refresh, answering nothing meanwhile (one
                      request at a time), and says work is left in its health until then
Every pid it starts is appended to ``$FAULT_PIDFILE``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

SCENARIO = sys.argv[1]
MANIFEST = {
    "protocol_version": 1,
    "adapter_id": "raw/1",
    "display_name": "Raw",
    "record_types": ["document"],
    "query_modes": ["lexical"],
    "freshness_modes": ["live"],
    "as_of_support": "none",
    "relevance_basis": "lexical_span",
    "capabilities": ["search"],
    "sensitivity": "internal",
}


STATE = {"source_id": "unset", "probes": 0}


def candidate(rank: int = 1) -> dict:
    return {
        "candidate_id": "c1",
        "source_record_id": "r1",
        "locator": f"{STATE['source_id']}:doc-1",
        "record_type": "document",
        "title": "Raw document",
        "local_rank": rank,
        "sensitivity": "internal",
    }


def record_pid(pid: int) -> None:
    if path := os.environ.get("FAULT_PIDFILE"):
        with open(path, "a") as pids:
            pids.write(f"{pid}\n")


def write(line: str | bytes) -> None:
    data = line.encode() if isinstance(line, str) else line
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def reply(request_id: object, result: dict) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


def error(request_id: object, code: int, message: str) -> None:
    write(
        json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )
    )


def garbage() -> None:
    write("this is not json")
    write('{"jsonrpc":"2.0","method":"recall/log","params":{}}')
    write("[1, 2, 3]")
    reply(424242, {"candidates": [], "outcome": "success"})


def initialize(request_id: object, params: dict) -> None:
    STATE["source_id"] = params["source_id"]
    sys.stderr.write(f"ready as {params['source_id']}\n")
    sys.stderr.flush()
    if SCENARIO == "exit_in_handshake":
        sys.stderr.write("cannot open the store\n")
        sys.stderr.flush()
        sys.exit(4)
    if SCENARIO == "chatter":
        write("starting up, please wait")
        write('{"jsonrpc":"2.0","method":"recall/progress","params":{}}')
    if SCENARIO == "garbage":
        garbage()
    manifest = dict(MANIFEST, protocol_version=2) if SCENARIO == "wrong_version" else MANIFEST
    reply(request_id, manifest)


def search(request_id: object, params: dict) -> None:
    if SCENARIO == "hang":
        return
    if SCENARIO == "garbage":
        garbage()
    if SCENARIO == "oversized":
        write(
            b'{"jsonrpc":"2.0","id":'
            + str(request_id).encode()
            + b',"result":"'
            + b"x" * (9 << 20)
            + b'"}'
        )
    if SCENARIO == "unknown_id":
        reply(request_id + 1000, {"candidates": [], "outcome": "success"})
        if params["query"] == "only-wrong":
            return
    if SCENARIO == "invalid_candidate":
        reply(request_id, {"candidates": [candidate(rank=0), candidate()], "outcome": "success"})
        return
    if SCENARIO == "invalid_result":
        reply(request_id, {"candidates": [candidate()]})
        return
    reply(
        request_id,
        {
            "candidates": [candidate()],
            "outcome": "success",
            "diagnostics": {"pid": os.getpid(), "deadline": params["deadline"]},
        },
    )


def health(request_id: object) -> None:
    STATE["probes"] += 1
    if SCENARIO == "slow_health":
        time.sleep(60)
    status = {"status": "healthy", "checked_at": "2026-01-01T00:00:00Z", "coverage": "complete"}
    if SCENARIO == "chatter":  # a key that collides with the broker's own capture
        status["diagnostics"] = {"violations": "counted by the adapter"}
    if SCENARIO == "slow_refresh" and not STATE.get("refreshed"):
        status.update(status="degraded", coverage="partial", diagnostics={"detail": "12 notes left"})
    reply(request_id, dict(status, record_count=STATE["probes"]))


def main() -> None:
    record_pid(os.getpid())
    if SCENARIO == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        record_pid(subprocess.Popen(["sleep", "60"]).pid)
    for line in sys.stdin:
        frame = json.loads(line)
        method, request_id = frame.get("method"), frame.get("id")
        if method == "recall/initialize":
            initialize(request_id, frame["params"])
        elif method == "recall/search":
            search(request_id, frame["params"])
        elif method == "recall/cancel":
            if SCENARIO == "unknown_id":
                error(frame["params"]["id"], -32007, "request cancelled")
        elif method == "recall/refresh" and SCENARIO == "slow_refresh":
            time.sleep(4)
            STATE["refreshed"] = 1
            health(request_id)
        elif method in ("recall/health", "recall/refresh"):
            health(request_id)
        elif method == "recall/shutdown":
            reply(request_id, {})
            return
    if SCENARIO == "hang":
        time.sleep(60)


if __name__ == "__main__":
    main()
