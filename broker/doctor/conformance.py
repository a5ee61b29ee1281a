"""Replay an adapter's recorded conformance suite against its registered command.

A user-registered adapter names its suite with ``[adapters.NAME] conformance``;
a built-in's suite is committed in the repository under
``conformance_transcripts/<adapter>/``. No suite, or an empty one, is a
failure: a run that checked nothing must never read as a pass.
"""

from __future__ import annotations

from pathlib import Path

import broker
from broker.config import AdapterRegistration, Config
from broker.config.builtins import canonical_adapter_name
from broker.doctor.diagnosis import Check, CheckName, CheckStatus, Problem

BUILTIN_SUITES = Path(broker.__file__).resolve().parent.parent / "conformance_transcripts"


def conformance_check(config: Config, name: str, builtin_suites: Path = BUILTIN_SUITES) -> Check:
    from adapter_sdk.conformance import ConformanceError, replay_suite

    canonical = canonical_adapter_name(name)
    registration = config.adapters.get(canonical)
    key = f"adapters.{name}"
    if registration is None:
        registered = ", ".join(sorted(config.adapters)) or "none"
        return _failed(f"no adapter named {name!r} is registered (registered: {registered})", key)
    suite = _suite(registration, builtin_suites)
    if suite is None:
        return _failed(
            "the registration names no conformance directory, so there are no recorded "
            f'transcripts to replay; add conformance = "<absolute directory>" to [adapters.{name}]',
            f"{key}.conformance",
            registration,
        )
    command = " ".join(registration.argv)
    try:
        results = replay_suite(suite, list(registration.argv), env=registration.env or None)
    except ConformanceError as exc:
        if registration.builtin:
            return _failed(f"built-in adapter {canonical} ships no usable suite: {exc}", None)
        return _failed(str(exc), f"{key}.conformance", registration)
    problems = [
        Problem(result.detail, key=f"{key}.conformance.{result.case}")
        for result in results
        if not result.passed
    ]
    passed = len(results) - len(problems)
    detail = f"{command}: {passed} of {len(results)} recorded cases replayed as recorded ({suite})"
    return Check(
        CheckName.conformance,
        CheckStatus.failed if problems else CheckStatus.passed,
        detail,
        problems,
    )


def _suite(registration: AdapterRegistration, builtin_suites: Path) -> Path | None:
    if registration.builtin:
        return builtin_suites / registration.name
    return Path(registration.conformance) if registration.conformance else None


def _failed(message: str, key: str | None, registration: AdapterRegistration | None = None) -> Check:
    file = registration.origin.file if registration is not None else None
    problem = Problem(message, file=str(file) if file else None, key=key)
    return Check(CheckName.conformance, CheckStatus.failed, problems=[problem])
