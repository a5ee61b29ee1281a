"""``recall config explain``: the merged configuration and the file behind every value."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any

from broker.config.resolved import AdapterRegistration, Config, Origin, Profile, SourceConfig
from broker.config.trust import project_root

PROJECT_RULE = (
    "a project file may add sources and profiles and tune your sources' ranking; the sources "
    "it adds read only inside its folder (symlinks resolved), never set a setting their "
    "adapter marks trusted_only, and use a credential-holding adapter only if you opted the "
    "project in under [projects]; it never names a program, an identity, [defaults], "
    "[evaluation] or [adapters], and never lowers a floor or raises a ceiling"
)

DEFAULT_KEYS = ("profile", "timeout_ms", "fusion_reserve_ms", "max_results", "relevance_floor")


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value


def _field(value: Any, origin: Origin) -> dict[str, Any]:
    return {
        "value": _plain(value),
        "layer": origin.layer.value,
        "origin": str(origin.file) if origin.file is not None else None,
    }


def _source(source: SourceConfig) -> dict[str, Any]:
    o = source.origin
    location_origin = o("location")
    fields = {
        "adapter": _field(source.adapter, o("adapter")),
        "base_prior": _field(source.base_prior, o("base_prior")),
        "enabled": _field(source.enabled, o("enabled")),
        "freshness_mode": _field(source.freshness_mode, o("freshness_mode")),
        "freshness_policy": _field(source.freshness_policy, o("freshness_policy")),
        "location": _field(source.location, location_origin),
        "location_kind": _field(source.location_kind, o("location_kind")),
        "record_types": _field(source.record_types, o("record_types")),
        "sensitivity": _field(source.sensitivity, o("sensitivity")),
        "source_id": _field(source.source_id, o("source_id")),
        "source_uid": _field(source.source_uid, o("source_uid")),
        "timeout_ms": _field(source.timeout_ms, o("timeout_ms")),
        "pass_env": _field(list(source.pass_env), o("pass_env")),
    }
    return {
        "source_uid": source.source_uid,
        "source_id": source.source_id,
        "declared_in": str(source.declared_in.file) if source.declared_in.file else None,
        "fields": fields,
        "intent_priors": {
            k: _field(v, o(f"intent_priors.{k}")) for k, v in sorted(source.intent_priors.items())
        },
        "settings": {k: _field(v, o(f"settings.{k}")) for k, v in sorted(source.settings.items())},
        "resolved": _resolution(source),
    }


def _resolution(source: SourceConfig) -> dict[str, Any] | None:
    """How recall read a location that is not what the file says: derived, not set by anyone."""
    if source.location is None or source.location == source.location_original:
        return None
    return {
        "location_as_written": source.location_original,
        "resolved_against": str(source.base_dir),
        "location_kind_explicit": source.location_kind_explicit,
    }


def _adapter(adapter: AdapterRegistration) -> dict[str, Any]:
    return {
        "name": adapter.name,
        "builtin": adapter.builtin,
        "argv": adapter.argv,
        "env": dict(sorted(adapter.env.items())),
        "pass_env": list(adapter.pass_env),
        "freshness_modes": adapter.freshness_modes,
        "conformance": str(adapter.conformance) if adapter.conformance else None,
        "holds_credentials": adapter.holds_credentials,
        "layer": adapter.origin.layer.value,
        "origin": str(adapter.origin.file) if adapter.origin.file else None,
    }


def _profile(profile: Profile) -> dict[str, Any]:
    return {
        "name": profile.name,
        "sources": profile.sources,
        "max_sensitivity": profile.max_sensitivity.value,
        "synthetic": profile.synthetic,
        "fields": {
            "sources": _field(profile.sources, profile.origin("sources")),
            "max_sensitivity": _field(profile.max_sensitivity, profile.origin("max_sensitivity")),
        },
    }


def _trust_boundary(config: Config) -> dict[str, Any]:
    project = config.paths.project_file
    if project is None:
        return {"project_file": None, "rule": PROJECT_RULE}
    root = project_root(project)
    return {
        "project_file": str(project),
        "project_folder": str(root),
        "rule": PROJECT_RULE,
        "credential_adapters_opted_in": sorted(config.project_opt_ins.get(root, frozenset())),
        "sources_added": [
            {"source_id": s.source_id, "adapter": s.adapter, "reads": s.location}
            for s in config.sources
            if s.project_declared
        ],
    }


def explain(config: Config, profile: str = "") -> dict[str, Any]:
    """JSON-ready explanation; ``profile`` chooses the state and cache directories shown."""
    active = config.profile(profile).name if profile else config.defaults.profile
    evaluation = config.evaluation
    return {
        "paths": {
            "config_file": str(config.paths.config_file),
            "adapters_dir": str(config.paths.adapters_dir),
            "project_file": str(config.paths.project_file) if config.paths.project_file else None,
            "state_dir": str(config.state_dir(active)),
            "cache_dir": str(config.cache_dir(active)),
        },
        "files": [{"layer": f.layer.value, "path": str(f.path)} for f in config.files],
        "defaults": {
            k: _field(getattr(config.defaults, k), config.defaults.origin(k)) for k in DEFAULT_KEYS
        },
        "evaluation": None
        if evaluation is None
        else {
            "development_pack": _field(
                evaluation.development_pack, evaluation.origin("development_pack")
            ),
            "development_baseline": _field(
                evaluation.development_baseline, evaluation.origin("development_baseline")
            ),
            "must_abstain": _field(
                [{"query": m.query, "reason": m.reason} for m in evaluation.must_abstain],
                evaluation.origin("must_abstain"),
            ),
        },
        "adapters": [_adapter(a) for a in config.adapters.values()],
        "sources": [_source(s) for s in config.sources],
        "profiles": [_profile(p) for p in config.profiles.values()],
        "identity": [
            {"source_id": s.source_id, "source_uid": s.source_uid} for s in config.sources
        ],
        "trust_boundary": _trust_boundary(config),
    }


# -- human rendering -------------------------------------------------------------


def _label(field: dict[str, Any]) -> str:
    if field["origin"] is None:
        return f"[{field['layer']}]"
    return f"[{field['layer']} {field['origin']}]"


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _lines(fields: dict[str, dict[str, Any]], indent: str, prefix: str = "") -> list[str]:
    rows = [(f"{prefix}{k} = {_value(f['value'])}", _label(f)) for k, f in fields.items()]
    width = max((len(text) for text, _ in rows), default=0)
    return [f"{indent}{text.ljust(width)}  {label}" for text, label in rows]


def render_explanation(data: dict[str, Any]) -> str:
    out: list[str] = ["paths"]
    paths = {k: v for k, v in data["paths"].items() if v is not None}
    width = max(len(k) for k in paths)
    out += [f"  {k.replace('_', ' ').ljust(width)}  {v}" for k, v in paths.items()]
    out.append("files")
    out += [f"  {f['layer']:<8} {f['path']}" for f in data["files"]] or ["  (none)"]
    out.append("defaults")
    out += _lines(data["defaults"], "  ")
    if data["evaluation"] is not None:
        out.append("evaluation")
        out += _lines(data["evaluation"], "  ")
    out.append("adapters")
    name_width = max((len(a["name"]) for a in data["adapters"]), default=0)
    for adapter in data["adapters"]:
        kind = "builtin" if adapter["builtin"] else "command"
        parts = [f"  {adapter['name'].ljust(name_width)}  {kind}  argv {_value(adapter['argv'])}"]
        if adapter["env"]:
            parts.append(f"env {_value(adapter['env'])}")
        if adapter["pass_env"]:
            parts.append(f"pass_env {','.join(adapter['pass_env'])}")
        parts.append(f"freshness {','.join(adapter['freshness_modes'])}")
        if adapter["conformance"]:
            parts.append(f"conformance {adapter['conformance']}")
        if adapter["holds_credentials"]:
            parts.append("holds credentials")
        parts.append(_label(adapter))
        out.append("  ".join(parts))
    out.append("sources")
    if not data["sources"]:
        out.append("  (none)")
    for source in data["sources"]:
        out.append(f"  {source['source_id']} ({source['source_uid']})")
        out += _lines(
            {
                **source["fields"],
                **{f"intent_priors.{k}": f for k, f in source["intent_priors"].items()},
                **{f"settings.{k}": f for k, f in source["settings"].items()},
            },
            "    ",
        )
        resolved = source["resolved"]
        if resolved is not None:
            out.append(
                f"    (location written as {_value(resolved['location_as_written'])}, "
                f"resolved against {resolved['resolved_against']})"
            )
    out.append("profiles")
    for profile in data["profiles"]:
        out.append(
            f"  {profile['name']}"
            + ("  (no profile configured: every enabled source)" if profile["synthetic"] else "")
        )
        out += _lines(profile["fields"], "    ")
    out.append("identity")
    out += [f"  {i['source_id']} -> {i['source_uid']}" for i in data["identity"]] or ["  (none)"]
    out += _trust_lines(data["trust_boundary"])
    return "\n".join(out) + "\n"


def _trust_lines(trust: dict[str, Any]) -> list[str]:
    out = ["trust boundary"]
    if trust["project_file"] is None:
        return [*out, "  no project file: everything above is user configuration"]
    out.append(f"  project file {trust['project_file']} (untrusted)")
    out.append(f"  reads only inside {trust['project_folder']}")
    opted = trust["credential_adapters_opted_in"]
    out.append(f"  credential adapters opted in: {', '.join(opted) if opted else 'none'}")
    out += [
        f"  adds {s['source_id']} ({s['adapter']}) reading {s['reads'] or 'its adapter default'}"
        for s in trust["sources_added"]
    ]
    out.append(f"  rule: {trust['rule']}")
    return out
