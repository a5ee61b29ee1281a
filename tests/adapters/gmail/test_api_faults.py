from __future__ import annotations

import json
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from .adapter_process import AdapterError, AdapterProcess, deadline_in
from .conftest import SECRETS, OpenAdapter, write_token
from .fake_gmail import FIRST_ACCESS_TOKEN, FakeGmail
from .mailbox import CODE, DRILL, LUNCH, ONCALL

OpenApi = Callable[..., AdapterProcess]
FIX_COMMAND = "recall-gmail auth --client-secrets FILE"


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_expired_token_is_refreshed_and_rewritten_owner_only(
    open_api: OpenApi, fake_gmail: FakeGmail, token_file: Path
) -> None:
    write_token(token_file, token_uri=fake_gmail.token_uri, expired=True)
    token_file.chmod(0o644)
    result = open_api().search("restore drill")
    assert result["outcome"] == "success"
    assert len(fake_gmail.token_requests) == 1
    stored = json.loads(token_file.read_text())
    assert stored["token"] == fake_gmail.issued_tokens()[0] != FIRST_ACCESS_TOKEN
    assert stored["token_uri"] == fake_gmail.token_uri
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert [p.name for p in token_file.parent.iterdir() if p.name.startswith(".")] == []


def test_rejected_access_token_is_refreshed_once_and_the_request_retried(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.valid_tokens = {"ya29.some-other-token"}  # the stored token was invalidated
    result = open_api().search("restore drill")
    assert result["outcome"] == "success" and result["candidates"]
    assert len(fake_gmail.token_requests) == 1
    statuses = [r.authorization for r in fake_gmail.mailbox_requests()]
    assert statuses[0] == f"Bearer {FIRST_ACCESS_TOKEN}"
    assert statuses[-1] == f"Bearer {fake_gmail.issued_tokens()[0]}"


def test_token_uri_setting_overrides_the_token_files_endpoint(
    open_api: OpenApi, fake_gmail: FakeGmail, token_file: Path
) -> None:
    write_token(token_file, token_uri=_closed_port_url(), expired=True)
    result = open_api(token_uri=fake_gmail.token_uri).search("restore drill")
    assert result["outcome"] == "success"
    assert len(fake_gmail.token_requests) == 1


def test_missing_token_file_is_denied_with_the_command_that_fixes_it(
    open_adapter: OpenAdapter, fake_gmail: FakeGmail, tmp_path: Path
) -> None:
    adapter = open_adapter(None, {"api_base": fake_gmail.base_url,
                                  "token_file": str(tmp_path / "absent.json")})
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32001
    assert FIX_COMMAND in error.value.message and "absent.json" in error.value.message
    health = adapter.health()
    assert (health["status"], health["coverage"]) == ("denied", "unknown")
    assert FIX_COMMAND in health["diagnostics"]["reason"]
    assert fake_gmail.mailbox_requests() == []


def test_revoked_token_is_denied_in_search_and_health(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.valid_tokens = set()
    fake_gmail.faults.revoked = True
    adapter = open_api()
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32001
    assert "invalid_grant" in error.value.message and FIX_COMMAND in error.value.message
    assert adapter.health()["status"] == "denied"


def test_unreachable_gmail_is_source_unavailable(
    open_adapter: OpenAdapter, token_file: Path
) -> None:
    adapter = open_adapter(None, {"api_base": _closed_port_url(), "token_file": str(token_file)})
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32000
    assert "cannot reach Gmail" in error.value.message
    health = adapter.health()
    assert health["status"] == "unavailable" and "cannot reach Gmail" in health["diagnostics"]["reason"]


def test_transient_rate_limit_and_server_errors_are_retried(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.faults.retry_after = "0"
    fake_gmail.faults.thread_status = {DRILL: [429, 200], LUNCH: [503, 200]}
    result = open_api().search("restore drill")
    assert result["outcome"] == "success"
    assert {c["source_record_id"] for c in result["candidates"]} == {DRILL, LUNCH}
    assert result["diagnostics"]["retries"] == 2


def test_lasting_rate_limit_on_some_threads_gives_partial_with_the_reason(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.faults.retry_after = "30"
    fake_gmail.faults.thread_status = {LUNCH: [429]}
    result = open_api().search("restore drill", deadline=deadline_in(5))
    assert result["outcome"] == "partial"
    assert [c["source_record_id"] for c in result["candidates"]] == [DRILL]
    assert "confirmed_at" not in result["candidates"][0]
    assert result["diagnostics"]["coverage_reason"] == "rate_limited"
    assert result["diagnostics"]["threads_unread"] == 1


def test_rate_limited_listing_is_unavailable_with_the_reason(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.faults.retry_after = "30"
    fake_gmail.faults.list_status = 429
    with pytest.raises(AdapterError) as error:
        open_api().search("restore drill", deadline=deadline_in(5))
    assert error.value.code == -32000
    assert "rate limit" in error.value.message
    assert error.value.data == {"reason": "rate_limited"}


def test_slow_thread_reads_cut_by_the_deadline_give_partial(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.faults.slow_threads = {LUNCH: 5.0}
    result = open_api().search("restore drill", deadline=deadline_in(2.0))
    assert result["outcome"] == "partial"
    assert [c["source_record_id"] for c in result["candidates"]] == [DRILL]
    assert result["diagnostics"]["coverage_reason"] == "deadline"


def test_a_page_cut_by_the_deadline_is_partial_never_success(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.faults.page_size = 2
    fake_gmail.faults.slow_pages_after = 2
    result = open_api().search("infra", deadline=deadline_in(2.0))
    assert result["outcome"] == "partial"
    assert [c["source_record_id"] for c in result["candidates"]] == [ONCALL, CODE]
    assert result["diagnostics"]["coverage_reason"].startswith("deadline_cut_listing")


def test_secrets_never_appear_on_the_wire_or_in_logs(
    open_api: OpenApi, fake_gmail: FakeGmail, token_file: Path
) -> None:
    write_token(token_file, token_uri=fake_gmail.token_uri, expired=True)
    adapter = open_api()
    adapter.search("restore drill")
    adapter.expand(f"mail:thread/{DRILL}")
    adapter.health()
    fake_gmail.faults.revoked = True
    fake_gmail.valid_tokens = set()
    with pytest.raises(AdapterError):
        adapter.search("upgrade")
    adapter.health()
    adapter.close()
    output = b"".join(adapter.transcript).decode() + adapter.stderr()
    for secret in (*SECRETS, *fake_gmail.issued_tokens(), "ya29.refreshed-access-token-01"):
        assert secret not in output
