"""A cold ``recall query`` launches the adapters its plan will contact before it imports
the broker, and only those: each is started once, adopted by the broker, and none
outlives the command, whatever the plan then decides."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.broker.cli.conftest import RECALL
from tests.support.fixture_config import FIXTURE_ADAPTER, adapter_registration, fixture_sources

RECORD = {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot."}
# Logs its pid to $RECALL_TEST_STARTS, then runs the fixture adapter.
LOGGING_ADAPTER = f"""\
import os, runpy, sys
with open(os.environ["RECALL_TEST_STARTS"], "a") as log:
    log.write(f"{{os.getpid()}}\\n")
sys.argv = [{str(FIXTURE_ADAPTER)!r}]
runpy.run_path({str(FIXTURE_ADAPTER)!r}, run_name="__main__")
"""


def _configure(tmp_path: Path) -> tuple[dict[str, str], Path]:
    script = tmp_path / "logging_adapter.py"
    script.write_text(LOGGING_ADAPTER)
    lines = adapter_registration("logged", script)
    sources = {
        "notes": {"records": [RECORD], "sensitivity": "internal"},
        "more": {"records": [RECORD], "sensitivity": "internal"},
        "secret": {"records": [RECORD], "sensitivity": "confidential"},  # above the profile's ceiling
    }
    for line in fixture_sources(tmp_path, sources, keys={"timeout_ms": 3000, "sensitivity": "internal"}):
        lines.append(line.replace('adapter = "fixture"', 'adapter = "logged"'))
    text = "\n".join(lines)
    text += '\n[profiles.default]\nsources = ["notes", "more", "secret"]\nmax_sensitivity = "internal"\n'
    config_dir = tmp_path / "config" / "recall"
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text(text)
    starts = tmp_path / "starts.log"
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "RECALL_DAEMON": "0",
        "RECALL_TEST_STARTS": str(starts),
    }
    return env, starts


def _query(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RECALL), "query", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)


def _started(starts: Path) -> list[int]:
    return [int(line) for line in starts.read_text().splitlines()] if starts.exists() else []


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_only_the_adapters_the_plan_contacts_start_and_each_starts_once(tmp_path: Path) -> None:
    env, starts = _configure(tmp_path)
    done = _query(tmp_path, env, "restore drill", "--scope", "source=notes", "--json", "--explain")
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)
    answered = [s["source_id"] for s in response["source_outcomes"] if s["outcome"] == "success"]
    assert answered == ["notes"]
    # "more" is out of scope and "secret" above the ceiling (confidential, internal): neither is ever started,
    # and the one that answered is the process launched ahead, not a second one
    assert len(_started(starts)) == 1


def test_every_contacted_adapter_starts_once_when_the_scope_names_none(tmp_path: Path) -> None:
    env, starts = _configure(tmp_path)
    done = _query(tmp_path, env, "restore drill", "--json")
    assert done.returncode == 0, done.stderr
    assert len(_started(starts)) == 2  # notes and more; secret is above the ceiling


def test_adapters_launched_for_a_request_the_plan_refuses_do_not_outlive_it(tmp_path: Path) -> None:
    env, starts = _configure(tmp_path)
    done = _query(tmp_path, env, "restore drill", "--scope", "since=2026-03-02",
                  "--scope", "until=2026-03-01")
    assert done.returncode == 1 and "is after until" in done.stderr
    started = _started(starts)
    assert all(_gone(pid) for pid in started)
