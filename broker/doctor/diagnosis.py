"""What a diagnosis is made of: checks, their statuses, and located problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from broker.vocabulary import DiagnosisStatus


class CheckStatus(StrEnum):
    """``degraded`` is neither pass nor fail: configured correctly, not serving what it should."""

    passed = "pass"
    failed = "fail"
    degraded = "degraded"
    skipped = "skipped"


class CheckName(StrEnum):
    """Every check, in the order a diagnosis reports them."""

    configuration = "configuration"
    trust_boundary = "trust_boundary"
    identity = "identity"
    access = "access"
    requirements = "requirements"
    health = "health"
    serving = "serving"
    store_isolation = "store_isolation"
    freshness = "freshness"
    lineage = "lineage"
    abstention = "abstention"
    conformance = "conformance"


LOAD_CHECKS = (CheckName.configuration, CheckName.trust_boundary, CheckName.identity)
LIVE_CHECKS = (
    CheckName.access,
    CheckName.requirements,
    CheckName.health,
    CheckName.serving,
    CheckName.store_isolation,
    CheckName.freshness,
    CheckName.lineage,
    CheckName.abstention,
)

# recall doctor's exit codes: a failed check is a configuration to fix (1), not a failed search.
EXIT_CODES = {DiagnosisStatus.ok: 0, DiagnosisStatus.degraded: 3, DiagnosisStatus.failed: 1}


@dataclass(frozen=True)
class Problem:
    """One located defect; file, key and source travel apart from the prose."""

    message: str
    file: str | None = None
    key: str | None = None
    source_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        located = {"file": self.file, "key": self.key, "source_id": self.source_id}
        return {**{k: v for k, v in located.items() if v}, "message": self.message}


@dataclass
class Check:
    """``remarks``: facts worth knowing that do not change the status (the files a
    source's settings keep out of its index, say)."""

    name: CheckName
    status: CheckStatus
    detail: str = ""
    problems: list[Problem] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": str(self.name), "status": str(self.status)}
        if self.detail:
            data["detail"] = self.detail
        data["problems"] = [p.to_json() for p in self.problems]
        if self.remarks:
            data["remarks"] = list(self.remarks)
        return data


def verdict(name: CheckName, detail: str, problems: list[Problem]) -> Check:
    """Pass with ``detail``, or fail carrying every problem found."""
    status = CheckStatus.failed if problems else CheckStatus.passed
    return Check(name, status, detail, problems)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 source``, ``2 sources``: a count read by someone already looking for a fault."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def skipped(names: tuple[CheckName, ...], why: str) -> list[Check]:
    return [Check(name, CheckStatus.skipped, why) for name in names]


@dataclass
class Diagnosis:
    checks: list[Check]
    profile: str | None = None

    @property
    def failed_checks(self) -> int:
        return sum(c.status == CheckStatus.failed for c in self.checks)

    @property
    def degraded_checks(self) -> int:
        return sum(c.status == CheckStatus.degraded for c in self.checks)

    @property
    def status(self) -> DiagnosisStatus:
        """A broken configuration outranks a degraded one."""
        if self.failed_checks:
            return DiagnosisStatus.failed
        if self.degraded_checks:
            return DiagnosisStatus.degraded
        return DiagnosisStatus.ok

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def check(self, name: CheckName) -> Check:
        return next(c for c in self.checks if c.name == name)
