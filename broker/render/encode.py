"""JSON encodings of responses, as surfaces write them and as the budget prices them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from broker.contracts import QueryResponse


WHOLE_FLOAT_LIMIT = 2.0**53  # beyond this a float is not an exact integer anyway


# Values kept as they are, without a call: most of a response's (it is priced result by
# result, each walked here)
_LEAVES = frozenset({str, int, bool, type(None)})


def plain_numbers(value: Any) -> Any:
    """``value`` with every whole float as an integer, so ``1.0`` prints ``1`` as the reference prints it."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < WHOLE_FLOAT_LIMIT else value
    if isinstance(value, dict):
        return {key: item if type(item) in _LEAVES else plain_numbers(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [item if type(item) in _LEAVES else plain_numbers(item) for item in value]
    return value


def json_bytes(value: Any, option: int | None = None) -> bytes:
    """``value`` as JSON, whole floats written as integers."""
    return orjson.dumps(plain_numbers(value), option=option)


def json_document(value: Any) -> str:
    """A JSON document with two-space indentation and a trailing newline: what ``--json`` prints."""
    return json_bytes(value, orjson.OPT_INDENT_2).decode() + "\n"


def nested(value: Any, indent: str) -> str:
    """``value`` indented two-space, every line after the first shifted by ``indent``:
    how it reads as an element nested inside a larger document."""
    return json_bytes(value, orjson.OPT_INDENT_2).decode().replace("\n", "\n" + indent)


def compact(value: Any) -> str:
    """Compact JSON, as a JSON-RPC frame carries it. A string becomes its quoted literal."""
    return json_bytes(value).decode()


def structured_document(response: QueryResponse) -> str:
    """The complete response, nothing projected: what ``recall query --json --explain`` prints."""
    return json_document(response.to_json())
