"""The page's templates: one Jinja environment that escapes every value it prints.

Templates receive the application layer's own models (``QueryResponse``,
``ExpandResponse``, the sources listing) and only lay them out; the helpers
below format numbers and times the way the terminal rendering does.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.responses import Response

from broker.contracts import Candidate, QueryResponse, Result, SourceReport
from broker.render.explanation_block import explanation_block
from broker.render.human import pasteable_lineage, source_ids_by_uid
from broker.render.ledger import degraded_entries
from broker.render.pointer import superseded_by
from broker.render.text import (
    elapsed_text,
    item_text,
    joined,
    mapping_text,
    num,
    pairs_text,
    split_diagnostics,
    stamp,
    stamp_text,
)
from broker.severity import Severity, severity
from broker.surfaces.page.security_headers import SECURITY_HEADERS

TEMPLATES = Path(__file__).resolve().parent / "templates"


def elapsed(ns: int | None) -> str:
    return elapsed_text(ns) if ns else ""


def moment(value: datetime | str | None) -> str:
    if value is None or value == "":
        return ""
    return stamp(value) if isinstance(value, datetime) else stamp_text(value)


def provenance(candidate: Candidate) -> list[tuple[str, str]]:
    """The candidate's recorded facts as label/value pairs, empty ones left out."""
    rows = [
        ("source", candidate.source_id),
        ("type", candidate.record_type),
        ("sensitivity", str(candidate.sensitivity)),
        ("record id", candidate.source_record_id),
        ("revision", candidate.source_revision or ""),
        ("fingerprint", candidate.content_fingerprint or ""),
        ("signals", joined(candidate.match_signals)),
        ("local rank", str(candidate.local_rank) if candidate.local_rank else ""),
        ("local score", num(candidate.local_score) if candidate.local_score is not None else ""),
        ("event", moment(candidate.event_time)),
        ("valid from", moment(candidate.valid_from)),
        ("valid to", moment(candidate.valid_to)),
        ("observed", moment(candidate.observed_at)),
        ("confirmed", moment(candidate.confirmed_at)),
        ("derived from", joined(candidate.derived_from)),
        ("metadata", mapping_text(candidate.metadata)),
    ]
    return [(label, value) for label, value in rows if value]


def pills(result: Result) -> list[tuple[str, str]]:
    """(kind, text) markers the terminal prints after a result's locator."""
    marks: list[tuple[str, str]] = []
    if result.verdict is not None and result.verdict != "current":
        successor = superseded_by(result)
        marks.append(("stale", f"stale {result.verdict}" + (f" by {successor}" if successor else "")))
    if result.explanation.exact_promoted:
        marks.append(("exact", "exact"))
    units = result.explanation.corroboration.independent_units
    if units > 1:
        marks.append(("corroborated", f"corroborated {units}"))
    return marks


def report_cause(report: SourceReport) -> str:
    """The report's reason, unless it only repeats the outcome (``success``)."""
    return "" if report.reason in (None, str(report.outcome)) else str(report.reason)


def withheld_locator(response: QueryResponse, lineage_root: str | None) -> str:
    """A withheld record's lineage as the locator the terminal prints for it
    (``notes:path``, not the source's internal uid), which ``/expand`` opens."""
    return pasteable_lineage(lineage_root, source_ids_by_uid(response)) or ""


# The page's translation of the ladder: an answer on these rungs is announced as an alert.
ALERTING = frozenset({Severity.degraded, Severity.failed})


def rung_of(response: QueryResponse) -> Severity:
    return severity(response.outcome, response.coverage)


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        elapsed=elapsed,
        moment=moment,
        provenance=provenance,
        pills=pills,
        report_cause=report_cause,
        withheld_locator=withheld_locator,
        degraded=degraded_entries,
        explanation_block=explanation_block,
        mapping_text=mapping_text,
        pairs_text=pairs_text,
        split_diagnostics=split_diagnostics,
        item_text=item_text,
        joined=joined,
        num=num,
        rung_of=rung_of,
        alerting=ALERTING,
        Severity=Severity,
    )
    return env


def render(
    template: str, context: dict[str, Any], *, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """``template`` rendered as an HTML response with the page's security headers."""
    body = environment().get_template(template).render(**context)
    return Response(
        body, status, headers={**SECURITY_HEADERS, **(headers or {})}, media_type="text/html; charset=utf-8"
    )
