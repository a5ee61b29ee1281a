"""The token file decides access, in a warm adapter as in a cold one.

One adapter process lives through each test, as it does in a resident broker:
the user re-authorizes (a new token file), revokes (removes the file), or the
access token runs out, and the very next search follows the file on disk.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from adapters.gmail.credentials import REFRESH_MARGIN

from .adapter_process import AdapterError, AdapterProcess
from .conftest import write_token
from .fake_gmail import FIRST_ACCESS_TOKEN, FakeGmail
from .mailbox import DRILL

OpenApi = Callable[..., AdapterProcess]
SECOND_ACCESS_TOKEN = "ya29.second-access-token-Qm42"


def bearers_since(fake_gmail: FakeGmail, seen: int) -> list[str | None]:
    return [r.authorization for r in fake_gmail.mailbox_requests()[seen:]]


def reauthorize(token_file: Path, token_uri: str, how: str) -> None:
    """The user authorizes again: a new file renamed over the old one, or the same file rewritten."""
    if how == "replaced":
        fresh = token_file.with_name("fresh-token.json")
        write_token(fresh, token_uri=token_uri, token=SECOND_ACCESS_TOKEN)
        os.replace(fresh, token_file)
    else:
        write_token(token_file, token_uri=token_uri, token=SECOND_ACCESS_TOKEN)


@pytest.mark.parametrize("how", ["replaced", "rewritten"])
def test_a_new_token_file_is_used_by_the_next_search(
    open_api: OpenApi, fake_gmail: FakeGmail, token_file: Path, how: str
) -> None:
    adapter = open_api()
    assert adapter.search("restore drill")["candidates"]
    assert set(bearers_since(fake_gmail, 0)) == {f"Bearer {FIRST_ACCESS_TOKEN}"}

    # the old grant is revoked with the re-authorization: only the new token opens the mailbox
    fake_gmail.valid_tokens = {SECOND_ACCESS_TOKEN}
    reauthorize(token_file, fake_gmail.token_uri, how)
    seen = len(fake_gmail.mailbox_requests())
    assert adapter.search("restore drill")["candidates"]

    assert set(bearers_since(fake_gmail, seen)) == {f"Bearer {SECOND_ACCESS_TOKEN}"}
    assert fake_gmail.token_requests == []


def test_a_removed_token_file_stops_reading_mail_at_once(
    open_api: OpenApi, fake_gmail: FakeGmail, token_file: Path
) -> None:
    adapter = open_api()
    assert adapter.search("restore drill")["candidates"]
    seen = len(fake_gmail.mailbox_requests())

    token_file.unlink()

    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32001
    assert f"no Gmail token file at {token_file}" in error.value.message
    with pytest.raises(AdapterError) as error:
        adapter.expand(f"mail:thread/{DRILL}")
    assert error.value.code == -32001
    health = adapter.health()
    assert health["status"] == "denied"
    assert fake_gmail.mailbox_requests()[seen:] == []

    # authorizing again brings the mail back to the same process
    write_token(token_file, token_uri=fake_gmail.token_uri)
    assert adapter.search("restore drill")["candidates"]


def test_an_access_token_running_out_is_refreshed_by_the_next_warm_search(
    open_api: OpenApi, fake_gmail: FakeGmail, token_file: Path
) -> None:
    write_token(token_file, token_uri=fake_gmail.token_uri, valid_for=REFRESH_MARGIN + timedelta(seconds=2))
    adapter = open_api()
    assert adapter.search("restore drill")["candidates"]
    assert fake_gmail.token_requests == []

    time.sleep(2.5)  # the access token is now within the refresh margin of its expiry
    seen = len(fake_gmail.mailbox_requests())
    assert adapter.search("restore drill")["candidates"]

    assert len(fake_gmail.token_requests) == 1
    (refreshed,) = fake_gmail.issued_tokens()
    assert set(bearers_since(fake_gmail, seen)) == {f"Bearer {refreshed}"}
    assert json.loads(token_file.read_text())["token"] == refreshed


def test_an_expired_file_written_under_a_warm_adapter_is_refreshed_before_any_request(
    open_api: OpenApi, fake_gmail: FakeGmail, token_file: Path
) -> None:
    adapter = open_api()
    assert adapter.search("restore drill")["candidates"]

    fake_gmail.valid_tokens = set()  # the old access token no longer opens the mailbox
    write_token(token_file, token_uri=fake_gmail.token_uri, token=SECOND_ACCESS_TOKEN, expired=True)
    seen = len(fake_gmail.mailbox_requests())
    assert adapter.search("restore drill")["candidates"]

    (refreshed,) = fake_gmail.issued_tokens()
    assert set(bearers_since(fake_gmail, seen)) == {f"Bearer {refreshed}"}
    assert len(fake_gmail.token_requests) == 1
