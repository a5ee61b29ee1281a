"""``recall hook pre-reply``: the generic form for hosts without their own hook format."""

from __future__ import annotations

import json

PROBE = "where do we deploy the wiki"


def test_a_plain_text_prompt_gets_the_context_block(hook_home):
    run = hook_home().recall("hook", "pre-reply", stdin=PROBE + "\n")
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("recall found evidence")
    assert "notes:new-target.md" in run.stdout
    assert "old-target.md" not in run.stdout


def test_lineages_a_host_passes_back_are_not_injected_again(hook_home):
    home = hook_home()
    first = home.recall("hook", "pre-reply", "--json", stdin=json.dumps({"prompt": PROBE}))
    answer = first.json
    assert answer["outcome"] == "answered" and answer["coverage"] == "complete"
    assert "notes:new-target.md" in answer["context"]
    assert answer["lineages"] and all(root.startswith("UIDNOTES0000NOTES:") for root in answer["lineages"])
    second = home.recall(
        "hook", "pre-reply", "--json",
        stdin=json.dumps({"prompt": PROBE, "suppress_lineages": answer["lineages"]}),
    )
    assert second.json["context"] is None
    assert second.json["lineages"] == []


def test_the_suppress_flag_does_the_same(hook_home):
    home = hook_home()
    lineages = home.recall("hook", "pre-reply", "--json", stdin=PROBE).json["lineages"]
    flags = [arg for root in lineages for arg in ("--suppress-lineage", root)]
    again = home.recall("hook", "pre-reply", *flags, stdin=PROBE)
    assert (again.code, again.stdout) == (0, "")


def test_abstention_prints_nothing(hook_home):
    run = hook_home().recall("hook", "pre-reply", stdin="submarine ballast tanks")
    assert (run.code, run.stdout) == (0, "")


def test_bad_suppress_lineages_exit_0_with_one_line(hook_home):
    run = hook_home().recall("hook", "pre-reply", stdin=json.dumps({"prompt": PROBE, "suppress_lineages": "x"}))
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr.startswith("recall hook: suppress_lineages must be a list")


def test_valid_at_judges_the_turn_at_an_earlier_instant(hook_home):
    run = hook_home().recall("hook", "pre-reply", "--valid-at", "2024-01-01", stdin=PROBE)
    assert run.code == 0, run.stderr
    assert "notes:old-target.md" in run.stdout
    assert "new-target.md" not in run.stdout
    assert "1 not yet valid withheld" in run.stdout
