from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .adapter_process import AdapterError, AdapterProcess
from .conftest import OpenAdapter
from .fake_gmail import FakeGmail
from .mailbox import DRILL, LUNCH

OpenApi = Callable[..., AdapterProcess]


def test_query_prefix_setting_replaces_the_default_scope(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    open_api(query_prefix="in:inbox -label:archived").search("restore drill")
    listing = next(r for r in fake_gmail.requests if r.path.endswith("/threads"))
    assert listing.query["q"] == ["in:inbox -label:archived restore drill"]


def test_max_candidates_caps_the_answer_below_the_request_limit(open_api: OpenApi) -> None:
    result = open_api(max_candidates=1).search("infra", limit=20)
    assert len(result["candidates"]) == 1


def test_fetch_concurrency_bounds_thread_reads_in_flight(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.faults.slow_threads = {DRILL: 0.2, LUNCH: 0.2}
    open_api(fetch_concurrency=1).search("restore drill")
    assert fake_gmail.max_in_flight == 1
    open_api().search("restore drill")
    assert fake_gmail.max_in_flight == 2


def test_request_timeout_gives_up_on_a_slow_thread(
    open_api: OpenApi, fake_gmail: FakeGmail
) -> None:
    fake_gmail.faults.slow_threads = {LUNCH: 3.0}
    result = open_api(request_timeout_ms=300).search("restore drill")
    assert result["outcome"] == "partial"
    assert [c["source_record_id"] for c in result["candidates"]] == [DRILL]
    assert result["diagnostics"]["coverage_reason"] == "unreachable"


def test_mode_setting_reads_a_file_without_the_mbox_suffix_as_mbox(
    open_adapter: OpenAdapter, mbox_file: Path, tmp_path: Path
) -> None:
    export = tmp_path / "takeout-export"
    export.write_bytes(mbox_file.read_bytes())
    adapter = open_adapter(export, {"mode": "mbox"})
    assert adapter.manifest["freshness_modes"] == ["indexed"]
    assert adapter.search("restore drill")["candidates"][0]["source_record_id"] == DRILL


@pytest.mark.parametrize(("location", "settings", "complaint"), [
    (None, {"token_path": "x"}, "unknown gmail setting(s) token_path"),
    ("export.mbox", {"api_base": "http://127.0.0.1:1"}, "apply to API mode only"),
    ("not an address", {}, "is not an account address"),
    (None, {"max_candidates": 0}, "max_candidates must be an integer in 1..500"),
])
def test_bad_settings_are_refused_at_the_handshake(
    tmp_path: Path, location: str | None, settings: dict, complaint: str
) -> None:
    process = AdapterProcess()
    try:
        with pytest.raises(AdapterError) as error:
            process.initialize(location, tmp_path / "workdir", settings)
        assert error.value.code == -32602
        assert complaint in error.value.message
    finally:
        process.close()
