"""``recall sidecar-plugin``: one request from a fixture file on stdin, one JSON object on stdout."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .conftest import Workspace, fixture_request

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def ask(workspace: Workspace, fixture: str, *flags: str) -> dict[str, Any]:
    done = workspace.recall("sidecar-plugin", *flags, stdin=fixture_request(fixture))
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("\n") and done.stdout.count("\n") == 1, "exactly one JSON value on stdout"
    response = json.loads(done.stdout)
    assert not [s for s in strings(response, bodies=False) if CONTROL.search(s)], "control characters"
    return response


def strings(value: Any, *, bodies: bool) -> list[str]:
    """Every string in a response; document bodies (which may hold newlines) only if asked."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if bodies or k != "body" for s in strings(v, bodies=bodies)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v, bodies=bodies)]
    return []


@pytest.mark.parametrize("protocol", ["sidecar.plugin/v1", "sidecar.plugin/v1-draft"])
def test_describe_answers_with_the_identifier_asked(workspace, protocol):
    fixture = "describe-v1.json" if protocol.endswith("v1") else "describe-v1-draft.json"
    described = ask(workspace, fixture)
    assert described["protocol"] == protocol
    assert described["plugin"]["kind"] == "recall"
    assert "matchers" not in described
    results, sources = described["collections"]
    assert (results["id"], results["search"], sources["id"], sources["search"]) == (
        "results", "required", "sources", "none")
    assert [f["id"] for f in results["filters"]] == ["profile", "source", "type", "since"]
    profile, source, kind, _ = results["filters"]
    assert [c["id"] for c in profile["choices"]] == ["default", "down", "lagging", "wide"] and profile["default"] == "default"
    assert [c["id"] for c in source["choices"]][:2] == ["any", "kb"]
    assert [c["id"] for c in kind["choices"]] == ["any", "note", "task"]
    assert sources["refresh"] == {"everySeconds": 120}
    assert [a["id"] for a in described["actions"]] == ["refresh-source"]


def test_describe_default_profile_follows_the_profile_flag(workspace):
    described = ask(workspace, "describe-v1.json", "--profile", "wide")
    assert described["collections"][0]["filters"][0]["default"] == "wide"


def test_list_results_answers_a_page_with_rows_and_coverage(workspace):
    page = ask(workspace, "list-results.json")["page"]
    assert page["outcome"] == "answered"
    assert [item["cells"]["rank"] for item in page["items"]] == [str(n) for n in range(1, len(page["items"]) + 1)]
    assert {"notes:restore", "tasks:t1"} <= {item["id"] for item in page["items"]}
    assert {row["state"] for row in page["coverage"]} == {"answered"}
    assert page["omitted"]["suppressed"] >= 1  # the expired tape drill, withheld and counted
    assert "records suppressed (expired 1)" in " ".join(n["text"] for n in page["notices"])


def test_list_results_applies_source_type_and_since_filters(workspace):
    response = ask(workspace, "list-results-filtered.json")
    assert response["protocol"] == "sidecar.plugin/v1-draft"
    items = response["page"]["items"]
    assert items and {item["cells"]["source"] for item in items} == {"notes"}


def test_a_crashing_source_becomes_that_sources_failure(workspace):
    page = ask(workspace, "list-results-wide.json")["page"]
    assert page["outcome"] == "degraded"
    states = {row["source"]: row["state"] for row in page["coverage"]}
    assert states["crashy"] != "answered" and states["broken"] != "answered"
    assert states["notes"] == "answered"
    assert "notes:restore" in [item["id"] for item in page["items"]]
    assert any(n["tone"] == "warning" and "crashy" in n["text"] for n in page["notices"])


@pytest.mark.parametrize(
    ("fixture", "code", "fragment"),
    [
        ("list-results-unknown-filter.json", "invalid_request", "colour"),
        ("list-results-bad-since.json", "invalid_request", "RFC 3339"),
        ("list-results-remote-host.json", "unavailable", "devbox"),
        ("list-null-params.json", "invalid_request", "no params"),
        ("get-source-unknown.json", "not_found", "nowhere"),
        ("unknown-protocol.json", "invalid_request", "sidecar.plugin/v1"),
        ("malformed.json", "invalid_request", "not one JSON object"),
    ],
)
def test_typed_failures_exit_zero_with_an_error_object(workspace, fixture, code, fragment):
    response = ask(workspace, fixture)
    assert response["protocol"] == "sidecar.plugin/v1"
    assert response["error"]["code"] == code
    assert fragment in response["error"]["message"]
    assert response["error"]["retryable"] is False


def test_list_sources_rows_carry_health(workspace):
    page = ask(workspace, "list-sources.json")["page"]
    rows = {item["id"]: item for item in page["items"]}
    assert page["outcome"] == "answered"
    assert rows["kb"]["cells"]["health"] == "healthy" and rows["kb"]["status"]["tone"] == "success"
    assert rows["broken"]["cells"]["health"] == "not probed"


def test_unusable_sources_are_named_in_a_notice(workspace):
    page = ask(workspace, "list-sources.json", "--profile", "wide")["page"]
    assert page["outcome"] == "answered"
    assert any("sick" in notice["text"] for notice in page.get("notices", []))


def test_get_result_expands_the_locator_into_evidence(workspace):
    resource = ask(workspace, "get-result.json")["resource"]
    assert resource["identity"] == "notes:restore"
    evidence = resource["sections"][0]
    assert evidence["title"] == "Evidence"
    assert evidence["body"]["text"] == "Restore the newest snapshot and compare checksums."


def test_get_source_describes_health_and_capabilities(workspace):
    resource = ask(workspace, "get-source.json")["resource"]
    assert resource["identity"] == "kb"
    assert [s["title"] for s in resource["sections"]] == ["Health", "Capabilities"]


def test_act_refresh_source_refreshes_and_reopens_it(workspace):
    outcome = ask(workspace, "act-refresh-source.json")["outcome"]
    assert outcome["status"] == "done"
    assert outcome["message"].startswith("kb: refreshed")
    assert outcome["open"] == {"collection": "sources", "id": "kb"}


@pytest.mark.parametrize(
    ("deadline_ms", "budget_ms", "hard_seconds"),
    [(0, 0, None), (-5, 0, None), (20_000, 19_000, 19.5), (500, 400, 0.45), (1, 1, 0.001),
     (10**12, 599_000, 599.5)],
)
def test_the_hosts_deadline_becomes_a_latency_budget_and_a_hard_timeout(deadline_ms, budget_ms, hard_seconds):
    from broker.surfaces.sidecar import deadline_budget

    assert deadline_budget(deadline_ms) == (budget_ms, hard_seconds)


def test_an_unconfigured_install_is_invalid_config_with_a_setup_hint(tmp_path):
    empty = Workspace(tmp_path, {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "RECALL_DAEMON": "0",
                                 "XDG_CONFIG_HOME": str(tmp_path / "config")})
    error = ask(empty, "describe-v1.json")["error"]
    assert error["code"] == "invalid_config"
    assert error["setupHint"] == "Run recall init --notes DIR"
