from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest

from .adapter_process import AdapterError, AdapterProcess
from .fake_gmail import ACCOUNT, FakeGmail
from .mailbox import DRILL, ONCALL, PG16

OpenApi = Callable[..., AdapterProcess]


def test_full_expand_renders_every_message_with_html_as_text(
    api: AdapterProcess, served: FakeGmail
) -> None:
    expanded = api.expand(f"mail:thread/{PG16}", "full")
    content = expanded["content"]
    assert content.startswith("Subject: PostgreSQL 16 upgrade plan for db-main\n")
    assert "pg_upgrade --link from 15 to 16" in content
    assert "Rehearsed on the staging replica: 11 minutes of downtime." in content
    assert "Extensions all upgraded & verified." in content
    assert "<p>" not in content and "alert(" not in content and "color: red" not in content
    assert expanded["truncated"] is False
    assert expanded["provenance"] == f"gmail thread {PG16} (2 messages)"
    gets = [r for r in served.requests if r.path.endswith(f"/threads/{PG16}")]
    assert [r.query["format"] for r in gets] == [["full"]]


def test_summary_expand_is_headers_only_and_fetches_no_body(
    api: AdapterProcess, served: FakeGmail
) -> None:
    content = api.expand(f"mail:thread/{DRILL}", "summary")["content"]
    assert content.splitlines() == [
        "Subject: Quarterly backup restore drill results",
        "From: Priya Raman, Tom Becker",
        "To: infra@example.org",
        "Date: 2025-03-05T10:30:00+00:00",
        "Labels: INBOX, IMPORTANT, UNREAD",
        "Messages in thread: 2",
    ]
    gets = [r for r in served.requests if "/threads/" in r.path]
    assert [r.query["format"] for r in gets] == [["metadata"]]


def test_excerpt_expand_shows_the_latest_message(api: AdapterProcess) -> None:
    content = api.expand(f"mail:thread/{DRILL}", "excerpt")["content"]
    assert "scheduled the next drill for June" in content
    assert "42 minutes" not in content


def test_urls_are_removed_from_rendered_bodies(api: AdapterProcess) -> None:
    content = api.expand(f"mail:thread/{ONCALL}", "full")["content"]
    assert "Runbook: [url removed]" in content
    assert "s3cr3t" not in content and "wiki.example.org" not in content


def test_expand_is_clipped_to_the_byte_budget(api: AdapterProcess) -> None:
    expanded = api.expand(f"mail:thread/{PG16}", "full", budget_bytes=120)
    assert len(expanded["content"].encode()) <= 120
    assert (expanded["truncated"], expanded["truncation_boundary"]) == (True, "budget_bytes")


def test_expand_of_a_vanished_thread_is_locator_expired(api: AdapterProcess) -> None:
    with pytest.raises(AdapterError) as error:
        api.expand("mail:thread/18c2a0f4e5b6ffff")
    assert error.value.code == -32003


def test_expand_of_a_foreign_locator_is_locator_unknown(api: AdapterProcess) -> None:
    with pytest.raises(AdapterError) as error:
        api.expand("mail:notes/readme.md#L1-L4")
    assert error.value.code == -32002


def test_health_names_the_store_by_a_hash_of_the_account(api: AdapterProcess) -> None:
    health = api.health()
    assert (health["status"], health["coverage"]) == ("healthy", "complete")
    expected = "gmail:" + hashlib.sha256(ACCOUNT.encode()).hexdigest()[:16]
    assert health["diagnostics"]["store_identity"] == expected
    assert ACCOUNT not in str(health)
    assert health["record_count"] == 6


def test_health_is_denied_when_the_token_belongs_to_another_account(open_api: OpenApi) -> None:
    health = open_api("someone.else@example.org").health()
    assert health["status"] == "denied"
    assert "someone.else@example.org" in health["diagnostics"]["reason"]


@pytest.mark.parametrize("thread_id", ["t100", "thread/with/slashes", "ünïcode id", "ref0123456789abcdef"])
def test_every_thread_id_the_api_returns_prints_a_locator_that_expands(
    open_api: OpenApi, fake_gmail: FakeGmail, thread_id: str
) -> None:
    from dataclasses import replace

    drill = fake_gmail.threads[DRILL]
    fake_gmail.threads = {thread_id: replace(drill, thread_id=thread_id)}
    adapter = open_api()
    [found] = adapter.search("restore drill")["candidates"]
    expanded = adapter.expand(found["locator"], "summary")
    assert expanded["content"].startswith("Subject: Quarterly backup restore drill results\n")
