"""What an MCP tool advertises is what it accepts: each argument, each kind of value.

For every property of every tool's input schema, a sample of each JSON type and
the edges the schema declares (bounds, lengths, enum members, instants with and
without a zone) is judged twice: by a JSON Schema validator reading the
advertised schema, and by the tool's own validation (its argument model, then
for ``recall_query`` the broker's request rules). The two must agree on every
sample. ``date-time`` is checked as RFC 3339 defines it: an offset is required.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from broker.requests import query_problems
from broker.surfaces.mcp import ARGUMENTS, TOOLS, QueryArguments, query_request

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
FORMATS = jsonschema.FormatChecker()
FORMATS.checks("date-time")(lambda value: not isinstance(value, str) or bool(RFC3339.match(value)))

ANY_JSON: list[Any] = [None, True, False, 0, 1, -1, 2.5, "", "x", "3", "true", [], ["a"], [1], {}, {"a": 1}]
INSTANTS = ["2030-01-01T00:00:00Z", "2030-01-01T09:30:00.5+02:00", "2030-01-01", "2030-01-01T00:00:00",
            "yesterday"]
REQUIRED = {
    "recall_query": {"query": "restore drill"},
    "recall_expand": {"locator": "notes:restore"},
    "recall_report_stale": {"successor_locator": "kb:b", "successor_quote": "B",
                            "superseded_locator": "kb:a", "superseded_quote": "A"},
}


def edges(schema: dict[str, Any]) -> list[Any]:
    """The values at and just past each limit the property's schema declares."""
    values: list[Any] = []
    for low, high in (("minimum", "maximum"),):
        if low in schema:
            values += [schema[low], schema[low] - 1]
        if high in schema:
            values += [schema[high], schema[high] + 1]
    if "minLength" in schema:
        values += ["x" * schema["minLength"], "x" * max(schema["minLength"] - 1, 0)]
    if "maxLength" in schema:
        values += ["x" * schema["maxLength"], "x" * (schema["maxLength"] + 1)]
    values += list(schema.get("enum", [])) + (["nonsense"] if "enum" in schema else [])
    if schema.get("format") == "date-time":
        values += INSTANTS
    return values


def accepted(tool: str, arguments: dict[str, Any]) -> bool:
    try:
        args = ARGUMENTS[tool].from_call(arguments)
    except ValidationError:
        return False
    if isinstance(args, QueryArguments):
        return not query_problems(query_request(args, "default"))
    return True


CASES = [
    (tool.name, name, value)
    for tool in TOOLS
    for name, prop in tool.input_schema["properties"].items()
    for value in ANY_JSON + edges(prop)
]


@pytest.mark.parametrize(("tool", "name", "value"), CASES, ids=[f"{t}.{n}={v!r}" for t, n, v in CASES])
def test_the_advertised_schema_and_the_validator_agree(tool: str, name: str, value: Any) -> None:
    schema = next(t.input_schema for t in TOOLS if t.name == tool)
    arguments = {**REQUIRED.get(tool, {}), name: value}
    advertised = jsonschema.Draft202012Validator(schema, format_checker=FORMATS).is_valid(arguments)
    assert accepted(tool, arguments) == advertised


def test_every_tool_declares_a_closed_schema_from_its_argument_model() -> None:
    for tool in TOOLS:
        model = ARGUMENTS[tool.name]
        assert tool.input_schema["additionalProperties"] is False
        assert set(tool.input_schema["properties"]) == set(model.model_fields)
        assert set(tool.input_schema.get("required", [])) == {
            name for name, info in model.model_fields.items() if info.is_required()
        }


def test_an_unknown_argument_is_refused_by_both() -> None:
    arguments = {"query": "restore", "colour": "blue"}
    schema = next(t.input_schema for t in TOOLS if t.name == "recall_query")
    assert not jsonschema.Draft202012Validator(schema).is_valid(arguments)
    assert not accepted("recall_query", arguments)
