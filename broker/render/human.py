"""Human renderings: the query pointer and explain tiers, expand, refresh, sources, errors.

Each query block is its own function because the response budget prices a
human surface by running them (:mod:`broker.render.cost`).
"""

from __future__ import annotations

from typing import Any

from adapter_sdk.protocol import SearchOutcome
from broker.contracts import (
    Candidate,
    ExcerptKind,
    ExpandResponse,
    Member,
    OmittedPart,
    QueryResponse,
    RefreshResponse,
    Result,
    SourceRefresh,
    SourceReport,
    SourcesResponse,
    SourceState,
    SourceSummary,
    Suppression,
    Verdict,
)
from broker.errors import ExpandError
from broker.render.explanation_block import explanation_block
from broker.render.ledger import degraded_entries
from broker.render.pointer import claimants, superseded_by
from broker.render.text import (
    Fields,
    Lines,
    duration_text,
    elapsed_text,
    item_text,
    joined,
    mapping_text,
    num,
    one_line,
    pairs_text,
    split_diagnostics,
    stamp_text,
)

__all__ = [
    "degraded_entries",
    "pasteable_lineage",
    "render_error",
    "render_expand",
    "render_query",
    "render_refresh",
    "render_result",
    "render_sources",
    "source_ids_by_uid",
]

LEDGER_OMITTED = "(per-source ledger omitted for the response budget)"
PLAN_OMITTED = "per-source plan omitted for the response budget"

_EXCERPT_GUTTER = {ExcerptKind.matched: " > ", ExcerptKind.preview: " ~ "}
_NO_CLAIM_GUTTER = "   "


# ---------------------------------------------------------------------------
# Query


def render_query(response: QueryResponse, *, explain: bool) -> str:
    out = Lines()
    _outcome(out, response)
    _results(out, response, explain)
    _suppressed(out, response.suppressed, source_ids_by_uid(response))
    if explain:
        _temporal_problems(out, response.temporal_problems)
        _ledger(out, response)
        _plan(out, response)
    return str(out)


def render_result(rank: int, result: Result, *, explain: bool) -> str:
    """One result as the tier prints it, at its rank (digits are part of its cost)."""
    out = Lines()
    _pointer(out, rank, result)
    if explain:
        _detail(out, result)
    return str(out)


def _outcome(out: Lines, response: QueryResponse) -> None:
    head = Fields()
    head.text("outcome", response.outcome)
    head.text("coverage", response.coverage)
    head.count("results", len(response.results))
    head.elapsed("elapsed", response.elapsed_ns)
    head.flag("truncated", response.truncated)
    head.count("dropped", response.dropped_results)
    out.line(str(head))
    degraded = degraded_entries(response)
    if degraded:
        out.line("degraded coverage: " + ", ".join(degraded))
        for report in response.source_outcomes or ():
            detail = (report.diagnostics or {}).get("detail")
            if report.outcome == SearchOutcome.partial and isinstance(detail, str) and detail:
                out.block("  ", f"{report.source_id}: {one_line(detail)}")  # why it is partial


def _results(out: Lines, response: QueryResponse, explain: bool) -> None:
    out.line()
    if not response.results:
        if response.dropped_results:
            out.line(f"results: none shown, {response.dropped_results} dropped")
        else:
            out.line("results: none")
        return
    for rank, result in enumerate(response.results, 1):
        _pointer(out, rank, result)
        if explain:
            _detail(out, result)


def _pointer(out: Lines, rank: int, result: Result) -> None:
    markers = Fields()
    if result.verdict is Verdict.ambiguous_supersession:
        markers.raw(f"{result.verdict} claimed by {', '.join(claimants(result))}")
    elif result.verdict is not None and result.verdict != Verdict.current:
        successor = superseded_by(result)
        markers.raw(f"stale {result.verdict}" + (f" by {successor}" if successor else ""))
    markers.flag("exact", result.explanation.exact_promoted)
    units = result.explanation.corroboration.independent_units
    if units > 1:
        markers.count("corroborated", units)
    line = f"{rank}. {result.primary.locator}"
    out.line(f"{line}  {markers}" if markers else line)
    if result.primary.title:
        out.block("   ", result.primary.title)
    if result.primary.excerpt:
        kind = result.primary.excerpt_kind
        gutter = _EXCERPT_GUTTER[kind] if kind is not None else _NO_CLAIM_GUTTER
        out.block(gutter, result.primary.excerpt)


def _provenance(c: Candidate) -> Fields:
    meta = Fields()
    meta.text("type", c.record_type)
    meta.text("sensitivity", c.sensitivity)
    meta.text("id", c.source_record_id)
    meta.text("candidate", c.candidate_id)
    meta.text("revision", c.source_revision)
    meta.text("fingerprint", c.content_fingerprint)
    meta.text("signals", joined(c.match_signals))
    meta.count("local rank", c.local_rank)
    if c.local_score is not None:
        meta.text("local score", num(c.local_score))
    meta.at("event", c.event_time)
    meta.at("valid from", c.valid_from)
    meta.at("valid to", c.valid_to)
    meta.at("observed", c.observed_at)
    meta.at("confirmed", c.confirmed_at)
    meta.text("derived from", joined(c.derived_from))
    meta.text("metadata", mapping_text(c.metadata))
    return meta


def _members(out: Lines, members: list[Member]) -> None:
    for member in members:
        out.block("   ", f"lineage {member.lineage_root}")
        for c in member.candidates:
            f = Fields()
            f.text("source", c.source_id)
            f.count("local rank", c.local_rank)
            f.text("signals", joined(c.match_signals))
            out.block("     ", f"{c.locator}  {f}" if f else c.locator)


def _detail(out: Lines, result: Result) -> None:
    meta = _provenance(result.primary)
    if meta:
        out.block("   ", str(meta))
    _members(out, result.members)
    out.block("   ", explanation_block(result.explanation))


def source_ids_by_uid(response: QueryResponse) -> dict[str, str]:
    """Each source's id by its uid, as the plan and the ledger name them."""
    ids = {s.source_uid: s.source_id for s in response.plan.sources}
    ids.update((r.source_uid, r.source_id) for r in response.source_outcomes or ())
    return ids


def pasteable_lineage(lineage_root: str | None, source_ids: dict[str, str]) -> str | None:
    """A lineage root (``<source_uid>:<ref>``) as a locator ``recall expand`` accepts.

    The uid keeps lineage stable across renames of a source; a person pastes the
    source id, so the human tier prints that instead.
    """
    if not lineage_root:
        return lineage_root
    uid, sep, ref = lineage_root.partition(":")
    source_id = source_ids.get(uid)
    return f"{source_id}:{ref}" if sep and source_id else lineage_root


def _suppressed(out: Lines, suppressed: list[Suppression], source_ids: dict[str, str]) -> None:
    if not suppressed:
        return
    out.line()
    out.line("suppressed")
    for s in suppressed:
        f = Fields()
        f.raw(s.reason)
        f.count("count", s.count)
        f.text("lineage", pasteable_lineage(s.lineage_root, source_ids))
        f.text("successor", s.successor)
        f.at("completed", s.completed_at)
        out.block("  ", str(f))


def _temporal_problems(out: Lines, problems: list[str] | None) -> None:
    """Supersession data the verdicts could not use (cycles, dangling links)."""
    if not problems:
        return
    out.line()
    out.line("temporal problems")
    for problem in problems:
        out.block("  ", problem)


def _summary_line(summary: SourceSummary) -> str:
    f = Fields()
    f.count("sources", summary.sources)
    for outcome in sorted(summary.outcomes):
        f.count(outcome, summary.outcomes[outcome])
    return f"{f}  {LEDGER_OMITTED}" if f else LEDGER_OMITTED


def _report_line(r: SourceReport) -> str:
    f = Fields()
    f.text("outcome", r.outcome)
    f.text("reason", r.reason)
    f.count("candidates", r.candidates)
    f.elapsed("elapsed", r.elapsed_ns)
    f.elapsed("cold start", r.cold_start_ns)
    if r.timeout is not None:
        limit = f" {duration_text(r.timeout.limit_ns)}" if r.timeout.limit_ns is not None else ""
        f.text("timeout", f"{r.timeout.budget}{limit}")
    f.text("watermark", r.source_watermark)
    f.text("generation", r.index_generation)
    f.at("confirmed", r.confirmed_at)
    scalars, nested, _ = split_diagnostics(r.diagnostics)
    f.text("diagnostics", mapping_text({**scalars, **nested}))
    return f"{r.source_id} ({r.source_uid})  {f}"


def _ledger(out: Lines, response: QueryResponse) -> None:
    out.line()
    out.line("sources")
    reports = response.source_outcomes
    if not reports and response.source_summary is not None:
        out.block("  ", _summary_line(response.source_summary))
    elif not reports:
        out.block("  ", "none configured for this profile")
    else:
        for report in reports:
            out.block("  ", _report_line(report))
            _listed_diagnostics(out, "  ", report.diagnostics)


def _plan(out: Lines, response: QueryResponse) -> None:
    plan = response.plan
    out.line()
    head = Fields()
    head.text("profile", plan.profile)
    # Zero is how an operator turns these two rules off, so they print even at zero.
    head.raw(f"limit {plan.limit}")
    head.number("rank constant", plan.rank_constant)
    head.number("corroboration cap", plan.corroboration_cap)
    head.raw(f"relevance floor {num(plan.relevance_floor)}")
    head.elapsed("fusion reserve", plan.fusion_reserve_ns)
    head.at("deadline", plan.deadline)
    head.at("evaluated", plan.evaluated_at)
    out.line(f"plan  {head}")
    if not plan.sources and OmittedPart.plan_sources in response.omitted:
        out.block("  ", PLAN_OMITTED)
        return
    for s in plan.sources:
        f = Fields()
        f.raw("eligible" if s.eligible else "ineligible")
        f.text("relevance basis", s.relevance_basis)
        f.text("reason", s.reason)
        f.count("limit", s.limit)
        f.elapsed("timeout", s.timeout_ns)
        f.number("prior", s.prior)
        f.text("diagnostics", mapping_text(s.diagnostics))
        out.block("  ", f"{s.source_id} ({s.source_uid})  {f}")


# ---------------------------------------------------------------------------
# Expand, refresh


def render_expand(response: ExpandResponse) -> str:
    """Provenance first, content last: piping the tail of the output pipes the evidence."""
    out = Lines()
    head = Fields()
    head.text("provenance", response.provenance)
    head.text("revision", response.source_revision)
    head.flag("truncated", response.truncated)
    head.text("boundary", response.truncation_boundary)
    if head:
        out.line(str(head))
        out.line()
    content = response.content
    return str(out) + (content if content.endswith("\n") else content + "\n")


def render_refresh(response: RefreshResponse, *, explain: bool = False) -> str:
    """What was indexed, how long it took and what needs attention, in plain words.

    ``explain`` prints the reference's machine form instead: statuses, reasons,
    generations and watermarks, one source per line.
    """
    if explain:
        return _refresh_ledger(response)
    out = Lines()
    count = len(response.sources)
    noun = "source" if count == 1 else "sources"
    verb = {"refreshed": "refreshed", "degraded": "refreshed with problems"}.get(
        response.outcome, "could not refresh"
    )
    out.line(f"{verb}: {count} {noun} in {elapsed_text(response.elapsed_ns)}")
    width = max((len(s.source_id) for s in response.sources), default=0)
    for source in response.sources:
        line = f"  {source.source_id:<{width}}  {_refresh_summary(source)}"
        if source.elapsed_ns:
            line += f"  ({elapsed_text(source.elapsed_ns)})"
        out.line(line)
    return str(out)


REFRESH_SKIPS = {
    "checkpoint_unsupported": "nothing to index: read live at every query",
    "sensitivity_denied": "skipped: above this profile's sensitivity ceiling",
    "disabled": "skipped: disabled in the configuration",
}


def _refresh_summary(source: SourceRefresh) -> str:
    if source.status == "skipped":
        return REFRESH_SKIPS.get(source.reason or "", f"skipped ({source.reason})")
    if source.status == "failed":
        detail = source.diagnostic_detail or source.reason or "no detail"
        return f"failed: {detail}; run 'recall doctor' for more"
    health = source.health
    indexed = ""
    if health is not None and health.record_count is not None:
        indexed = f"{health.record_count} records"
        if health.indexed_count is not None and health.indexed_count < health.record_count:
            indexed += f", {health.indexed_count} indexed so far"
    state = "up to date" if source.status == "refreshed" else "needs attention"
    if health is not None and health.coverage != "complete":
        state = f"{health.coverage} coverage"
    if source.status == "degraded" and source.diagnostic_detail:
        state += f": {source.diagnostic_detail}"
    return ", ".join(part for part in (state, indexed) if part)


def _refresh_ledger(response: RefreshResponse) -> str:
    out = Lines()
    head = Fields()
    head.text("outcome", response.outcome)
    head.elapsed("elapsed", response.elapsed_ns)
    head.count("sources", len(response.sources))
    out.line(str(head))
    for source in response.sources:
        row = Fields()
        row.text("source", source.source_id)
        row.text("status", source.status)
        row.text("reason", source.reason)
        row.text("detail", source.diagnostic_detail)
        row.elapsed("elapsed", source.elapsed_ns)
        if source.health is not None:
            row.text("health", source.health.status)
            row.text("coverage", source.health.coverage)
            row.text("generation", source.health.index_generation)
            row.text("source watermark", source.health.source_watermark)
            row.text("index watermark", source.health.index_watermark)
        out.line(str(row))
    return str(out)


# ---------------------------------------------------------------------------
# Sources


def _requirements(requirements: list[dict[str, Any]] | None) -> str:
    parts = []
    for req in requirements or ():
        name, command = req.get("name", ""), req.get("command", "")
        parts.append(name if name == command else f"{name}={command}")
    return joined(parts)


def _health_line(health: dict[str, Any]) -> str:
    f = Fields()
    f.raw(health.get("status"))
    f.text("coverage", health.get("coverage"))
    for label, key in (("checked", "checked_at"), ("last success", "last_success_at")):
        if health.get(key):
            f.text(label, stamp_text(health[key]))
    for label, key in (
        ("watermark", "source_watermark"),
        ("index watermark", "index_watermark"),
        ("generation", "index_generation"),
        ("model", "index_model"),
        ("index config", "index_config"),
    ):
        f.text(label, health.get(key))
    f.count("records", health.get("record_count"))
    f.count("indexed", health.get("indexed_count"))
    f.count("failed", health.get("failed_count"))
    f.elapsed("cold start", health.get("cold_start_ns"))
    f.text("checkpoint", health.get("checkpoint_progress"))
    scalars, _, _ = split_diagnostics(health.get("diagnostics"))
    f.text("diagnostics", mapping_text(scalars))
    return str(f)


def _diagnostic_lists(out: Lines, health: dict[str, Any]) -> None:
    """Diagnostics that hold more than one value: a map (the freshness an index had) on
    a line of its own as ``key value`` pairs, a list (files declined, failures) as one
    readable line per entry."""
    _, nested, _ = split_diagnostics(health.get("diagnostics"))
    for name in sorted(nested):
        out.block("  ", f"{name.replace('_', ' ')}: {pairs_text(nested[name])}")
    _listed_diagnostics(out, "  ", health.get("diagnostics"))


def _listed_diagnostics(out: Lines, indent: str, diagnostics: dict[str, Any] | None) -> None:
    """Diagnostics that list things (files declined, failures): one readable line each."""
    _, _, listed = split_diagnostics(diagnostics)
    for name in sorted(listed):
        out.block(indent, f"{name.replace('_', ' ')}:")
        for item in listed[name]:
            out.block(indent + "  ", item_text(item))


def _source_entry(out: Lines, s: dict[str, Any]) -> None:
    head = Fields()
    head.text("adapter", s.get("adapter"))
    head.raw("enabled" if s.get("enabled") else "disabled")
    head.flag("in profile", bool(s.get("in_profile")))
    head.flag("denied by ceiling", not s.get("permitted", True))
    if s.get("probed"):  # the state every surface shows; an unprobed row's is said above
        head.text("status", str(s.get("status")))
    out.line(f"{s.get('source_id')} ({s.get('source_uid')})  {head}")

    config = Fields()
    config.text("location", s.get("location"))
    config.text("sensitivity", s.get("sensitivity"))
    config.text("freshness", s.get("freshness_mode"))
    config.number("prior", s.get("base_prior"))
    priors = s.get("intent_priors") or {}
    config.text("intent priors", ", ".join(f"{k}={num(priors[k])}" for k in sorted(priors)))
    config.text("record types", joined(s.get("record_types")))
    config.count("timeout_ms", s.get("timeout_ms"))
    if config:
        out.block("  ", str(config))

    manifest = Fields()
    manifest.text("adapter id", s.get("adapter_id"))
    manifest.text("name", s.get("display_name"))
    manifest.text("capabilities", joined(s.get("capabilities")))
    manifest.text("query modes", joined(s.get("query_modes")))
    manifest.text("as_of", s.get("as_of_support"))
    manifest.text("derives from", s.get("derives_from"))
    manifest.text("requires", _requirements(s.get("executable_requirements")))
    if manifest:
        out.block("  ", str(manifest))
    if s.get("freshness_policy"):
        out.block("  ", f"policy {s['freshness_policy']}")
    if not s.get("probed"):
        out.block("  ", "health not probed")
    if s.get("health"):
        out.block("  ", f"health {_health_line(s['health'])}")
        _diagnostic_lists(out, s["health"])
    if s.get("error"):
        out.block("  ", f"error {s['error']}")


def render_sources(listing: SourcesResponse) -> str:
    """``recall sources``: the listing's status, then one entry per source."""
    out = Lines()
    head = Fields()
    head.text("profile", listing.profile)
    head.text("max sensitivity", str(listing.max_sensitivity))
    head.count("sources", len(listing.sources))
    head.text("status", str(listing.status))
    out.line(str(head))
    if not listing.sources:
        out.line("nothing is configured yet: start with 'recall init --notes DIR' "
                 "(or --tasks PATH), then 'recall refresh'")
        return str(out)
    probed = sum(row.probed for row in listing.sources)
    unusable = listing.unusable
    if unusable:
        names = ", ".join(row.source_id for row in unusable)
        out.line(f"{len(unusable)} of {probed} probed sources cannot answer: {names}")
    short = [row.source_id for row in listing.sources if row.status == SourceState.degraded]
    if short:
        out.line(f"{len(short)} of {probed} probed sources answer from less than they hold: {', '.join(short)}")
    for source in listing.sources:
        out.line()
        _source_entry(out, source.to_json())
    return str(out)


# ---------------------------------------------------------------------------
# Errors


def render_error(error: BaseException) -> str:
    """The one stderr line a failed command prints: ``recall: <message>``."""
    message = str(error) or type(error).__name__
    if isinstance(error, ExpandError):
        message = f"{message} ({error.code})"
    return f"recall: {message}\n"
