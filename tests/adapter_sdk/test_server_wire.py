"""What adapter_sdk.server promises on the wire, for plain and async handlers alike."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

TOY = Path(__file__).with_name("toy_adapter.py")
FAR = "2099-01-01T00:00:00Z"
INIT = {"protocol_version_min": 1, "protocol_version_max": 1, "workdir": "/tmp", "source_id": "toy"}


@pytest.fixture(params=["plain", "async"])
def toy(request):
    argv = [sys.executable, str(TOY)] + (["--async"] if request.param == "async" else [])
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    yield process
    process.kill()
    process.wait()


def send(process, message: dict) -> None:
    process.stdin.write(orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n")
    process.stdin.flush()


def read(process) -> dict:
    return orjson.loads(process.stdout.readline())


def handshake(process) -> None:
    send(process, {"id": 1, "method": "recall/initialize", "params": INIT})
    assert read(process)["result"]["protocol_version"] == 1


def search(process, request_id: int, query: str, deadline: str = FAR) -> None:
    params = {"query": query, "filters": {}, "limit": 5, "deadline": deadline}
    send(process, {"id": request_id, "method": "recall/search", "params": params})


def test_a_search_is_answered_with_validated_candidates(toy):
    handshake(toy)
    search(toy, 2, "restore")
    reply = read(toy)
    assert reply["id"] == 2 and reply["result"]["candidates"][0]["title"] == "restore"


def test_a_malformed_candidate_goes_as_it_is_and_the_rest_of_the_answer_stands(toy):
    handshake(toy)
    search(toy, 2, "half-broken")
    result = read(toy)["result"]
    assert result["outcome"] == "success"
    assert [c["locator"] for c in result["candidates"]] == ["toy:a", "toy:b\nc", "toy:d"]


def test_cancel_answers_at_once_with_32007_and_never_a_late_result(toy):
    handshake(toy)
    search(toy, 2, "slow")
    started = time.monotonic()
    send(toy, {"method": "recall/cancel", "params": {"id": 2}})
    reply = read(toy)
    assert reply == {"jsonrpc": "2.0", "id": 2, "error": {"code": -32007, "message": "request cancelled"}}
    assert time.monotonic() - started < 1.5
    search(toy, 3, "restore")
    assert read(toy)["id"] == 3  # the slow result for 2 never arrives


def test_a_cancelled_handler_learns_its_caller_gave_up():
    process = subprocess.Popen([sys.executable, str(TOY)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        handshake(process)
        search(process, 2, "until-cancelled")
        send(process, {"method": "recall/cancel", "params": {"id": 2}})
        assert read(process)["error"]["code"] == -32007
        for request_id in range(3, 1000):
            send(process, {"id": request_id, "method": "recall/health", "params": {"deadline": FAR}})
            if read(process)["result"]["diagnostics"]["stopped"] == 1:
                break
            time.sleep(0.01)
        else:
            raise AssertionError("the cancelled handler never stopped")
    finally:
        process.kill()
        process.wait()


def test_a_passed_deadline_answers_32007(toy):
    handshake(toy)
    search(toy, 2, "slow", deadline="2020-01-01T00:00:00Z")
    assert read(toy)["error"] == {"code": -32007, "message": "deadline exceeded"}


def test_a_request_without_a_deadline_is_refused(toy):
    handshake(toy)
    send(toy, {"id": 2, "method": "recall/search", "params": {"query": "x", "filters": {}, "limit": 5}})
    assert read(toy)["error"]["code"] == -32602


def test_requests_before_the_handshake_and_unknown_methods_are_refused(toy):
    search(toy, 2, "restore")
    assert read(toy)["error"]["code"] == -32600
    send(toy, {"id": 3, "method": "recall/nope", "params": {}})
    assert read(toy)["error"] == {"code": -32601, "message": 'unknown method "recall/nope"'}


def test_a_handler_exception_is_an_internal_error_and_the_adapter_lives_on(toy):
    handshake(toy)
    search(toy, 2, "broken")
    assert read(toy)["error"] == {"code": -32603, "message": "ValueError: the index is broken"}
    search(toy, 3, "restore")
    assert read(toy)["id"] == 3


def test_garbage_is_reported_and_the_stream_stays_aligned(toy):
    handshake(toy)
    toy.stdin.write(b"not json\n\n")
    toy.stdin.flush()
    assert read(toy)["error"]["code"] == -32700
    search(toy, 2, "restore")
    assert read(toy)["id"] == 2


def test_shutdown_replies_then_exits_zero(toy):
    handshake(toy)
    send(toy, {"id": 9, "method": "recall/shutdown", "params": {}})
    assert read(toy) == {"jsonrpc": "2.0", "id": 9, "result": {}}
    toy.stdin.close()
    assert toy.wait(timeout=5) == 0


def test_end_of_input_ends_the_process_even_with_work_in_flight(toy):
    handshake(toy)
    search(toy, 2, "slow")
    toy.stdin.close()
    assert toy.wait(timeout=2) == 0
