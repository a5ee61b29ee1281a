"""Benchmark recall end to end with the real ``recall`` command, and print a table.

    .venv/bin/python bench/run.py                      # 1k corpus, a few minutes
    .venv/bin/python bench/run.py --sizes 10k,100k --json-out bench/latest.json
    .venv/bin/python bench/run.py --smoke              # tiny corpus, for CI

Per corpus size it generates (once, cached under --workdir) a notes folder, a
todo.txt and an mbox, configures them as three sources (plus the sample notes
as a fourth, for ``recall serve``) under a private XDG directory, and measures:

* refresh: the first build of every index (``full``), then one changed note
  (``incremental``), both as wall time of ``recall refresh``;
* cold ``recall query --json`` over notes + tasks + mbox: wall time of the
  whole command (three adapter processes started, searched and stopped), and
  the CPU time it used across all its processes (``getrusage`` of children),
  which is steadier than wall time on a busy machine;
* peak RSS of one cold query: the largest single process (``getrusage
  RUSAGE_CHILDREN`` in a wrapper that runs the query) and the whole process
  tree (``/proc`` sampled every 2 ms, summed over recall and its adapters);
* broker overhead: ``elapsed_ns`` of ``recall query --json --explain`` minus
  the slowest source's ``elapsed_ns`` (cold, so it includes adapter start-up)
  and the same from ``recall serve`` with four warm sources;
* ``recall serve`` query latency (client wall time, keep-alive connection),
  and the resident mode: ``recall query --json`` with ``RECALL_SERVER`` set;
* ``recall --help`` wall time (the cost of starting the command at all);
* each module named in ``EXTRA_MEASURES`` (``resident.py``: cold and resident
  notes queries, ``recall serve`` under 8 concurrent clients, process-tree RSS);
* ``indexing.py``'s measures for each size (first build through ``recall refresh``
  after a kill, an edit seen warm and cold, a bulk edit, peak RSS), unless
  ``--no-indexing`` or ``--smoke``; with ``--sizes 10k,100k`` the table then has a
  row for every target of the issue that set them;
* ``python -c pass``, the machine's yardstick: the floor under every command.

Every command runs in process (``RECALL_DAEMON=0``) unless a measure says otherwise,
after the checkout's modules are compiled to bytecode, as an installed package's are.

Numbers, never assertions: run it on an idle machine and compare runs made on
the same one. Load average is recorded with every run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus, ensure  # noqa: E402
from isolation import private_env, stop_group, write_bytecode  # noqa: E402
from measures import median, p95, tree_rss_kb  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLE_NOTES = REPO / "examples" / "sample" / "notes"
QUERIES = ("postgres backup restore", "wireguard certificate renewal", "grafana alert disk")

# size name -> (notes, tasks, mbox messages)
SIZES: dict[str, tuple[int, int, int]] = {
    "smoke": (30, 30, 30),
    "1k": (1_000, 1_000, 1_000),
    "10k": (10_000, 10_000, 10_000),
    "100k": (100_000, 10_000, 10_000),
}
# Modules beside this script, each with NAME, measure(env, runs) -> dict and
# rows(size, result) -> [(measure, result, target)]; their rows follow the table's.
EXTRA_MEASURES = ("resident",)
CLI_SOURCES = ("notes", "tasks", "mail")
SERVE_SOURCES = ("notes", "tasks", "mail", "sample")

RSS_WRAPPER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)
"""


@dataclass
class Runs:
    query_runs: int
    serve_runs: int
    help_runs: int
    incremental_runs: int


# ---------------------------------------------------------------------------
# Environment and configuration


class Env:
    """A private XDG home with a configuration naming the corpus sources."""

    def __init__(self, home: Path, corpus: Corpus, recall: list[str]) -> None:
        self.home = home
        self.corpus = corpus
        self.recall = recall
        self.vars = private_env(home)

    def write_config(self) -> None:
        sources = {
            "notes": ("notes", self.corpus.notes, "indexed"),
            "tasks": ("tasks", self.corpus.todo, "live"),
            "mail": ("gmail", self.corpus.mbox, "indexed"),
            "sample": ("notes", SAMPLE_NOTES, "indexed"),
        }
        lines = ['[defaults]\nprofile = "cli"\n']
        for number, (source_id, (adapter, location, freshness)) in enumerate(sources.items()):
            lines.append(
                "[[sources]]\n"
                f'source_uid = "BENCH{number:011d}"\n'
                f'source_id = "{source_id}"\n'
                f'adapter = "{adapter}"\n'
                f'location = "{location}"\n'
                'location_kind = "path"\n'
                f'freshness_mode = "{freshness}"\n'
                'sensitivity = "internal"\n'
            )
        lines.append(f"[profiles.cli]\nsources = {json.dumps(list(CLI_SOURCES))}\n")
        lines.append(f"[profiles.serve]\nsources = {json.dumps(list(SERVE_SOURCES))}\n")
        path = self.home / "config" / "recall" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines))

    def run(
        self, *args: str, check: bool = False, server: str | None = None
    ) -> tuple[float, subprocess.CompletedProcess[bytes]]:
        env = {**self.vars, "RECALL_SERVER": server} if server else self.vars
        started = time.perf_counter()
        done = subprocess.run([*self.recall, *args], env=env, cwd=self.home, capture_output=True)
        elapsed = time.perf_counter() - started
        if check and done.returncode != 0:
            raise SystemExit(
                f"bench: recall {' '.join(args)} exited {done.returncode}: "
                f"{done.stderr.decode(errors='replace').strip()[-400:]}"
            )
        return elapsed * 1000, done


# ---------------------------------------------------------------------------
# Measurements


def refresh(env: Env, runs: Runs) -> dict[str, Any]:
    full_ms, done = env.run("refresh", "--profile", "cli", "--json", check=True)
    per_source = {s["source_id"]: _ms(s.get("elapsed_ns")) for s in json.loads(done.stdout)["sources"]}
    notes = sorted(env.corpus.notes.rglob("*.md"))
    incremental = []
    incremental_source = []
    for index in range(runs.incremental_runs):
        changed = notes[(index * 7919) % len(notes)]
        with changed.open("a") as handle:
            handle.write(f"\nEdited for the benchmark, pass {index}: postgres restore drill.\n")
        wall, done = env.run("refresh", "--profile", "cli", "--source", "notes", "--json", check=True)
        incremental.append(wall)
        report = json.loads(done.stdout)["sources"][0]
        incremental_source.append(_ms(report.get("elapsed_ns")))
    env.run("refresh", "--profile", "serve", "--json", check=True)  # indexes are kept per profile
    return {
        "full_ms": round(full_ms, 1),
        "full_by_source_ms": per_source,
        "incremental_ms": median(incremental),
        "incremental_source_ms": median(incremental_source),
    }


def cold_query(env: Env, runs: Runs) -> dict[str, Any]:
    walls, cpus, codes = [], [], []
    for index in range(runs.query_runs):
        before = _children_cpu_ms()
        wall, done = env.run("query", QUERIES[index % len(QUERIES)], "--json")
        cpus.append(_children_cpu_ms() - before)
        walls.append(wall)
        codes.append(done.returncode)
    overheads, slowest = [], []
    for index in range(max(3, runs.query_runs // 3)):
        _, done = env.run("query", QUERIES[index % len(QUERIES)], "--json", "--explain")
        split = _overhead(json.loads(done.stdout))
        if split is not None:
            overheads.append(split[0])
            slowest.append(split[1])
    return {
        "median_ms": median(walls),
        "p95_ms": p95(walls),
        "runs": len(walls),
        "cpu_ms": median(cpus),
        "exit_codes": sorted(set(codes)),
        "overhead_ms": median(overheads),
        "slowest_source_ms": median(slowest),
        **peak_rss(env),
    }


def peak_rss(env: Env) -> dict[str, Any]:
    """One cold query: the largest single process, and the sampled sum over the tree."""
    wrapper = subprocess.Popen(
        [sys.executable, "-c", RSS_WRAPPER, *env.recall, "query", QUERIES[0], "--json"],
        env=env.vars,
        cwd=env.home,
        stdout=subprocess.PIPE,
    )
    tree_peak = 0
    while wrapper.poll() is None:
        tree_peak = max(tree_peak, tree_rss_kb(wrapper.pid))
        time.sleep(0.002)
    out = wrapper.communicate()[0].decode().split()
    return {
        "peak_rss_process_mb": round(int(out[0]) / 1024, 1) if out else None,
        "peak_rss_tree_mb": round(tree_peak / 1024, 1) if tree_peak else None,
    }


def serve(env: Env, runs: Runs) -> dict[str, Any]:
    server = subprocess.Popen(
        [*env.recall, "serve", "--addr", "127.0.0.1:0", "--profile", "serve"],
        env=env.vars,
        cwd=env.home,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        port = _served_port(server)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for index in range(3):  # the first query starts the adapters; then they are warm
            _post(connection, QUERIES[index % len(QUERIES)])
        walls, overheads, outcomes = [], [], set()
        for index in range(runs.serve_runs):
            started = time.perf_counter()
            body = _post(connection, QUERIES[index % len(QUERIES)])
            walls.append((time.perf_counter() - started) * 1000)
            outcomes.add(body.get("outcome"))
            split = _overhead(body)
            if split is not None:
                overheads.append(split[0])
        connection.close()
        resident, resident_codes = [], set()
        for index in range(runs.query_runs):
            wall, done = env.run("query", QUERIES[index % len(QUERIES)], "--json", "--profile", "serve",
                                 server=f"http://127.0.0.1:{port}")
            resident.append(wall)
            resident_codes.add(done.returncode)
        return {
            "sources": len(SERVE_SOURCES),
            "p50_ms": median(walls),
            "p95_ms": p95(walls),
            "runs": len(walls),
            "outcomes": sorted(o for o in outcomes if o),
            "overhead_ms": median(overheads),
            "resident_cli_median_ms": median(resident),
            "resident_cli_p95_ms": p95(resident),
            "resident_cli_exit_codes": sorted(resident_codes),
        }
    finally:
        stop_group(server)


def interpreter_time(recall: Path, runs: Runs) -> dict[str, Any]:
    """How long the Python that runs ``recall`` takes to start and exit doing nothing: the
    machine's yardstick, and the floor under every command measured here."""
    python = recall.with_name("python")
    walls = []
    for _ in range(runs.help_runs):
        started = time.perf_counter()
        subprocess.run([str(python if python.exists() else sys.executable), "-c", "pass"], check=True)
        walls.append((time.perf_counter() - started) * 1000)
    return {"median_ms": median(walls), "runs": len(walls)}


def help_time(env: Env, runs: Runs) -> dict[str, Any]:
    walls = [env.run("--help", check=True)[0] for _ in range(runs.help_runs)]
    return {"median_ms": median(walls), "p95_ms": p95(walls), "runs": len(walls)}


# ---------------------------------------------------------------------------
# Helpers


def _overhead(response: dict[str, Any]) -> tuple[float, float] | None:
    """(broker overhead, slowest source) in ms, from a response's elapsed fields."""
    reports = [s for s in response.get("source_outcomes") or [] if s.get("elapsed_ns")]
    if not reports or not response.get("elapsed_ns"):
        return None
    slowest = max(s["elapsed_ns"] for s in reports)
    return (response["elapsed_ns"] - slowest) / 1e6, slowest / 1e6


def _post(connection: http.client.HTTPConnection, query: str) -> dict[str, Any]:
    payload = json.dumps({"query": query}).encode()
    connection.request("POST", "/v1/query", payload, {"Content-Type": "application/json"})
    reply = connection.getresponse()
    body = reply.read()
    if reply.status >= 500 or not body:
        raise SystemExit(f"bench: recall serve answered {reply.status}: {body[:300]!r}")
    return json.loads(body)  # type: ignore[no-any-return]


def _served_port(server: subprocess.Popen[bytes]) -> int:
    assert server.stdout is not None
    line = server.stdout.readline().decode()
    found = re.search(r"http://[^\s]+:(\d+)", line)
    if not found:
        error = server.stderr.read().decode() if server.stderr else ""
        raise SystemExit(f"bench: recall serve did not start: {line.strip()} {error.strip()[-400:]}")
    return int(found.group(1))


def _children_cpu_ms() -> float:
    """User + system CPU of every finished child and its descendants, in ms."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def _ms(ns: Any) -> float | None:
    return round(ns / 1e6, 1) if isinstance(ns, int | float) else None


# ---------------------------------------------------------------------------
# Driver


def bench_size(name: str, workdir: Path, recall: list[str], runs: Runs) -> dict[str, Any]:
    notes, tasks, messages = SIZES[name]
    started = time.perf_counter()
    corpus = ensure(workdir / "corpus" / name, notes, tasks, messages)
    generated_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix=f"recall-bench-{name}-", dir=workdir) as home:
        env = Env(Path(home), corpus, recall)
        env.write_config()
        result: dict[str, Any] = {
            "corpus": {"notes": notes, "tasks": tasks, "messages": messages,
                       "generate_s": round(generated_s, 1)},
            "refresh": refresh(env, runs),
            "cold_query": cold_query(env, runs),
            "serve": serve(env, runs),
        }
        for extra in extra_measures():
            print(f"bench: size {name}: {extra.NAME} ...", file=sys.stderr, flush=True)
            result[extra.NAME] = extra.measure(env, runs)
    return result


def extra_measures() -> list[Any]:
    from importlib import import_module

    return [import_module(name) for name in EXTRA_MEASURES]


def table(report: dict[str, Any]) -> str:
    rows = [
        ("python -c pass (the machine's yardstick)", f"{report['interpreter']['median_ms']} ms median", ""),
        ("recall --help", f"{report['help']['median_ms']} ms median", "≤ 150 ms"),
    ]
    for name, size in report["sizes"].items():
        q, r, s = size["cold_query"], size["refresh"], size["serve"]
        rows += [
            (f"[{name}] cold query, 3 sources", f"{q['median_ms']} ms median, {q['p95_ms']} ms p95",
             "≤ 300 ms median"),
            (f"[{name}] cold query CPU, all processes", f"{q['cpu_ms']} ms", ""),
            (f"[{name}] peak RSS (process / tree)",
             f"{q['peak_rss_process_mb']} MB / {q['peak_rss_tree_mb']} MB", "≤ 100 MB"),
            (f"[{name}] overhead beyond slowest (cold)",
             f"{q['overhead_ms']} ms (slowest source {q['slowest_source_ms']} ms)", ""),
            (f"[{name}] full refresh", f"{r['full_ms']} ms", "≤ 10 s at 10k"),
            (f"[{name}] incremental refresh", f"{r['incremental_ms']} ms "
             f"(notes source {r['incremental_source_ms']} ms)", "≤ 300 ms"),
            (f"[{name}] serve, {s['sources']} warm sources", f"{s['p50_ms']} ms p50, {s['p95_ms']} ms p95",
             "p50 ≤ 15 ms"),
            (f"[{name}] overhead beyond slowest (serve)", f"{s['overhead_ms']} ms", "≤ 10 ms"),
            (f"[{name}] resident CLI query (RECALL_SERVER)",
             f"{s['resident_cli_median_ms']} ms median, {s['resident_cli_p95_ms']} ms p95", "≤ 300 ms median"),
        ]
        for extra in extra_measures():
            if extra.NAME in size:
                rows += extra.rows(name, size[extra.NAME])
    width = [max(len(row[i]) for row in rows) for i in range(3)]
    head = ("measure", "result", "target")
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, width, strict=True))]
    lines.append("  ".join("-" * w for w in width))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, width, strict=True)) for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1k", help=f"comma-separated, of {', '.join(SIZES)} (default 1k)")
    parser.add_argument("--smoke", action="store_true", help="tiny corpus and few runs, for CI")
    parser.add_argument("--runs", type=int, default=15, help="cold queries per size (default 15)")
    parser.add_argument("--serve-runs", type=int, default=50, help="served queries per size (default 50)")
    parser.add_argument("--json-out", type=Path, metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--indexing", action=argparse.BooleanOptionalAction, default=None,
                        help="also run bench/indexing.py (build, resume, freshness) for each size"
                             " (default: on, except with --smoke)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "recall-bench",
                        help="where corpora are cached (default: $TMPDIR/recall-bench)")
    parser.add_argument("--recall", default=str(Path(sys.executable).with_name("recall")),
                        help="the recall command to measure (default: the one beside this python)")
    parser.add_argument("--postgres", type=int, metavar="CHUNKS",
                        help="also measure the postgres source at this many chunks (bench/postgres.py)")
    args = parser.parse_args()

    if args.smoke:
        sizes = ["smoke"]
        runs = Runs(query_runs=2, serve_runs=3, help_runs=2, incremental_runs=1)
    else:
        sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
        unknown = [s for s in sizes if s not in SIZES]
        if unknown:
            parser.error(f"unknown size(s) {', '.join(unknown)}; choose from {', '.join(SIZES)}")
        runs = Runs(query_runs=args.runs, serve_runs=args.serve_runs, help_runs=10, incremental_runs=3)
    if args.indexing is None:
        args.indexing = not args.smoke
    args.workdir.mkdir(parents=True, exist_ok=True)
    recall = [args.recall]
    write_bytecode()

    report: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": list(os.getloadavg()),
        },
        "interpreter": interpreter_time(Path(args.recall), runs),
        "help": help_time(Env(args.workdir, ensure_empty(args.workdir), recall), runs),
        "sizes": {},
    }
    for name in sizes:
        print(f"bench: size {name} ...", file=sys.stderr, flush=True)
        report["sizes"][name] = bench_size(name, args.workdir, recall, runs)
    if args.indexing:
        import indexing

        report["indexing"] = indexing.run(sizes, args.workdir / "indexing")
    if args.postgres:
        import postgres

        report["postgres"] = postgres.bench(args.postgres, args.workdir / "postgres", args.recall, runs.query_runs)
    report["machine"]["load_after"] = list(os.getloadavg())
    print(table(report))
    if args.indexing:
        print(indexing.table(report["indexing"]))
    if args.postgres:
        print(postgres.table(report["postgres"]))
    print(f"load average before {report['machine']['load_before'][0]:.2f}, "
          f"after {report['machine']['load_after'][0]:.2f} on {os.cpu_count()} CPUs")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n")


def ensure_empty(workdir: Path) -> Corpus:
    """A corpus layout for commands that read no sources (``--help``)."""
    from corpus import layout

    return layout(workdir / "none")


if __name__ == "__main__":
    main()
