"""Checks answered from the configuration alone, before any adapter is started."""

from __future__ import annotations

import os
from collections import Counter

from broker.config import Config, Layer, SourceConfig
from broker.config.trust import project_root
from broker.doctor.diagnosis import (
    LOAD_CHECKS,
    Check,
    CheckName,
    CheckStatus,
    Problem,
    plural,
    verdict,
)
from broker.errors import ConfigError, ConfigProblem

NOT_LOADED = "configuration did not load"


def load_failure(error: ConfigError) -> list[Check]:
    """Route every load problem to the check it belongs to, each with its file and key."""
    routed: dict[CheckName, list[Problem]] = {name: [] for name in LOAD_CHECKS}
    for found in error.problems:
        routed[_check_for(found)].append(
            Problem(found.message, file=found.file, key=found.key, source_id=found.source_id)
        )
    return [
        Check(name, CheckStatus.failed, problems=problems)
        if problems
        else Check(name, CheckStatus.skipped, NOT_LOADED)
        for name, problems in routed.items()
    ]


def _check_for(found: ConfigProblem) -> CheckName:
    try:
        name = CheckName(found.kind)
    except ValueError:
        return CheckName.configuration
    return name if name in LOAD_CHECKS else CheckName.configuration


def configuration_check(config: Config) -> Check:
    files = [f"{f.path} ({f.layer})" for f in config.files]
    detail = ", ".join(files) if files else "no configuration file; built-in defaults are in force"
    return Check(CheckName.configuration, CheckStatus.passed, detail)


def trust_check(config: Config, settings_problems: list[ConfigProblem] | None = None) -> Check:
    """What the project file was checked for, or every crossing its settings made.

    A crossing found while loading fails the load and never reaches here. The
    settings of the sources a project adds are checked against their adapters'
    schemas (``settings_problems``); ``None`` means that check was not run.
    """
    if settings_problems:
        return Check(
            CheckName.trust_boundary,
            CheckStatus.failed,
            problems=[
                Problem(p.message, file=p.file, key=p.key, source_id=p.source_id)
                for p in settings_problems
            ],
        )
    project = [f.path for f in config.files if f.layer is Layer.project]
    if not project:
        detail = "no project configuration; every source and adapter came from user configuration"
        return Check(CheckName.trust_boundary, CheckStatus.passed, detail)
    added = [s for s in config.sources if s.project_declared]
    inside = [s for s in added if s.location_kind == "path"]
    with_settings = [s for s in added if s.settings]
    root = project_root(project[0])
    parts = [
        f"project file {project[0]}: no command, identity, [defaults] or loosened floor or ceiling",
        f"it adds {plural(len(inside), 'source')}, each reading inside {root}",
    ]
    opted = sorted(config.project_opt_ins.get(root, frozenset()))
    if opted:
        parts.append(f"user configuration opts it in to {', '.join(opted)}")
    if with_settings and settings_problems is not None:
        parts.append(
            f"settings on {plural(len(with_settings), 'source')}: each one its adapter lets a "
            "project choose"
        )
    elif with_settings:
        parts.append("settings on the sources it adds: not checked against their adapters here")
    return Check(CheckName.trust_boundary, CheckStatus.passed, "; ".join(parts))


def identity_check(config: Config) -> Check:
    uids = Counter(s.source_uid for s in config.sources)
    ids = Counter(s.source_id for s in config.sources)
    problems: list[Problem] = []
    for source in config.sources:
        file = _declared_file(source)
        if not source.source_uid:
            problems.append(
                Problem("source has no source_uid", file=file, key="source_uid", source_id=source.source_id)
            )
        elif uids[source.source_uid] > 1:
            problems.append(
                Problem(
                    f"source_uid {source.source_uid!r} is shared by {uids[source.source_uid]} sources; "
                    "an identity belongs to exactly one source",
                    file=file,
                    key="source_uid",
                    source_id=source.source_id,
                )
            )
        if ids[source.source_id] > 1:
            problems.append(
                Problem(
                    f"source_id {source.source_id!r} is declared {ids[source.source_id]} times",
                    file=file,
                    key="source_id",
                    source_id=source.source_id,
                )
            )
    detail = f"{plural(len(config.sources), 'source')}, {plural(len(uids), 'distinct identity', 'distinct identities')}"
    return verdict(CheckName.identity, detail, problems)


def access_check(eligible: list[SourceConfig]) -> Check:
    """Every eligible ``path`` location must exist here, before an adapter says so less clearly."""
    problems: list[Problem] = []
    local = [s for s in eligible if s.location and s.location_kind == "path"]
    for source in local:
        assert source.location is not None
        try:
            os.stat(source.location)
        except OSError as err:
            problems.append(
                Problem(
                    f"location {source.location} cannot be read: {err.strerror or err}",
                    file=origin_file(source, "location"),
                    key="location",
                    source_id=source.source_id,
                )
            )
    detail = f"{len(local)} of {len(eligible)} eligible sources name a local path"
    return verdict(CheckName.access, detail, problems)


def _declared_file(source: SourceConfig) -> str | None:
    return str(source.declared_in.file) if source.declared_in.file else None


def origin_file(source: SourceConfig, key: str) -> str | None:
    """The file that set ``key`` on ``source``, else the file that declared the source."""
    origin = source.origin(key).file
    return str(origin) if origin else _declared_file(source)
