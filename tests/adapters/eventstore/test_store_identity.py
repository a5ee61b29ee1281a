"""A store whose data is gone, or that was replaced, is refused as unavailable, never read empty."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("polign_recall", reason="the eventstore tests need Polign Recall's real store")

from eventstore_process import AdapterProcess  # noqa: E402
from eventstore_store import VIM_AT, open_client, stop_store_server  # noqa: E402

from adapters.eventstore.binary import PolignBinary  # noqa: E402

SOURCE_UNAVAILABLE = -32000


def test_a_store_with_a_key_but_no_data_is_refused_naming_the_path(
    small_store: Path, adapter: AdapterProcess
) -> None:
    stop_store_server(small_store)
    shutil.rmtree(small_store / "data")
    adapter.initialize(str(small_store))
    error = adapter.search("editor")["error"]
    assert error["code"] == SOURCE_UNAVAILABLE
    assert f"Polign Recall store {small_store} has no data" in error["message"]
    health = adapter.health()["result"]
    assert health["status"] == "unavailable" and str(small_store) in health["diagnostics"]["message"]
    assert not (small_store / "data").exists()  # nothing re-created an empty store


def test_a_store_replaced_since_the_source_answered_is_refused(
    small_store: Path, adapter: AdapterProcess, polign_binary: PolignBinary
) -> None:
    adapter.initialize(str(small_store))
    assert adapter.search("editor")["result"]["candidates"]
    stop_store_server(small_store)
    shutil.rmtree(small_store / "data")
    with open_client(small_store, polign_binary) as client:  # a new, different store in its place
        client.remember("user", "prefers_editor", "nano", observed_at=VIM_AT)
    try:
        error = adapter.search("editor")["error"]
        assert error["code"] == SOURCE_UNAVAILABLE
        assert "is not the store this source last answered from" in error["message"]
        assert str(small_store) in error["message"]
        again = AdapterProcess()  # the record outlives the process
        try:
            again.initialize(str(small_store))
            assert again.search("editor")["error"]["code"] == SOURCE_UNAVAILABLE
        finally:
            again.close()
    finally:
        stop_store_server(small_store)


def test_recall_query_over_a_store_without_data_is_degraded_naming_the_path(
    small_store: Path, tmp_path: Path
) -> None:
    import json
    import os
    import subprocess
    import sys

    config = tmp_path / "config" / "recall" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        '[[sources]]\nsource_uid = "EVSTORE000000001"\nsource_id = "memory"\nadapter = "eventstore"\n'
        f"location = {json.dumps(str(small_store))}\n\n"
        '[profiles.default]\nsources = ["memory"]\nmax_sensitivity = "internal"\n'
    )
    stop_store_server(small_store)
    shutil.rmtree(small_store / "data")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state")}
    run = subprocess.run(
        [str(Path(sys.executable).parent / "recall"), "query", "--json", "--explain", "editor"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert run.returncode == 3, run.stdout + run.stderr
    [report] = json.loads(run.stdout)["source_outcomes"]
    assert (report["outcome"], report["reason"]) == ("skipped", "unhealthy")
    assert report["diagnostics"]["reason"] == "store_refused"
    assert f"Polign Recall store {small_store} has no data" in report["diagnostics"]["message"]
    assert not (small_store / "data").exists()
