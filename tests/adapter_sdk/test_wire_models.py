"""Protocol payloads: what validation accepts and refuses, and what goes on the wire."""

from __future__ import annotations

import importlib
import typing
from datetime import UTC, datetime

import orjson
import pytest

from adapter_sdk.protocol import SearchResult
from adapter_sdk.wire import WireModel, WireValidationError, field_hints


def candidate(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "candidate_id": "a.md#c1",
        "source_record_id": "a.md",
        "locator": "notes:a.md#L1-L4",
        "record_type": "document",
        "title": "Backups",
        "excerpt_kind": "matched",
        "excerpt": "nightly backups",
        "local_rank": 1,
        "local_score": 2,
        "relevance": 0.5,
        "match_signals": ["lexical"],
        "observed_at": "2026-03-01T12:00:00.1234567Z",
        "sensitivity": "internal",
        "metadata": {"path": "a.md", "heading_path": ["A", "B"], "start_line": 1, "nested": {"k": None}},
    }
    base.update(changes)
    return base


def test_free_form_metadata_is_taken_as_given_and_copied() -> None:
    sent = candidate()
    result = SearchResult.model_validate({"candidates": [sent], "outcome": "success"})
    metadata = result.candidates[0].metadata
    assert metadata == sent["metadata"]
    metadata["path"] = "changed"
    assert sent["metadata"]["path"] == "a.md"  # type: ignore[index]


def test_a_metadata_key_that_is_not_a_string_is_refused_by_name() -> None:
    with pytest.raises(WireValidationError) as raised:
        SearchResult.model_validate({"candidates": [candidate(metadata={1: "x"})], "outcome": "success"})
    assert [e["loc"] for e in raised.value.errors()] == [("candidates", 0, "metadata", 1)]
    assert raised.value.errors()[0]["msg"] == "Keys should be valid strings"


def test_the_wire_form_spells_enums_times_and_numbers_as_json() -> None:
    result = SearchResult.model_validate({"candidates": [candidate()], "outcome": "success"})
    wire = result.to_wire()
    sent = wire["candidates"][0]
    assert sent["excerpt_kind"] == "matched" and type(sent["excerpt_kind"]) is str
    assert sent["sensitivity"] == "internal" and type(sent["sensitivity"]) is str
    assert sent["match_signals"] == ["lexical"] and type(sent["match_signals"][0]) is str
    assert sent["observed_at"] == "2026-03-01T12:00:00.123456Z"
    assert sent["local_score"] == 2.0 and type(sent["local_score"]) is float
    assert sent["metadata"]["nested"] == {"k": None}  # inside metadata, None is a value
    assert "confirmed_at" not in sent  # absent optionals are left out
    assert wire["outcome"] == "success"
    assert orjson.loads(orjson.dumps(wire)) == wire
    assert result.candidates[0].observed_at == datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


# the modules that declare models (see WireModel.__subclasses__ below)
MODEL_MODULES = ("adapter_sdk.protocol", "broker.contracts")


def every_model() -> list[type[WireModel]]:
    for name in MODEL_MODULES:
        importlib.import_module(name)
    found: list[type[WireModel]] = []
    pending = [WireModel]
    while pending:
        for sub in pending.pop().__subclasses__():
            found.append(sub)
            pending.append(sub)
    return found


def test_every_models_field_types_are_those_typing_reads_from_its_annotations() -> None:
    models = every_model()
    assert len(models) > 40
    for model in models:
        expected = typing.get_type_hints(model)
        assert field_hints(model) == {name: expected[name] for name in model._fields}, model


def test_a_constructed_record_equals_the_validated_one_and_dumps_alike() -> None:
    from adapter_sdk.protocol import Candidate

    checked = SearchResult.model_validate({"candidates": [candidate()], "outcome": "success"}).candidates[0]
    built = Candidate.model_construct(**{name: getattr(checked, name) for name in ("candidate_id",
        "source_record_id", "locator", "record_type", "title", "excerpt_kind", "excerpt", "local_rank",
        "local_score", "relevance", "match_signals", "observed_at", "sensitivity", "metadata")})
    assert built == checked
    assert list(built.__dict__) == list(checked.__dict__)  # field order: the wire's key order
    assert orjson.dumps(built.to_wire()) == orjson.dumps(checked.to_wire())


def test_constructing_still_refuses_unknown_names_and_missing_required_fields() -> None:
    from adapter_sdk.protocol import Candidate

    with pytest.raises(TypeError, match="has no field colour"):
        Candidate.model_construct(colour="red")
    with pytest.raises(TypeError, match="candidate_id is required"):
        Candidate.model_construct(title="Backups")
