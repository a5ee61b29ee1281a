"""A source answered from a pack's recorded transcript instead of its adapter.

Some outcomes cannot come from committed fixture data (a source that denies
access: a permission bit is not something a repository stores), so a pack
records them as a protocol transcript and names the adapter command
``recall-eval-replay``. The evaluation runner never spawns that command; it
starts this module instead, which speaks the adapter protocol on stdio and
answers each request with the recorded response to the same method:

    <pack>/<transcripts>/<name>/request.jsonl    what the recording asked
    <pack>/<transcripts>/<name>/response.jsonl   what the source answered

``<name>`` is the source's ``transcript`` setting, or else the last part of
its location. Requests to one method are answered in recorded order; once a
method's recordings are used up its last answer repeats (a pack asks a source
on every case, the recording shows it once). A method the recording never saw
gets ``-32601``. ``${FIXTURE}`` in a response becomes the transcript folder and
``${WORKDIR}`` the source's workdir, as when the transcript was recorded.

Run as ``python -m broker.evaluation.replayed_source TRANSCRIPTS_DIR``. It
imports nothing from the broker: it stands where an adapter process stands.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict, deque
from pathlib import Path
from typing import Any, TextIO

COMMAND = "recall-eval-replay"
REQUESTS = "request.jsonl"
RESPONSES = "response.jsonl"
PARSE_ERROR = -32700
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


class Recording:
    """Recorded answers by method, each method's in the order they were recorded."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        requests = _read_lines(folder / REQUESTS)
        responses = {r.get("id"): r for r in _read_lines(folder / RESPONSES) if "id" in r}
        self._answers: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        for request in requests:
            answer = responses.get(request.get("id"))
            if "id" in request and answer is not None:
                self._answers[str(request.get("method"))].append(answer)

    def answer(self, method: str) -> dict[str, Any] | None:
        queue = self._answers.get(method)
        if not queue:
            return None
        return queue.popleft() if len(queue) > 1 else queue[0]


def _read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def transcript_folder(transcripts: Path, params: dict[str, Any]) -> Path:
    settings = params.get("settings") or {}
    name = settings.get("transcript") or Path(str(params.get("location") or "")).name
    if not isinstance(name, str) or not name or "/" in name or name in {".", ".."}:
        raise ValueError("a replayed source needs a transcript setting naming a folder of the pack's transcripts")
    folder = transcripts / name
    if not (folder / REQUESTS).is_file() or not (folder / RESPONSES).is_file():
        raise ValueError(f"transcript {folder} has no {REQUESTS} and {RESPONSES}")
    return folder


def _filled(value: Any, fixture: str, workdir: str) -> Any:
    if isinstance(value, str):
        return value.replace("${FIXTURE}", fixture).replace("${WORKDIR}", workdir)
    if isinstance(value, list):
        return [_filled(item, fixture, workdir) for item in value]
    if isinstance(value, dict):
        return {key: _filled(item, fixture, workdir) for key, item in value.items()}
    return value


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def serve(transcripts: Path, stdin: TextIO, stdout: TextIO) -> None:
    recording: Recording | None = None
    workdir = ""
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            _send(stdout, _error(None, PARSE_ERROR, "not JSON"))
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue  # a notification: nothing to answer
        method = str(message.get("method"))
        if method == "recall/initialize":
            params = message.get("params") or {}
            try:
                recording = Recording(transcript_folder(transcripts, params))
            except (OSError, ValueError) as err:
                _send(stdout, _error(message["id"], INVALID_PARAMS, str(err)))
                continue
            workdir = str(params.get("workdir") or "")
        answer = recording.answer(method) if recording else None
        if recording is None or answer is None:
            _send(stdout, _error(message["id"], METHOD_NOT_FOUND, f"the transcript never recorded {method}"))
            continue
        reply = _filled(dict(answer), str(recording.folder), workdir)
        reply["id"] = message["id"]
        _send(stdout, reply)


def _send(stdout: TextIO, message: dict[str, Any]) -> None:
    stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    stdout.flush()


if __name__ == "__main__":
    serve(Path(sys.argv[1]), sys.stdin, sys.stdout)
