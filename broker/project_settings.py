"""A project source's settings, checked against its adapter's schema before the adapter sees them.

Which settings a project file may choose is the adapter's call: its manifest's
``settings_schema`` marks the ones only the user may set (``trusted_only``), and
the manifest arrives only in answer to ``recall/initialize``, which carries the
settings. So before the first real start of a source a project added with
settings, its adapter (a program the user registered) is started once without
them, in a workdir of its own, and asked for its manifest. Any setting the
schema does not let a project choose refuses the whole configuration, as a
trust-boundary problem naming the file and key, before any query runs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import anyio

from broker.config import Config, SourceConfig, trust
from broker.config.problems import Problems
from broker.errors import ConfigProblem
from broker.plan import adapter_spec
from broker.supervise import HANDSHAKE_TIMEOUT, AdapterFailure, Supervisor

PROBE_DIR = "settings-probe"


def probe_workdir(config: Config, source: SourceConfig) -> Path:
    """Where the schema handshake runs: apart from the source's real state, kept between runs."""
    return config.paths.state_root / PROBE_DIR / source.source_uid


async def project_settings_problems(config: Config) -> list[ConfigProblem]:
    """Every setting a project source sets that its adapter does not let a project choose."""
    pending = [s for s in config.sources if s.project_declared and s.settings]
    problems = Problems()
    if not pending:
        return problems.items

    async def check(supervisor: Supervisor, source: SourceConfig) -> None:
        file = source.declared_in.file
        assert file is not None
        spec = adapter_spec(config, config.defaults.profile, source)
        workdir = probe_workdir(config, source)
        bare = replace(
            spec,
            workdir=workdir,
            init_params=spec.init_params.model_copy(
                update={"settings": None, "workdir": str(workdir)}
            ),
        )
        try:
            with anyio.fail_after(HANDSHAKE_TIMEOUT):
                manifest = await supervisor.client(bare).initialize()
        except (AdapterFailure, TimeoutError) as exc:
            detail = exc.message if isinstance(exc, AdapterFailure) else "no handshake in time"
            problems.trust(
                file,
                f"{source.declared_key}.settings",
                f"cannot tell which settings adapter {source.adapter!r} lets a project choose: "
                f"it did not start without them ({detail}); declare the source in user "
                f"configuration ({config.paths.config_file}) to set them",
                source_id=source.source_id,
            )
            return
        trust.check_project_settings(
            source.settings,
            manifest.settings_schema,
            source.adapter,
            file,
            source.declared_key,
            config.paths.config_file,
            problems,
            source_id=source.source_id,
        )

    async with Supervisor() as supervisor, anyio.create_task_group() as tasks:
        for source in pending:
            tasks.start_soon(check, supervisor, source)
    return sorted(problems.items, key=lambda p: (p.file or "", p.key or ""))


async def vet_project_settings(config: Config) -> None:
    """Raise :class:`broker.errors.TrustError` if any project setting crosses the boundary."""
    problems = Problems()
    problems.extend(await project_settings_problems(config))
    problems.raise_if_any()
