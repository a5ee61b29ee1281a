"""Replay recorded cases against a live adapter and report how each went."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapter_sdk.conformance.detached import stop_recorded_servers
from adapter_sdk.conformance.diff import Difference, compare
from adapter_sdk.conformance.drive import Exchange, run_exchange
from adapter_sdk.conformance.fixture import FixtureState
from adapter_sdk.conformance.transcript import (
    FIXTURE,
    WORKDIR,
    ConformanceError,
    Transcript,
    bind_requests,
    bind_value,
    case_dirs,
    load_case,
)

DEFAULT_CASE_TIMEOUT = 30.0
STDERR_LINES = 20


@dataclass
class CaseResult:
    """The verdict on one case. ``detail`` is a readable report of what differed."""

    case: str
    passed: bool
    detail: str
    differences: list[Difference] = field(default_factory=list)
    stderr: str = ""


class CaseRun:
    """The bindings for one run of one case, and the scratch area behind them.

    ``${WORKDIR}`` is a fresh folder. ``${FIXTURE}`` is the committed fixture
    in place, as recorded; only a case declaring ``writable_fixture`` gets a
    fresh copy. Paths are resolved (a temporary directory may sit behind a
    symlink) so that an adapter reporting a path back reports the bound one.
    :meth:`fixture_changes` names what the run changed in a fixture used in
    place, which must be nothing.
    """

    def __init__(self, case: str, fixture: Path | None, *, writable_fixture: bool = False) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=f"recall-conformance-{case}-")).resolve()
        self.workdir = self.root / "workdir"
        self.workdir.mkdir(mode=0o700)
        self.bindings = {WORKDIR: str(self.workdir)}
        self._in_place: FixtureState | None = None
        if fixture is not None and fixture.is_dir():
            if writable_fixture:
                copy = self.root / "fixture"
                shutil.copytree(fixture, copy, symlinks=True)
                self.bindings[FIXTURE] = str(copy)
            else:
                self._in_place = FixtureState.read(fixture.resolve())
                self.bindings[FIXTURE] = str(self._in_place.root)

    def fixture_changes(self) -> list[str]:
        """Paths the run added, removed or rewrote in the committed fixture."""
        return self._in_place.changes() if self._in_place is not None else []

    def __enter__(self) -> CaseRun:
        return self

    def __exit__(self, *exc: object) -> None:
        # A server a store started goes with the run: the copy's, or one wrongly started in place.
        stop_recorded_servers(self.root)
        if self._in_place is not None:
            stop_recorded_servers(self._in_place.root)
        shutil.rmtree(self.root, ignore_errors=True)


def fixture_changed(case: str, changes: list[str]) -> str:
    """The failure for a run that wrote into a fixture it was given in place."""
    shown = ", ".join(changes[:5]) + (f" and {len(changes) - 5} more" if len(changes) > 5 else "")
    return (
        f"case {case}: the adapter changed the committed fixture ({shown}); a fixture is read-only "
        'to a case, and a case whose adapter must write into its location declares '
        '"writable_fixture": true in its manifest to be given a copy'
    )


def replay_case(
    case_dir: Path,
    argv: list[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_CASE_TIMEOUT,
) -> CaseResult:
    """Replay one case directory against ``argv`` and compare with the recording.

    ``env`` adds to this process's environment. ``timeout`` bounds the whole
    exchange; the adapter is stopped afterwards whatever happened.
    """
    name = Path(case_dir).name
    try:
        transcript = load_case(case_dir)
    except ConformanceError as exc:
        return CaseResult(name, False, f"transcript defect: {exc}")
    with CaseRun(name, transcript.fixture, writable_fixture=transcript.manifest.writable_fixture) as run:
        try:
            requests = bind_requests(transcript, run.bindings)
        except ConformanceError as exc:
            return CaseResult(name, False, f"transcript defect: {exc}")
        try:
            exchange = run_exchange(argv, requests, env=env, timeout=timeout)
        except OSError as exc:
            return CaseResult(name, False, f"cannot start adapter {' '.join(argv)!r}: {exc}")
        result = judge(transcript, exchange, run.bindings)
    changes = run.fixture_changes()  # once any server the run started has stopped
    if changes:
        detail = fixture_changed(name, changes)
        return CaseResult(name, False, f"{detail}\n{result.detail}" if not result.passed else detail,
                          result.differences, result.stderr)
    return result


def replay_suite(
    suite_dir: Path,
    argv: list[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_CASE_TIMEOUT,
) -> list[CaseResult]:
    """Replay every case under ``suite_dir`` in name order.

    Raises ConformanceError when the suite is missing or holds no case: a
    suite that checked nothing must never read as a pass.
    """
    return [replay_case(case, argv, env=env, timeout=timeout) for case in case_dirs(suite_dir)]


def judge(transcript: Transcript, exchange: Exchange, bindings: Mapping[str, str]) -> CaseResult:
    """Hold one exchange to its recording."""
    manifest = transcript.manifest

    def bind(value: Any) -> Any:
        return bind_value(value, bindings)

    differences: list[Difference] = []
    if len(exchange.frames) != manifest.responses:
        count = (
            f"the manifest declares {manifest.responses} responses, "
            f"the replay produced {len(exchange.frames)}"
        )
        if exchange.stopped:
            count += f" ({exchange.stopped})"
        differences.append(Difference(0, "", count))
    differences.extend(compare(transcript.recorded, exchange.frames, manifest.volatile, bind))
    if exchange.stopped and not differences:
        differences.append(Difference(0, "", exchange.stopped))
    if not differences:
        return CaseResult(
            manifest.case, True, f"{_count(len(exchange.frames))}, as recorded", stderr=exchange.stderr
        )
    return CaseResult(
        manifest.case,
        False,
        _report(manifest.case, differences, exchange.stderr),
        differences,
        exchange.stderr,
    )


def _count(frames: int) -> str:
    return f"{frames} response{'' if frames == 1 else 's'}"


def _report(case: str, differences: Sequence[Difference], stderr: str) -> str:
    """The count statement (if any) and the first value difference, then stderr."""
    shown = [d for d in differences if d.response == 0][:1]
    shown += [d for d in differences if d.response != 0][:1]
    lines = [f"case {case}: {difference}" for difference in shown]
    more = len(differences) - len(shown)
    if more:
        lines.append(f"  ({more} more difference{'s' if more > 1 else ''} after the first)")
    tail = stderr.strip().splitlines()[-STDERR_LINES:]
    if tail:
        lines.append("adapter stderr:")
        lines.extend(f"    {line}" for line in tail)
    return "\n".join(lines)
