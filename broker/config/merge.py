"""Layering: built-ins, then user files, then the project file, under the trust boundary."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapter_sdk.vocabulary import Sensitivity
from broker.adapter_environment import BUILTIN_PASS_ENV
from broker.config import trust
from broker.config.builtins import (
    ALIASES,
    BUILTIN_FRESHNESS,
    CREDENTIAL_ADAPTERS,
    canonical_adapter_name,
    inferred_freshness,
)
from broker.config.identity import new_source_uid, project_source_uid
from broker.config.locations import ResolvedLocation, resolve_location
from broker.config.problems import IDENTITY, Problems, suggestion
from broker.config.read import Document, NamedDeclaration, SourceDeclaration
from broker.config.resolved import (
    BUILTIN,
    AdapterRegistration,
    Config,
    ConfigFile,
    Defaults,
    Evaluation,
    Layer,
    MustAbstain,
    Origin,
    Paths,
    Profile,
    SourceConfig,
)

DEFAULT_PROFILE = "default"


def builtin_registrations() -> dict[str, AdapterRegistration]:
    """The adapters shipped with recall, registered without the user writing a command."""
    return {
        name: AdapterRegistration(
            name=name,
            builtin=True,
            argv=[sys.executable, "-m", f"adapters.{name}"],
            env={},
            freshness_modes=list(modes),
            conformance=None,
            origin=BUILTIN,
            holds_credentials=name in CREDENTIAL_ADAPTERS,
            pass_env=BUILTIN_PASS_ENV[name],
        )
        for name, modes in BUILTIN_FRESHNESS.items()
    }


class _Invalid:
    """A value that failed its checks; the problem is already recorded."""


INVALID = _Invalid()


@dataclass
class _Source:
    """A source being merged: where it was declared, its uid, and each value with its origin."""

    declaration: SourceDeclaration  # the file that declared it; project tuning never moves this
    uid: str
    values: dict[str, Any]
    origins: dict[str, Origin]


@dataclass
class _Membership:
    """A source named in a profile, with the file and key that named it."""

    profile: str
    source_id: str
    file: Path
    key: str


@dataclass
class _Merge:
    """What merging the configuration files has gathered so far, problems included."""

    problems: Problems
    home: str | None
    user_file: Path
    adapters: dict[str, AdapterRegistration] = field(default_factory=builtin_registrations)
    declared_adapters: set[str] = field(default_factory=set)
    memberships: list[_Membership] = field(default_factory=list)
    opt_ins: dict[Path, frozenset[str]] = field(default_factory=dict)

    # -- defaults, evaluation, adapters (user layer only) ----------------------

    def defaults(self, user: Document | None) -> Defaults:
        defaults = Defaults()
        if user is not None and user.defaults is not None:
            for name, value in user.defaults.values.items():
                setattr(defaults, name, value)
                defaults.origins[name] = user.defaults.origin
        return defaults

    def evaluation(self, user: Document | None) -> Evaluation | None:
        if user is None or user.evaluation is None:
            return None
        declared = user.evaluation
        evaluation = Evaluation(
            development_pack=declared.values.get("development_pack"),
            development_baseline=declared.values.get("development_baseline"),
            must_abstain=[MustAbstain(**e) for e in declared.values.get("must_abstain", [])],
        )
        evaluation.origins = {name: declared.origin for name in declared.values}
        return evaluation

    def register_adapters(self, documents: list[Document]) -> None:
        for document in documents:
            for declared in document.adapters:
                self.declared_adapters.add(declared.name)
                values = declared.values
                if "command" not in values or "freshness_modes" not in values:
                    continue
                self.adapters[declared.name] = AdapterRegistration(
                    name=declared.name,
                    builtin=False,
                    argv=[values["command"], *values.get("args", [])],
                    env=dict(values.get("env", {})),
                    freshness_modes=list(values["freshness_modes"]),
                    conformance=values.get("conformance"),
                    origin=declared.origin,
                    holds_credentials=values.get("holds_credentials", False),
                    pass_env=tuple(values.get("pass_env", ())),
                )

    def project_opt_ins(self, user: Document | None) -> None:
        for declared in user.projects if user is not None else []:
            adapters = declared.values.get("credential_adapters", [])
            self.opt_ins[Path(declared.name)] = frozenset(map(canonical_adapter_name, adapters))

    # -- sources -----------------------------------------------------------------

    def sources(self, user: Document | None, project: Document | None) -> list[_Source]:
        merged: list[_Source] = []
        by_id: dict[str, _Source] = {}
        by_uid: dict[str, _Source] = {}
        user_ids: set[str] = set()
        for declared in user.sources if user is not None else []:
            source = self._user_source(declared)
            if source is not None and self._unique(source, by_id, by_uid):
                merged.append(source)
                user_ids.add(source.values["source_id"])
        project_seen: set[str] = set()
        for declared in project.sources if project is not None else []:
            source_id = self._require_id(declared)
            if source_id is None:
                continue
            if source_id in project_seen:
                self._duplicate_id(declared, source_id)
                continue
            project_seen.add(source_id)
            if source_id in user_ids:
                self._tune(by_id[source_id], declared)
                continue
            self._require_adapter(declared)
            source = self._new_source(declared, project_source_uid(declared.file, source_id))
            if self._unique(source, by_id, by_uid):
                merged.append(source)
        return merged

    def _require_id(self, declared: SourceDeclaration) -> str | None:
        if "source_id" not in declared.written:
            self.problems.add(
                declared.file,
                declared.key("source_id"),
                "source_id is required: the name commands and locators use for this source",
            )
        return declared.source_id

    def _require_adapter(self, declared: SourceDeclaration) -> None:
        if "adapter" not in declared.written:
            self.problems.add(
                declared.file,
                declared.key("adapter"),
                "adapter is required: name a built-in adapter "
                f"({', '.join(sorted(builtin_registrations()))}) or one registered in [adapters]",
                source_id=declared.source_id,
            )

    def _user_source(self, declared: SourceDeclaration) -> _Source | None:
        source_id = self._require_id(declared)
        self._require_adapter(declared)
        if "source_uid" not in declared.written:
            fresh = new_source_uid()
            self.problems.add(
                declared.file,
                declared.key("source_uid"),
                f"source {source_id or '(unnamed)'!r} has no source_uid. A source's identity is "
                "minted once and never changes (it keys adapter state, lineage and evaluation "
                f'judgments); add this line to its [[sources]] table: source_uid = "{fresh}"',
                kind=IDENTITY,
                source_id=source_id,
            )
            return None
        uid = declared.values.get("source_uid")
        if source_id is None or uid is None:
            return None
        return self._new_source(declared, uid)

    def _new_source(self, declared: SourceDeclaration, uid: str) -> _Source:
        origins = {name: declared.origin for name in declared.values}
        for name in declared.values.get("intent_priors", {}):
            origins[f"intent_priors.{name}"] = declared.origin
        for name in declared.values.get("settings", {}):
            origins[f"settings.{name}"] = declared.origin
        if declared.layer is Layer.project:
            origins["source_uid"] = declared.origin
        return _Source(declared, uid, dict(declared.values), origins)

    def _unique(
        self, source: _Source, by_id: dict[str, _Source], by_uid: dict[str, _Source]
    ) -> bool:
        declared = source.declaration
        source_id = source.values["source_id"]
        if source_id in by_id:
            self._duplicate_id(declared, source_id, by_id[source_id].declaration)
            return False
        if source.uid in by_uid:
            first = by_uid[source.uid]
            self.problems.add(
                declared.file,
                declared.key("source_uid"),
                f"source_uid {source.uid!r} is claimed by both {first.values['source_id']!r} "
                f"({first.declaration.file} {first.declaration.key_prefix}) and {source_id!r}; "
                "an identity belongs to exactly one source",
                kind=IDENTITY,
                source_id=source_id,
            )
            return False
        by_id[source_id] = source
        by_uid[source.uid] = source
        return True

    def _duplicate_id(
        self,
        declared: SourceDeclaration,
        source_id: str,
        first: SourceDeclaration | None = None,
    ) -> None:
        where = f" (first declared in {first.file} {first.key_prefix})" if first else ""
        self.problems.add(
            declared.file,
            declared.key("source_id"),
            f"source_id {source_id!r} is declared twice{where}; source ids must be unique",
            source_id=source_id,
        )

    def _tune(self, source: _Source, declared: SourceDeclaration) -> None:
        allowed = trust.check_source_overlay(
            source.values, declared.values, declared.file, declared.key_prefix, self.problems
        )
        for name, value in allowed.items():
            if name == "intent_priors":
                source.values.setdefault("intent_priors", {})
                source.values["intent_priors"] = {**source.values["intent_priors"], **value}
                for query_class in value:
                    source.origins[f"intent_priors.{query_class}"] = declared.origin
                continue
            source.values[name] = value
            source.origins[name] = declared.origin

    # -- finishing a source --------------------------------------------------------

    def finish(self, source: _Source, defaults: Defaults) -> SourceConfig | None:
        values, origins = source.values, source.origins
        declared = source.declaration
        source_id = values["source_id"]
        registration = self._adapter(source)
        if registration is not None and not self._may_use(source, registration):
            registration = None
        location = self._location(source, registration)
        freshness = self._freshness(source, registration)
        if "timeout_ms" not in values:
            origins["timeout_ms"] = defaults.origin("timeout_ms")
        if registration is None or isinstance(location, _Invalid):
            return None
        if isinstance(freshness, _Invalid):
            return None
        resolved = location
        if resolved is not None:
            origins.setdefault("location_kind", origins["location"])
        return SourceConfig(
            source_uid=source.uid,
            source_id=source_id,
            adapter=registration.name,
            location=resolved.value if resolved else None,
            location_kind=resolved.kind if resolved else None,
            enabled=values.get("enabled", True),
            record_types=values.get("record_types"),
            freshness_mode=freshness,
            freshness_policy=values.get("freshness_policy"),
            base_prior=values.get("base_prior", 1.0),
            intent_priors=dict(values.get("intent_priors", {})),
            sensitivity=Sensitivity(values.get("sensitivity", Sensitivity.internal)),
            timeout_ms=values.get("timeout_ms", defaults.timeout_ms),
            settings=dict(values.get("settings", {})),
            base_dir=declared.file.parent,
            location_original=values.get("location"),
            location_kind_explicit=resolved.explicit if resolved else False,
            declared_in=declared.origin,
            declared_key=declared.key_prefix,
            origins=origins,
            pass_env=tuple(values.get("pass_env", ())),
        )

    def _adapter(self, source: _Source) -> AdapterRegistration | None:
        name = source.values.get("adapter")
        if name is None:
            return None
        registration = self.adapters.get(canonical_adapter_name(name))
        if registration is None and name not in self.declared_adapters:
            declared = source.declaration
            known = [*self.adapters, *ALIASES]
            self.problems.add(
                source.origins["adapter"].file,
                declared.key("adapter"),
                f"adapter {name!r} is not registered; " + suggestion(name, known, "registered"),
                source_id=source.values["source_id"],
            )
        return registration

    def _may_use(self, source: _Source, registration: AdapterRegistration) -> bool:
        """A project adds a source of a credential-holding adapter only when opted in."""
        declared = source.declaration
        if declared.layer is not Layer.project or not registration.holds_credentials:
            return True
        return trust.check_credential_adapter(
            registration.name,
            self.opt_ins.get(trust.project_root(declared.file), frozenset()),
            declared.file,
            declared.key_prefix,
            self.user_file,
            self.problems,
            source_id=source.values["source_id"],
        )

    def _location(
        self, source: _Source, registration: AdapterRegistration | None
    ) -> ResolvedLocation | None | _Invalid:
        values, declared = source.values, source.declaration
        if declared.layer is Layer.project:
            allowed, contained = trust.check_project_location(
                values.get("location"),
                values.get("location_kind"),
                declared.file,
                declared.key_prefix,
                self.user_file,
                self.problems,
                source_id=values["source_id"],
                opted_in=registration is not None and registration.holds_credentials,
            )
            return contained if allowed else INVALID
        if "location" not in values:
            if "location_kind" in values:
                self.problems.add(
                    declared.file,
                    declared.key("location_kind"),
                    "location_kind is only meaningful together with location",
                    source_id=values["source_id"],
                )
                return INVALID
            return None
        resolved = resolve_location(
            values["location"], values.get("location_kind"), declared.file.parent, self.home
        )
        if isinstance(resolved, str):
            self.problems.add(
                declared.file, declared.key("location"), resolved, source_id=values["source_id"]
            )
            return INVALID
        return resolved

    def _freshness(
        self, source: _Source, registration: AdapterRegistration | None
    ) -> str | None | _Invalid:
        if registration is None:
            return None
        values, declared = source.values, source.declaration
        modes = registration.freshness_modes
        mode = values.get("freshness_mode")
        if mode is None:
            inferred = (
                inferred_freshness(registration.name, values.get("location"))
                if registration.builtin
                else None
            )
            if len(modes) == 1 or inferred in modes:
                source.origins["freshness_mode"] = registration.origin
                return modes[0] if len(modes) == 1 else inferred
            self.problems.add(
                declared.file,
                declared.key("freshness_mode"),
                f"source {values['source_id']!r} must choose a freshness_mode: adapter "
                f"{registration.name!r} supports {', '.join(modes)}",
                source_id=values["source_id"],
            )
            return INVALID
        if mode not in modes:
            self.problems.add(
                source.origins["freshness_mode"].file,
                declared.key("freshness_mode"),
                f"adapter {registration.name!r} does not support freshness mode {mode!r}; it "
                f"supports {', '.join(modes)}",
                source_id=values["source_id"],
            )
            return INVALID
        return mode

    # -- profiles --------------------------------------------------------------------

    def profiles(
        self, user: Document | None, project: Document | None, sources: list[SourceConfig]
    ) -> dict[str, Profile]:
        profiles: dict[str, Profile] = {}
        for declared in user.profiles if user is not None else []:
            profiles[declared.name] = self._new_profile(declared)
        if not profiles:
            # With no profile of the user's, every enabled source is searchable.
            profiles[DEFAULT_PROFILE] = Profile(
                DEFAULT_PROFILE,
                [s.source_id for s in sources if s.enabled],
                Sensitivity.restricted,
                synthetic=True,
            )
        for declared in project.profiles if project is not None else []:
            existing = profiles.get(declared.name)
            if existing is None:
                profiles[declared.name] = self._new_profile(declared)
            else:
                self._tune_profile(existing, declared)
        return profiles

    def _new_profile(self, declared: NamedDeclaration) -> Profile:
        values = declared.values
        profile = Profile(
            declared.name,
            list(values.get("sources", [])),
            Sensitivity(values.get("max_sensitivity", Sensitivity.restricted)),
        )
        profile.origins = {name: declared.origin for name in values}
        self._remember_members(declared)
        return profile

    def _tune_profile(self, profile: Profile, declared: NamedDeclaration) -> None:
        values = declared.values
        if "max_sensitivity" in values:
            wanted = Sensitivity(values["max_sensitivity"])
            if trust.check_ceiling_overlay(
                profile.name, profile.max_sensitivity, wanted, declared.file, self.problems
            ):
                profile.max_sensitivity = wanted
                profile.origins["max_sensitivity"] = declared.origin
        added = [s for s in values.get("sources", []) if s not in profile.sources]
        if added:
            # Membership from a project file adds to the profile; it never replaces it.
            profile.sources.extend(added)
            profile.origins["sources"] = declared.origin
        self._remember_members(declared)

    def _remember_members(self, declared: NamedDeclaration) -> None:
        for source_id in declared.values.get("sources", []):
            self.memberships.append(
                _Membership(declared.name, source_id, declared.file, declared.key("sources"))
            )

    def check_memberships(self, configured: set[str]) -> None:
        for member in self.memberships:
            if member.source_id not in configured:
                self.problems.add(
                    member.file,
                    member.key,
                    f"profile {member.profile!r} names source {member.source_id!r}, which is not "
                    "configured; " + suggestion(member.source_id, configured, "configured sources"),
                )

    def check_default_profile(self, user: Document | None, profiles: dict[str, Profile]) -> None:
        if user is None or user.defaults is None or "profile" not in user.defaults.values:
            return
        name = user.defaults.values["profile"]
        if name not in profiles:
            self.problems.add(
                user.file,
                "defaults.profile",
                f"profile {name!r} is not configured; " + suggestion(name, profiles, "profiles"),
            )


def build_config(
    user: Document | None,
    adapter_files: list[Document],
    project: Document | None,
    *,
    paths: Paths,
    files: list[ConfigFile],
    home: str | None,
    problems: Problems,
) -> Config:
    """Merge parsed layers into one configuration, or raise every problem together."""
    merge = _Merge(problems, home, paths.config_file)
    merge.project_opt_ins(user)
    defaults = merge.defaults(user)
    evaluation = merge.evaluation(user)
    merge.register_adapters([d for d in (user, *adapter_files) if d is not None])
    finished = [merge.finish(s, defaults) for s in merge.sources(user, project)]
    sources = [s for s in finished if s is not None]
    profiles = merge.profiles(user, project, sources)
    # Sources that failed their own checks still count as configured, so one mistake
    # is not reported a second time by every profile naming the source.
    declared = [d for doc in (user, project) if doc is not None for d in doc.sources]
    configured = {s.source_id for s in sources} | {d.source_id for d in declared if d.source_id}
    merge.check_memberships(configured)
    merge.check_default_profile(user, profiles)
    problems.raise_if_any()
    return Config(
        defaults=defaults,
        sources=sources,
        profiles=dict(sorted(profiles.items())),
        adapters=dict(sorted(merge.adapters.items())),
        evaluation=evaluation,
        files=files,
        paths=paths,
        project_opt_ins=merge.opt_ins,
    )
