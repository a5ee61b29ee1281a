"""Golden exit codes of the recall command, and that rendering flags never change them."""

from __future__ import annotations

import pytest

RESTORE = {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot."}
TASK = {"id": "t1", "title": "Run the restore drill", "body": "Quarterly."}

RENDERINGS = [(), ("--json",), ("--explain",), ("--json", "--explain")]


@pytest.mark.parametrize("flags", RENDERINGS)
def test_answered_exits_0(home, flags):
    recall = home(notes={"records": [RESTORE]}, tasks={"records": [TASK]})
    assert recall("query", "restore drill", *flags).code == 0


@pytest.mark.parametrize("flags", RENDERINGS)
def test_abstained_exits_2(home, flags):
    recall = home(notes={"records": [RESTORE]})
    assert recall("query", "submarine ballast", *flags).code == 2


@pytest.mark.parametrize("flags", RENDERINGS)
def test_degraded_exits_3_even_when_answered(home, flags):
    recall = home(notes={"records": [RESTORE]}, broken={"records": [TASK], "settings": {"fail": "error"}})
    assert recall("query", "restore drill", *flags).code == 3


@pytest.mark.parametrize("flags", RENDERINGS)
def test_failed_exits_4(home, flags):
    recall = home(broken={"records": [TASK], "settings": {"fail": "crash"}})
    assert recall("query", "restore drill", *flags).code == 4


def test_empty_question_is_a_usage_error(home):
    run = home(notes={"records": [RESTORE]})("query")
    assert run.code == 1
    assert "recall: query: the question is empty" in run.stderr


def test_unknown_scope_key_is_a_usage_error(home):
    run = home(notes={"records": [RESTORE]})("query", "restore", "--scope", "colour=red")
    assert run.code == 1
    assert "unknown key 'colour'" in run.stderr


def test_scope_naming_an_unconfigured_source_exits_1(home):
    run = home(notes={"records": [RESTORE]})("query", "restore", "--scope", "source=nowhere")
    assert run.code == 1
    assert "unsatisfiable scope" in run.stderr


def test_words_that_are_not_utf8_are_a_usage_error_naming_the_bytes(home):
    """A byte the terminal sent that UTF-8 does not decode cannot be sent to any source: the
    command says which argument holds it, and asks none."""
    recall = home(notes={"records": [RESTORE]})
    run = recall("query", "restore", "caf\udce9")
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == "recall: query: the question is not UTF-8 text: b'restore caf\\xe9'\n"
    run = recall("query", "restore", "--scope", "entity=r\udce9d")
    assert run.code == 1 and "--scope entity is not UTF-8 text: b'r\\xe9d'" in run.stderr
    assert "Traceback" not in run.stderr


def test_negative_limit_is_refused(home):
    run = home(notes={"records": [RESTORE]})("query", "restore", "--limit", "-1")
    assert run.code == 1


def test_unknown_profile_exits_1_and_names_the_profiles(home):
    run = home(notes={"records": [RESTORE]})("query", "restore", "--profile", "nope")
    assert run.code == 1
    assert "default" in run.stderr


def test_json_pointer_tier_has_no_scores(home):
    run = home(notes={"records": [RESTORE]})("query", "restore drill", "--json")
    data = run.json
    assert data["tier"] == "pointer"
    assert data["results"][0]["locator"] == "notes:restore"
    assert "score" not in data["results"][0]


def test_json_explain_is_the_complete_response(home):
    data = home(notes={"records": [RESTORE]})("query", "restore drill", "--json", "--explain").json
    assert "tier" not in data
    assert data["results"][0]["explanation"]["rank_constant"] == 60
    assert data["plan"]["profile"] == "default"


def test_expand_reads_the_record(home):
    run = home(notes={"records": [RESTORE]})("expand", "notes:restore")
    assert run.code == 0
    assert "Restore the newest snapshot." in run.stdout


def test_expand_of_an_unconfigured_source_exits_4(home):
    run = home(notes={"records": [RESTORE]})("expand", "mail:thread/1")
    assert run.code == 4
    assert "source_not_configured" in run.stderr


def test_expand_of_a_vanished_record_exits_4(home):
    run = home(notes={"records": [RESTORE]})("expand", "notes:gone")
    assert run.code == 4
    assert "locator_expired" in run.stderr


def test_malformed_locator_is_a_usage_error(home):
    run = home(notes={"records": [RESTORE]})("expand", "no-colon-here")
    assert run.code == 1
    assert "malformed locator" in run.stderr


def test_sources_lists_health(home):
    run = home(notes={"records": [RESTORE]})("sources", "--json")
    assert run.code == 0
    row = run.json["sources"][0]
    assert row["source_id"] == "notes"
    assert row["health"]["status"] == "healthy"


def test_sources_exits_3_when_a_source_is_unusable(home):
    recall = home(notes={"records": [RESTORE]}, sick={"records": [], "settings": {"health": "unavailable"}})
    assert recall("sources").code == 3


def test_refresh_of_an_unknown_source_fails_with_4(home):
    run = home(notes={"records": [RESTORE]})("refresh", "--source", "nowhere", "--json")
    assert run.code == 4
    assert run.json["sources"][0]["reason"] == "source_not_configured"


def test_help_and_version(home):
    recall = home(notes={"records": [RESTORE]})
    assert recall("--help").code == 0
    version = recall("version")
    assert version.code == 0 and version.stdout.startswith("recall ")
    assert recall("no-such-command").code == 1


def test_double_dash_ends_the_flags_of_query(home):
    starter = {"id": "-sourdough", "title": "Starter", "body": "Feed it daily."}
    run = home(notes={"records": [RESTORE, starter]})("query", "--json", "--", "-sourdough")
    assert run.code == 0, run.stderr
    assert [r["locator"] for r in run.json["results"]] == ["notes:-sourdough"]


def test_double_dash_ends_the_flags_of_expand(home):
    run = home(notes={"records": [RESTORE]})("expand", "--", "-x")
    assert run.code == 1
    assert "malformed locator '-x'" in run.stderr


def test_a_timeout_while_the_index_catches_up_says_so_and_what_to_run(home):
    records = [RESTORE, *({"id": f"n{i}", "title": f"note {i}"} for i in range(5))]
    recall = home(
        notes={"records": records, "timeout_ms": 300, "settings": {"delay_ms": 5000, "indexed": 2}},
        tasks={"records": [TASK]},
    )
    run = recall("query", "restore drill")
    assert run.code == 3
    assert (
        "notes (timeout: source timeout 300ms; the index is catching up (4 pending); "
        "run recall refresh --source notes)"
    ) in run.stdout + run.stderr


def test_a_timeout_of_a_caught_up_source_names_only_the_budget(home):
    recall = home(notes={"records": [RESTORE], "timeout_ms": 300, "settings": {"delay_ms": 5000}},
                  tasks={"records": [TASK]})
    run = recall("query", "restore drill")
    assert run.code == 3
    assert "notes (timeout: source timeout 300ms)" in run.stdout + run.stderr
