from __future__ import annotations

from .adapter_process import AdapterProcess
from .fake_gmail import FakeGmail
from .mailbox import CODE, DRILL, LUNCH, ONCALL, PG16, SPAM


def _ids(result: dict) -> list[str]:
    return [c["source_record_id"] for c in result["candidates"]]


def test_manifest_declares_a_live_confidential_message_source(api: AdapterProcess) -> None:
    manifest = api.manifest
    assert manifest["adapter_id"] == "recall-gmail/1"
    assert manifest["record_types"] == ["message"]
    assert manifest["query_modes"] == ["lexical"]
    assert manifest["freshness_modes"] == ["live"]
    assert manifest["as_of_support"] == "filter"
    assert manifest["relevance_basis"] == "lexical_span"
    assert manifest["capabilities"] == ["search", "expand"]
    assert manifest["sensitivity"] == "confidential"


def test_question_is_sent_as_gmail_query_behind_the_safe_prefix(
    api: AdapterProcess, served: FakeGmail
) -> None:
    result = api.search("what about the restore drill")
    listing = next(r for r in served.requests if r.path.endswith("/threads"))
    assert listing.query["q"] == ["-in:spam -in:trash restore drill"]
    assert SPAM not in _ids(result)
    assert result["diagnostics"]["gmail_query"] == "-in:spam -in:trash restore drill"


def test_gmail_syntax_in_the_question_is_sent_verbatim(
    api: AdapterProcess, served: FakeGmail
) -> None:
    result = api.search("from:tom upgrade")
    listing = next(r for r in served.requests if r.path.endswith("/threads"))
    assert listing.query["q"] == ["-in:spam -in:trash from:tom upgrade"]
    assert _ids(result) == [PG16]


def test_search_returns_thread_pointers_and_never_reads_bodies(
    api: AdapterProcess, served: FakeGmail
) -> None:
    result = api.search("restore drill")
    assert result["outcome"] == "success"
    drill = next(c for c in result["candidates"] if c["source_record_id"] == DRILL)
    assert drill["locator"] == f"mail:thread/{DRILL}"
    assert drill["record_type"] == "message"
    assert drill["title"] == "Quarterly backup restore drill results"
    assert drill["excerpt"] == ("Priya Raman, Tom Becker · Quarterly backup restore drill results"
                                " · unread · important · inbox · 2 messages")
    assert drill["metadata"]["message_count"] == 2
    assert "42 minutes" not in str(result) and "restic" not in str(result)
    gets = [r for r in served.requests if "/threads/" in r.path]
    assert gets and all(r.query["format"] == ["metadata"] for r in gets)
    assert all(sorted(r.query["metadataHeaders"]) == ["Date", "From", "Subject", "To"]
               for r in gets)


def test_relevance_is_measured_over_subject_and_senders_only(api: AdapterProcess) -> None:
    result = api.search("restore drill")
    by_id = {c["source_record_id"]: c for c in result["candidates"]}
    assert by_id[DRILL]["relevance"] > 0.8
    assert by_id[LUNCH]["relevance"] == 0  # the words are only in Dana's body
    assert _ids(result) == [DRILL, LUNCH]  # a body-only match goes after a visible one


def test_listing_follows_next_page_tokens(api: AdapterProcess, served: FakeGmail) -> None:
    served.faults.page_size = 2
    result = api.search("infra")
    assert result["outcome"] == "success"
    assert set(_ids(result)) == {DRILL, PG16, ONCALL, LUNCH, CODE}
    assert result["diagnostics"]["pages"] == 3
    tokens = [r.query.get("pageToken") for r in served.requests if r.path.endswith("/threads")]
    assert tokens == [None, ["2"], ["4"]]


def test_limit_caps_the_threads_listed_and_read(api: AdapterProcess, served: FakeGmail) -> None:
    result = api.search("infra", limit=2)
    assert len(result["candidates"]) == 2
    assert len([r for r in served.requests if "/threads/" in r.path]) == 2


def test_since_and_until_become_after_and_before_terms(
    api: AdapterProcess, served: FakeGmail
) -> None:
    result = api.search("infra", filters={
        "since": "2025-03-01T00:00:00Z", "until": "2025-03-06T23:59:59Z"})
    listing = next(r for r in served.requests if r.path.endswith("/threads"))
    assert listing.query["q"] == ["-in:spam -in:trash infra after:1740787199 before:1741305600"]
    assert set(_ids(result)) == {DRILL, LUNCH}


def test_as_of_keeps_only_what_existed_at_that_instant(
    api: AdapterProcess, served: FakeGmail
) -> None:
    result = api.search("restore drill", as_of="2025-03-04T12:00:00Z")
    listing = next(r for r in served.requests if r.path.endswith("/threads"))
    assert listing.query["q"] == ["-in:spam -in:trash restore drill before:1741089601"]
    assert _ids(result) == [DRILL]
    drill = result["candidates"][0]
    assert drill["metadata"]["message_count"] == 1  # Tom's reply came the day after
    assert result["diagnostics"]["as_of"] == "filter_before_instant"


def test_project_and_entity_filters_are_skipped_as_unsupported(api: AdapterProcess) -> None:
    adapter = api
    for filters, name in (({"project": "infra"}, "project"), ({"entities": ["Priya"]}, "entities")):
        result = adapter.search("restore drill", filters=filters)
        assert (result["outcome"], result["reason"]) == ("skipped", "filter_unsupported")
        assert result["diagnostics"]["unsupported_filters"] == [name]
        assert result["candidates"] == []


def test_record_types_without_message_are_skipped(api: AdapterProcess) -> None:
    adapter = api
    skipped = adapter.search("restore drill", filters={"record_types": ["task"]})
    assert (skipped["outcome"], skipped["reason"]) == ("skipped", "record_type_mismatch")
    kept = adapter.search("restore drill", filters={"record_types": ["task", "message"]})
    assert kept["outcome"] == "success" and kept["candidates"]


def test_credential_mail_is_raised_to_restricted(api: AdapterProcess) -> None:
    result = api.search("backup console")
    code = next(c for c in result["candidates"] if c["source_record_id"] == CODE)
    assert code["sensitivity"] == "restricted"
    assert "482913" not in str(result)


def test_a_named_thread_id_is_fetched_and_ranked_first(api: AdapterProcess) -> None:
    result = api.search(f"thread/{ONCALL} restore drill")
    assert _ids(result) == [ONCALL, DRILL, LUNCH]
    assert "exact_identifier" in result["candidates"][0]["match_signals"]


def test_nothing_found_is_a_successful_empty_answer(api: AdapterProcess) -> None:
    result = api.search("kubernetes migration")
    assert (result["outcome"], result["candidates"]) == ("success", [])
