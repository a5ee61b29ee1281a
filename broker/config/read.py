"""From one parsed TOML document to typed, range-checked declarations.

Nothing here merges layers or applies defaults: a declaration holds exactly
the keys its file wrote, already checked for type and range, so the merge can
tell a value the user wrote from one nobody wrote. Values out of range are
refused, never clamped.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapter_sdk.vocabulary import FreshnessMode, Sensitivity
from broker.config import trust
from broker.config.builtins import RESERVED_NAMES
from broker.config.identity import uid_problem
from broker.config.locations import LOCATION_KINDS, expand_home
from broker.config.problems import Problems, suggestion
from broker.config.resolved import Layer, Origin
from broker.vocabulary import QueryClass

MIN_PRIOR, MAX_PRIOR = 0.5, 2.0
MAX_SOURCE_ID = 64
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

TOP_LEVEL = ("defaults", "sources", "profiles", "evaluation", "adapters", "projects")


# -- value kinds ---------------------------------------------------------------


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date/time"


@dataclass(frozen=True)
class Kind:
    """A value type a configuration key accepts, and how it is converted once accepted."""

    name: str
    accepts: Callable[[Any], bool]
    convert: Callable[[Any], Any] = lambda v: v


STRING = Kind("a string", lambda v: isinstance(v, str))
INTEGER = Kind("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
NUMBER = Kind("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool), float)
BOOLEAN = Kind("true or false", lambda v: isinstance(v, bool))
STRINGS = Kind(
    "an array of strings",
    lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
    list,
)
TABLE = Kind("a table", lambda v: isinstance(v, dict))
TABLES = Kind(
    "an array of tables", lambda v: isinstance(v, list) and all(isinstance(i, dict) for i in v)
)

Check = Callable[[Any], str | None]


def _in_range(low: float, high: float, *, high_open: bool = False) -> Check:
    def check(value: float) -> str | None:
        if low <= value < high if high_open else low <= value <= high:
            return None
        bracket = ")" if high_open else "]"
        return f"{value:g} is outside the allowed range [{low:g}, {high:g}{bracket}"

    return check


def _at_least(low: int, why: str = "") -> Check:
    def check(value: int) -> str | None:
        return None if value >= low else f"must be at least {low}{why}, got {value}"

    return check


def _one_of(choices: Collection[str]) -> Check:
    def check(value: str) -> str | None:
        if value in choices:
            return None
        return f"{value!r} is not one of {', '.join(choices)}; " + suggestion(
            value, choices, "choices"
        )

    return check


def _name(what: str) -> Check:
    def check(value: str) -> str | None:
        if _NAME.fullmatch(value):
            return None
        return (
            f"{what} {value!r} must start with a letter or digit and use only letters, "
            "digits, '_', '.' or '-' (at most 64 characters)"
        )

    return check


def _source_id(value: str) -> str | None:
    if not value:
        return "source_id must not be empty"
    if len(value) > MAX_SOURCE_ID:
        return f"source_id {value!r} is longer than {MAX_SOURCE_ID} characters"
    if ":" in value:
        return (
            f"source_id {value!r} contains ':', which separates a locator's source from its record"
        )
    if any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in value):
        return f"source_id {value!r} contains whitespace or a control character"
    return None


def _not_empty(value: str) -> str | None:
    return None if value.strip() else "must not be empty"


def _names_not_empty(value: list[str]) -> str | None:
    return None if all(v.strip() for v in value) else "every entry must be a non-empty string"


def _unique(value: list[str]) -> str | None:
    duplicates = sorted({v for v in value if value.count(v) > 1})
    return f"names {', '.join(duplicates)} more than once" if duplicates else None


def _command(value: str) -> str | None:
    if value.startswith("/") or ("/" not in value and "\\" not in value and value):
        return None
    return (
        f"command {value!r} must be an absolute path or a bare name found on PATH; a relative "
        "path would resolve against whatever directory recall was started in"
    )


def _env_names(value: list[str]) -> str | None:
    wrong = [name for name in value if not _ENV_NAME.fullmatch(name)]
    return f"{', '.join(map(repr, wrong))}: not a valid environment variable name" if wrong else None


def _env(value: dict[str, Any]) -> str | None:
    for name, item in value.items():
        if not _ENV_NAME.fullmatch(name):
            return f"{name!r} is not a valid environment variable name"
        if not isinstance(item, str):
            return f"env.{name} must be a string, got {_describe(item)}"
    return None


SENSITIVITIES = [s.value for s in Sensitivity]
FRESHNESS_MODES = [m.value for m in FreshnessMode]
QUERY_CLASSES = [q.value for q in QueryClass]


@dataclass(frozen=True)
class Field:
    """A configuration key's kind and the checks its value must pass."""

    kind: Kind
    checks: tuple[Check, ...] = ()


DEFAULTS_FIELDS = {
    "profile": Field(STRING, (_name("profile"),)),
    "timeout_ms": Field(INTEGER, (_at_least(1, " (a source needs time to answer)"),)),
    "fusion_reserve_ms": Field(INTEGER, (_at_least(0),)),
    "max_results": Field(INTEGER, (_at_least(0, "; 0 means unbounded"),)),
    "relevance_floor": Field(NUMBER, (_in_range(0.0, 1.0, high_open=True),)),
}

SOURCE_FIELDS = {
    "source_uid": Field(STRING, (uid_problem,)),
    "source_id": Field(STRING, (_source_id,)),
    "adapter": Field(STRING, (_not_empty,)),
    "location": Field(STRING, (_not_empty,)),
    "location_kind": Field(STRING, (_one_of(LOCATION_KINDS),)),
    "enabled": Field(BOOLEAN),
    "record_types": Field(STRINGS, (_names_not_empty, _unique)),
    "freshness_mode": Field(STRING, (_one_of(FRESHNESS_MODES),)),
    "freshness_policy": Field(STRING),
    "base_prior": Field(NUMBER, (_in_range(MIN_PRIOR, MAX_PRIOR),)),
    "intent_priors": Field(TABLE),
    "sensitivity": Field(STRING, (_one_of(SENSITIVITIES),)),
    "timeout_ms": Field(INTEGER, (_at_least(1, " (a source needs time to answer)"),)),
    "settings": Field(TABLE),
    "pass_env": Field(STRINGS, (_env_names, _unique)),
}

PROFILE_FIELDS = {
    "sources": Field(STRINGS, (_names_not_empty, _unique)),
    "max_sensitivity": Field(STRING, (_one_of(SENSITIVITIES),)),
}

EVALUATION_FIELDS = {
    "development_pack": Field(STRING, (_not_empty,)),
    "development_baseline": Field(STRING, (_not_empty,)),
    "must_abstain": Field(TABLES),
}

MUST_ABSTAIN_FIELDS = {
    "query": Field(STRING, (_not_empty,)),
    "reason": Field(STRING, (_not_empty,)),
}

ADAPTER_FIELDS = {
    "command": Field(STRING, (_command,)),
    "args": Field(STRINGS),
    "env": Field(TABLE, (_env,)),
    "pass_env": Field(STRINGS, (_env_names, _unique)),
    "freshness_modes": Field(STRINGS, (_unique,)),
    "conformance": Field(STRING, (_not_empty,)),
    "holds_credentials": Field(BOOLEAN),
}

PROJECT_FIELDS = {
    "credential_adapters": Field(STRINGS, (_names_not_empty, _unique)),
}


# -- declarations ----------------------------------------------------------------


@dataclass
class Declaration:
    """The keys one file wrote for one table, typed and checked."""

    file: Path
    layer: Layer
    key_prefix: str
    values: dict[str, Any] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)  # every key the file wrote, valid or not

    @property
    def origin(self) -> Origin:
        return Origin(self.layer, self.file)

    def key(self, name: str) -> str:
        return f"{self.key_prefix}.{name}"


@dataclass
class SourceDeclaration(Declaration):
    """A ``[[sources]]`` entry as one file declares it, with its position in that file."""

    index: int = 0

    @property
    def source_id(self) -> str | None:
        return self.values.get("source_id")


@dataclass
class NamedDeclaration(Declaration):
    """A named table, such as ``[adapters.<name>]``, as one file declares it."""

    name: str = ""


@dataclass
class Document:
    """One configuration file, read and checked, before the layers are merged."""

    file: Path
    layer: Layer
    defaults: Declaration | None = None
    evaluation: Declaration | None = None
    adapters: list[NamedDeclaration] = field(default_factory=list)
    sources: list[SourceDeclaration] = field(default_factory=list)
    profiles: list[NamedDeclaration] = field(default_factory=list)
    projects: list[NamedDeclaration] = field(default_factory=list)  # name: absolute folder


class _Reader:
    def __init__(self, file: Path, layer: Layer, problems: Problems, home: str | None) -> None:
        self.file = file
        self.layer = layer
        self.problems = problems
        self.home = home
        # In a project file executable keys were already refused by the trust scan.
        self.skip_executable = layer is Layer.project

    def fill(
        self,
        declaration: Declaration,
        raw: dict[str, Any],
        fields: dict[str, Field],
        skip: Collection[str] = (),
    ) -> None:
        declaration.written.update(raw)
        for name, value in raw.items():
            if name in skip or (self.skip_executable and trust.looks_executable(name)):
                continue
            key = declaration.key(name)
            spec = fields.get(name)
            if spec is None:
                self.problems.add(
                    self.file, key, f"unknown key {name!r}; " + suggestion(name, fields)
                )
                continue
            if not spec.kind.accepts(value):
                self.problems.add(
                    self.file, key, f"must be {spec.kind.name}, got {_describe(value)}"
                )
                continue
            value = spec.kind.convert(value)
            message = next((m for check in spec.checks if (m := check(value))), None)
            if message is not None:
                self.problems.add(self.file, key, message)
                continue
            declaration.values[name] = value

    def table(self, raw: dict[str, Any], name: str) -> dict[str, Any] | None:
        value = raw.get(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.problems.add(self.file, name, f"must be a table, got {_describe(value)}")
            return None
        return value

    def absolute_path(self, declaration: Declaration, name: str) -> None:
        value = declaration.values.get(name)
        if value is None:
            return
        expanded = expand_home(value, self.home)
        if not os.path.isabs(expanded):
            del declaration.values[name]
            self.problems.add(
                self.file, declaration.key(name), f"must be an absolute path, got {value!r}"
            )
            return
        declaration.values[name] = Path(os.path.normpath(expanded))

    # -- tables ----------------------------------------------------------------

    def defaults(self, raw: dict[str, Any]) -> Declaration:
        declaration = Declaration(self.file, self.layer, "defaults")
        self.fill(declaration, raw, DEFAULTS_FIELDS)
        return declaration

    def evaluation(self, raw: dict[str, Any]) -> Declaration:
        declaration = Declaration(self.file, self.layer, "evaluation")
        self.fill(declaration, raw, EVALUATION_FIELDS)
        self.absolute_path(declaration, "development_pack")
        self.absolute_path(declaration, "development_baseline")
        entries = []
        for index, entry in enumerate(declaration.values.get("must_abstain", [])):
            item = Declaration(self.file, self.layer, f"evaluation.must_abstain[{index}]")
            self.fill(item, entry, MUST_ABSTAIN_FIELDS)
            missing = [k for k in MUST_ABSTAIN_FIELDS if k not in entry]
            for name in missing:
                self.problems.add(self.file, item.key(name), "is required")
            if not missing and len(item.values) == len(MUST_ABSTAIN_FIELDS):
                entries.append(item.values)
        if "must_abstain" in declaration.values:
            declaration.values["must_abstain"] = entries
        return declaration

    def adapters(self, raw: dict[str, Any]) -> list[NamedDeclaration]:
        declarations = []
        for name, table in raw.items():
            declaration = NamedDeclaration(self.file, self.layer, f"adapters.{name}", name=name)
            if not isinstance(table, dict):
                self.problems.add(
                    self.file, declaration.key_prefix, f"must be a table, got {_describe(table)}"
                )
                continue
            if name in RESERVED_NAMES:
                self.problems.add(
                    self.file,
                    declaration.key_prefix,
                    f"adapter {name!r} is built in and may not be redefined; register your "
                    "own adapter under another name",
                )
                continue
            if problem := _name("adapter name")(name):
                self.problems.add(self.file, declaration.key_prefix, problem)
                continue
            self.fill(declaration, table, ADAPTER_FIELDS)
            for required in ("command", "freshness_modes"):
                if required not in table:
                    self.problems.add(
                        self.file,
                        declaration.key(required),
                        "is required for an external adapter"
                        + (
                            " (the modes it can serve: live, indexed, hybrid)"
                            if required == "freshness_modes"
                            else ""
                        ),
                    )
            modes = declaration.values.get("freshness_modes")
            if modes is not None:
                bad = [m for m in modes if m not in FRESHNESS_MODES]
                if not modes or bad:
                    del declaration.values["freshness_modes"]
                    self.problems.add(
                        self.file,
                        declaration.key("freshness_modes"),
                        "must list at least one of live, indexed, hybrid"
                        + (f"; {', '.join(map(repr, bad))} is not one" if bad else ""),
                    )
            self.absolute_path(declaration, "conformance")
            declarations.append(declaration)
        return declarations

    def sources(self, raw: Any) -> list[SourceDeclaration]:
        if not isinstance(raw, list) or not all(isinstance(i, dict) for i in raw):
            self.problems.add(
                self.file,
                "sources",
                f"must be an array of tables ([[sources]]), got {_describe(raw)}",
            )
            return []
        declarations = []
        for index, table in enumerate(raw):
            declaration = SourceDeclaration(self.file, self.layer, f"sources[{index}]", index=index)
            skip = ("source_uid",) if self.layer is Layer.project else ()
            self.fill(declaration, table, SOURCE_FIELDS, skip)
            self.intent_priors(declaration)
            declarations.append(declaration)
        return declarations

    def intent_priors(self, declaration: SourceDeclaration) -> None:
        priors = declaration.values.get("intent_priors")
        if priors is None:
            return
        checked: dict[str, float] = {}
        in_range = _in_range(MIN_PRIOR, MAX_PRIOR)
        for name, value in priors.items():
            key = declaration.key(f"intent_priors.{name}")
            if name not in QUERY_CLASSES:
                self.problems.add(
                    self.file,
                    key,
                    f"unknown query class {name!r}; "
                    + suggestion(name, QUERY_CLASSES, "query classes"),
                )
            elif not NUMBER.accepts(value):
                self.problems.add(self.file, key, f"must be a number, got {_describe(value)}")
            elif message := in_range(float(value)):
                self.problems.add(self.file, key, message)
            else:
                checked[name] = float(value)
        declaration.values["intent_priors"] = checked

    def projects(self, raw: dict[str, Any]) -> list[NamedDeclaration]:
        """``[projects."<folder>"]``: what the user lets one project's ``recall.toml`` do."""
        declarations = []
        for name, table in raw.items():
            declaration = NamedDeclaration(self.file, self.layer, f'projects."{name}"')
            folder = expand_home(name, self.home)
            if not os.path.isabs(folder):
                self.problems.add(
                    self.file,
                    declaration.key_prefix,
                    f"a project is named by the absolute path of the folder holding its "
                    f"recall.toml, got {name!r}",
                )
                continue
            if not isinstance(table, dict):
                self.problems.add(
                    self.file, declaration.key_prefix, f"must be a table, got {_describe(table)}"
                )
                continue
            declaration.name = os.path.realpath(folder)
            self.fill(declaration, table, PROJECT_FIELDS)
            declarations.append(declaration)
        return declarations

    def profiles(self, raw: dict[str, Any]) -> list[NamedDeclaration]:
        declarations = []
        for name, table in raw.items():
            declaration = NamedDeclaration(self.file, self.layer, f"profiles.{name}", name=name)
            if problem := _name("profile name")(name):
                self.problems.add(self.file, declaration.key_prefix, problem)
                continue
            if not isinstance(table, dict):
                self.problems.add(
                    self.file, declaration.key_prefix, f"must be a table, got {_describe(table)}"
                )
                continue
            self.fill(declaration, table, PROFILE_FIELDS)
            declarations.append(declaration)
        return declarations


def read_document(
    raw: dict[str, Any],
    file: Path,
    layer: Layer,
    problems: Problems,
    *,
    home: str | None,
    adapters_only: bool = False,
) -> Document:
    """Typed declarations from one file; problems are collected, not raised."""
    reader = _Reader(file, layer, problems, home)
    document = Document(file, layer)
    allowed = ("adapters",) if adapters_only else TOP_LEVEL
    refused: Collection[str] = ()
    if layer is Layer.project:
        trust.scan_project_document(raw, file, problems)
        refused = trust.PROJECT_FORBIDDEN_TABLES
    for name in raw:
        if name in refused or name in allowed:
            continue
        if reader.skip_executable and trust.looks_executable(name):
            continue
        if adapters_only:
            message = (
                f"a file in adapters.d may hold only [adapters.NAME] tables; put {name!r} "
                "in config.toml"
            )
        else:
            message = f"unknown key {name!r}; " + suggestion(name, TOP_LEVEL)
        problems.add(file, name, message)

    def table(name: str) -> dict[str, Any] | None:
        if name not in allowed or name in refused:
            return None
        return reader.table(raw, name)

    if (defaults := table("defaults")) is not None:
        document.defaults = reader.defaults(defaults)
    if (evaluation := table("evaluation")) is not None:
        document.evaluation = reader.evaluation(evaluation)
    if (adapters := table("adapters")) is not None:
        document.adapters = reader.adapters(adapters)
    if (profiles := table("profiles")) is not None:
        document.profiles = reader.profiles(profiles)
    if (projects := table("projects")) is not None:
        document.projects = reader.projects(projects)
    if "sources" in raw and "sources" in allowed:
        document.sources = reader.sources(raw["sources"])
    return document
