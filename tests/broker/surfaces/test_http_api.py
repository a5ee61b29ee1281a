"""The /v1 API of a real ``recall serve`` process: statuses, headers and typed errors."""

from __future__ import annotations

import httpx
import pytest

from .conftest import Served

QUERY = "restore drill"


def post(server: Served, path: str, body: object, **headers: str) -> httpx.Response:
    return httpx.post(server.url + path, json=body, headers=headers, timeout=30)


def test_answered_query_is_200_with_outcome_and_coverage_headers(default_server):
    reply = post(default_server, "/v1/query", {"query": QUERY})
    assert reply.status_code == 200
    assert reply.headers["Recall-Outcome"] == "answered"
    assert reply.headers["Recall-Coverage"] == "complete"
    assert reply.headers["Recall-Profile"] == "default"
    assert {r["primary"]["locator"] for r in reply.json()["results"]} >= {"notes:restore", "tasks:t1"}


def test_abstained_query_is_200(default_server):
    reply = post(default_server, "/v1/query", {"query": "submarine ballast"})
    assert reply.status_code == 200
    assert reply.json()["outcome"] == "abstained"
    assert reply.headers["Recall-Outcome"] == "abstained"


def test_degraded_query_is_206_and_still_a_typed_result(wide_server):
    reply = post(wide_server, "/v1/query", {"query": QUERY, "scope": {"source_ids": ["notes", "broken"]}})
    assert reply.status_code == 206
    body = reply.json()
    assert (body["outcome"], body["coverage"]) == ("answered", "degraded")
    assert reply.headers["Recall-Coverage"] == "degraded"


def test_failed_query_is_503_and_still_a_typed_result(wide_server):
    reply = post(wide_server, "/v1/query", {"query": QUERY, "scope": {"source_ids": ["broken"]}})
    assert reply.status_code == 503
    body = reply.json()
    assert body["outcome"] == "failed"
    assert [r["outcome"] for r in body["source_outcomes"] if r["source_id"] == "broken"] == ["unavailable"]


def test_pointer_tier_returns_the_pointer_projection(default_server):
    reply = post(default_server, "/v1/query", {"query": QUERY, "tier": "pointer"})
    body = reply.json()
    assert body["tier"] == "pointer"
    assert "explanation" not in body["results"][0]
    assert body["results"][0]["rank"] == 1


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"query": "   "}, "query is empty"),
        ({"query": QUERY, "colour": "blue"}, "colour"),
        ({"query": QUERY, "limit": -1}, "limit"),
        ({"query": QUERY, "mode": "telepathic"}, "mode"),
        ({"query": QUERY, "tier": "everything"}, "tier"),
        ({"query": QUERY, "budget": {"surface": "tool"}}, "budget.surface"),
        ([QUERY], "JSON object"),
    ],
    ids=["empty", "unknown-field", "negative-limit", "bad-mode", "bad-tier", "tool-surface", "not-object"],
)
def test_bad_query_request_is_400_bad_request(default_server, body, fragment):
    reply = post(default_server, "/v1/query", body)
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "bad_request"
    assert fragment in reply.json()["error"]["message"]


def test_trailing_data_after_the_json_body_is_400(default_server):
    reply = httpx.post(default_server.url + "/v1/query", content=b'{"query": "restore"} {}',
                       headers={"Content-Type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "bad_request"


def test_unsatisfiable_scope_is_400(default_server):
    reply = post(default_server, "/v1/query", {"query": QUERY, "scope": {"source_ids": ["nowhere"]}})
    assert reply.status_code == 400
    assert "unsatisfiable scope" in reply.json()["error"]["message"]


def test_other_profile_is_409_profile_mismatch(default_server):
    reply = post(default_server, "/v1/query", {"query": QUERY, "profile": "wide"})
    assert reply.status_code == 409
    assert reply.json()["error"]["code"] == "profile_mismatch"


def test_pre_reply_mode_withholds_named_lineages(default_server):
    first = post(default_server, "/v1/query", {"query": QUERY}).json()
    shown = first["results"][0]["members"][0]["lineage_root"]
    reply = post(default_server, "/v1/query",
                 {"query": QUERY, "mode": "pre_reply", "suppress_lineages": [shown]})
    body = reply.json()
    assert shown not in [m["lineage_root"] for r in body["results"] for m in r["members"]]
    assert {"reason": "lineage_suppressed", "count": 1} in [
        {k: s[k] for k in ("reason", "count")} for s in body["suppressed"]
    ]


def test_body_without_json_content_type_is_415(default_server):
    reply = httpx.post(default_server.url + "/v1/query", content=b'{"query": "x"}',
                       headers={"Content-Type": "text/plain"})
    assert reply.status_code == 415


def test_body_over_one_mebibyte_is_413(default_server):
    reply = post(default_server, "/v1/query", {"query": "x" * (1 << 20)})
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == "bad_request"


def test_unknown_path_is_404_listing_the_endpoints(default_server):
    reply = httpx.get(default_server.url + "/v1/everything")
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "not_found"
    assert "/v1/query" in reply.json()["error"]["message"]


def test_wrong_method_is_405_not_found_with_the_one_allowed_method(default_server):
    """As the reference answers: code not_found, and Allow names only the method served."""
    reply = httpx.get(default_server.url + "/v1/query")
    assert reply.status_code == 405
    assert reply.headers["Allow"] == "POST"
    assert reply.json()["error"]["code"] == "not_found"
    reply = httpx.post(default_server.url + "/v1/sources", json={})
    assert (reply.status_code, reply.headers["Allow"]) == (405, "GET")
    assert reply.json()["error"]["code"] == "not_found"


def test_expand_returns_the_evidence(default_server):
    reply = post(default_server, "/v1/expand", {"locator": "notes:restore"})
    assert reply.status_code == 200
    assert reply.json()["content"] == "Restore the newest snapshot and compare checksums."


@pytest.mark.parametrize(
    ("locator", "status", "code"),
    [
        ("no-colon", 400, "bad_request"),  # the reference's codes: not a locator at all
        ("", 400, "malformed_locator"),  # a locator with nothing in it
        ("nowhere:x", 404, "not_configured"),
        ("notes:no-such-record", 410, "locator_expired"),
    ],
)
def test_expand_errors_map_to_statuses_by_code(default_server, locator, status, code):
    reply = post(default_server, "/v1/expand", {"locator": locator})
    assert reply.status_code == status
    assert reply.json()["error"]["code"] == code


def test_expand_without_a_locator_is_malformed_locator(default_server):
    reply = post(default_server, "/v1/expand", {"detail": "excerpt"})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "malformed_locator"


def test_refresh_of_an_indexed_source_is_200(default_server):
    reply = post(default_server, "/v1/refresh", {"source_id": "kb"})
    assert reply.status_code == 200
    assert reply.headers["Recall-Outcome"] == "refreshed"
    assert reply.json()["sources"][0]["status"] == "refreshed"


def test_refresh_that_refreshes_nothing_is_503(default_server):
    reply = post(default_server, "/v1/refresh", {"source_id": "nowhere"})
    assert reply.status_code == 503
    assert reply.json()["sources"][0]["reason"] == "source_not_configured"


def test_sources_is_200_when_every_probed_source_is_usable(default_server):
    reply = httpx.get(default_server.url + "/v1/sources")
    assert reply.status_code == 200
    assert reply.headers["Recall-Coverage"] == "ok"
    assert [s["source_id"] for s in reply.json()["sources"]][:3] == ["broken", "crashy", "kb"]


def test_sources_is_206_when_a_probed_source_is_unusable(wide_server):
    reply = httpx.get(wide_server.url + "/v1/sources")
    assert reply.status_code == 206
    assert reply.headers["Recall-Coverage"] == "degraded"


def test_health_and_version_name_the_served_profile(default_server):
    assert httpx.get(default_server.url + "/v1/health").json()["status"] == "ok"
    version = httpx.get(default_server.url + "/v1/version").json()
    assert (version["api_version"], version["profile"]) == ("v1", "default")


def test_doctor_reports_every_check_with_the_overall_status(default_server):
    reply = httpx.get(default_server.url + "/v1/doctor")
    body = reply.json()
    assert reply.status_code == {"ok": 200, "degraded": 206, "failed": 503}[body["status"]]
    assert reply.headers["Recall-Coverage"] == body["status"]
    assert [c["name"] for c in body["checks"]][:3] == ["configuration", "trust_boundary", "identity"]
