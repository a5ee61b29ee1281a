"""Cold and resident queries over the notes corpus, and ``recall serve`` under concurrent clients.

Registered in ``run.py``; per corpus size it measures, on the notes source
alone (``--scope source=notes`` in the ``cli`` profile, whose index the
refresh step built):

* cold ``recall query``: wall time of the whole command, in process
  (``RECALL_DAEMON=0``), adapter started and stopped each time;
* the first command when no broker runs (in process; it starts one as it ends),
  and the first one the broker then answers, its adapters started as it began
  listening but yet to search;
* resident ``recall query``: wall time of the command answered by the
  resident broker (started with ``recall daemon start``, stopped afterwards),
  for the benchmark's questions and for questions of rarer words
  (``SPECIFIC_QUERIES``);
* ``recall serve`` with 8 concurrent clients x 50 queries, each client on its
  own keep-alive connection: errors (any status but 200 and 206, or a
  connection failure), partial answers (206: degraded coverage, as an adapter
  answers until its folder is watched and swept once) and latency percentiles,
  from the server's start (its adapter begins watching the folder at once, and
  sweeps it once to be sure of it, during this load) and again once the notes source reports its folder watched;
* peak RSS of the process tree: the cold query's (``/proc`` sampled every
  2 ms, the command and its adapter) and the server's while under that load.

Targets are the issue's table for 10k and 100k notes.
"""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Any

from isolation import stop_group
from measures import median, p95, tree_rss_kb

QUERIES = ("postgres backup restore", "wireguard certificate renewal", "grafana alert disk")
# Each of the generated notes' topic words (QUERIES) is in about 38% of all chunks, so
# those questions make the index rank a third of the folder. Content words of real notes
# are rarer: these filler words are each in 1-3% of the chunks, and the rows they give
# show the same resident broker on questions shaped like that.
SPECIFIC_QUERIES = ("w00300 w00520", "w00410 w00980 w00330", "w00600 w00750")
CLIENTS = 8
WATCH_WAIT_S = 120.0
FIRST_COMMAND_RUNS = 3
QUERIES_PER_CLIENT = 50
NAME = "resident"

TARGETS: dict[str, dict[str, str]] = {
    "10k": {"cold": "≤ 120 ms median", "resident": "≤ 25 ms median"},
    "100k": {"cold": "≤ 300 ms median", "resident": "≤ 50 ms median",
             "serve": "0 errors, p95 ≤ 150 ms", "rss": "≤ 150 MB"},
}


def measure(env: Any, runs: Any) -> dict[str, Any]:
    """``env`` is run.py's Env (private XDG home, indexes built); ``runs`` its Runs."""
    notes_only = ("--profile", "cli", "--scope", "source=notes", "--json")
    cold = [env.run("query", QUERIES[i % len(QUERIES)], *notes_only)[0] for i in range(runs.query_runs)]
    return {
        "cold_median_ms": median(cold),
        "cold_p95_ms": p95(cold),
        "cold_peak_rss_tree_mb": _cold_tree_rss(env, notes_only),
        **_resident(env, runs, notes_only),
        **_concurrent_serve(env, runs),
    }


def rows(size: str, result: dict[str, Any]) -> list[tuple[str, str, str]]:
    target = TARGETS.get(size, {})
    return [
        (f"[{size}] cold query, notes only", f"{result['cold_median_ms']} ms median, "
         f"{result['cold_p95_ms']} ms p95", target.get("cold", "")),
        (f"[{size}] first query, no broker running / the next, broker just started",
         f"{result['first_command_ms']} ms / {result['after_start_ms']} ms median", ""),
        (f"[{size}] resident query (CLI wall), notes only", f"{result['resident_median_ms']} ms median, "
         f"{result['resident_p95_ms']} ms p95", target.get("resident", "")),
        (f"[{size}] resident query, words in 1-3% of chunks", f"{result['resident_specific_median_ms']} ms"
         f" median, {result['resident_specific_p95_ms']} ms p95", ""),
        (f"[{size}] serve, {result['serve_clients']} clients x {result['serve_queries_per_client']}, "
         "from the server's start",
         f"{result['serve_errors']} errors, {result['serve_partial']} partial, "
         f"p50 {result['serve_p50_ms']} ms, p95 {result['serve_p95_ms']} ms",
         target.get("serve", "")),
        (f"[{size}] the same, once the folder is watched", _watched_row(result), target.get("serve", "")),
        (f"[{size}] peak RSS, tree (cold query / serve under load)",
         f"{result['cold_peak_rss_tree_mb']} MB / {result['serve_peak_rss_tree_mb']} MB", target.get("rss", "")),
    ]


def _watched_row(result: dict[str, Any]) -> str:
    if result.get("serve_watched_p95_ms") is None:
        return f"never watched within {WATCH_WAIT_S:g} s"
    return (f"{result['serve_watched_errors']} errors, {result['serve_watched_partial']} partial, p50 {result['serve_watched_p50_ms']} ms, "
            f"p95 {result['serve_watched_p95_ms']} ms (watched {result['serve_watched_after_s']} s after that load)")


def _resident(env: Any, runs: Any, flags: tuple[str, ...]) -> dict[str, Any]:
    runtime = tempfile.mkdtemp(prefix="rb", dir="/tmp")  # socket paths are bounded: keep it short
    resident_env = {**env.vars, "RECALL_DAEMON": "1", "XDG_RUNTIME_DIR": runtime}
    walls: list[float] = []
    specific: list[float] = []
    first: list[float] = []
    after_start: list[float] = []
    codes: set[int] = set()
    try:
        # A command that finds no broker runs in process and starts one as it ends: the
        # broker is waited for, and its adapter searches for the first time next.
        for _ in range(FIRST_COMMAND_RUNS):
            _timed(env, resident_env, "daemon", "stop")
            first.append(_timed(env, resident_env, "query", QUERIES[1], *flags)[0])
            if _timed(env, resident_env, "daemon", "start")[1] != 0:
                raise SystemExit("bench: recall daemon start failed")
            after_start.append(_timed(env, resident_env, "query", QUERIES[0], *flags)[0])
        for index in range(max(runs.query_runs, 5)):
            wall, code = _timed(env, resident_env, "query", QUERIES[index % len(QUERIES)], *flags)
            walls.append(wall)
            codes.add(code)
        for index in range(max(runs.query_runs, 5)):
            wall, code = _timed(env, resident_env, "query", SPECIFIC_QUERIES[index % len(SPECIFIC_QUERIES)],
                                *flags)
            specific.append(wall)
            codes.add(code)
    finally:
        _timed(env, resident_env, "daemon", "stop")
        shutil.rmtree(runtime, ignore_errors=True)
    return {"first_command_ms": median(first), "after_start_ms": median(after_start),
            "resident_median_ms": median(walls), "resident_p95_ms": p95(walls),
            "resident_specific_median_ms": median(specific), "resident_specific_p95_ms": p95(specific),
            "resident_exit_codes": sorted(codes)}


def _timed(env: Any, variables: dict[str, str], *args: str) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run([*env.recall, *args], env=variables, cwd=env.home, capture_output=True)
    return (time.perf_counter() - started) * 1000, done.returncode


def _concurrent_serve(env: Any, runs: Any) -> dict[str, Any]:
    """The load twice: from the server's start (its adapter begins watching the folder
    meanwhile, and sweeps it once to be sure of it), and again once the folder is watched."""
    server = subprocess.Popen(
        [*env.recall, "serve", "--addr", "127.0.0.1:0", "--profile", "cli"],
        env=env.vars, cwd=env.home, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    per_client = QUERIES_PER_CLIENT if runs.serve_runs >= QUERIES_PER_CLIENT else runs.serve_runs
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().decode().rsplit(":", 1)[1])
        warm = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        _post(warm, QUERIES[0])  # starts the adapter
        warm.close()
        result = _load(server.pid, port, per_client, "serve")
        waited = _until_watched(port)
        result["serve_watched_after_s"] = waited
        if waited is not None:
            watched = _load(server.pid, port, per_client, "serve_watched")
            result.update({key: value for key, value in watched.items() if "rss" not in key})
        return result
    finally:
        stop_group(server)


def _load(pid: int, port: int, per_client: int, prefix: str) -> dict[str, Any]:
    """``CLIENTS`` clients at once, each on its own keep-alive connection."""
    latencies: list[float] = []
    errors: list[str] = []
    partial = [0]  # 206: answered with degraded coverage (an adapter not yet watching, say)
    sampling = threading.Event()
    peak = [0]

    def sample() -> None:
        while not sampling.is_set():
            peak[0] = max(peak[0], tree_rss_kb(pid))
            time.sleep(0.002)

    def client(number: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for index in range(per_client):
            started = time.perf_counter()
            try:
                status = _post(connection, QUERIES[(number + index) % len(QUERIES)])
            except (OSError, http.client.HTTPException) as exc:
                errors.append(type(exc).__name__)
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                continue
            latencies.append((time.perf_counter() - started) * 1000)
            if status == 206:
                partial[0] += 1
            elif status != 200:
                errors.append(str(status))
        connection.close()

    sampler = threading.Thread(target=sample)
    sampler.start()
    clients = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join()
    sampling.set()
    sampler.join()
    return {
        f"{prefix}_clients": CLIENTS,
        f"{prefix}_queries_per_client": per_client,
        f"{prefix}_errors": len(errors),
        f"{prefix}_error_kinds": sorted(set(errors)),
        f"{prefix}_partial": partial[0],
        f"{prefix}_p50_ms": median(latencies),
        f"{prefix}_p95_ms": p95(latencies),
        f"{prefix}_peak_rss_tree_mb": round(peak[0] / 1024, 1),
    }


def _until_watched(port: int, limit_s: float = WATCH_WAIT_S) -> float | None:
    """Seconds until the notes source reports its folder watched; None past ``limit_s``."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        while time.perf_counter() - started < limit_s:
            connection.request("GET", "/v1/sources")
            sources = json.loads(connection.getresponse().read())["sources"]
            notes = next(source for source in sources if source["source_id"] == "notes")
            if notes.get("health", {}).get("diagnostics", {}).get("freshness", {}).get("mode") == "watched":
                return round(time.perf_counter() - started, 1)
            time.sleep(0.25)
    finally:
        connection.close()
    return None


def _post(connection: http.client.HTTPConnection, query: str) -> int:
    payload = json.dumps({"query": query, "scope": {"source_ids": ["notes"]}}).encode()
    connection.request("POST", "/v1/query", payload, {"Content-Type": "application/json"})
    reply = connection.getresponse()
    reply.read()
    return reply.status


def _cold_tree_rss(env: Any, flags: tuple[str, ...]) -> float | None:
    command = subprocess.Popen([*env.recall, "query", QUERIES[0], *flags], env=env.vars, cwd=env.home,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while command.poll() is None:
        peak = max(peak, tree_rss_kb(command.pid))
        time.sleep(0.002)
    return round(peak / 1024, 1) if peak else None
