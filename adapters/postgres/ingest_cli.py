"""``recall-postgres ingest DIR --source ID``: load a folder of notes into a managed corpus.

Progress goes to stderr while notes are written; the summary line to stdout.
The connection string comes from the environment variable ``--dsn-env``
names; it is never printed. Exit codes: 0 loaded (every note read), 1 error
(bad arguments, no connection, a database error), 3 loaded with notes that
could not be read (listed on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

DEFAULT_DSN_ENV = "RECALL_POSTGRES_DSN"
PROGRESS_EVERY_S = 1.0


def main(arguments: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="recall-postgres", description="Load notes into a managed corpus.")
    commands = parser.add_subparsers(dest="command", required=True)
    ingest = commands.add_parser(
        "ingest",
        help="load a folder of markdown notes into the managed corpus a postgres source reads",
        description="Load a folder of markdown notes into the managed corpus named --source: "
        "incremental by content hash, resumable, removing notes deleted from the folder.",
    )
    ingest.add_argument("folder", type=Path, metavar="DIR")
    ingest.add_argument("--source", required=True, metavar="ID", help="the corpus: the source id that reads it")
    ingest.add_argument(
        "--dsn-env", default=DEFAULT_DSN_ENV, metavar="NAME",
        help=f"environment variable holding the connection string (default {DEFAULT_DSN_ENV})",
    )
    ingest.add_argument("--text-config", default="english", help="text search configuration (default english)")
    ingest.add_argument("--grant", action="append", default=[], metavar="ROLE", help="grant SELECT to this role")
    ingest.add_argument("--quiet", action="store_true", help="no progress lines")
    options = parser.parse_args(arguments)
    return _ingest(options)


def _ingest(options: argparse.Namespace) -> int:
    import psycopg
    from psycopg import sql

    from adapters.postgres.corpus import IngestReport, ingest
    from adapters.postgres.errors import classify, dsn_secrets

    folder: Path = options.folder
    if not folder.is_dir():
        print(f"recall-postgres ingest: {folder} is not a folder", file=sys.stderr)
        return 1
    dsn = os.environ.get(options.dsn_env, "").strip()
    if not dsn:
        print(f"recall-postgres ingest: the environment variable {options.dsn_env} holds no connection "
              "string; export it (or name another with --dsn-env)", file=sys.stderr)
        return 1
    started = time.monotonic()
    last = [started]

    def progress(report: IngestReport) -> None:
        now = time.monotonic()
        if options.quiet or now - last[0] < PROGRESS_EVERY_S:
            return
        last[0] = now
        print(f"ingest {options.source}: {report.scanned} notes scanned, {report.written} written, "
              f"{report.chunks_written} chunks", file=sys.stderr, flush=True)

    doing = f"ingesting {folder} into corpus {options.source}"
    try:
        with psycopg.connect(dsn, autocommit=True, application_name="recall-postgres ingest") as conn:
            report = ingest(conn, folder, options.source, text_config=options.text_config, progress=progress)
            for role in options.grant:
                conn.execute(sql.SQL("GRANT SELECT ON recall_documents, recall_chunks TO {}").format(sql.Identifier(role)))
    except psycopg.Error as exc:
        print(f"recall-postgres ingest: {classify(exc, secrets=dsn_secrets(dsn), doing=doing).message}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - started
    print(
        f"corpus {options.source}: {report.scanned} notes, {report.added} added, {report.changed} changed, "
        f"{report.removed} removed, {report.unchanged} unchanged; {report.chunks_written} chunks written "
        f"in {elapsed:.1f}s"
    )
    for path, reason in report.failed:
        print(f"not loaded: {path}: {reason}", file=sys.stderr)
    return 3 if report.failed else 0
