"""The transcript format: one case directory, loaded and checked.

A case directory holds ``manifest.json`` (what the case proves and how to
replay it), ``request.jsonl`` (frames to send, in order), ``response.jsonl``
(frames the adapter wrote when recorded) and an optional ``fixture/`` with the
source data. Requests carry ``${FIXTURE}`` and ``${WORKDIR}`` in place of
machine paths; a harness binds them per run: ``${FIXTURE}`` to the committed
``fixture/`` in place (read-only to the case; a manifest declaring
``writable_fixture`` gets a fresh copy instead) and ``${WORKDIR}`` to a fresh
empty folder. The format is shared with other implementations of protocol v1,
so suites recorded by either replay with either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

MANIFEST_FILE = "manifest.json"
REQUEST_FILE = "request.jsonl"
RESPONSE_FILE = "response.jsonl"
FIXTURE_DIR = "fixture"
FLOW_LOCKSTEP = "lockstep"

FIXTURE = "FIXTURE"
WORKDIR = "WORKDIR"
PLACEHOLDER_MEANING = {
    FIXTURE: "absolute path of this case's fixture/ directory (read-only)",
    WORKDIR: "absolute path of a fresh, empty, writable directory per case and run",
}

FAR_DEADLINE = "2099-01-01T00:00:00Z"
"""The fixed deadline requests carry, so a transcript replays the same in any year."""

_TOKEN = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


class ConformanceError(Exception):
    """A suite or case that cannot be replayed or recorded as asked.

    Raised for defects in the transcript itself (bad manifest, unbound
    placeholder, no cases) and for recordings that did not complete; an
    adapter answering differently from its recording is a failed
    :class:`~adapter_sdk.conformance.replay.CaseResult`, not an exception.
    """


@dataclass(frozen=True)
class Manifest:
    case: str
    description: str
    flow: str
    placeholders: dict[str, str]
    volatile: list[str]
    responses: int
    # the adapter writes into its location, so each run gets a fresh copy of fixture/
    writable_fixture: bool = False

    def to_json(self) -> bytes:
        document: dict[str, Any] = {
            "case": self.case,
            "description": self.description,
            "flow": self.flow,
            "placeholders": self.placeholders,
            "volatile": self.volatile,
            "responses": self.responses,
        }
        if self.writable_fixture:
            document["writable_fixture"] = True
        return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


@dataclass(frozen=True)
class Transcript:
    directory: Path
    manifest: Manifest
    requests: list[bytes]
    recorded: list[bytes]

    @property
    def fixture(self) -> Path:
        return self.directory / FIXTURE_DIR


def load_case(case_dir: Path) -> Transcript:
    """Read one case directory and hold it to the format."""
    from adapter_sdk.conformance.diff import parse_pointer

    directory = Path(case_dir).resolve()
    name = directory.name
    manifest_path = directory / MANIFEST_FILE
    try:
        document = orjson.loads(manifest_path.read_bytes())
    except FileNotFoundError:
        raise ConformanceError(f"case {name}: no {MANIFEST_FILE} in {directory}") from None
    except orjson.JSONDecodeError as exc:
        raise ConformanceError(f"case {name}: {manifest_path} is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ConformanceError(f"case {name}: {manifest_path} is not a JSON object")

    manifest = Manifest(
        case=document.get("case", ""),
        description=document.get("description") or "",
        flow=document.get("flow", ""),
        placeholders=dict(document.get("placeholders") or {}),
        volatile=list(document.get("volatile") or []),
        responses=document.get("responses", -1),
        writable_fixture=document.get("writable_fixture", False),
    )
    if manifest.case != name:
        raise ConformanceError(f"manifest names case {manifest.case!r}, directory is {name!r}")
    if not isinstance(manifest.description, str) or not manifest.description.strip():
        raise ConformanceError(f"case {name}: the manifest carries no description")
    if manifest.flow != FLOW_LOCKSTEP:
        raise ConformanceError(
            f"case {name}: flow {manifest.flow!r} is not defined; the format defines only "
            f"{FLOW_LOCKSTEP!r}"
        )
    if not isinstance(manifest.responses, int) or manifest.responses < 0:
        raise ConformanceError(f"case {name}: responses must be a count >= 0, not {manifest.responses!r}")
    if not isinstance(manifest.writable_fixture, bool):
        raise ConformanceError(
            f"case {name}: writable_fixture must be true or false, not {manifest.writable_fixture!r}"
        )
    for pointer in manifest.volatile:
        try:
            parse_pointer(pointer)
        except ValueError as exc:
            raise ConformanceError(f"case {name}: volatile {exc}") from None

    requests = read_lines(directory / REQUEST_FILE)
    recorded = read_lines(directory / RESPONSE_FILE)
    if not requests:
        raise ConformanceError(f"case {name}: {REQUEST_FILE} sends nothing")
    if len(recorded) != manifest.responses:
        raise ConformanceError(
            f"case {name}: the manifest declares {manifest.responses} responses, "
            f"{RESPONSE_FILE} holds {len(recorded)}"
        )
    return Transcript(directory, manifest, requests, recorded)


def case_dirs(suite_dir: Path) -> list[Path]:
    """Every case directory under ``suite_dir``, in name order. None is an error."""
    suite = Path(suite_dir)
    if not suite.is_dir():
        raise ConformanceError(f"conformance suite {suite} is not a directory")
    cases = sorted(child for child in suite.iterdir() if child.is_dir())
    if not cases:
        raise ConformanceError(
            f"conformance suite {suite} holds no case directories; an empty suite checks nothing"
        )
    return cases


def read_lines(path: Path) -> list[bytes]:
    """The non-blank lines of a JSONL file (missing file: none)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    return [line.strip() for line in raw.split(b"\n") if line.strip()]


def json_text(value: str) -> str:
    """``value`` as it appears inside a JSON string literal, without the quotes."""
    return orjson.dumps(value).decode()[1:-1]


def bind_requests(transcript: Transcript, bindings: Mapping[str, str]) -> list[bytes]:
    """Substitute placeholders textually into each request line, before parsing.

    Every token used must be declared in the manifest and bound here; a
    ``${FIXTURE}`` in use needs a fixture on disk.
    """
    name = transcript.manifest.case
    bound_lines = []
    for number, line in enumerate(transcript.requests, start=1):
        text = line.decode("utf-8")
        for token in _TOKEN.findall(text):
            if token not in transcript.manifest.placeholders:
                raise ConformanceError(
                    f"case {name}: request {number} uses ${{{token}}}, "
                    "which the manifest does not declare"
                )
            if token not in bindings:
                if token == FIXTURE:
                    raise ConformanceError(
                        f"case {name}: request {number} uses ${{FIXTURE}} "
                        f"but {transcript.fixture} does not exist"
                    )
                raise ConformanceError(
                    f"case {name}: request {number} carries unbound placeholder ${{{token}}}"
                )
            text = text.replace("${" + token + "}", json_text(bindings[token]))
        bound_lines.append(text.encode("utf-8"))
    return bound_lines


def bind_value(value: Any, bindings: Mapping[str, str]) -> Any:
    """Replace ``${NAME}`` tokens inside every string of a decoded frame."""
    return _map_strings(value, lambda text: _bind_text(text, bindings))


def unbind_value(value: Any, bindings: Mapping[str, str]) -> Any:
    """Replace each bound path inside every string by its ``${NAME}`` token."""
    ordered = sorted(bindings.items(), key=lambda item: len(item[1]), reverse=True)

    def unbind(text: str) -> str:
        for token, path in ordered:
            text = text.replace(path, "${" + token + "}")
        return text

    return _map_strings(value, unbind)


def tokens_in(value: Any) -> set[str]:
    """Placeholder names used anywhere in the strings of a decoded frame."""
    found: set[str] = set()

    def collect(text: str) -> str:
        found.update(_TOKEN.findall(text))
        return text

    _map_strings(value, collect)
    return found


def _bind_text(text: str, bindings: Mapping[str, str]) -> str:
    return _TOKEN.sub(lambda m: bindings.get(m.group(1), m.group(0)), text)


def _map_strings(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(key): _map_strings(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_map_strings(item, change) for item in value]
    return value
