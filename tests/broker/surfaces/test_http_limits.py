"""The concurrency bound and the request timeout, on a real uvicorn server in a background thread."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
import uvicorn

from broker.config import config_from_text
from broker.surfaces.http.asgi_app import create_app

from .conftest import FIXTURE_ADAPTER, RESTORE

pytestmark = pytest.mark.anyio


def slow_config(tmp_path: Path, delay_ms: int):
    data = tmp_path / "slow.json"
    data.write_text(json.dumps({"records": [RESTORE]}))
    text = "\n".join([
        "[adapters.fixture]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(FIXTURE_ADAPTER))}]",
        'freshness_modes = ["live"]',
        "[[sources]]",
        'source_uid = "UIDSLOW0000000001"',
        'source_id = "slow"',
        'adapter = "fixture"',
        f"location = {json.dumps(str(data))}",
        "timeout_ms = 5000",
        "[sources.settings]",
        f"delay_ms = {delay_ms}",
        "[profiles.default]",
        'sources = ["slow"]',
    ])
    return config_from_text(text, base_dir=tmp_path)


@contextmanager
def running(app) -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_config=None, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listener.close()


async def test_requests_beyond_the_concurrency_bound_are_503_busy(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    app = create_app(slow_config(tmp_path, 600), profile="default", max_in_flight=1, max_queued=0)
    with running(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            replies: list[httpx.Response] = []

            async def ask() -> None:
                replies.append(await client.post("/v1/query", json={"query": "restore drill"}))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(ask)
                await anyio.sleep(0.2)
                tasks.start_soon(ask)
    busy, answered = replies
    assert answered.status_code == 200
    assert busy.status_code == 503
    assert busy.json()["error"]["code"] == "busy"
    assert busy.headers["Retry-After"] == "1"


async def test_a_request_past_the_request_timeout_is_504(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    app = create_app(slow_config(tmp_path, 2000), profile="default", request_timeout=0.5)
    with running(app) as url:
        reply = httpx.post(url + "/v1/query", json={"query": "restore drill"}, timeout=30)
    assert reply.status_code == 504
    assert reply.json()["error"]["code"] == "timeout"
