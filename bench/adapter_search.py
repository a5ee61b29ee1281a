"""Warm in-process search timings of the tasks (todo.txt) and gmail (mbox) adapters.

Builds each adapter on a benchmark corpus (``bench/corpus.py``), runs every
question once to warm caches and indexes, then times ``--runs`` searches of
each. Prints the median wall time and the adapter's own ``elapsed_ms``.
``--dump FILE`` writes every result (clock fields removed) as JSON, so two
versions of an adapter can be compared for identical answers.

    .venv/bin/python bench/adapter_search.py /tmp/recall-bench/corpus/1k
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import orjson

from adapter_sdk.protocol import InitializeParams, SearchParams
from adapters.gmail.adapter import GmailAdapter
from adapters.tasks.adapter import TasksAdapter

QUESTIONS = (
    "restore drill checksum",
    "postgres replication lag",
    "certificate renewal",
    "what did we decide about the backup rotation",
    "incident",
)
CLOCK_FIELDS = ("observed_at", "confirmed_at", "elapsed_ms")


def _init(corpus: Path, workdir: Path, location: str) -> InitializeParams:
    return InitializeParams(
        protocol_version_min=1, protocol_version_max=1, workdir=str(workdir),
        source_id="bench", location=location, base_dir=str(corpus),
    )


def _params(question: str) -> SearchParams:
    return SearchParams(query=question, limit=20,
                        deadline=datetime.now(UTC) + timedelta(seconds=60))


def _search(adapter: Any, question: str) -> Any:
    if isinstance(adapter, GmailAdapter):
        return anyio.run(adapter.search, _params(question))
    return adapter.search(_params(question))


def _search_in_thread(adapter: Any, question: str) -> Any:
    """As ``_search``, but the mbox search runs in this thread, where a profiler sees it."""
    if isinstance(adapter, GmailAdapter):
        from adapters.gmail.query import parse_question

        return adapter._mbox_source().search(_params(question), parse_question(question), 20)
    return adapter.search(_params(question))


def _without_clock(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_clock(v) for k, v in value.items() if k not in CLOCK_FIELDS}
    if isinstance(value, list):
        return [_without_clock(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--profile", choices=("tasks", "gmail"))
    args = parser.parse_args()
    dumped: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        adapters: dict[str, Any] = {"tasks": TasksAdapter(), "gmail": GmailAdapter()}
        adapters["tasks"].initialize(_init(args.corpus, Path(tmp) / "tasks", "todo.txt"))
        adapters["gmail"].initialize(_init(args.corpus, Path(tmp) / "gmail", "mail.mbox"))
        for name, adapter in adapters.items():
            if args.profile and name != args.profile:
                continue
            for question in QUESTIONS:
                result = _search(adapter, question).to_wire()  # warm
                dumped[f"{name}: {question}"] = _without_clock(result)
                if args.profile:
                    continue
                walls, inside = [], []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    result = _search(adapter, question)
                    walls.append((time.perf_counter() - start) * 1000)
                    inside.append(result.diagnostics["elapsed_ms"])
                print(f"{name:6} {question[:40]:42} wall {statistics.median(walls):7.2f} ms"
                      f"  elapsed_ms {statistics.median(inside):7.2f}"
                      f"  candidates {len(result.candidates)}")
            if args.profile:
                from pyinstrument import Profiler

                profiler = Profiler(interval=0.0005)
                profiler.start()
                for _ in range(args.runs):
                    for question in QUESTIONS:
                        _search_in_thread(adapter, question)
                profiler.stop()
                print(profiler.output_text(unicode=False, color=False, show_all=False))
    if args.dump:
        args.dump.write_bytes(orjson.dumps(dumped, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
