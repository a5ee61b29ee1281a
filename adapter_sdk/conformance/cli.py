"""Command line for adapter authors.

    python -m adapter_sdk.conformance replay PATH [--timeout S] -- CMD [ARG...]
    python -m adapter_sdk.conformance record CASE_DIR [options] -- CMD [ARG...]

``replay`` takes a suite directory (every case under it) or one case
directory. ``record`` re-records an existing case from its own manifest and
requests, or creates one from ``--requests FILE`` (JSONL, placeholders
allowed) and ``--description``. Exit status: 0 all cases as recorded,
1 a case failed or the suite is unusable, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from adapter_sdk.conformance.record import record_case
from adapter_sdk.conformance.replay import DEFAULT_CASE_TIMEOUT, replay_case, replay_suite
from adapter_sdk.conformance.transcript import (
    FIXTURE_DIR,
    MANIFEST_FILE,
    REQUEST_FILE,
    ConformanceError,
    load_case,
    read_lines,
)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    split = args.index("--") if "--" in args else len(args)
    options, command = args[:split], args[split + 1 :]
    try:
        parsed = _parser().parse_args(options)
    except SystemExit as usage:
        return int(usage.code or 0)
    if not command:
        print(__doc__.strip(), file=sys.stderr)
        print("\nerror: give the adapter command after --", file=sys.stderr)
        return 2
    try:
        if parsed.action == "replay":
            return _replay(Path(parsed.path), command, parsed.timeout)
        return _record(parsed, command)
    except ConformanceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m adapter_sdk.conformance",
        description="Record and replay adapter conformance transcripts.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    replay = actions.add_parser("replay", help="replay a suite or one case")
    replay.add_argument("path", help="suite directory or case directory")
    replay.add_argument("--timeout", type=float, default=DEFAULT_CASE_TIMEOUT, help="seconds per case")
    record = actions.add_parser("record", help="record one case")
    record.add_argument("case_dir", help="the case directory to write")
    record.add_argument("--requests", help="JSONL file of request frames (new case)")
    record.add_argument("--description", help="what the case proves (new case)")
    record.add_argument("--fixture", help="directory copied into the case's fixture/")
    record.add_argument("--volatile", action="append", default=[], help="JSON pointer to mask; repeatable")
    record.add_argument(
        "--writable-fixture",
        action="store_true",
        help="the adapter writes into its location: each run gets a copy of fixture/ (kept on re-record)",
    )
    record.add_argument("--timeout", type=float, default=DEFAULT_CASE_TIMEOUT, help="seconds")
    return parser


def _replay(path: Path, command: list[str], timeout: float) -> int:
    if (path / MANIFEST_FILE).is_file():
        results = [replay_case(path, command, timeout=timeout)]
    else:
        results = replay_suite(path, command, timeout=timeout)
    for result in results:
        if result.passed:
            print(f"ok    {result.case}  {result.detail}")
        else:
            print(f"FAIL  {result.case}\n{_indent(result.detail)}")
    passed = sum(result.passed for result in results)
    print(f"\n{passed} of {len(results)} recorded cases replayed as recorded")
    return 0 if passed == len(results) else 1


def _record(parsed: argparse.Namespace, command: list[str]) -> int:
    case_dir = Path(parsed.case_dir)
    if parsed.requests:
        if not parsed.description:
            raise ConformanceError("a new case needs --description")
        lines = read_lines(Path(parsed.requests))
        description = parsed.description
        volatile = parsed.volatile
        writable_fixture = parsed.writable_fixture
    else:
        existing = load_case(case_dir)
        lines = existing.requests
        description = parsed.description or existing.manifest.description
        volatile = parsed.volatile or existing.manifest.volatile
        writable_fixture = parsed.writable_fixture or existing.manifest.writable_fixture
    try:
        requests = [orjson.loads(line) for line in lines]
    except orjson.JSONDecodeError as exc:
        raise ConformanceError(f"{parsed.requests or case_dir / REQUEST_FILE}: {exc}") from None
    fixture = Path(parsed.fixture) if parsed.fixture else None
    record_case(
        case_dir,
        command,
        requests,
        description=description,
        fixture=fixture,
        volatile=volatile,
        writable_fixture=writable_fixture,
        timeout=parsed.timeout,
    )
    manifest = load_case(case_dir).manifest
    has_fixture = " with fixture/" if (case_dir / FIXTURE_DIR).is_dir() else ""
    print(f"recorded {manifest.case}: {manifest.responses} responses{has_fixture}, replayed as recorded")
    return 0


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())
