from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from .adapter_process import AdapterProcess
from .fake_gmail import CLIENT_ID, CLIENT_SECRET, FIRST_ACCESS_TOKEN, REFRESH_TOKEN, FakeGmail
from .mailbox import mbox_bytes

SECRETS = (FIRST_ACCESS_TOKEN, REFRESH_TOKEN, CLIENT_SECRET)


@pytest.fixture
def fake_gmail() -> Iterator[FakeGmail]:
    server = FakeGmail().start()
    yield server
    server.stop()
    writes = [r for r in server.mailbox_requests() if r.method != "GET"]
    assert writes == [], "the adapter sent a request that is not a GET to the mailbox"


def write_token(path: Path, *, token_uri: str, expired: bool = False,
                token: str = FIRST_ACCESS_TOKEN, valid_for: timedelta | None = None) -> Path:
    """A token file as Google's tools write it (Credentials.to_json), written in place;
    ``valid_for`` sets how long the access token has left (default an hour, or expired)."""
    if valid_for is None:
        valid_for = timedelta(hours=-1) if expired else timedelta(hours=1)
    expiry = datetime.now(UTC) + valid_for
    path.write_text(json.dumps({
        "token": token, "refresh_token": REFRESH_TOKEN, "token_uri": token_uri,
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
        "scopes": ["https://www.googleapis.com/auth/gmail.readonly"],
        "universe_domain": "googleapis.com", "account": "",
        "expiry": expiry.replace(tzinfo=None).isoformat() + "Z",
    }))
    path.chmod(0o600)
    return path


@pytest.fixture
def token_file(tmp_path: Path, fake_gmail: FakeGmail) -> Path:
    return write_token(tmp_path / "gmail-token.json", token_uri=fake_gmail.token_uri)


OpenAdapter = Callable[..., AdapterProcess]


@pytest.fixture
def open_adapter(tmp_path: Path) -> Iterator[OpenAdapter]:
    """Spawn and initialize adapter processes; all are shut down after the test."""
    processes: list[AdapterProcess] = []

    def spawn(location: Path | str | None, settings: dict[str, Any] | None = None,
              workdir: Path | None = None) -> AdapterProcess:
        process = AdapterProcess()
        processes.append(process)
        process.initialize(location, workdir or tmp_path / "workdir", settings)
        return process

    yield spawn
    for process in processes:
        process.close()


@pytest.fixture
def open_api(
    open_adapter: OpenAdapter, fake_gmail: FakeGmail, token_file: Path
) -> Callable[..., AdapterProcess]:
    """An adapter in API mode against the fake server, with a valid token file."""

    def spawn(location: str | None = None, **settings: Any) -> AdapterProcess:
        return open_adapter(location, {"api_base": fake_gmail.base_url,
                                       "token_file": str(token_file), **settings})

    return spawn


@pytest.fixture
def mbox_file(tmp_path: Path) -> Path:
    path = tmp_path / "All mail Including Spam and Trash.mbox"
    path.write_bytes(mbox_bytes())
    return path


@pytest.fixture(scope="module")
def shared_api(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[AdapterProcess, FakeGmail]]:
    """One fake server and one adapter process for tests that only read (faults stay off)."""
    server = FakeGmail().start()
    folder = tmp_path_factory.mktemp("gmail-api")
    token = write_token(folder / "gmail-token.json", token_uri=server.token_uri)
    process = AdapterProcess()
    process.initialize(None, folder / "workdir",
                       {"api_base": server.base_url, "token_file": str(token)})
    yield process, server
    process.close()
    server.stop()
    assert [r for r in server.mailbox_requests() if r.method != "GET"] == []


@pytest.fixture
def api(shared_api: tuple[AdapterProcess, FakeGmail]) -> AdapterProcess:
    process, server = shared_api
    server.requests.clear()
    server.token_requests.clear()
    return process


@pytest.fixture
def served(shared_api: tuple[AdapterProcess, FakeGmail]) -> FakeGmail:
    return shared_api[1]


@pytest.fixture(scope="module")
def mbox_reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdapterProcess]:
    """One adapter process over an unchanging mbox, for tests that only read."""
    folder = tmp_path_factory.mktemp("gmail-mbox")
    path = folder / "All mail Including Spam and Trash.mbox"
    path.write_bytes(mbox_bytes())
    process = AdapterProcess()
    process.initialize(path, folder / "workdir")
    yield process
    process.close()
