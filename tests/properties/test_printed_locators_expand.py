"""Every locator a search prints can be expanded, for every adapter.

For each candidate a search returns, expand either succeeds or fails with a
typed reason a user can act on (the record expired, or access was denied);
never ``locator_unknown``, which would mean the adapter printed a locator it
cannot read back. Records are named with arbitrary text: paths, task lines,
thread ids and subjects holding ``#``, ``/``, ``:``, spaces and non-ASCII.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.adapters.gmail.adapter_process import AdapterProcess as GmailProcess
from tests.adapters.gmail.conftest import write_token
from tests.adapters.gmail.fake_gmail import FakeGmail
from tests.adapters.gmail.mailbox import DRILL
from tests.adapters.notes.adapter_process import NotesProcess
from tests.adapters.tasks.adapter_process import AdapterProcess as TasksProcess
from tests.support.adapter_process import AdapterError

LOCATOR_UNKNOWN = -32002
TYPED_FAILURES = {-32001, -32003}  # source_denied, locator_expired
EXAMPLES = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

names = st.text(
    alphabet=st.characters(
        codec="utf-8", categories=("L", "N", "Zs"), include_characters="-_#:@.()[]'+,&%~"
    ),
    min_size=1,
    max_size=24,
).map(str.strip).filter(lambda n: n and not n.startswith(".") and "\x00" not in n)


def expand_every_candidate(adapter: Any, found: dict[str, Any]) -> int:
    """Expand each candidate of one search result; how many did so."""
    expanded = 0
    for candidate in found["candidates"]:
        try:
            adapter.expand(candidate["locator"])
        except AdapterError as error:
            assert error.code != LOCATOR_UNKNOWN, (candidate["locator"], error.message)
            assert error.code in TYPED_FAILURES, (candidate["locator"], error.code, error.message)
        else:
            expanded += 1
    return expanded


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[NotesProcess, Path]]:
    root = tmp_path_factory.mktemp("notes")
    folder = root / "notes"
    folder.mkdir()
    process = NotesProcess()
    process.initialize(folder, root / "workdir")
    yield process, folder
    process.close()


@EXAMPLES
@given(name=names, folder_name=st.none() | names)
def test_every_notes_locator_expands(notes: tuple[NotesProcess, Path], name: str, folder_name: str | None) -> None:
    adapter, folder = notes
    where = folder / folder_name if folder_name else folder
    where.mkdir(exist_ok=True)
    (where / f"{name}.md").write_text(f"# {name}\n\nThe zebra crossing near {name}.\n")
    found = adapter.search("zebra crossing", limit=50)
    assert found["candidates"]
    assert expand_every_candidate(adapter, found) == len(found["candidates"])


@pytest.fixture(scope="module")
def todo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TasksProcess, Path]]:
    root = tmp_path_factory.mktemp("todo")
    file = root / "todo.txt"
    file.write_text("")
    process = TasksProcess()
    process.initialize(file, root / "workdir")
    yield process, file
    process.close()


@EXAMPLES
@given(lines=st.lists(names, min_size=1, max_size=6))
def test_every_todo_txt_locator_expands(todo: tuple[TasksProcess, Path], lines: list[str]) -> None:
    adapter, file = todo
    file.write_text("".join(f"{prefix}{line} zebra\n" for prefix, line in zip(["", "x ", "(A) "] * 2, lines, strict=False)))
    found = adapter.search("zebra", limit=50)
    assert found["candidates"]
    assert expand_every_candidate(adapter, found) == len(found["candidates"])


@pytest.fixture(scope="module")
def gmail(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GmailProcess, FakeGmail]]:
    server = FakeGmail().start()
    folder = tmp_path_factory.mktemp("gmail")
    token = write_token(folder / "gmail-token.json", token_uri=server.token_uri)
    process = GmailProcess()
    process.initialize(None, folder / "workdir", {"api_base": server.base_url, "token_file": str(token)})
    yield process, server
    process.close()
    server.stop()


@EXAMPLES
@given(thread_id=st.text(min_size=1, max_size=40).filter(lambda t: t.strip() and t.isprintable()))
def test_every_gmail_locator_expands(gmail: tuple[GmailProcess, FakeGmail], thread_id: str) -> None:
    adapter, server = gmail
    drill = FakeGmail().threads[DRILL]
    server.threads = {thread_id: replace(drill, thread_id=thread_id)}
    found = adapter.search("restore drill")
    assert [c["source_record_id"] for c in found["candidates"]] == [thread_id]
    assert expand_every_candidate(adapter, found) == 1


@pytest.fixture(scope="module")
def eventstore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    pytest.importorskip("polign_recall", reason="the eventstore adapter needs Polign Recall")
    from adapters.eventstore.binary import locate
    from tests.adapters.eventstore.eventstore_process import AdapterProcess as EventStoreProcess
    from tests.adapters.eventstore.eventstore_store import open_client, stop_store_server

    directory = tmp_path_factory.mktemp("polign") / "store"
    client = open_client(directory, locate(None)).__enter__()
    process = EventStoreProcess()
    try:
        assert "result" in process.initialize(str(directory))
        yield process, client
    finally:
        process.close()
        client.__exit__(None, None, None)
        stop_store_server(directory)


class _Replies:
    """The eventstore test driver answers frames; give it the shape the other drivers have."""

    def __init__(self, process: Any) -> None:
        self.process = process

    def expand(self, locator: str) -> dict[str, Any]:
        frame = self.process.expand(locator)
        if "error" in frame:
            raise AdapterError(frame["error"]["code"], frame["error"]["message"])
        result: dict[str, Any] = frame["result"]
        return result


@EXAMPLES
@given(subject=names)
def test_every_eventstore_locator_expands(eventstore: tuple[Any, Any], subject: str) -> None:
    process, client = eventstore
    client.remember(subject, "note", f"the zebra crossing near {json.dumps(subject)}")
    frame = process.search("zebra crossing", limit=50)
    assert frame["result"]["candidates"], frame
    assert expand_every_candidate(_Replies(process), frame["result"]) == len(frame["result"]["candidates"])
