"""The Tasks CLI's store, answered from a recording of its program's output (the ``replay`` setting).

This is how the reference's evaluation packs ship a tasks source: ``cli.json``
maps the program's read-only invocations to recorded output files, so the
source needs no program installed and answers the same on every run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .adapter_process import AdapterError
from .conftest import OpenAdapter

OPEN = {"id": "c0ffee01", "state": "NEXT", "priority": "A", "title": "Book the kiln service visit",
        "tags": ["studio"], "contexts": ["@phone"], "deadline": "2030-03-01"}
DONE = {"id": "c0ffee02", "state": "DONE", "priority": None, "title": "Order more glaze for the kiln",
        "tags": [], "contexts": []}


def write_recording(folder: Path) -> Path:
    folder.mkdir(parents=True)
    outputs = {
        "list_all.json": [OPEN, DONE],
        "projects.json": [{"id": "c0ffee09", "title": "Studio", "kind": "area", "task_ids": ["c0ffee01"]}],
        "show_01.json": {**OPEN, "notes": ["call before nine", "ask about the element"], "project": "Studio"},
        "check.json": {"ok": True, "errors": [], "warnings": []},
    }
    for name, value in outputs.items():
        (folder / name).write_text(json.dumps(value))
    (folder / "missing.txt").write_text("no match: c0ffee0f\n")
    rules = {"invocations": [
        {"args": ["check", "--json", "--all-files"], "stdout": "check.json"},
        {"contains": ["projects"], "stdout": "projects.json"},
        {"contains": ["show", "c0ffee01"], "stdout": "show_01.json"},
        {"contains": ["show"], "stdout": "missing.txt", "exit_code": 2},
        {"contains": ["list"], "stdout": "list_all.json"},
    ]}
    (folder / "cli.json").write_text(json.dumps(rules))
    return folder


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    return write_recording(tmp_path / "tasks-store")


def test_a_replayed_tasks_cli_store_finds_a_task_by_its_id_first(open_adapter: OpenAdapter, recording: Path) -> None:
    adapter = open_adapter(recording, {"replay": "."})

    found = adapter.search("What is the state of c0ffee01?")["candidates"]

    assert found[0]["locator"] == "tasks:c0ffee01"
    assert "exact_identifier" in found[0]["match_signals"]
    assert found[0]["excerpt"].startswith("next · project Studio · context @phone · priority A")
    assert adapter.manifest["display_name"] == "Tasks (Tasks CLI)"
    assert adapter.manifest["as_of_support"] == "none"


def test_an_id_inside_another_scheme_is_not_an_exact_match(open_adapter: OpenAdapter, recording: Path) -> None:
    adapter = open_adapter(recording, {"replay": "."})

    assert adapter.search("td-c0ffee01")["candidates"] == []


def test_words_find_open_and_closed_tasks_with_their_lifecycle(open_adapter: OpenAdapter, recording: Path) -> None:
    adapter = open_adapter(recording, {"replay": "."})

    found = {c["locator"]: c for c in adapter.search("kiln")["candidates"]}

    assert set(found) == {"tasks:c0ffee01", "tasks:c0ffee02"}
    assert found["tasks:c0ffee02"]["metadata"]["status"] == "completed"


def test_expand_reads_the_tasks_notes_from_show(open_adapter: OpenAdapter, recording: Path) -> None:
    adapter = open_adapter(recording, {"replay": "."})

    content = adapter.expand("tasks:c0ffee01", "full")["content"]

    assert "call before nine" in content and "ask about the element" in content
    assert "project: Studio" in content
    with pytest.raises(AdapterError) as refused:
        adapter.expand("tasks:not-an-id", "full")
    assert refused.value.code == -32002


def test_health_reports_the_clis_own_check(open_adapter: OpenAdapter, recording: Path) -> None:
    adapter = open_adapter(recording, {"replay": "."})

    health = adapter.health()

    assert health["status"] == "healthy" and health["record_count"] == 2
    assert health["diagnostics"]["check"]["ok"] is True


def test_a_missing_recording_or_program_is_unavailable_naming_what_to_fix(
    open_adapter: OpenAdapter, tmp_path: Path
) -> None:
    replayed = open_adapter(tmp_path, {"replay": "nowhere"})
    with pytest.raises(AdapterError) as missing:
        replayed.search("kiln")
    assert missing.value.code == -32000 and "no Tasks CLI recording" in missing.value.message

    live = open_adapter(tmp_path, {"mode": "tasks-cli", "binary": "recall-test-no-such-tasks-program"})
    with pytest.raises(AdapterError) as absent:
        live.search("kiln")
    assert absent.value.code == -32000 and "binary setting" in absent.value.message


def test_cli_settings_are_refused_for_another_store(open_adapter: OpenAdapter, tmp_path: Path) -> None:
    with pytest.raises(AdapterError) as refused:
        open_adapter(tmp_path, {"mode": "taskwarrior", "replay": "."})
    assert refused.value.code == -32602


def test_a_live_store_is_read_through_its_program_with_read_only_commands(
    open_adapter: OpenAdapter, recording: Path, tmp_path: Path
) -> None:
    """A stand-in for the Tasks CLI (not installed here) answers from the recording and logs
    each call: the program is told the store by TASKS_DIR and only ever asked to read."""
    store = tmp_path / "store"
    store.mkdir()
    (store / "tasks.jsonl").write_text("{}\n")
    calls = tmp_path / "calls.jsonl"
    program = tmp_path / "tasks"
    program.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "from pathlib import Path\n"
        f"with open({str(calls)!r}, 'a') as log:\n"
        "    log.write(json.dumps([os.environ.get('TASKS_DIR'), sys.argv[1:]]) + '\\n')\n"
        f"rules = json.loads(Path({str(recording)!r}, 'cli.json').read_text())['invocations']\n"
        "args = sys.argv[1:]\n"
        "rule = next(r for r in rules if r.get('args') == args or (r.get('contains') and all(a in args for a in r['contains'])))\n"
        f"sys.stdout.write(Path({str(recording)!r}, rule['stdout']).read_text())\n"
        "sys.exit(rule.get('exit_code', 0))\n"
    )
    program.chmod(0o755)
    adapter = open_adapter(store, {"binary": str(program)})

    assert adapter.search("kiln")["candidates"][0]["locator"] == "tasks:c0ffee01"
    assert "call before nine" in adapter.expand("tasks:c0ffee01", "full")["content"]
    logged = [json.loads(line) for line in calls.read_text().splitlines()]
    assert {directory for directory, _ in logged} == {str(store)}
    assert {args[0] for _, args in logged} <= {"list", "projects", "show", "check"}
    assert adapter.manifest["executable_requirements"][0]["command"] == str(program)
