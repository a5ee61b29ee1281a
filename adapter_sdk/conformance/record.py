"""Record a case: run the adapter on scripted requests and write what it said.

The recorder is the replayer's twin: it drives the same lockstep exchange,
then writes frames with this run's paths turned back into ``${FIXTURE}`` /
``${WORKDIR}`` and declared-volatile fields already masked, so a committed
transcript holds neither clock readings nor a machine's paths. By default the
fresh recording is replayed once, which catches a field that changes between
runs and should be declared volatile.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from adapter_sdk.conformance.diff import mask, parse_pointer
from adapter_sdk.conformance.drive import run_exchange
from adapter_sdk.conformance.replay import (
    DEFAULT_CASE_TIMEOUT,
    CaseRun,
    fixture_changed,
    replay_case,
)
from adapter_sdk.conformance.transcript import (
    FIXTURE_DIR,
    FLOW_LOCKSTEP,
    MANIFEST_FILE,
    PLACEHOLDER_MEANING,
    REQUEST_FILE,
    RESPONSE_FILE,
    WORKDIR,
    ConformanceError,
    Manifest,
    Transcript,
    bind_requests,
    tokens_in,
    unbind_value,
)


@dataclass(frozen=True)
class CaseSpec:
    """One case to record: what it proves and the frames it sends."""

    name: str
    description: str
    requests: list[dict[str, Any]]
    fixture: Path | None = None
    volatile: Sequence[str] = ()
    writable_fixture: bool = False  # the adapter writes into its location: replay on a copy


def record_case(
    case_dir: Path,
    argv: list[str],
    requests: list[dict[str, Any]],
    *,
    description: str,
    fixture: Path | None = None,
    volatile: Sequence[str] = (),
    writable_fixture: bool = False,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_CASE_TIMEOUT,
    verify: bool = True,
) -> None:
    """Run ``argv`` on ``requests`` and write the case into ``case_dir``.

    ``requests`` are JSON-RPC frames that may carry ``${FIXTURE}`` (bound to
    ``fixture``, copied into ``case_dir/fixture``) and ``${WORKDIR}``. With
    ``fixture`` None an existing ``case_dir/fixture`` is kept and used. The
    adapter reads the fixture in place and must not change it, unless
    ``writable_fixture`` (then it, and every replay, gets a fresh copy).
    Raises ConformanceError when the exchange does not complete, when it
    changed a fixture read in place, or, with ``verify``, when the recording
    does not replay as recorded.
    """
    case_dir = Path(case_dir)
    name = case_dir.name
    if not description.strip():
        raise ConformanceError(f"case {name}: a description is required; say what the case proves")
    for pointer in volatile:
        try:
            parse_pointer(pointer)
        except ValueError as exc:
            raise ConformanceError(f"case {name}: volatile {exc}") from None
    if not requests:
        raise ConformanceError(f"case {name}: no requests to send")
    request_lines = [orjson.dumps(request) for request in requests]

    case_dir.mkdir(parents=True, exist_ok=True)
    _install_fixture(case_dir, fixture)
    used = set().union(*(tokens_in(request) for request in requests))
    draft = Transcript(
        case_dir.resolve(),
        Manifest(name, description, FLOW_LOCKSTEP, _declare(used), list(volatile), 0, writable_fixture),
        request_lines,
        [],
    )

    with CaseRun(name, draft.fixture, writable_fixture=writable_fixture) as run:
        bound = bind_requests(draft, run.bindings)
        try:
            exchange = run_exchange(argv, bound, env=env, timeout=timeout)
        except OSError as exc:
            raise ConformanceError(f"case {name}: cannot start adapter {' '.join(argv)!r}: {exc}") from None
        if exchange.stopped:
            raise ConformanceError(
                f"case {name}: the recording did not complete: {exchange.stopped}"
                + _stderr_tail(exchange.stderr)
            )
        frames = [_redact(frame, run.bindings, volatile) for frame in exchange.frames]
    changes = run.fixture_changes()
    if changes:
        raise ConformanceError(fixture_changed(name, changes))

    for frame in frames:
        try:
            used |= tokens_in(orjson.loads(frame)) & PLACEHOLDER_MEANING.keys()
        except orjson.JSONDecodeError:
            continue
    manifest = Manifest(
        name, description, FLOW_LOCKSTEP, _declare(used), list(volatile), len(frames), writable_fixture
    )
    (case_dir / MANIFEST_FILE).write_bytes(manifest.to_json())
    (case_dir / REQUEST_FILE).write_bytes(_jsonl(request_lines))
    (case_dir / RESPONSE_FILE).write_bytes(_jsonl(frames))

    if verify:
        result = replay_case(case_dir, argv, env=env, timeout=timeout)
        if not result.passed:
            raise ConformanceError(
                f"case {name} was recorded but does not replay as recorded; declare fields "
                f"that change between runs volatile.\n{result.detail}"
            )


def record_suite(
    suite_dir: Path,
    argv: list[str],
    cases: Iterable[CaseSpec],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_CASE_TIMEOUT,
    verify: bool = True,
) -> list[Path]:
    """Record each case into ``suite_dir/<case name>``; returns the case directories.

    With ``verify`` each case is replayed right after it is recorded.
    """
    written = []
    for spec in cases:
        case_dir = Path(suite_dir) / spec.name
        record_case(
            case_dir,
            argv,
            spec.requests,
            description=spec.description,
            fixture=spec.fixture,
            volatile=spec.volatile,
            writable_fixture=spec.writable_fixture,
            env=env,
            timeout=timeout,
            verify=verify,
        )
        written.append(case_dir)
    return written


def _install_fixture(case_dir: Path, fixture: Path | None) -> None:
    target = case_dir / FIXTURE_DIR
    if fixture is None:
        return
    fixture = Path(fixture)
    if not fixture.is_dir():
        raise ConformanceError(f"case {case_dir.name}: fixture {fixture} is not a directory")
    if fixture.resolve() == target.resolve():
        return
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(fixture, target, symlinks=True)


def _declare(used: set[str]) -> dict[str, str]:
    """Placeholders a case declares: WORKDIR always (it is always bound), plus any in use."""
    names = used | {WORKDIR}
    return {name: PLACEHOLDER_MEANING.get(name, "") for name in sorted(names)}


def _redact(frame: bytes, bindings: Mapping[str, str], volatile: Sequence[str]) -> bytes:
    """This run's paths back to placeholders, volatile fields to the mark.

    A frame that is not JSON is kept as written: the replay, not the
    recorder, is where an adapter's output is judged.
    """
    try:
        value = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return frame
    changed = unbind_value(value, bindings)
    masked = sum(mask(changed, parse_pointer(pointer)) for pointer in volatile)
    if not masked and changed == value:
        return frame
    return orjson.dumps(changed)


def _jsonl(lines: Sequence[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def _stderr_tail(stderr: str) -> str:
    tail = stderr.strip().splitlines()[-20:]
    return "\nadapter stderr:\n" + "\n".join(f"    {line}" for line in tail) if tail else ""
