"""A cold ``recall query`` starts the adapters the last query of its shape asked, first
thing; a remembered plan is only ever a head start: the query's own plan decides, an
adapter dropped from the configuration is not started again, and a plan file anyone
else could have written is never read."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from broker.warm import launch_plan, prestart
from tests.broker.cli.conftest import RECALL
from tests.support.fixture_config import FIXTURE_ADAPTER, adapter_registration, fixture_sources

RECORD = {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot."}
# Logs its pid to the file named by its first argument, then runs the fixture adapter.
LOGGING_ADAPTER = f"""\
import os, runpy, sys
with open(sys.argv[1], "a") as log:
    log.write(f"{{os.getpid()}}\\n")
sys.argv = [{str(FIXTURE_ADAPTER)!r}]
runpy.run_path({str(FIXTURE_ADAPTER)!r}, run_name="__main__")
"""
QUESTION = ("restore drill", "--scope", "source=notes", "--json")


def _configure(tmp_path: Path, log_name: str = "starts.log") -> dict[str, str]:
    script = tmp_path / "logging_adapter.py"
    script.write_text(LOGGING_ADAPTER)
    lines = adapter_registration("logged", script)
    lines[2] = f"args = [{json.dumps(str(script))}, {json.dumps(str(tmp_path / log_name))}]"
    sources = {"notes": {"records": [RECORD]}, "more": {"records": [RECORD]}}
    for line in fixture_sources(tmp_path, sources, keys={"timeout_ms": 3000, "sensitivity": "internal"}):
        lines.append(line.replace('adapter = "fixture"', 'adapter = "logged"'))
    lines += ["[profiles.default]", 'sources = ["notes", "more"]', 'max_sensitivity = "internal"']
    config_dir = tmp_path / "config" / "recall"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.toml").write_text("\n".join(lines) + "\n")
    return {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "RECALL_DAEMON": "0",
    }


def _query(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RECALL), "query", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)


def _started(log: Path) -> list[int]:
    return [int(line) for line in log.read_text().splitlines()] if log.exists() else []


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def _plan(tmp_path: Path, env: dict[str, str], *args: str) -> launch_plan.Plan:
    plan = launch_plan.for_command(list(args), env, str(tmp_path))
    assert plan is not None
    return plan


def _launched_by(plan: launch_plan.Plan) -> list[prestart.Key]:
    """What ``plan`` starts, as prestart keys; the processes are ended at once."""
    prestarted = prestart.Prestarted()
    try:
        plan.launch(prestarted)
        return list(prestarted._started)
    finally:
        prestarted.discard()


def test_a_query_remembers_the_adapters_it_asked_and_the_next_one_starts_them_first(tmp_path: Path) -> None:
    env = _configure(tmp_path)
    first = _query(tmp_path, env, "restore drill", *QUESTION[1:])
    assert first.returncode == 0, first.stderr
    launched = _launched_by(_plan(tmp_path, env, *QUESTION[1:]))
    assert [(key[0], key[3]) for key in launched] == [
        ("UID0000NOTES", str(tmp_path / "state" / "recall" / "default" / "adapters" / "UID0000NOTES"))
    ]

    second = _query(tmp_path, env, "newest snapshot", *QUESTION[1:])
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["results"], second.stdout
    # one process each: the second query adopted the one its plan started, and started no other
    pids = _started(tmp_path / "starts.log")
    assert len(pids) == 2 and all(_gone(pid) for pid in pids)


def test_each_shape_of_command_line_keeps_its_own_plan(tmp_path: Path) -> None:
    env = _configure(tmp_path)
    assert _query(tmp_path, env, *QUESTION).returncode == 0
    assert _query(tmp_path, env, "restore drill", "--json").returncode == 0
    scoped = _launched_by(_plan(tmp_path, env, *QUESTION[1:]))
    unscoped = _launched_by(_plan(tmp_path, env, "--json"))
    assert len(scoped) == 1 and len(unscoped) == 2


def test_an_adapter_taken_out_of_the_configuration_is_not_started_from_the_plan(tmp_path: Path) -> None:
    env = _configure(tmp_path)
    assert _query(tmp_path, env, *QUESTION).returncode == 0
    old_log = tmp_path / "starts.log"
    assert len(_started(old_log)) == 1

    _configure(tmp_path, log_name="replacement.log")  # the same sources, another adapter command
    done = _query(tmp_path, env, *QUESTION)
    assert done.returncode == 0, done.stderr
    assert len(_started(old_log)) == 1, "the adapter no longer configured was started again"
    assert len(_started(tmp_path / "replacement.log")) == 1


def test_a_process_the_plan_started_that_the_query_does_not_ask_for_is_ended(tmp_path: Path) -> None:
    env = _configure(tmp_path)
    assert _query(tmp_path, env, *QUESTION).returncode == 0
    plan = _plan(tmp_path, env, *QUESTION[1:])
    found = launch_plan.decode(Path(plan.path).read_bytes())
    assert found is not None
    files, launches = found
    stray_log = tmp_path / "stray.log"
    uid, argv, adapter_env, workdir, cwd, greeting, pass_env = launches[0]
    stray = (uid, (argv[0], argv[1], str(stray_log)), adapter_env, workdir, cwd, greeting, pass_env)
    Path(plan.path).write_bytes(launch_plan.encode(files, [stray]))

    done = _query(tmp_path, env, *QUESTION)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]
    strays = _started(stray_log)
    assert len(strays) == 1 and _gone(strays[0])
    assert len(_started(tmp_path / "starts.log")) == 2  # the query started the adapter it asks


def test_a_plan_file_another_user_could_have_written_is_not_read(tmp_path: Path) -> None:
    env = _configure(tmp_path)
    assert _query(tmp_path, env, *QUESTION).returncode == 0
    plan = _plan(tmp_path, env, *QUESTION[1:])
    os.chmod(plan.path, 0o666)
    assert _launched_by(plan) == []

    os.chmod(plan.path, 0o600)
    real = Path(plan.path + ".elsewhere")
    os.replace(plan.path, real)
    os.symlink(real, plan.path)
    assert _launched_by(_plan(tmp_path, env, *QUESTION[1:])) == []


def test_commands_that_run_no_local_broker_have_no_plan(tmp_path: Path) -> None:
    env = _configure(tmp_path)
    for args in (["--server", "http://127.0.0.1:1"], ["--serv=http://127.0.0.1:1"], ["--help"], ["-h"]):
        assert launch_plan.for_command(["restore", *args], env, str(tmp_path)) is None, args
    assert launch_plan.for_command(["restore"], {**env, "RECALL_SERVER": "http://x"}, str(tmp_path)) is None


def test_a_plan_reads_back_exactly_what_was_written() -> None:
    files = [("/home/u/.config/recall/config.toml", "1:2:3"), ("/home/u/recall.toml", "-")]
    launches = [
        ("UID1", ("/usr/bin/python3", "-m", "adapters.notes"), (("A", "line one\nline two"), ("B", "")),
         "/state/a", None, b'{"jsonrpc":"2.0","id":1,"method":"recall/initialize","params":{}}\n',
         ("PGUSER", "PGSERVICE")),
        ("UID2", ("tasks adapter",), (), "/state/b", "/some where", b"", ()),
    ]
    data = launch_plan.encode(files, launches)
    assert launch_plan.decode(data) == (files, launches)
    assert launch_plan.decode(data + b"\0extra") is None
    assert launch_plan.decode(data[: len(data) // 2]) is None
    assert launch_plan.decode(b"something else") is None
