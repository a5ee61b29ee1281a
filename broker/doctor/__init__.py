"""``recall doctor``: everything that has to hold before a query means anything.

Checks run in a fixed order, and a diagnosis never stops at the first failure::

    configuration    the layers load, merge and validate
    trust_boundary   the project file stayed inside what a cloned repository may declare
    identity         every source has a source_uid, and no two share one (or a source_id)
    access           every eligible source's ``path`` location exists here
    requirements     every program a manifest shells out to is on PATH
    health           every eligible source handshakes and answers a usable health probe
    serving          every source that answers serves its whole corpus (else degraded)
    store_isolation  no two instances of one adapter opened the same store
    freshness        each source's freshness mode, and its registration's, are served
    lineage          declared source-level derivation has no cycle
    abstention       every ``evaluation.must_abstain`` query finds nothing

A configuration that does not load fails the load checks its problems belong
to and skips everything after. ``--conformance NAME`` asks a different
question: the three load checks, then a replay of one adapter's recorded suite.

Statuses: pass, fail, degraded (configured correctly, not serving what it was
configured to serve), skipped. Exit: any fail 1, else any degraded 3, else 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from broker.config import Config
from broker.doctor.conformance import BUILTIN_SUITES, conformance_check
from broker.doctor.diagnosis import (
    LIVE_CHECKS,
    Check,
    CheckName,
    CheckStatus,
    Diagnosis,
    DiagnosisStatus,
    Problem,
    skipped,
)
from broker.doctor.diagnosis_output import from_json, render, to_json
from broker.doctor.static import (
    NOT_LOADED,
    access_check,
    configuration_check,
    identity_check,
    load_failure,
    trust_check,
)
from broker.errors import ConfigError, UnknownProfile
from broker.supervise import Supervisor

if TYPE_CHECKING:
    from broker.doctor.abstention import Ask


async def diagnose(
    config_or_error: Config | ConfigError, supervisor: Supervisor, profile: str = "", *, ask: Ask | None = None
) -> Diagnosis:
    """Run every check against a loaded configuration, or report why it did not load."""
    if isinstance(config_or_error, ConfigError):
        return Diagnosis(load_failure(config_or_error) + skipped(LIVE_CHECKS, NOT_LOADED))
    config = config_or_error
    from broker.project_settings import project_settings_problems

    crossings = await project_settings_problems(config)
    checks = [configuration_check(config), trust_check(config, crossings), identity_check(config)]
    if crossings:
        # the sources' adapters would be started with settings the boundary refuses
        return Diagnosis(checks + skipped(LIVE_CHECKS, "the project file crossed the trust boundary"))
    try:
        chosen = config.profile(profile)
    except UnknownProfile as exc:
        checks.append(Check(CheckName.access, CheckStatus.failed, problems=[Problem(str(exc))]))
        return Diagnosis(checks + skipped(LIVE_CHECKS[1:], "no such profile"), profile or None)

    from broker.doctor.abstention import abstention_check
    from broker.doctor.live import (
        freshness_check,
        health_check,
        isolation_check,
        lineage_check,
        requirements_check,
        serving_check,
    )
    from broker.doctor.probe import eligible_sources, probe_sources

    eligible = eligible_sources(config, chosen)
    checks.append(access_check(eligible))
    probes = await probe_sources(config, supervisor, chosen, eligible)
    checks += [
        requirements_check(config, probes),
        health_check(probes),
        serving_check(probes),
        isolation_check(probes),
        freshness_check(config, probes),
        lineage_check(config, probes),
        await abstention_check(config, ask, chosen.name) if ask is not None
        else Check(CheckName.abstention, CheckStatus.skipped, "no query path to ask the must-abstain queries"),
    ]
    return Diagnosis(checks, chosen.name)


def diagnose_conformance(
    config_or_error: Config | ConfigError, adapter: str, *, builtin_suites: Path = BUILTIN_SUITES
) -> Diagnosis:
    """The load checks, then a replay of ``adapter``'s suite. Blocking: it runs processes."""
    if isinstance(config_or_error, ConfigError):
        return Diagnosis(load_failure(config_or_error) + skipped((CheckName.conformance,), NOT_LOADED))
    config = config_or_error
    return Diagnosis(_load_checks(config) + [conformance_check(config, adapter, builtin_suites)])


def _load_checks(config: Config) -> list[Check]:
    return [configuration_check(config), trust_check(config), identity_check(config)]


__all__ = [
    "BUILTIN_SUITES",
    "Check",
    "CheckName",
    "CheckStatus",
    "Diagnosis",
    "DiagnosisStatus",
    "Problem",
    "diagnose",
    "diagnose_conformance",
    "from_json",
    "render",
    "to_json",
]
