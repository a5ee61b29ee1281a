"""A diagnosis as a person reads it, and as JSON."""

from __future__ import annotations

from typing import Any

from broker.doctor.diagnosis import Check, CheckName, CheckStatus, Diagnosis, Problem
from broker.render.text import Fields, Lines

NAME_WIDTH = 14


def to_json(diagnosis: Diagnosis) -> dict[str, Any]:
    data: dict[str, Any] = {"status": str(diagnosis.status)}
    if diagnosis.profile:
        data["profile"] = diagnosis.profile
    data["checks"] = [check.to_json() for check in diagnosis.checks]
    data["failed_checks"] = diagnosis.failed_checks
    data["degraded_checks"] = diagnosis.degraded_checks
    return data


def from_json(data: dict[str, Any]) -> Diagnosis:
    """The diagnosis :func:`to_json` wrote (a server's ``/v1/doctor`` body); ``ValueError`` if not one."""
    try:
        checks = [
            Check(
                CheckName(check["name"]),
                CheckStatus(check["status"]),
                str(check.get("detail", "")),
                [
                    Problem(str(p["message"]), p.get("file"), p.get("key"), p.get("source_id"))
                    for p in check.get("problems", [])
                ],
                [str(remark) for remark in check.get("remarks", [])],
            )
            for check in data["checks"]
        ]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a diagnosis: {exc!r} is missing or malformed") from None
    return Diagnosis(checks, data.get("profile"))


def render(diagnosis: Diagnosis) -> str:
    """``status ok  profile work``, then one block per check, blocks apart by a blank line."""
    out = Lines()
    head = Fields()
    head.text("status", str(diagnosis.status))
    head.text("profile", diagnosis.profile)
    head.count("failed checks", diagnosis.failed_checks)
    head.count("degraded checks", diagnosis.degraded_checks)
    out.line(str(head))
    for check in diagnosis.checks:
        out.line()
        out.line(f"{check.name:<{NAME_WIDTH}} {check.status}")
        if check.detail:
            out.block("  ", check.detail)
        for problem in check.problems:
            where = Fields()
            where.text("source", problem.source_id)
            where.text("file", problem.file)
            where.text("key", problem.key)
            if not where:
                out.block("  ", f"- {problem.message}")
                continue
            out.block("  ", f"- {where}")
            out.block("    ", problem.message)
        for remark in check.remarks:
            out.block("  ", f"note: {remark}")
    return str(out)
