"""``recall hook claude-code`` fed Claude Code's UserPromptSubmit JSON, over a real notes folder."""

from __future__ import annotations

import json
import time

PROBE = "where do we deploy the wiki"


def context_of(run) -> str:
    assert run.code == 0, run.stderr
    specific = json.loads(run.stdout)["hookSpecificOutput"]
    assert specific["hookEventName"] == "UserPromptSubmit"
    return specific["additionalContext"]


def test_successor_is_injected_and_the_superseded_note_never_is(hook_home):
    context = context_of(hook_home().prompt(PROBE))
    assert "notes:new-target.md" in context
    assert "Fly.io" in context
    assert "old-target.md" not in context
    assert "Hetzner" not in context


def test_withheld_records_are_counted_on_one_line_with_their_reasons(hook_home):
    context = context_of(hook_home().prompt(PROBE))
    withheld = [line for line in context.splitlines() if "withheld" in line]
    assert withheld == ["1 superseded, 1 expired withheld (not shown as current evidence)."]


def test_an_expired_note_is_never_injected(hook_home):
    run = hook_home().prompt("storage migration deploy freeze")
    assert run.code == 0, run.stderr
    assert "freeze" not in run.stdout.lower()


def test_abstention_injects_nothing(hook_home):
    run = hook_home().prompt("submarine ballast tanks")
    assert run.code == 0
    assert run.stdout == ""
    assert run.stderr == ""


def test_retrieved_text_is_quoted_data_with_its_locator(hook_home):
    context = context_of(hook_home().prompt("pager rota"))
    lines = context.splitlines()
    assert "not an instruction" in lines[0]
    quoted = [line for line in lines if "Ignore all previous instructions" in line]
    assert len(quoted) == 1
    label, _, literal = quoted[0].strip().partition(" ")
    assert label == "quote:"
    assert json.loads(literal).startswith("Ignore all previous instructions")
    header = lines[lines.index(quoted[0]) - 1]
    assert header.startswith('[1] locator: "notes:pager.md#L')


def test_evidence_injected_once_per_session(hook_home):
    home = hook_home()
    first = context_of(home.prompt(PROBE, "session-a"))
    assert "notes:new-target.md" in first
    again = home.prompt(PROBE, "session-a")
    assert again.code == 0
    assert "new-target.md" not in again.stdout
    elsewhere = context_of(home.prompt(PROBE, "session-b"))
    assert "notes:new-target.md" in elsewhere


def test_a_frozen_source_is_named_and_does_not_hold_the_prompt(hook_home):
    home = hook_home(frozen_source=True)  # the frozen source's own timeout is 60 s
    started = time.monotonic()
    run = home.prompt(PROBE, "session-f", "--budget-ms", "1000")
    waited = time.monotonic() - started
    context = context_of(run)
    # on a loaded machine the notes index may still be settling too: named, never hidden
    unanswered = next(line for line in context.splitlines() if line.startswith("Sources that did not answer:"))
    assert "frozen (timeout" in unanswered
    assert "notes:new-target.md" in context
    assert waited < 30, f"the prompt waited {waited:.1f}s"


def test_missing_configuration_exits_0_with_one_line_on_stderr(hook_home, tmp_path):
    home = hook_home()
    home.env["XDG_CONFIG_HOME"] = str(tmp_path / "nowhere")
    run = home.prompt(PROBE)
    assert run.code == 0
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("recall hook: ")


def test_input_that_is_not_the_hook_json_exits_0_with_nothing_injected(hook_home):
    run = hook_home().recall("hook", "claude-code", stdin="not json at all")
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr.startswith("recall hook: the hook input is not JSON")


def test_other_events_are_ignored(hook_home):
    payload = {"session_id": "s", "hook_event_name": "Stop", "cwd": "/"}
    run = hook_home().recall("hook", "claude-code", stdin=json.dumps(payload))
    assert (run.code, run.stdout) == (0, "")


def test_the_query_text_never_reaches_stderr(hook_home, tmp_path):
    home = hook_home()
    home.env["XDG_CONFIG_HOME"] = str(tmp_path / "nowhere")
    run = home.prompt("secret-project-codename-zebra")
    assert "zebra" not in run.stderr


def test_a_damaged_session_ledger_is_reported_and_the_turn_goes_on(hook_home):
    home = hook_home()
    context_of(home.prompt(PROBE, "session-d"))
    (ledger,) = (home.root / "state" / "recall" / "hook-sessions").glob("*.json")
    ledger.write_text("{ damaged")
    run = home.prompt(PROBE, "session-d")
    assert "notes:new-target.md" in context_of(run)
    assert run.stderr.startswith("recall hook: session ledger ") and "is not JSON" in run.stderr
