"""The eventstore adapter process against a real Polign Recall store."""

from __future__ import annotations

import os
import signal
import sys
import sysconfig
import time
from pathlib import Path

import pytest

pytest.importorskip(
    "polign_recall",
    reason="Polign Recall is not installed (pip install polign-recall); "
    "the eventstore adapter tests need its real store",
)

from eventstore_process import AdapterProcess  # noqa: E402
from eventstore_store import (  # noqa: E402
    BETWEEN,
    NOTE_TEXT,
    SERVE_KEY,
    SeededStore,
    crash_store_server,
    running,
)

from adapters.eventstore.binary import PolignBinary, locate  # noqa: E402

SOURCE_UNAVAILABLE = -32000
SOURCE_DENIED = -32001
LOCATOR_UNKNOWN = -32002
LOCATOR_EXPIRED = -32003
INVALID_PARAMS = -32602


def results(frame: dict) -> dict:
    assert "result" in frame, frame
    return frame["result"]


def by_title(candidates: list[dict]) -> dict[str, dict]:
    return {c["title"]: c for c in candidates}


def test_manifest_declares_snapshot_beliefs_and_polign_binary(
    store_adapter: AdapterProcess, polign_binary: PolignBinary
) -> None:
    manifest = results(store_adapter.manifest)
    assert manifest["adapter_id"] == "recall-eventstore/1"
    assert manifest["as_of_support"] == "snapshot"
    assert manifest["record_types"] == ["belief", "note"]
    assert manifest["query_modes"] == ["lexical", "temporal"]
    assert manifest["freshness_modes"] == ["live"]
    assert manifest["capabilities"] == ["search", "expand"]
    assert manifest["executable_requirements"][0]["command"] == polign_binary.path


def test_search_now_returns_corrected_value_current_and_old_value_superseded(
    store_adapter: AdapterProcess, store: SeededStore
) -> None:
    candidates = results(store_adapter.search("which editor"))["candidates"]
    titles = by_title(candidates)
    current = titles["user prefers editor: neovim"]
    old = titles["user prefers editor: vim"]
    assert current["locator"] == f"memory:user/prefers_editor#{store.neovim_event}"
    assert "superseded_by" not in current["metadata"]
    assert current["metadata"]["supersedes"] == [f"memory:user/prefers_editor#{store.vim_event}"]
    assert old["metadata"]["superseded_by"] == current["locator"]
    assert old["valid_to"].startswith("2026-06-01T10:00:00")
    assert old["local_rank"] > max(
        c["local_rank"] for c in candidates if "superseded_by" not in c["metadata"]
    )


def test_search_as_of_before_the_correction_returns_old_value_current(
    store_adapter: AdapterProcess, store: SeededStore
) -> None:
    result = results(store_adapter.search("which editor", as_of=BETWEEN))
    editors = [c for c in result["candidates"] if c["metadata"]["predicate"] == "prefers_editor"]
    assert [c["title"] for c in editors] == ["user prefers editor: vim"]
    assert editors[0]["locator"].endswith(f"#{store.vim_event}")
    assert "superseded_by" not in editors[0]["metadata"]
    assert editors[0]["metadata"]["as_of"] == BETWEEN


def test_forgotten_value_is_current_only_before_the_forget(store_adapter: AdapterProcess) -> None:
    before = by_title(
        results(store_adapter.search("technology redis", as_of=BETWEEN))["candidates"]
    )
    now = by_title(results(store_adapter.search("technology redis"))["candidates"])
    assert "user uses technology: redis" in before
    assert "user uses technology: redis" not in now
    assert "user uses technology: postgres" in now


def test_belief_metadata_carries_its_fields(store_adapter: AdapterProcess) -> None:
    current = by_title(results(store_adapter.search("editor"))["candidates"])[
        "user prefers editor: neovim"
    ]
    metadata = current["metadata"]
    assert {k: metadata[k] for k in ("subject", "predicate", "value", "confidence", "source")} == {
        "subject": "user",
        "predicate": "prefers_editor",
        "value": "neovim",
        "confidence": 1,
        "source": "user_stated",
    }
    assert metadata["observed_at"] == "2026-06-01T10:00:00Z"
    assert current["record_type"] == "belief"
    assert current["relevance"] > 0


def test_same_value_under_another_predicate_is_shown_as_elsewhere(
    store_adapter: AdapterProcess,
) -> None:
    titles = by_title(results(store_adapter.search("fly.io deployment"))["candidates"])
    deployment = titles["user deployment target: fly.io"]
    [elsewhere] = deployment["metadata"]["elsewhere"]
    assert (elsewhere["predicate"], elsewhere["value"]) == ("uses_technology", "fly.io")
    assert elsewhere["locator"] == titles["user uses technology: fly.io"]["locator"]
    assert "superseded_by" not in titles["user uses technology: fly.io"]["metadata"]


def test_notes_rank_after_typed_beliefs_with_lower_relevance(store_adapter: AdapterProcess) -> None:
    candidates = results(store_adapter.search("editor"))["candidates"]
    live = [c for c in candidates if "superseded_by" not in c["metadata"]]
    note = by_title(live)[NOTE_TEXT]
    typed = by_title(live)["user prefers editor: neovim"]
    assert note["record_type"] == "note"
    assert note["local_rank"] > typed["local_rank"]
    assert note["relevance"] < typed["relevance"]


def test_expand_shows_the_pair_history_oldest_first(
    store_adapter: AdapterProcess, store: SeededStore
) -> None:
    expanded = results(store_adapter.expand(f"memory:user/prefers_editor#{store.neovim_event}"))
    lines = expanded["content"].splitlines()
    assert lines[0].startswith("user prefers editor: neovim")
    history = [line for line in lines[2:]]
    assert "vim" in history[0] and "neovim" not in history[0]
    assert history[1].startswith("*") and "neovim" in history[1]
    assert expanded["truncated"] is False


def test_expand_includes_the_retraction(store_adapter: AdapterProcess, store: SeededStore) -> None:
    content = results(store_adapter.expand(f"memory:user/uses_technology#{store.redis_event}"))[
        "content"
    ]
    last = content.splitlines()[-1]
    assert "withdrawn: user uses technology: redis" in last


def test_expand_stays_within_budget_bytes(
    store_adapter: AdapterProcess, store: SeededStore
) -> None:
    expanded = results(
        store_adapter.expand(f"memory:user/prefers_editor#{store.neovim_event}", budget_bytes=150)
    )
    assert len(expanded["content"].encode()) <= 150
    assert expanded["truncated"] is True
    assert expanded["truncation_boundary"] == "budget_bytes"


def test_expand_of_an_event_not_in_the_pair_is_locator_expired(
    store_adapter: AdapterProcess, store: SeededStore
) -> None:
    frame = store_adapter.expand(f"memory:user/prefers_editor#{store.redis_event}")
    assert frame["error"]["code"] == LOCATOR_EXPIRED


def test_expand_of_an_unparseable_locator_is_locator_unknown(store_adapter: AdapterProcess) -> None:
    assert store_adapter.expand("memory:no-pair-here")["error"]["code"] == LOCATOR_UNKNOWN


def test_health_reports_binary_store_and_registry(
    store_adapter: AdapterProcess, polign_binary: PolignBinary
) -> None:
    health = results(store_adapter.health())
    assert health["status"] == "healthy"
    diagnostics = health["diagnostics"]
    assert diagnostics["polign_version"] == polign_binary.version
    assert diagnostics["polign_binary"] == polign_binary.path
    assert diagnostics["predicates"] > 1
    assert diagnostics["store_identity"].startswith("dir:")


def test_missing_binary_is_unavailable_naming_setting_and_install_command(
    adapter: AdapterProcess, store: SeededStore, tmp_path: Path
) -> None:
    adapter.initialize(str(store.directory), {"polign_binary": str(tmp_path / "absent")})
    health = results(adapter.health())
    assert health["status"] == "unavailable"
    assert "polign_binary" in health["diagnostics"]["message"]
    assert "pip install polign-recall" in health["diagnostics"]["message"]
    error = adapter.search("editor")["error"]
    assert error["code"] == SOURCE_UNAVAILABLE
    assert "polign_binary" in error["message"]


def test_our_own_cli_is_refused_as_polign_binary(
    adapter: AdapterProcess, store: SeededStore, tmp_path: Path
) -> None:
    adapter.initialize(str(store.directory), {"polign_binary": str(our_cli(tmp_path))})
    error = adapter.search("editor")["error"]
    assert error["code"] == SOURCE_UNAVAILABLE
    assert "recall-broker's own `recall` CLI" in error["message"]


def test_a_program_printing_our_version_line_is_refused(tmp_path: Path) -> None:
    impostor = tmp_path / "recall"
    impostor.write_text("#!/bin/sh\necho 'recall 0.1.0'\n")
    impostor.chmod(0o755)
    with pytest.raises(Exception, match="recall-broker's own CLI"):
        locate(str(impostor))


def test_locating_never_adopts_our_cli_first_on_path(
    tmp_path: Path, polign_binary: PolignBinary, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = our_cli(tmp_path / "ours")
    polign_dir = tmp_path / "polign"
    polign_dir.mkdir()
    (polign_dir / "recall").symlink_to(polign_binary.path)
    monkeypatch.delenv("RECALL_BIN", raising=False)
    monkeypatch.setenv(
        "PATH", os.pathsep.join((str(ours.parent), str(polign_dir), "/usr/bin:/bin"))
    )
    scripts = Path(sysconfig.get_path("scripts"))
    found = locate(None)
    assert Path(found.path).parent in (polign_dir, scripts)
    assert found.path != str(ours)


def test_a_directory_polign_never_opened_is_refused_at_initialize(
    adapter: AdapterProcess, tmp_path: Path
) -> None:
    frame = adapter.initialize(str(tmp_path))
    assert frame["error"]["code"] == INVALID_PARAMS
    assert "not a Polign Recall data directory" in frame["error"]["message"]
    assert not (tmp_path / "local-key").exists()


def test_unknown_setting_is_refused_at_initialize(
    adapter: AdapterProcess, store: SeededStore
) -> None:
    frame = adapter.initialize(str(store.directory), {"writable": "yes"})
    assert frame["error"]["code"] == INVALID_PARAMS
    assert "writable" in frame["error"]["message"]


def test_crashed_store_fails_history_instead_of_answering_empty(
    small_store: Path, adapter: AdapterProcess
) -> None:
    adapter.initialize(str(small_store))
    helix = results(adapter.search("editor"))["candidates"][0]["locator"]
    crash_store_server(small_store)
    expand_error = adapter.expand(helix)["error"]
    assert expand_error["code"] == SOURCE_UNAVAILABLE
    assert "complete exact history unavailable" in expand_error["message"]
    assert results(adapter.search("editor"))["candidates"][0]["locator"] == helix  # restarted


def test_recall_mcp_dying_mid_search_is_source_unavailable_then_restarted(
    small_store: Path, adapter: AdapterProcess
) -> None:
    adapter.initialize(str(small_store))
    results(adapter.search("editor"))
    [mcp] = adapter.mcp_children()
    os.kill(mcp, signal.SIGSTOP)
    pending = adapter.send(
        "recall/search",
        {"query": "editor", "filters": {}, "limit": 5, "deadline": "2099-01-01T00:00:00Z"},
    )
    time.sleep(0.3)  # the request is now with the stopped process
    os.kill(mcp, signal.SIGKILL)
    error = adapter.receive(pending)["error"]
    assert error["code"] == SOURCE_UNAVAILABLE
    assert "SIGKILL" in error["message"]
    assert results(adapter.search("editor"))["candidates"]
    assert not running(mcp)


def test_recall_serve_url_with_key_answers_like_the_subprocess(serve_url: str) -> None:
    adapter = AdapterProcess(env={"RECALL_API_KEY": SERVE_KEY})
    try:
        manifest = results(adapter.initialize(serve_url, {"transport": "serve"}))
        assert "executable_requirements" not in manifest
        titles = by_title(results(adapter.search("editor"))["candidates"])
        current = titles["user prefers editor: zed"]
        assert titles["user prefers editor: vim"]["metadata"]["superseded_by"] == current["locator"]
        assert results(adapter.health())["status"] == "healthy"
    finally:
        adapter.close()


def test_recall_serve_refusing_the_key_is_source_denied(serve_url: str) -> None:
    adapter = AdapterProcess(env={"RECALL_API_KEY": "rcl_unknown_0000"})
    try:
        adapter.initialize(serve_url, {"transport": "serve"})
        assert adapter.search("editor")["error"]["code"] == SOURCE_DENIED
        assert results(adapter.health())["status"] == "denied"
    finally:
        adapter.close()


def our_cli(directory: Path) -> Path:
    """This project's `recall` console script: the installed one, or pip's exact form of it."""
    installed = Path(sysconfig.get_path("scripts")) / "recall"
    if installed.is_file() and b"broker.surfaces.cli" in installed.read_bytes()[:4096]:
        return installed
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "recall"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom broker.surfaces.cli import main\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n"
    )
    script.chmod(0o755)
    return script
