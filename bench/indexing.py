"""Benchmark the notes index's freshness work: building, catching up, staying fresh.

    .venv/bin/python bench/indexing.py --sizes 10k,100k
    .venv/bin/python bench/indexing.py --smoke          # a tiny folder, for CI

Per size it generates (once, cached under --workdir) a notes folder with
``notes_bench.generate`` (the same notes ``bench/run.py`` uses), copies it for the
run (the edits below land in the copy, so the cached folder stays as generated)
and measures:

* ``build``: the first full build through ``recall refresh --source notes``
  (wall time), after a first ``recall refresh`` killed ``--kill-after`` seconds
  in; ``resumed_from`` is how many notes the killed one had committed and
  ``files_read`` how many the second one read (the rest was not read again);
* ``cold_edit``: one note edited, then a cold ``recall query`` for a word only
  the edit holds (wall time, and whether it was found), for an editor's save
  (write aside, rename over) and an in-place append to a recently edited note;
* ``warm_edit``: a resident adapter (one ``python -m adapters.notes`` kept
  running, watching the folder): time from an in-place append to the first
  search that finds it, searching back to back;
* ``bulk_edit``: every note appended to at once under a resident adapter:
  searches every 100 ms with a 2 s deadline until one is complete again and
  finds the edit; how many were partial, the slowest answer, and the time to
  complete;
* ``concurrent``: four searches at once against the resident adapter, wall time
  against the same four one after another;
* ``together`` (up to 10k notes): two first builds at once, two ``recall refresh``
  started together over a fresh state folder, as from two terminals: each one's
  wall time, how many notes each read (one process does the index work, so
  together they read the folder once), and whether either lost its ranker;
* ``peak_rss_mb``: the resident adapter's high-water mark (VmHWM) over all of it.

Numbers, never assertions; the load average is recorded with every run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from isolation import private_env  # noqa: E402
from measures import median  # noqa: E402
from notes_bench import generate  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RANKER_DIR = "notes-rank"  # adapters.notes.ranker.RANKER_DIR, copied with the index
SIZES = {"smoke": 300, "1k": 1_000, "10k": 10_000, "100k": 100_000}
QUERY = "postgres backup restore"
TARGETS = {
    "build": "≤ 40 s at 100k, resumable",
    "cold_edit": "≤ 400 ms at 100k",
    "warm_edit": "≤ 100 ms at 100k",
    "bulk_edit": "every answer in budget; complete ≤ 15 s at 10k",
    "peak_rss_mb": "≤ 150 MB",
}


def notes_folder(workdir: Path, size: str) -> Path:
    """The generated folder for ``size``, made once."""
    root = workdir / f"notes-{size}"
    marker = root / ".complete"
    stamp = f"{SIZES[size]}\n"
    if not (marker.exists() and marker.read_text() == stamp):
        shutil.rmtree(root, ignore_errors=True)
        generate(root / "notes", SIZES[size])
        marker.write_text(stamp)
    return root / "notes"


# ---------------------------------------------------------------------------
# The real command, with a notes-only configuration


class Recall:
    def __init__(self, home: Path, notes: Path) -> None:
        self.home = home
        self.env = private_env(home)
        config = home / "config" / "recall" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            '[[sources]]\nsource_uid = "BENCHNOTES001"\nsource_id = "notes"\nadapter = "notes"\n'
            f'location = "{notes}"\nsensitivity = "internal"\ntimeout_ms = 2000\n'
            '[profiles.default]\nsources = ["notes"]\nmax_sensitivity = "internal"\n'
        )
        self.command = [str(Path(sys.executable).with_name("recall"))]

    def run(self, *args: str) -> tuple[float, subprocess.CompletedProcess[bytes]]:
        started = time.perf_counter()
        done = subprocess.run([*self.command, *args], env=self.env, cwd=self.home, capture_output=True)
        return (time.perf_counter() - started) * 1000, done

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen([*self.command, *args], env=self.env, cwd=self.home,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)


def build(recall: Recall, kill_after: float) -> dict[str, Any]:
    killed = recall.start("refresh", "--source", "notes", "--json")
    time.sleep(kill_after)
    os.killpg(killed.pid, signal.SIGKILL)  # the command and its adapter, mid-build
    killed.wait()
    health_ms, before = recall.run("sources", "--json")
    resumed_from = _indexed(before.stdout)
    wall, done = recall.run("refresh", "--source", "notes", "--json")
    row = json.loads(done.stdout)["sources"][0] if done.stdout else {}
    health = row.get("health") or {}
    return {
        "killed_after_s": kill_after,
        "resumed_from": resumed_from,
        "ms": round(wall, 1),
        "files_read": (health.get("diagnostics") or {}).get("files_read"),
        "ranker_ms": (health.get("diagnostics") or {}).get("ranker_refresh_ms"),
        "indexed": health.get("indexed_count"),
        "coverage": health.get("coverage"),
        "exit": done.returncode,
    }


def together(home: Path, notes: Path) -> dict[str, Any]:
    recall = Recall(home, notes)
    started = time.perf_counter()
    commands = [subprocess.Popen([*recall.command, "refresh", "--source", "notes", "--json"], env=recall.env,
                                 cwd=recall.home, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                for _ in range(2)]
    walls, reads, ranker_errors = [], [], 0
    for command in commands:
        stdout, _ = command.communicate()
        walls.append(round((time.perf_counter() - started) * 1000, 1))
        health = (json.loads(stdout)["sources"][0].get("health") or {}) if stdout else {}
        diagnostics = health.get("diagnostics") or {}
        reads.append(diagnostics.get("files_read"))
        ranker_errors += "ranker_error" in diagnostics
    return {"ms": walls, "files_read": reads, "ranker_errors": ranker_errors}


def _indexed(stdout: bytes) -> int | None:
    try:
        for source in json.loads(stdout).get("sources", []):
            return (source.get("health") or {}).get("indexed_count")
    except ValueError:
        return None
    return None


def cold_edit(recall: Recall, notes: Path) -> dict[str, Any]:
    recall.run("query", QUERY, "--json")  # settle
    paths = sorted(notes.glob("area00/*.md"))
    results: dict[str, Any] = {}
    # an editor's save: write aside, then rename over the note (the folder's mtime moves)
    renamed = paths[len(paths) // 2]
    aside = renamed.with_suffix(".tmp")
    aside.write_text(renamed.read_text() + "\nzanzibarsave marker line\n")
    os.replace(aside, renamed)
    results["rename"] = _cold_find(recall, "zanzibarsave")
    # in place, on the note the index last saw edited (the one just saved): a cold query
    # stats the most recently modified notes, so this edit is in what it checks. An
    # in-place edit of an older note is seen by a watching adapter, by a refresh, or
    # when a search returns that note; a cold check of folders and recent notes misses it.
    with renamed.open("a") as handle:
        handle.write("\nquokkasecond marker line\n")
    results["in_place_recent"] = _cold_find(recall, "quokkasecond")
    return results


def _cold_find(recall: Recall, word: str) -> dict[str, Any]:
    wall, done = recall.run("query", word, "--json")
    measured = {"ms": round(wall, 1), "found": bool(_answer(done).get("results")), "exit": done.returncode}
    if not measured["found"]:  # ask again, explained: was the edit late, or never seen?
        _, again = recall.run("query", word, "--json", "--explain")
        answer = _answer(again)
        measured["first_stderr"] = done.stderr.decode(errors="replace")[-400:]
        measured["again"] = {
            "found": bool(answer.get("results")), "exit": again.returncode,
            "sources": answer.get("source_outcomes") or again.stderr.decode(errors="replace")[-400:],
        }
    return measured


def _answer(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


# ---------------------------------------------------------------------------
# A resident adapter driven over stdio


class Adapter:
    def __init__(self, notes: Path, workdir: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "adapters.notes"], cwd=REPO, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        self.lock = threading.Lock()
        self.replies: dict[int, dict[str, Any]] = {}
        self.arrived = threading.Condition()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.call("recall/initialize", {
            "protocol_version_min": 1, "protocol_version_max": 1, "workdir": str(workdir),
            "source_id": "notes", "location": str(notes),
        })

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            reply = json.loads(line)
            with self.arrived:
                self.replies[reply["id"]] = reply
                self.arrived.notify_all()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        with self.lock:
            self.next_id += 1
            request_id = self.next_id
            frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
            self.proc.stdin.flush()
        with self.arrived:
            self.arrived.wait_for(lambda: request_id in self.replies)
            reply = self.replies.pop(request_id)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]  # type: ignore[no-any-return]

    def search(self, query: str, budget_s: float = 2.0) -> tuple[float, dict[str, Any]]:
        """Wall time and result; a search that failed (its deadline passed, say) is reported
        as outcome ``error`` with no candidates, so a measure counts it rather than stops."""
        started = time.perf_counter()
        try:
            result = self.call("recall/search", {
                "query": query, "filters": {}, "limit": 10, "deadline": _deadline(budget_s),
            })
        except RuntimeError as exc:
            result = {"outcome": "error", "error": str(exc), "candidates": [], "diagnostics": {}}
        return (time.perf_counter() - started) * 1000, result

    def health(self) -> dict[str, Any]:
        return self.call("recall/health", {"deadline": _deadline(10)})

    def wait_watched(self, limit_s: float = 120.0) -> bool:
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            if self.health()["diagnostics"].get("freshness", {}).get("mode") == "watched":
                return True
            time.sleep(0.1)
        return False

    def peak_rss_mb(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            return None
        return None

    def close(self) -> None:
        try:
            self.call("recall/shutdown", {})
        finally:
            self.proc.kill()
            self.proc.wait()


def _deadline(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def warm_edit(adapter: Adapter, notes: Path, runs: int) -> dict[str, Any]:
    latencies, found_after, errors = [], [], 0
    paths = sorted(notes.glob("area01/*.md"))
    for run in range(runs):
        word = f"pelican{run}warm"
        path = paths[(run * 7919) % len(paths)]
        with path.open("a") as handle:
            handle.write(f"\n{word} marker line\n")
        edited = time.perf_counter()
        while True:
            ms, result = adapter.search(word)
            latencies.append(ms)
            errors += result["outcome"] == "error"
            if result["candidates"]:
                found_after.append((time.perf_counter() - edited) * 1000)
                break
            if time.perf_counter() - edited > 10:
                found_after.append(float("inf"))
                break
    return {"seen_after_ms_median": median(found_after), "seen_after_ms_max": round(max(found_after), 1),
            "search_ms_median": median(latencies), "errors": errors}


def bulk_edit(adapter: Adapter, notes: Path) -> dict[str, Any]:
    for path in notes.rglob("*.md"):
        with path.open("a") as handle:
            handle.write("\nbulk edit marker: cormorant\n")
    edited = time.perf_counter()
    answers, partial, errors, slowest, complete_s = 0, 0, 0, 0.0, None
    while time.perf_counter() - edited < 120:
        ms, result = adapter.search("cormorant", budget_s=2.0)
        answers += 1
        slowest = max(slowest, ms)
        if result["outcome"] == "partial":
            partial += 1
        elif result["outcome"] == "error":
            errors += 1
        elif (result["outcome"] == "success" and result["diagnostics"]["freshness"]["pending"] == 0
              and result["candidates"]):
            # found too: an answer given before the watch handed the edits over is
            # complete for what the adapter knew, not yet for the edit
            complete_s = round(time.perf_counter() - edited, 2)
            break
        time.sleep(0.1)
    return {"answers": answers, "partial": partial, "errors": errors, "slowest_ms": round(slowest, 1),
            "complete_after_s": complete_s}


def concurrent(adapter: Adapter) -> dict[str, Any]:
    queries = ["postgres backup", "wireguard certificate", "grafana alert disk", "ceph release"]
    started = time.perf_counter()
    for query in queries:
        adapter.search(query, budget_s=30)
    serial = (time.perf_counter() - started) * 1000
    threads = [threading.Thread(target=adapter.search, args=(q, 30)) for q in queries]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"serial_ms": round(serial, 1), "parallel_ms": round((time.perf_counter() - started) * 1000, 1)}


# ---------------------------------------------------------------------------
# Driver


class _Shown(dict[str, Any]):
    """Measures as they complete, each also printed to stderr (a long run shows progress)."""

    def __init__(self, size: str) -> None:
        super().__init__()
        self.size = size

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        print(f"bench: [{self.size}] {key} {json.dumps(value)}", file=sys.stderr, flush=True)


def bench_size(size: str, workdir: Path, kill_after: float, warm_runs: int) -> dict[str, Any]:
    generated = notes_folder(workdir, size)
    result: dict[str, Any] = _Shown(size)
    result["notes"] = SIZES[size]
    with tempfile.TemporaryDirectory(prefix=f"indexing-{size}-", dir=workdir) as home:
        notes = Path(home) / "notes"
        shutil.copytree(generated, notes)
        recall = Recall(Path(home), notes)
        result["build"] = build(recall, kill_after)
        if SIZES[size] <= 10_000:
            result["together"] = together(Path(home) / "together", notes)
        result["cold_edit"] = cold_edit(recall, notes)
        resident = Path(home) / "resident"
        built = next((Path(home) / "state").rglob("notes-index.sqlite3"), None)
        if built is not None:  # start from the index the command built, as a broker would
            resident.mkdir()
            # through SQLite's backup, so what is still in the write-ahead log comes along
            source, copy = sqlite3.connect(built), sqlite3.connect(resident / built.name)
            try:
                source.backup(copy)
            finally:
                source.close()
                copy.close()
            if (built.parent / RANKER_DIR).is_dir():
                shutil.copytree(built.parent / RANKER_DIR, resident / RANKER_DIR)
        adapter = Adapter(notes, resident)
        try:
            adapter.call("recall/refresh", {"deadline": _deadline(600)})
            result["watched"] = adapter.wait_watched()
            result["warm_edit"] = warm_edit(adapter, notes, warm_runs)
            result["concurrent"] = concurrent(adapter)
            if SIZES[size] <= 10_000:
                result["bulk_edit"] = bulk_edit(adapter, notes)
            result["peak_rss_mb"] = adapter.peak_rss_mb()
        finally:
            adapter.close()
    return dict(result)


def table(report: dict[str, Any]) -> str:
    rows: list[tuple[str, str, str]] = []
    for size, r in report["sizes"].items():
        b = r["build"]
        rows.append((f"[{size}] first build via refresh (after a kill at {b['killed_after_s']} s)",
                     f"{b['ms']} ms (ranker {b.get('ranker_ms')} ms of it), resumed from "
                     f"{b['resumed_from']}, read {b['files_read']}",
                     TARGETS["build"]))
        if "together" in r:
            t = r["together"]
            rows.append((f"[{size}] two first builds at once (two refreshes)",
                         f"done after {t['ms'][0]} / {t['ms'][1]} ms, notes read {t['files_read'][0]} + "
                         f"{t['files_read'][1]}, ranker lost {t['ranker_errors']}", ""))
        for kind, cold in r["cold_edit"].items():
            rows.append((f"[{size}] edit ({kind}) seen by next cold query",
                         f"{cold['ms']} ms, found={cold['found']}", TARGETS["cold_edit"]))
        w = r["warm_edit"]
        rows.append((f"[{size}] edit seen by resident adapter (watched={r['watched']})",
                     f"{w['seen_after_ms_median']} ms median, {w['seen_after_ms_max']} max; "
                     f"search {w['search_ms_median']} ms", TARGETS["warm_edit"]))
        c = r["concurrent"]
        rows.append((f"[{size}] 4 searches serial / parallel", f"{c['serial_ms']} / {c['parallel_ms']} ms", ""))
        if "bulk_edit" in r:
            e = r["bulk_edit"]
            rows.append((f"[{size}] all notes edited at once",
                         f"{e['partial']}/{e['answers']} partial, slowest {e['slowest_ms']} ms, "
                         f"complete after {e['complete_after_s']} s", TARGETS["bulk_edit"]))
        rows.append((f"[{size}] resident adapter peak RSS", f"{r['peak_rss_mb']} MB", TARGETS["peak_rss_mb"]))
    width = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, width, strict=True)) for row in rows)


def run(sizes: list[str], workdir: Path, kill_after: float = 10.0, warm_runs: int = 5) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"load_before": list(os.getloadavg()), "cpus": os.cpu_count(), "sizes": {}}
    for size in sizes:
        print(f"bench: indexing {size} ...", file=sys.stderr, flush=True)
        report["sizes"][size] = bench_size(size, workdir, kill_after, warm_runs)
    report["load_after"] = list(os.getloadavg())
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k", help=f"comma-separated, of {', '.join(SIZES)}")
    parser.add_argument("--smoke", action="store_true", help="a tiny folder, for CI")
    parser.add_argument("--kill-after", type=float, default=10.0,
                        help="seconds into the first build to kill it (default 10)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "recall-bench" / "indexing")
    parser.add_argument("--json-out", type=Path, metavar="FILE")
    args = parser.parse_args()
    sizes = ["smoke"] if args.smoke else [s.strip() for s in args.sizes.split(",") if s.strip()]
    report = run(sizes, args.workdir, 0.3 if args.smoke else args.kill_after, 2 if args.smoke else 5)
    print(table(report))
    print(f"load average before {report['load_before'][0]:.2f}, after {report['load_after'][0]:.2f} "
          f"on {report['cpus']} CPUs")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
