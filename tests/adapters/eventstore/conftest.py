"""Fixtures: a seeded Polign Recall store, a small one to break, and the adapter process."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from eventstore_process import AdapterProcess
from eventstore_store import (
    FLY_AT,
    NEOVIM_AT,
    NOTE_AT,
    NOTE_TEXT,
    POSTGRES_AT,
    REDIS_AT,
    SERVE_KEY,
    VIM_AT,
    SeededStore,
    open_client,
    stop_store_server,
)

from adapters.eventstore.binary import PolignBinary, find_polign_server, locate


@pytest.fixture(scope="session")
def polign_binary() -> PolignBinary:
    return locate(None)


@pytest.fixture(scope="session")
def store(
    tmp_path_factory: pytest.TempPathFactory, polign_binary: PolignBinary
) -> Iterator[SeededStore]:
    directory = tmp_path_factory.mktemp("polign") / "store"
    try:
        with open_client(directory, polign_binary) as client:
            vim = client.remember("user", "prefers_editor", "vim", observed_at=VIM_AT)
            neovim = client.remember("user", "prefers_editor", "neovim", observed_at=NEOVIM_AT)
            client.remember("user", "uses_technology", "postgres", observed_at=POSTGRES_AT)
            redis = client.remember("user", "uses_technology", "redis", observed_at=REDIS_AT)
            client.remember("user", "note", NOTE_TEXT, observed_at=NOTE_AT)
            assert client.forget("user", "uses_technology", "redis") == 1
            client.remember("user", "uses_technology", "fly.io", observed_at=FLY_AT)
            client.remember("user", "deployment_target", "fly.io", observed_at=FLY_AT)
        yield SeededStore(
            directory, vim.stored.event_id, neovim.stored.event_id, redis.stored.event_id
        )
    finally:
        stop_store_server(directory)


@pytest.fixture
def small_store(tmp_path: Path, polign_binary: PolignBinary) -> Iterator[Path]:
    """A store of one belief, for tests that break it."""
    directory = tmp_path / "store"
    try:
        with open_client(directory, polign_binary) as client:
            client.remember("user", "prefers_editor", "helix", observed_at=VIM_AT)
        yield directory
    finally:
        stop_store_server(directory)


@pytest.fixture(scope="session")
def store_adapter(store: SeededStore) -> Iterator[AdapterProcess]:
    """One adapter process on the seeded store, shared by the tests that only read."""
    process = AdapterProcess()
    try:
        process.manifest = process.initialize(str(store.directory))
        yield process
    finally:
        process.close()


@pytest.fixture
def adapter() -> Iterator[AdapterProcess]:
    process = AdapterProcess()
    try:
        yield process
    finally:
        process.close()


@pytest.fixture
def serve_url(tmp_path: Path, polign_binary: PolignBinary) -> Iterator[str]:
    """A running `recall serve` over a fresh local store, seeded through it with SERVE_KEY."""
    from polign_recall import Client

    directory = tmp_path / "served"
    keys = tmp_path / "keys"
    keys.write_text(f"{SERVE_KEY} team\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = os.pathsep.join(
        filter(None, (find_polign_server(None, polign_binary), os.environ["PATH"]))
    )
    argv = [
        polign_binary.path,
        "serve",
        "-typed",
        "-listen",
        f"127.0.0.1:{port}",
        "-backend",
        "local",
        "-url",
        str(directory),
        "-keys-file",
        str(keys),
    ]
    server = subprocess.Popen(
        argv, env={**os.environ, "PATH": path}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        give_up = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < give_up and server.poll() is None, (
                    "recall serve did not start"
                )
                time.sleep(0.05)
        with Client(url=url, api_key=SERVE_KEY, typed=True) as client:
            client.remember("user", "prefers_editor", "vim", observed_at=VIM_AT)
            client.remember("user", "prefers_editor", "zed", observed_at=NEOVIM_AT)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        stop_store_server(directory)
