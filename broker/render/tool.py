"""Text blocks of MCP tool results (also what the Sidecar plugin shows): compact, for a model to read.

Each is a projection of the structured content it travels with, never an
additional fact. Source text (titles, excerpts) is flattened onto one line so it
cannot imitate the shape of the report around it.
"""

from __future__ import annotations

from broker.contracts import (
    ExpandResponse,
    Outcome,
    QueryResponse,
    RefreshResponse,
    Result,
    SourcesResponse,
    SuppressionReason,
    Verdict,
)
from broker.errors import ExpandError
from broker.render.encode import json_document
from broker.render.ledger import degraded_entries
from broker.render.pointer import claimants, superseded_by
from broker.render.text import one_line

FAILED_NOTE = (
    "Every source that was asked failed. Nothing searched the corpus, "
    "so this is not evidence that nothing matched."
)
ABSTAINED_NOTE = (
    "Nothing matched, and at least one source answered. "
    "Reporting that nothing was found is supported."
)
# What an outcome means for a reader of the text, said once under its first line.
OUTCOME_NOTES = {Outcome.failed: FAILED_NOTE, Outcome.abstained: ABSTAINED_NOTE}



def result_text(rank: int, result: Result) -> str:
    """One result's block, leading blank line included: what the query text adds per result."""
    primary = result.primary
    head = f"\n{rank}. {primary.locator}"
    if primary.title:
        head += f"  {one_line(primary.title)}"
    facts = (
        f"   source={result.explanation.source_id} type={primary.record_type} "
        f"score={result.score:.4f}"
    )
    units = result.explanation.corroboration.independent_units
    if units > 1:
        facts += f" corroborated_by={units}"
    if result.verdict is not None and result.verdict != Verdict.current:
        facts += f" verdict={result.verdict}"
        successor = superseded_by(result)
        if successor:
            facts += f" superseded_by={successor}"
        if result.verdict == Verdict.ambiguous_supersession:
            facts += f" claimed_by={','.join(claimants(result))}"
    text = f"{head}\n{facts}\n"
    if primary.excerpt:
        text += f"   {one_line(primary.excerpt)}\n"
    return text


def query_text(response: QueryResponse) -> str:
    lines = [
        f"outcome={response.outcome} coverage={response.coverage} results={len(response.results)}"
    ]
    if response.truncated:
        lines[0] += f" truncated=true dropped={response.dropped_results}"
    if response.outcome in OUTCOME_NOTES:
        lines.append(OUTCOME_NOTES[response.outcome])
    degraded = degraded_entries(response)
    if degraded:
        lines.append(
            "Degraded coverage — these sources could not answer: "
            f"{', '.join(degraded)}. Any answer drawn from this is partial."
        )
    lines += withheld_lines(response)
    text = "\n".join(lines) + "\n"
    text += "".join(result_text(rank, r) for rank, r in enumerate(response.results, 1))
    return text.rstrip("\n")


def withheld_lines(response: QueryResponse) -> list[str]:
    """One line per suppression reason, counts summed, successors of superseded records
    named, and when completed ones were done."""
    counts: dict[SuppressionReason, int] = {}
    successors: dict[str, None] = {}
    completed: dict[str, None] = {}
    for s in response.suppressed:
        counts[s.reason] = counts.get(s.reason, 0) + s.count
        if s.reason == SuppressionReason.superseded and s.successor:
            successors[s.successor] = None
        if s.reason == SuppressionReason.completed and s.completed_at:
            completed[s.completed_at.date().isoformat()] = None
    lines = []
    for reason, count in counts.items():
        named = ""
        if reason == SuppressionReason.superseded and successors:
            label = "successor" if len(successors) == 1 else "successors"
            named = f" ({label} {', '.join(successors)})"
        if reason == SuppressionReason.completed and completed:
            named = f" (on {', '.join(sorted(completed))})"
        lines.append(f"Withheld {count} result(s): {reason}{named}.")
    return lines


def expand_text(locator: str, response: ExpandResponse) -> str:
    """Provenance first, then the untrusted content, unambiguously the tail."""
    head = f"locator={locator}"
    if response.provenance:
        head += f" provenance={response.provenance}"
    if response.source_revision:
        head += f" revision={response.source_revision}"
    if response.truncated:
        head += " truncated=true"
        if response.truncation_boundary:
            head += f" boundary={response.truncation_boundary}"
    return f"{head}\n\n{response.content}"


def expand_failure_text(locator: str, error: ExpandError) -> str:
    return f"{locator} could not be expanded ({error.code}): {error.message}"


def refresh_text(response: RefreshResponse) -> str:
    lines = [f"refresh {response.outcome}"]
    for source in response.sources:
        line = f"{source.source_id}: {source.status}"
        if source.reason:
            line += f" ({source.reason})"
        if source.health is not None:
            line += f"; health {source.health.status}, coverage {source.health.coverage}"
            if source.health.index_generation:
                line += f", generation {source.health.index_generation}"
        lines.append(line)
    return "\n".join(lines)


def sources_text(listing: SourcesResponse) -> str:
    return (
        f"profile {listing.profile}, sources {listing.status}\n\n"
        + json_document(listing.to_json()).rstrip("\n")
    )
