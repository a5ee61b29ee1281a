"""The resolved configuration: what recall will do, and which file said so."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from adapter_sdk.vocabulary import Sensitivity
from broker.config.builtins import canonical_adapter_name
from broker.errors import UnknownProfile


class Layer(StrEnum):
    """Where a value came from, least to most specific."""

    default = "default"
    builtin = "builtin"
    user = "user"
    project = "project"


@dataclass(frozen=True)
class Origin:
    """Where a configuration value came from: its layer and, if any, its file."""

    layer: Layer
    file: Path | None = None

    @property
    def label(self) -> str:
        if self.file is None:
            return f"[{self.layer}]"
        return f"[{self.layer} {self.file}]"


DEFAULT = Origin(Layer.default)
BUILTIN = Origin(Layer.builtin)


@dataclass(frozen=True)
class ConfigFile:
    """One file that contributed, in merge order."""

    layer: Layer
    path: Path


@dataclass
class Defaults:
    """The ``[defaults]`` table, merged."""

    profile: str = "default"
    timeout_ms: int = 2000
    fusion_reserve_ms: int = 25
    max_results: int = 20
    relevance_floor: float = 0.10
    origins: dict[str, Origin] = field(default_factory=dict, repr=False, compare=False)

    def origin(self, key: str) -> Origin:
        return self.origins.get(key, DEFAULT)


@dataclass
class SourceConfig:
    """One configured source, merged from every layer that set it."""

    source_uid: str
    source_id: str
    adapter: str
    location: str | None
    location_kind: str | None
    enabled: bool
    record_types: list[str] | None
    freshness_mode: str | None
    freshness_policy: str | None
    base_prior: float
    intent_priors: dict[str, float]
    sensitivity: Sensitivity
    timeout_ms: int
    settings: dict[str, Any]
    base_dir: Path
    location_original: str | None = None
    location_kind_explicit: bool = False
    declared_in: Origin = DEFAULT
    declared_key: str = ""  # the table that declared it, such as ``sources[2]``
    pass_env: tuple[str, ...] = ()  # variables its adapter sees besides the registration's
    origins: dict[str, Origin] = field(default_factory=dict, repr=False, compare=False)

    def origin(self, key: str) -> Origin:
        return self.origins.get(key, DEFAULT)

    @property
    def project_declared(self) -> bool:
        return self.declared_in.layer is Layer.project


@dataclass
class Profile:
    """A named set of sources and the sensitivity ceiling a query through it may see."""

    name: str
    sources: list[str]
    max_sensitivity: Sensitivity = Sensitivity.restricted
    synthetic: bool = False
    origins: dict[str, Origin] = field(default_factory=dict, repr=False, compare=False)

    def origin(self, key: str) -> Origin:
        return self.origins.get(key, DEFAULT)


@dataclass
class AdapterRegistration:
    """How to start an adapter: its program, environment and declared freshness modes.

    ``env`` sets variables; ``pass_env`` names those it sees from the environment
    recall was started in, besides the base every adapter sees
    (:mod:`broker.adapter_environment`)."""

    name: str
    builtin: bool
    argv: list[str]
    env: dict[str, str]
    freshness_modes: list[str]
    conformance: Path | None
    origin: Origin = BUILTIN
    # a project may add a source of it only when the user opted that project in
    holds_credentials: bool = False
    pass_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class MustAbstain:
    """A question the evaluation expects every source to abstain on, and why."""

    query: str
    reason: str


@dataclass
class Evaluation:
    """The ``[evaluation]`` table: the development pack, its baseline and the must-abstain questions."""

    development_pack: Path | None = None
    development_baseline: Path | None = None
    must_abstain: list[MustAbstain] = field(default_factory=list)
    origins: dict[str, Origin] = field(default_factory=dict, repr=False, compare=False)

    def origin(self, key: str) -> Origin:
        return self.origins.get(key, DEFAULT)


@dataclass(frozen=True)
class Paths:
    """Where recall reads configuration and keeps per-profile state."""

    config_file: Path
    adapters_dir: Path
    state_root: Path  # $XDG_STATE_HOME/recall
    cache_root: Path  # $XDG_CACHE_HOME/recall
    project_file: Path | None = None


@dataclass
class Config:
    """The merged configuration every command runs against."""

    defaults: Defaults
    sources: list[SourceConfig]
    profiles: dict[str, Profile]
    adapters: dict[str, AdapterRegistration]
    evaluation: Evaluation | None
    files: list[ConfigFile]
    paths: Paths
    # project folder (symlinks resolved) -> credential-holding adapters the user let it use
    project_opt_ins: dict[Path, frozenset[str]] = field(default_factory=dict)

    def profile(self, name: str = "") -> Profile:
        """The named profile; ``""`` means ``defaults.profile``."""
        wanted = name or self.defaults.profile
        found = self.profiles.get(wanted)
        if found is None:
            configured = ", ".join(sorted(self.profiles)) or "none"
            raise UnknownProfile(f"unknown profile {wanted!r} (configured profiles: {configured})")
        return found

    def source(self, source_id: str) -> SourceConfig | None:
        return next((s for s in self.sources if s.source_id == source_id), None)

    def source_by_uid(self, uid: str) -> SourceConfig | None:
        return next((s for s in self.sources if s.source_uid == uid), None)

    def adapter_for(self, source: SourceConfig) -> AdapterRegistration:
        return self.adapters[canonical_adapter_name(source.adapter)]

    def pass_env(self, source: SourceConfig) -> tuple[str, ...]:
        """The variables ``source``'s adapter sees besides the base: its registration's,
        the source's own ``pass_env``, and those its ``*_env`` settings name."""
        from broker.adapter_environment import named_by_settings

        declared = (*self.adapter_for(source).pass_env, *source.pass_env, *named_by_settings(source.settings))
        return tuple(dict.fromkeys(declared))

    def state_dir(self, profile: str) -> Path:
        return self.paths.state_root / profile

    def cache_dir(self, profile: str) -> Path:
        return self.paths.cache_root / profile

    def workdir(self, profile: str, source_uid: str) -> Path:
        return self.state_dir(profile) / "adapters" / source_uid
