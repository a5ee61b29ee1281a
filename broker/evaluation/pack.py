"""An evaluation pack: manifest, cases, judgments and the pack's own configuration.

Layout (the reference's format, with two additions marked *)::

    <pack>/pack.json              manifest
    <pack>/cases.jsonl            one case per line
    <pack>/judgments.jsonl        graded lineage roots per case
    <pack>/abstain_pool.jsonl   * must-abstain cases kept outside every corpus
    <pack>/sources/config.toml    the configuration the run uses (user layer)
    <pack>/sources/...            corpus files the configuration points at

Before the configuration is read, ``${PACK}`` becomes the pack's absolute
directory and ``${PYTHON}`` the running interpreter, so a committed pack holds
no machine paths. Loading validates everything and reports every problem at
once, each with its file and line.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from broker.contracts import Mode, SearchOutcome, Sensitivity, SuppressionReason
from broker.errors import RecallError

if TYPE_CHECKING:
    from broker.config import Config

IDENTIFIER = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
MANIFEST_FILE = "pack.json"
DEFAULT_SOURCES_DIR = "sources"
CONFIG_FILE = "config.toml"
PACK_PLACEHOLDER = "${PACK}"
PYTHON_PLACEHOLDER = "${PYTHON}"
MIN_EXPECTED_FAIL_REASON = 40

# Assertions an ``expected_fail`` may excuse (never the honesty ones).
EXCUSABLE_ASSERTIONS = frozenset(
    {
        "required_sources",
        "forbidden_sources",
        "max_expansion_bytes",
        "expected_revisions",
        "suppressed_lineages",
        "visible_lineages",
        "expected_top_lineage",
        "min_results",
        "max_results",
        "max_results_per_record",
        "max_corroborated_units",
        "excerpt_contains",
        "exact_promoted",
        "expected_truncated",
    }
)


class PackError(RecallError):
    """A pack that cannot be loaded or run; carries every problem found."""

    def __init__(self, pack_dir: Path, problems: list[str]) -> None:
        self.problems = problems
        head = f"pack {pack_dir}: "
        if len(problems) == 1:
            super().__init__(head + problems[0])
        else:
            super().__init__(head + f"{len(problems)} problems:\n  " + "\n  ".join(problems))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- manifest ------------------------------------------------------------------


class Budgets(_Strict):
    """Recorded for compatibility; latency is reported against it, never gated."""

    p95_latency_ms: int | None = Field(default=None, ge=0)
    model_calls: int | None = Field(default=None, ge=0)
    tokens: int | None = Field(default=None, ge=0)
    external_requests: int | None = Field(default=None, ge=0)


class Thresholds(_Strict):
    exact_identifier_success_at_1: float | None = Field(default=None, ge=0, le=1)
    abstention_accuracy: float | None = Field(default=None, ge=0, le=1)


class BaselineNote(_Strict):
    recorded: str
    note: str | None = None


def _relative(value: str | None) -> str | None:
    if value is not None and (value.startswith("/") or "\\" in value or not value.strip()):
        raise ValueError(f"{value!r} must be a relative path with forward slashes")
    return value


class Manifest(_Strict):
    schema_version: int = Field(ge=1)
    pack_id: str = Field(pattern=IDENTIFIER)
    version: str
    cases: str
    judgments: str
    description: str | None = None
    profile: str | None = None
    sources: str | None = None
    transcripts: str | None = None
    abstain_pool: str | None = None
    network_access: bool = False
    budgets: Budgets | None = None
    thresholds: Thresholds | None = None
    sensitivity_ceiling: Sensitivity | None = None
    baseline: BaselineNote | None = None

    @field_validator("cases", "judgments", "sources", "transcripts", "abstain_pool")
    @classmethod
    def _relative_paths(cls, value: str | None) -> str | None:
        return _relative(value)

    @property
    def sources_dir(self) -> str:
        return self.sources or DEFAULT_SOURCES_DIR


# -- cases -----------------------------------------------------------------------


class CaseScope(_Strict):
    source_ids: list[str] | None = None
    record_types: list[str] | None = None
    entities: list[str] | None = None
    project: str | None = None


class Assertions(_Strict):
    expected_coverage: Literal["complete", "degraded"] | None = None
    expected_source_outcomes: dict[str, SearchOutcome] | None = None
    expected_source_reasons: dict[str, str] | None = None
    expected_exit_code: Literal[0, 2, 3, 4] | None = None
    required_sources: list[str] | None = None
    forbidden_sources: list[str] | None = None
    max_latency_ms: int | None = Field(default=None, gt=0)
    max_expansion_bytes: int | None = Field(default=None, gt=0)
    expected_revisions: dict[str, str] | None = None
    suppressed_lineages: list[str] | None = None
    withheld_lineages: dict[str, SuppressionReason] | None = None
    visible_lineages: list[str] | None = None
    sensitivity_ceiling: Sensitivity | None = None
    expected_top_lineage: str | None = None
    min_results: int | None = Field(default=None, ge=0)
    max_results: int | None = Field(default=None, ge=0)
    max_results_per_record: int | None = Field(default=None, ge=1)
    max_corroborated_units: int | None = Field(default=None, ge=1)
    excerpt_contains: dict[str, list[str]] | None = None
    exact_promoted: list[str] | None = None
    expected_truncated: bool | None = None

    def declared(self) -> set[str]:
        return {name for name, value in self if value is not None}


class ExpectedFail(_Strict):
    reason: str = Field(min_length=MIN_EXPECTED_FAIL_REASON)
    assertions: list[str] = Field(min_length=1)


Behavior = Literal["answer", "abstain", "fail"]
Split = Literal["tuning", "held-out"]
SPLITS: tuple[Split, ...] = ("tuning", "held-out")


class Case(_Strict):
    schema_version: int = Field(ge=1)
    case_id: str = Field(pattern=IDENTIFIER)
    query: str = Field(min_length=1)
    profile: str = ""
    expected_behavior: Behavior
    as_of: datetime | None = None
    tags: list[str] = Field(default_factory=list)
    timeout_ms: int | None = Field(default=None, gt=0)
    notes: str | None = None
    mode: Mode = Mode.explicit
    suppress_lineages: list[str] | None = None
    scope: CaseScope | None = None
    assertions: Assertions = Field(default_factory=Assertions)
    expected_fail: ExpectedFail | None = None
    # this broker's additions: request shaping a case may need
    limit: int | None = Field(default=None, ge=1)
    response_tokens: int | None = Field(default=None, ge=1)
    include_stale: bool = False
    valid_at: datetime | None = None
    # which half of a judged pack the case belongs to: ranking is tuned on "tuning"
    # only and must hold on "held-out" (eval/README.md)
    split: Split | None = None

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query is blank")
        return value

    @field_validator("tags")
    @classmethod
    def _unique_tags(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("tags repeat")
        return value

    @field_validator("as_of", "valid_at")
    @classmethod
    def _zoned(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("needs a time zone (RFC 3339, e.g. 2026-03-01T00:00:00Z)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Case:
        if self.expected_fail is not None:
            declared = self.assertions.declared()
            for name in self.expected_fail.assertions:
                if name not in EXCUSABLE_ASSERTIONS:
                    raise ValueError(f"expected_fail may not excuse {name!r}")
                if name not in declared:
                    raise ValueError(f"expected_fail names {name!r}, which the case does not assert")
        return self


class Judgment(_Strict):
    schema_version: int = Field(ge=1)
    case_id: str
    lineage_root: str
    relevance: int = Field(ge=0, le=3)
    required: bool = False
    forbidden: bool = False
    supports: list[str] = Field(default_factory=list)

    @field_validator("lineage_root")
    @classmethod
    def _persisted(cls, value: str) -> str:
        uid, sep, local = value.partition(":")
        if not (uid and sep and local):
            raise ValueError(f"{value!r} is not a lineage root <source_uid>:<local>")
        return value

    @model_validator(mode="after")
    def _not_both(self) -> Judgment:
        if self.required and self.forbidden:
            raise ValueError("a judgment cannot be both required and forbidden")
        return self


# -- the loaded pack ---------------------------------------------------------------


@dataclass
class Pack:
    directory: Path
    manifest: Manifest
    cases: list[Case]
    judgments: dict[str, list[Judgment]] = field(default_factory=dict)

    @property
    def pack_id(self) -> str:
        return self.manifest.pack_id

    @property
    def config_file(self) -> Path:
        return self.directory / self.manifest.sources_dir / CONFIG_FILE

    def only_split(self, split: Split) -> Pack:
        """The same pack reduced to the cases of one half; its runs compare only with runs of that half."""
        cases = [c for c in self.cases if c.split == split]
        if not cases:
            raise PackError(self.directory, [f"no case is in the {split!r} split"])
        return Pack(self.directory, self.manifest, cases, self.judgments)

    def config_text(self) -> str:
        """The pack's configuration with its placeholders filled in."""
        try:
            text = self.config_file.read_text(encoding="utf-8")
        except OSError as err:
            raise PackError(self.directory, [f"cannot read {self.config_file}: {err.strerror or err}"]) from None
        return text.replace(PACK_PLACEHOLDER, str(self.directory)).replace(
            PYTHON_PLACEHOLDER, sys.executable
        )

    def config(self, state_dir: Path, environ: Mapping[str, str] | None = None) -> Config:
        """The run's configuration; adapter state goes under ``state_dir`` only."""
        import os

        from broker.config import config_from_text

        env = {
            "HOME": (environ or os.environ).get("HOME", str(state_dir)),
            "XDG_STATE_HOME": str(state_dir / "state"),
            "XDG_CACHE_HOME": str(state_dir / "cache"),
        }
        config = config_from_text(self.config_text(), base_dir=self.config_file.parent, environ=env)
        self._serve_replayed_sources(config)
        return config

    def _serve_replayed_sources(self, config: Config) -> None:
        """Adapters named ``recall-eval-replay`` answer from this pack's transcripts, never spawned."""
        from broker.evaluation import replayed_source

        transcripts = self.directory / (self.manifest.transcripts or "transcripts")
        for registration in config.adapters.values():
            if registration.argv and Path(registration.argv[0]).name == replayed_source.COMMAND:
                registration.argv = [sys.executable, "-m", replayed_source.__name__, str(transcripts)]


def _read_jsonl(path: Path, model: type[BaseModel], problems: list[str]) -> list[tuple[int, Any]]:
    try:
        lines = path.read_bytes().splitlines()
    except OSError as err:
        problems.append(f"cannot read {path.name}: {err.strerror or err}")
        return []
    parsed: list[tuple[int, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            parsed.append((number, model.model_validate(orjson.loads(line))))
        except orjson.JSONDecodeError as err:
            problems.append(f"{where}: not JSON ({err})")
        except ValidationError as err:
            problems.extend(f"{where}: {_describe(e)}" for e in err.errors())
    return parsed


def _describe(error: Any) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()))
    message = error.get("msg", "invalid")
    if error.get("type") == "extra_forbidden":
        message = "unknown field"
    return f"{where}: {message}" if where else message


def load_pack(directory: Path) -> Pack:
    """Read and validate a pack; raises :class:`PackError` listing every problem."""
    directory = directory.expanduser().absolute()
    manifest_file = directory / MANIFEST_FILE
    try:
        raw = orjson.loads(manifest_file.read_bytes())
        manifest = Manifest.model_validate(raw)
    except OSError as err:
        raise PackError(directory, [f"cannot read {MANIFEST_FILE}: {err.strerror or err}"]) from None
    except orjson.JSONDecodeError as err:
        raise PackError(directory, [f"{MANIFEST_FILE}: not JSON ({err})"]) from None
    except ValidationError as err:
        raise PackError(directory, [f"{MANIFEST_FILE}: {_describe(e)}" for e in err.errors()]) from None

    problems: list[str] = []
    cases = [c for _, c in _read_jsonl(directory / manifest.cases, Case, problems)]
    if manifest.abstain_pool:
        pool = _read_jsonl(directory / manifest.abstain_pool, Case, problems)
        for number, case in pool:
            if case.expected_behavior != "abstain":
                problems.append(f"{manifest.abstain_pool}:{number}: pool cases must expect abstain")
        cases += [c for _, c in pool]
    seen: set[str] = set()
    for case in cases:
        if case.case_id in seen:
            problems.append(f"case_id {case.case_id!r} appears more than once")
        seen.add(case.case_id)
    if not cases and not problems:
        problems.append(f"{manifest.cases}: no cases")

    judgments: dict[str, list[Judgment]] = {}
    pairs: set[tuple[str, str]] = set()
    for number, judgment in _read_jsonl(directory / manifest.judgments, Judgment, problems):
        where = f"{manifest.judgments}:{number}"
        if judgment.case_id not in seen:
            problems.append(f"{where}: case_id {judgment.case_id!r} is not a case of this pack")
        pair = (judgment.case_id, judgment.lineage_root)
        if pair in pairs:
            problems.append(f"{where}: {judgment.lineage_root} is judged twice for {judgment.case_id}")
        pairs.add(pair)
        judgments.setdefault(judgment.case_id, []).append(judgment)
    if not (directory / manifest.sources_dir / CONFIG_FILE).is_file():
        problems.append(f"no configuration at {manifest.sources_dir}/{CONFIG_FILE}")
    if problems:
        raise PackError(directory, problems)
    return Pack(directory=directory, manifest=manifest, cases=cases, judgments=judgments)


def check_against_config(pack: Pack, config: Config) -> None:
    """Problems only the configuration can reveal: unknown profiles and source uids."""
    uids = {s.source_uid for s in config.sources}
    problems: list[str] = []
    default = pack.manifest.profile or ""
    for case in pack.cases:
        profile = case.profile or default
        if profile and profile not in config.profiles:
            problems.append(f"case {case.case_id}: unknown profile {profile!r}")
        for judgment in pack.judgments.get(case.case_id, []):
            uid = judgment.lineage_root.split(":", 1)[0]
            if uid not in uids:
                problems.append(
                    f"case {case.case_id}: judgment root {judgment.lineage_root} names no configured source_uid"
                )
        for name, roots in _named_uids(case):
            for uid in roots:
                if uid not in uids:
                    problems.append(f"case {case.case_id}: {name} names unknown source_uid {uid!r}")
    if not pack.manifest.network_access:
        problems += _undeclared_network(config)
    if problems:
        raise PackError(pack.directory, problems)


def _named_uids(case: Case) -> list[tuple[str, list[str]]]:
    a = case.assertions
    return [
        ("expected_source_outcomes", list(a.expected_source_outcomes or {})),
        ("expected_source_reasons", list(a.expected_source_reasons or {})),
        ("required_sources", list(a.required_sources or [])),
        ("forbidden_sources", list(a.forbidden_sources or [])),
    ]


def _undeclared_network(config: Config) -> list[str]:
    from urllib.parse import urlsplit

    found = []
    for source in config.sources:
        if not source.location:
            continue
        parts = urlsplit(source.location)
        if parts.scheme and parts.netloc and not source.settings.get("replay"):
            found.append(
                f"source {source.source_id} reads {source.location}, but the pack does not declare "
                "network_access"
            )
    return found
