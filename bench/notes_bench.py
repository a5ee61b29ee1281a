"""Measure the notes adapter on a generated folder: build, incremental update, cold start.

    .venv/bin/python bench/notes_bench.py --notes 10000

Generates N synthetic markdown notes (about 4 KB each) in a temporary folder,
then drives a real ``python -m adapters.notes`` process over stdio and prints
timings in milliseconds. Numbers, not assertions: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import accumulate
from pathlib import Path
from typing import Any

DEADLINE = "2099-01-01T00:00:00Z"
REPO = Path(__file__).resolve().parents[1]
TOPICS = (
    "backup restore postgres migration pgbackrest restic replica wal archive vacuum "
    "gitea runner cache disk alert grafana prometheus certificate caddy wireguard proxmox "
    "ceph release checklist hotfix rollback incident handover escalation pager"
).split()


def generate(root: Path, count: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    words = [f"w{n:05d}" for n in range(30_000)]
    # cumulative once: choices() would otherwise re-add 30k weights for every sentence
    cumulative = list(accumulate(1 / (rank + 1) for rank in range(len(words))))
    total = 0
    for index in range(count):
        folder = root / f"area{index % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"# Note {index} about {rng.choice(TOPICS)}", ""]
        for section in range(rng.randint(3, 6)):
            lines += [f"## Section {section} {rng.choice(TOPICS)}", ""]
            for _ in range(rng.randint(5, 9)):
                sentence = rng.choices(words, cum_weights=cumulative, k=16) + rng.sample(TOPICS, 2)
                rng.shuffle(sentence)
                lines.append(" ".join(sentence) + ".")
            lines.append("")
        text = "\n".join(lines)
        (folder / f"note-{index:06d}.md").write_text(text)
        total += len(text)
    return total


class Client:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "adapters.notes"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.next_id += 1
        frame = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]  # type: ignore[no-any-return]

    def initialize(self, root: Path, workdir: Path) -> dict[str, Any]:
        return self.call(
            "recall/initialize",
            {
                "protocol_version_min": 1,
                "protocol_version_max": 1,
                "workdir": str(workdir),
                "source_id": "notes",
                "location": str(root),
            },
        )

    def search(self, query: str) -> dict[str, Any]:
        params = {"query": query, "filters": {}, "limit": 20, "deadline": DEADLINE}
        return self.call("recall/search", params)

    def close(self) -> None:
        self.call("recall/shutdown", {})
        self.proc.wait(timeout=10)


def timed(action: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return (time.perf_counter() - started) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    args = parser.parse_args()
    queries = [
        "how do we restore the postgres backup",
        "pgbackrest wal archive",
        "certificate caddy",
        "note-004242.md",
        "what happened during the gitea incident handover",
    ]
    with tempfile.TemporaryDirectory(prefix="notes-bench-") as tmp:
        root, workdir = Path(tmp) / "notes", Path(tmp) / "work"
        size = generate(root, args.notes)
        print(f"corpus: {args.notes} notes, {size / 1e6:.1f} MB")

        client = Client()
        build_ms, _ = timed(lambda: client.initialize(root, workdir))
        index_mb = sum(f.stat().st_size for f in workdir.iterdir()) / 1e6
        print(f"full build (spawn + handshake): {build_ms:.0f} ms, index {index_mb:.1f} MB")
        warm = [timed(lambda q=q: client.search(q))[0] for q in queries for _ in range(3)]
        print(f"warm search (incl. folder re-check): median {statistics.median(warm):.1f} ms, "
              f"max {max(warm):.1f} ms")

        target = root / "area07" / "note-000007.md"
        target.write_text(target.read_text() + "\nThe zanzibar failover was rehearsed.\n")
        changed_ms, result = timed(lambda: client.search("zanzibar failover"))
        diag = result["diagnostics"]
        print(f"one file changed, re-indexed and answered: {changed_ms:.1f} ms "
              f"(read {diag['files_read']}, reindexed {diag['files_reindexed']}, "
              f"sync {diag['sync_ms']} ms), hit: {result['candidates'][0]['locator']}")
        refresh_ms, _ = timed(lambda: client.call("recall/refresh", {"deadline": DEADLINE}))
        print(f"refresh, nothing changed: {refresh_ms:.1f} ms")
        full_ms, _ = timed(
            lambda: client.call("recall/refresh", {"deadline": DEADLINE, "full": True})
        )
        print(f"refresh full=true (rebuild): {full_ms:.0f} ms")
        client.close()

        for attempt in range(3):
            fresh = Client()
            handshake_ms, _ = timed(lambda fresh=fresh: fresh.initialize(root, workdir))
            first_ms, _ = timed(lambda fresh=fresh: fresh.search(queries[0]))
            fresh.close()
            print(f"fresh process #{attempt + 1}: spawn + handshake {handshake_ms:.0f} ms, "
                  f"first search {first_ms:.0f} ms")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak adapter RSS: {peak:.0f} MB")


if __name__ == "__main__":
    main()
