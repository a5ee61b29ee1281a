"""A pack's content hash: what two runs must share to be compared.

The definition is the reference implementation's, byte for byte, so a run of
this broker and a run of the reference over one pack carry the same hash and
can be compared:

- one sub-digest per record: ``sha256(domain 0x00 json)`` for the manifest
  (``pack``), each case (``case``) and each judgment (``judgment``), where
  ``json`` is the record encoded the way Go's ``encoding/json`` encodes the
  reference's types: fields in their declaration order, empty optional fields
  left out, map keys sorted, no spaces, ``<``, ``>`` and ``&`` escaped, a whole
  float printed without a fraction;
- one per fixture tree (``sources``, ``transcripts``): sha256 over
  length-prefixed frames (8-byte big-endian length, then bytes) of
  ``fixture-tree:<domain>``, then each regular file's slash-separated path and
  content, in path order. Modes, times and empty directories do not count; a
  symlink is refused, since what it points at is not part of the pack;
- ``sha256:`` + the hex sha256 of the sorted sub-digests concatenated.

Fields only this broker's packs have (a case's ``limit``, ``valid_at``, ...)
follow the reference's fields, so a pack that uses none hashes as it does
there. One departure: a pack that declares no ``sources`` tree still has its
configuration read from ``sources/``, so that tree is hashed all the same.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from broker.evaluation.pack import (
    Assertions,
    Case,
    CaseScope,
    Judgment,
    Manifest,
    Pack,
    PackError,
    Thresholds,
)

# Each model's fields in the order the reference declares them, then ours; a
# name in OMIT_EMPTY is left out when empty, as Go's ``omitempty`` does.
MANIFEST_FIELDS = (
    "schema_version", "pack_id", "version", "description", "profile", "cases", "judgments", "sources",
    "transcripts", "network_access", "budgets", "thresholds", "sensitivity_ceiling", "baseline",
    "abstain_pool",
)
CASE_FIELDS = (
    "schema_version", "case_id", "query", "profile", "as_of", "expected_behavior", "tags", "timeout_ms",
    "notes", "expected_fail", "mode", "suppress_lineages", "scope", "assertions",
    "limit", "response_tokens", "include_stale", "valid_at", "split",
)
ALWAYS = frozenset({"schema_version", "pack_id", "version", "cases", "judgments", "case_id", "query",
                    "expected_behavior", "lineage_root", "relevance", "recorded", "reason"})
CASE_ALWAYS = ALWAYS | {"profile"}  # a manifest's profile may be left out, a case's may not
# set-but-zero still counts for these (the reference holds them as pointers)
POINTERS = frozenset({"min_results", "max_results", "max_corroborated_units", "max_results_per_record",
                      "scope", "assertions", "expected_fail", "budgets", "baseline", "sensitivity_ceiling"})
ASSERTION_FIELDS = (
    "expected_coverage", "expected_source_outcomes", "required_sources", "forbidden_sources",
    "max_latency_ms", "max_expansion_bytes", "expected_revisions", "suppressed_lineages",
    "visible_lineages", "withheld_lineages", "expected_top_lineage", "min_results", "max_results",
    "max_corroborated_units", "max_results_per_record", "excerpt_contains", "sensitivity_ceiling",
    "expected_source_reasons", "expected_exit_code", "exact_promoted", "expected_truncated",
)
FIELD_ORDER: dict[type[BaseModel], tuple[str, ...]] = {
    Manifest: MANIFEST_FIELDS,
    Case: CASE_FIELDS,
    Assertions: ASSERTION_FIELDS,
    CaseScope: ("source_ids", "record_types", "entities", "project"),
    Judgment: ("schema_version", "case_id", "lineage_root", "relevance", "required", "forbidden", "supports"),
}


def _go_value(value: Any) -> Any:
    if isinstance(value, Thresholds):  # a map in the reference: only the named ones, sorted
        return _go_value({k: v for k, v in value.model_dump().items() if v is not None})
    if isinstance(value, BaseModel):
        return _go_record(value)
    if isinstance(value, dict):
        return {str(k): _go_value(v) for k, v in sorted(value.items(), key=lambda item: str(item[0]))}
    if isinstance(value, list | tuple):
        return [_go_value(v) for v in value]
    if isinstance(value, datetime):
        return _go_time(value)
    if isinstance(value, Enum):
        return value.value  # its wire name
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)  # Go prints 1.0 as 1
    return value


def _empty(value: Any) -> bool:
    return value is None or value is False or value == 0 or value == "" or value == [] or value == {}


def _go_record(model: BaseModel) -> dict[str, Any]:
    order = FIELD_ORDER.get(type(model))
    names = order if order is not None else tuple(type(model).model_fields)
    always = CASE_ALWAYS if isinstance(model, Case) else ALWAYS
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(model, name)
        if name in always:
            out[name] = _go_value(value if value is not None else "")
        elif name in POINTERS:
            if value is not None and (name in model.model_fields_set or not isinstance(value, BaseModel)):
                out[name] = _go_value(value)
        elif name == "mode":
            if name in model.model_fields_set:
                out[name] = _go_value(value)
        elif not _empty(value):
            out[name] = _go_value(value)
    return out


def _go_time(value: datetime) -> str:
    """RFC 3339 with the fraction trimmed, ``Z`` for UTC: Go's ``time.Time`` in JSON."""
    if value.utcoffset() == UTC.utcoffset(None):
        value = value.astimezone(UTC)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    offset = value.strftime("%z")
    return text + ("Z" if offset in ("+0000", "") else f"{offset[:3]}:{offset[3:]}")


def go_json(model: BaseModel) -> bytes:
    """``model`` as Go's ``json.Marshal`` would encode the reference's type."""
    text = json.dumps(_go_record(model), ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text.encode("utf-8")


def _json_digest(domain: str, model: BaseModel) -> bytes:
    return hashlib.sha256(domain.encode() + b"\x00" + go_json(model)).digest()


def _frame(hasher: hashlib._Hash, data: bytes) -> None:
    hasher.update(len(data).to_bytes(8, "big"))
    hasher.update(data)


def tree_digest(pack: Pack, domain: str, root: Path) -> bytes:
    hasher = hashlib.sha256()
    _frame(hasher, f"fixture-tree:{domain}".encode())
    files: list[tuple[str, Path]] = []
    for path in root.rglob("*"):
        if path.is_symlink():
            raise PackError(pack.directory, [f"{path} is a symlink; packs hold regular files only"])
        if path.is_file():
            files.append((path.relative_to(root).as_posix(), path))
    for relative, path in sorted(files):
        _frame(hasher, relative.encode())
        _frame(hasher, path.read_bytes())
    return hasher.digest()


def content_hash(pack: Pack) -> str:
    digests = [_json_digest("pack", pack.manifest)]
    digests += [_json_digest("case", c) for c in pack.cases]
    digests += [_json_digest("judgment", j) for group in pack.judgments.values() for j in group]
    for domain in ("sources", "transcripts"):
        name = pack.manifest.sources_dir if domain == "sources" else pack.manifest.transcripts
        if name and (pack.directory / name).is_dir():
            digests.append(tree_digest(pack, domain, pack.directory / name))
    return "sha256:" + hashlib.sha256(b"".join(sorted(digests))).hexdigest()
