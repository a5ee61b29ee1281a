"""Measure the postgres source at scale: a generated corpus of N chunks on a real server.

    .venv/bin/python bench/postgres.py --chunks 1000000
    .venv/bin/python bench/run.py --postgres 50000      # the same, as part of run.py's report

Generates N chunks from a seeded generator (so N names one corpus, the same rows on
every machine: 40 words drawn from a Zipf vocabulary of 30,000 plus two of the
benchmark's topic words, ten chunks per note) and loads them into the managed
corpus tables with COPY, then builds the GIN index (a bulk load; ``recall-postgres
ingest``, measured separately, keeps the index in place). Then it measures, with the real ``recall`` command:

* load: chunks per second until searchable (COPY plus index build), table and index size;
* ``recall-postgres ingest`` of a small generated folder: notes and chunks per second;
* cold queries: wall time of ``recall query --json`` (adapter started, connected,
  probed and searched, then stopped), p50 and p95;
* warm queries: client wall time against ``recall serve`` on a keep-alive
  connection, p50 and p95, and the adapter's own search time from ``--explain``.

The server is the one ``RECALL_BENCH_PG_DSN`` names (a superuser, to create the
database), or a throwaway cluster started with ``scripts/postgres-cluster.sh``.
Numbers, never assertions: compare runs made on the same, idle machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from notes_bench import TOPICS, generate  # noqa: E402

SEED = 29
CHUNKS_PER_NOTE = 10
WORDS_PER_CHUNK = 40
VOCABULARY = 30_000
START = datetime(2024, 1, 1, tzinfo=UTC)
CORPUS = "bench"
READER = "recall_bench_reader"
INGEST_NOTES = 300
QUERY_COUNT = 40


def words_and_weights() -> tuple[list[str], list[float]]:
    words = [f"w{n:05d}" for n in range(VOCABULARY)]
    cumulative: list[float] = []
    total = 0.0
    for rank in range(VOCABULARY):
        total += 1 / (rank + 1)
        cumulative.append(total)
    return words, cumulative


def chunk_rows(count: int) -> Any:
    """The corpus, row by row, in ``recall_chunks`` column order (see adapters.postgres.corpus)."""
    rng = random.Random(SEED)
    words, cumulative = words_and_weights()
    for index in range(count):
        note, ordinal = divmod(index, CHUNKS_PER_NOTE)
        topic = TOPICS[note % len(TOPICS)]
        sentence = rng.choices(words, cum_weights=cumulative, k=WORDS_PER_CHUNK) + rng.sample(TOPICS, 2)
        rng.shuffle(sentence)
        path = f"area{note % 20:02d}/note-{note:07d}.md"
        start = 1 + ordinal * 6
        yield (
            CORPUS, f"{path}#L{start}-L{start + 4}", path, ordinal,
            f"Note {note} about {topic} > Section {ordinal}", " ".join(sentence) + ".",
            START + timedelta(minutes=note), None, None, None,
        )


def queries(count: int) -> list[str]:
    """Questions of mixed selectivity: topic pairs, a topic with a mid-frequency word,
    and three mid-frequency words, drawn from their own seeded generator."""
    rng = random.Random(SEED + 1)
    words, _ = words_and_weights()
    out: list[str] = []
    for index in range(count):
        kind = index % 3
        if kind == 0:
            out.append(" ".join(rng.sample(TOPICS, 2)))
        elif kind == 1:
            out.append(f"{rng.choice(TOPICS)} {rng.choice(words[200:3000])}")
        else:
            out.append(" ".join(rng.sample(words[500:5000], 3)))
    return out


class Server:
    """The benchmark's PostgreSQL: a given one, or a throwaway cluster stopped at the end."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        admin = os.environ.get("RECALL_BENCH_PG_DSN", "")
        if not admin:
            self.folder = Path(tempfile.mkdtemp(prefix="recall-bench-pg-", dir="/tmp"))
            self.folder.chmod(0o755)
            started = subprocess.run(
                ["bash", str(REPO / "scripts" / "postgres-cluster.sh"), "start", str(self.folder / "cluster")],
                capture_output=True, text=True, timeout=300, check=True,
            )
            admin = started.stdout.strip().splitlines()[-1]
        self.admin = admin

    def dsn(self, **changes: str) -> str:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        return make_conninfo(**{**conninfo_to_dict(self.admin), **changes})

    def stop(self) -> None:
        if self.folder is not None:
            subprocess.run(["bash", str(REPO / "scripts" / "postgres-cluster.sh"), "stop", str(self.folder / "cluster")],
                           capture_output=True, timeout=120)
            subprocess.run(["rm", "-rf", str(self.folder)], check=False)


def load(server: Server, database: str, chunks: int, reader_password: str) -> dict[str, Any]:
    import psycopg
    from psycopg import sql

    from adapters.postgres.corpus import CHUNK_COLUMNS, INDEX_STATEMENT, table_statements

    with psycopg.connect(server.admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [READER]).fetchone()
        conn.execute(sql.SQL(("ALTER" if exists else "CREATE") + " ROLE {} LOGIN PASSWORD {}").format(
            sql.Identifier(READER), sql.Literal(reader_password)))
    started = time.perf_counter()
    with psycopg.connect(server.dsn(dbname=database), autocommit=True) as conn:
        for statement in table_statements("english"):
            conn.execute(statement)
        notes = (chunks + CHUNKS_PER_NOTE - 1) // CHUNKS_PER_NOTE
        with conn.cursor() as cursor:
            with cursor.copy("COPY recall_documents (corpus, path, content_sha256, title, updated_at) FROM STDIN") as copy:
                for note in range(notes):
                    copy.write_row((CORPUS, f"area{note % 20:02d}/note-{note:07d}.md", f"{note:064x}",
                                    f"Note {note}", START + timedelta(minutes=note)))
            with cursor.copy(f"COPY recall_chunks ({', '.join(CHUNK_COLUMNS)}) FROM STDIN") as copy:
                for row in chunk_rows(chunks):
                    copy.write_row(row)
        copied = time.perf_counter() - started
        conn.execute("SET maintenance_work_mem = '512MB'")
        conn.execute(INDEX_STATEMENT)
        loaded = time.perf_counter() - started
        conn.execute("VACUUM ANALYZE recall_chunks")
        conn.execute("VACUUM ANALYZE recall_documents")
        conn.execute(sql.SQL("GRANT SELECT ON recall_documents, recall_chunks TO {}").format(sql.Identifier(READER)))
        sizes = conn.execute(
            "SELECT pg_relation_size('recall_chunks'), pg_indexes_size('recall_chunks'),"
            " pg_total_relation_size('recall_chunks'), pg_total_relation_size('recall_documents')"
        ).fetchone()
    assert sizes is not None
    return {
        "chunks": chunks,
        "copy_s": round(copied, 1),
        "index_s": round(loaded - copied, 1),
        "load_s": round(loaded, 1),
        "load_chunks_per_s": round(chunks / loaded),
        "table_mb": round(sizes[0] / 2**20, 1),
        "indexes_mb": round(sizes[1] / 2**20, 1),
        "total_mb": round((sizes[2] + sizes[3]) / 2**20, 1),
    }


def ingest_rate(server: Server, database: str, workdir: Path) -> dict[str, Any]:
    """``recall-postgres ingest`` of generated notes into a corpus of its own."""
    folder = workdir / "ingest-notes"
    if not folder.exists():
        generate(folder, INGEST_NOTES)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "adapters.postgres", "ingest", str(folder), "--source", "bench-ingest", "--quiet"],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "RECALL_POSTGRES_DSN": server.dsn(dbname=database)},
        timeout=600,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"recall-postgres ingest failed: {done.stderr.strip()}")
    chunks = int(done.stdout.split(";")[1].split()[0])
    return {"notes": INGEST_NOTES, "chunks": chunks, "s": round(elapsed, 2),
            "notes_per_s": round(INGEST_NOTES / elapsed), "chunks_per_s": round(chunks / elapsed)}


def write_config(home: Path) -> dict[str, str]:
    (home / "config" / "recall").mkdir(parents=True, exist_ok=True)
    (home / "config" / "recall" / "config.toml").write_text(
        '[[sources]]\nsource_uid = "BENCHPG000000001"\nsource_id = "bench"\nadapter = "postgres"\n'
        'timeout_ms = 10000\n[sources.settings]\ndsn_env = "RECALL_BENCH_SOURCE_DSN"\n\n'
        '[profiles.default]\nsources = ["bench"]\n'
    )
    return {"XDG_CONFIG_HOME": str(home / "config"), "XDG_STATE_HOME": str(home / "state"),
            "XDG_CACHE_HOME": str(home / "cache")}


def cold(recall: str, env: dict[str, str], questions: list[str]) -> dict[str, Any]:
    """Wall time, and CPU time across the command and its adapter (steadier on a busy machine)."""
    walls, cpus = [], []
    for question in questions:
        before = _children_cpu_ms()
        started = time.perf_counter()
        done = subprocess.run([recall, "query", "--json", question], capture_output=True, text=True, env=env, timeout=120)
        walls.append((time.perf_counter() - started) * 1000)
        cpus.append(_children_cpu_ms() - before)
        if done.returncode not in (0, 2):
            raise RuntimeError(f"recall query {question!r} exited {done.returncode}: {done.stdout[-500:]}")
    return {**_percentiles(walls), "cpu_p50_ms": round(statistics.median(cpus), 1)}


def _children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def warm(recall: str, env: dict[str, str], questions: list[str]) -> dict[str, Any]:
    server = subprocess.Popen([recall, "serve", "--addr", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert server.stdout is not None
        found = re.search(r"http://[^\s]+:(\d+)", server.stdout.readline())
        if not found:
            raise RuntimeError("recall serve did not start")
        port = int(found.group(1))
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for question in questions[:5]:  # the first requests start the adapter and fill caches
            _post(connection, question)
        client_ms, search_ms = [], []
        for question in questions:
            started = time.perf_counter()
            answer = _post(connection, question)
            client_ms.append((time.perf_counter() - started) * 1000)
            outcomes = answer.get("source_outcomes") or []
            search_ms += [row["elapsed_ns"] / 1e6 for row in outcomes if row.get("elapsed_ns")]
        return {"client": _percentiles(client_ms), "search": _percentiles(search_ms)}
    finally:
        server.terminate()
        server.wait(timeout=30)


def _post(connection: http.client.HTTPConnection, question: str) -> dict[str, Any]:
    body = json.dumps({"query": question})
    connection.request("POST", "/v1/query", body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    payload = json.loads(response.read())
    if response.status >= 400:
        raise RuntimeError(f"recall serve answered {response.status}: {payload}")
    return dict(payload)


def _percentiles(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] if ordered else None
    return {"runs": len(values), "p50_ms": round(statistics.median(ordered), 1) if ordered else None,
            "p95_ms": round(p95, 1) if p95 is not None else None}


def reused(server: Server, database: str, reader_password: str) -> dict[str, Any] | None:
    """The load report of a corpus an earlier run left, or None when there is none."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(server.admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
            return None
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(READER), sql.Literal(reader_password)))
    with psycopg.connect(server.dsn(dbname=database)) as conn:
        sizes = conn.execute(
            "SELECT count(*), pg_relation_size('recall_chunks'), pg_indexes_size('recall_chunks'),"
            " pg_total_relation_size('recall_chunks') + pg_total_relation_size('recall_documents')"
            " FROM recall_chunks WHERE corpus = %s", [CORPUS]
        ).fetchone()
    assert sizes is not None
    return {"chunks": sizes[0], "reused": True, "table_mb": round(sizes[1] / 2**20, 1),
            "indexes_mb": round(sizes[2] / 2**20, 1), "total_mb": round(sizes[3] / 2**20, 1)}


def bench(chunks: int, workdir: Path, recall: str, cold_runs: int, reuse: bool = False) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    server = Server()
    try:
        database = f"recall_bench_{chunks}"
        password = secrets.token_hex(12)
        previous = reused(server, database, password) if reuse else None
        if previous is None:
            print(f"bench postgres: loading {chunks} chunks ...", file=sys.stderr, flush=True)
        report: dict[str, Any] = {"load": previous or load(server, database, chunks, password)}
        if previous is None:
            report["ingest"] = ingest_rate(server, database, workdir)
        env = {**os.environ, **write_config(workdir / "home"),
               "RECALL_BENCH_SOURCE_DSN": server.dsn(dbname=database, user=READER, password=password)}
        questions = queries(QUERY_COUNT)
        print("bench postgres: querying ...", file=sys.stderr, flush=True)
        report["cold"] = cold(recall, env, questions[:cold_runs])
        report["warm"] = warm(recall, env, questions)
        return report
    finally:
        server.stop()


def table(report: dict[str, Any]) -> str:
    load_, cold_, warm_ = report["load"], report["cold"], report["warm"]
    lines = [f"postgres source, {load_['chunks']:,} chunks"]
    if not load_.get("reused"):
        ingest = report["ingest"]
        lines += [
            f"  load (COPY, then GIN index)  {load_['load_chunks_per_s']:,} chunks/s  (COPY {load_['copy_s']} s, "
            f"index {load_['index_s']} s)",
            f"  recall-postgres ingest       {ingest['notes_per_s']} notes/s, {ingest['chunks_per_s']} chunks/s",
        ]
    return "\n".join([
        *lines,
        f"  size                         table {load_['table_mb']} MB, indexes {load_['indexes_mb']} MB, "
        f"total {load_['total_mb']} MB",
        f"  cold recall query            p50 {cold_['p50_ms']} ms  p95 {cold_['p95_ms']} ms  "
        f"(CPU p50 {cold_['cpu_p50_ms']} ms, {cold_['runs']} runs)",
        f"  warm recall serve (client)   p50 {warm_['client']['p50_ms']} ms  p95 {warm_['client']['p95_ms']} ms",
        f"  warm search (adapter)        p50 {warm_['search']['p50_ms']} ms  p95 {warm_['search']['p95_ms']} ms",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=50_000, help="corpus size in chunks (default 50000)")
    parser.add_argument("--cold-runs", type=int, default=15, help="cold queries (default 15)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "recall-bench-postgres")
    parser.add_argument("--recall", default=str(Path(sys.executable).with_name("recall")))
    parser.add_argument("--json-out", type=Path, metavar="FILE")
    parser.add_argument("--reuse", action="store_true",
                        help="query the corpus an earlier run left on RECALL_BENCH_PG_DSN's server, if any")
    args = parser.parse_args()
    report = bench(args.chunks, args.workdir, args.recall, args.cold_runs, args.reuse)
    report["load_average"] = list(os.getloadavg())
    print(table(report))
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
