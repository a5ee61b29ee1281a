"""JSON encodings of responses, as surfaces write them and as the budget prices them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from broker.contracts import QueryResponse


def json_document(value: Any) -> str:
    """A JSON document with two-space indentation and a trailing newline: what ``--json`` prints."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n"


def nested(value: Any, indent: str) -> str:
    """``value`` indented two-space, every line after the first shifted by ``indent``:
    how it reads as an element nested inside a larger document."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode().replace("\n", "\n" + indent)


def compact(value: Any) -> str:
    """Compact JSON, as a JSON-RPC frame carries it. A string becomes its quoted literal."""
    return orjson.dumps(value).decode()


def structured_document(response: QueryResponse) -> str:
    """The complete response, nothing projected: what ``recall query --json --explain`` prints."""
    return json_document(response.to_json())
