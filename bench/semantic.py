"""The semantic leg on a generated notes folder, beside the notes source alone.

    .venv/bin/python bench/semantic.py --notes 10000 [--json-out FILE]

Generates (once, cached under --workdir) ``notes_bench.generate``'s folder and
configures two profiles over it under a private XDG home: ``lexical`` (the notes
source) and ``default`` (notes plus ``notes-meaning``, the leg, as ``recall init``
writes it). It measures, with the real ``recall`` command:

* build: ``recall refresh`` of each source from nothing, wall time and the CPU of
  the command and its adapter processes (``getrusage`` of children), and so chunks
  embedded per CPU-second; ``--resume`` also kills a build midway and times the
  refresh that finishes it;
* cold query: wall time of ``recall query`` in process (``RECALL_DAEMON=0``), each
  profile, median of ``--runs``;
* resident query: the same command answered by a resident broker (``recall daemon
  start``, stopped afterwards), median and p95;
* ``python -c pass``: the machine's yardstick (it is shared: read every time
  beside it).

Every command runs after the checkout's modules are compiled to bytecode, as an
installed package's are (``isolation.write_bytecode``).

Numbers, never assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from isolation import private_env, write_bytecode  # noqa: E402
from measures import median, p95  # noqa: E402
from notes_bench import generate  # noqa: E402

QUERIES = (
    "how do we bring the database back after losing the disk",  # a paraphrase
    "postgres backup restore",
    "grafana alert disk",
    "w00300 w00520",
)


class Home:
    """A private XDG home whose configuration names the folder twice: by words and by meaning."""

    def __init__(self, root: Path, notes: Path, recall: str) -> None:
        self.root = root
        self.recall = recall
        self.runtime = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: socket paths
        self.env = private_env(root, XDG_RUNTIME_DIR=str(self.runtime))
        config = root / "config" / "recall" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            '[defaults]\nprofile = "default"\n\n'
            f'[[sources]]\nsource_uid = "BENCHNOTES000001"\nsource_id = "notes"\nadapter = "notes"\n'
            f'location = "{notes}"\n\n'
            f'[[sources]]\nsource_uid = "BENCHMEANING0001"\nsource_id = "notes-meaning"\n'
            f'adapter = "semantic"\nlocation = "{notes}"\n\n'
            '[profiles.default]\nsources = ["notes", "notes-meaning"]\nmax_sensitivity = "internal"\n\n'
            '[profiles.lexical]\nsources = ["notes"]\nmax_sensitivity = "internal"\n'
        )

    def run(self, *args: str, daemon: bool = False) -> tuple[float, float, subprocess.CompletedProcess[str]]:
        """Wall ms, CPU ms of the command and its processes, and what it printed."""
        env = {**self.env, "RECALL_DAEMON": "1"} if daemon else self.env
        cpu = _children_cpu_ms()
        started = time.perf_counter()
        done = subprocess.run([self.recall, *args], env=env, cwd=self.root, capture_output=True, text=True)
        return (time.perf_counter() - started) * 1000, _children_cpu_ms() - cpu, done


def build(home: Home, resume: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    wall, cpu, done = home.run("refresh", "--source", "notes", "--profile", "lexical", "--json")
    out["lexical"] = {"wall_s": round(wall / 1000, 1), "cpu_s": round(cpu / 1000, 1)}
    # the default profile's notes source keeps an index of its own: built here, untimed, so
    # that its first build does not leave the queries "with the leg" degraded by the notes source
    home.run("refresh", "--source", "notes", "--json")
    if resume:
        out["killed_after_s"] = _kill_midway(home)
    wall = cpu = 0.0
    refreshes = 0
    while refreshes < 10:  # a refresh waits 10 minutes at most; the next one resumes the build
        took, used, done = home.run("refresh", "--source", "notes-meaning", "--json")
        wall, cpu, refreshes = wall + took, cpu + used, refreshes + 1
        row = json.loads(done.stdout)["sources"][0]
        health = row.get("health") or {}
        if health.get("coverage") == "complete":
            break
    chunks = health.get("indexed_count") or 0
    out["semantic"] = {
        "wall_s": round(wall / 1000, 1), "cpu_s": round(cpu / 1000, 1), "chunks": chunks, "refreshes": refreshes,
        "chunks_per_cpu_s": round(chunks / (cpu / 1000), 1) if cpu else None,
        "status": row.get("status"), "coverage": health.get("coverage"),
        "pending": (health.get("diagnostics") or {}).get("pending_chunks"),
    }
    return out


def _kill_midway(home: Home, after_s: float = 60.0) -> float:
    """Start the leg's refresh, kill it (and its adapter) after ``after_s``: what was
    embedded by then is stored, and the next refresh embeds only the rest."""
    proc = subprocess.Popen([home.recall, "refresh", "--source", "notes-meaning"], env=home.env,
                            cwd=home.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    time.sleep(after_s)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return after_s


def queries(home: Home, runs: int, daemon: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for profile in ("lexical", "default"):
        walls, outcomes = [], set()
        for index in range(runs):
            wall, _, done = home.run("query", QUERIES[index % len(QUERIES)], "--json", "--profile", profile,
                                     daemon=daemon)
            walls.append(wall)
            outcomes.add(json.loads(done.stdout).get("coverage") if done.stdout.startswith("{") else done.returncode)
        out[profile] = {"median_ms": median(walls), "p95_ms": p95(walls), "runs": len(walls),
                        "coverage": sorted(map(str, outcomes))}
    return out


def resident(home: Home, runs: int) -> dict[str, Any]:
    _, _, started = home.run("daemon", "start", "--json", daemon=True)
    if started.returncode != 0:
        raise SystemExit(f"bench: the resident broker did not start: {started.stderr.strip()[-400:]}")
    try:
        for profile in ("lexical", "default"):  # the first answers start each profile's adapters
            for query in QUERIES:  # and load the model; a watch not yet in place answers degraded
                home.run("query", query, "--json", "--profile", profile, daemon=True)
        return queries(home, runs, daemon=True)
    finally:
        home.run("daemon", "stop", daemon=True)


def interpreter(runs: int = 9) -> float | None:
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        walls.append((time.perf_counter() - started) * 1000)
    return median(walls)


def _children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=12, help="queries per profile and mode (default 12)")
    parser.add_argument("--resume", action="store_true", help="kill the leg's first build after 60 s")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "recall-bench-semantic")
    parser.add_argument("--recall", default=str(Path(sys.executable).with_name("recall")))
    parser.add_argument("--json-out", type=Path, metavar="FILE")
    args = parser.parse_args()
    write_bytecode()
    notes = args.workdir / f"notes-{args.notes}"
    if not (notes / ".complete").exists():
        notes.mkdir(parents=True, exist_ok=True)
        generate(notes, args.notes)
        (notes / ".complete").write_text("")
    home_dir = Path(tempfile.mkdtemp(prefix="home-", dir=args.workdir))
    home = Home(home_dir, notes, args.recall)
    report: dict[str, Any] = {"notes": args.notes, "load_before": os.getloadavg(), "python_c_pass_ms": interpreter()}
    report["build"] = build(home, args.resume)
    report["cold"] = queries(home, args.runs, daemon=False)
    report["resident"] = resident(home, args.runs)
    report["load_after"] = os.getloadavg()
    report["python_c_pass_ms_after"] = interpreter()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n")


if __name__ == "__main__":
    main()
