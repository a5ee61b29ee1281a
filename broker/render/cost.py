"""What a response costs on the surface that will print it (anchor §4.2).

A cost prices the frame (the response without its results) and each result at
its rank, by rendering the piece exactly as the surface prints it and estimating
the text. The frame is priced as if shaping will truncate: ``truncated`` set and
every result counted as dropped, so the footer reporting a truncation is inside
the budget rather than overrunning it by what the budget caused. Each price is a
ceiling on what gets written: the rendered whole never costs more than the frame
plus its results.
"""

from __future__ import annotations

from typing import Protocol

from broker.contracts import QueryResponse, Result, Surface
from broker.render.encode import compact, json_document, nested
from broker.render.pointer import pointer_projection, project_result
from broker.render.tokens import estimate_tokens

RESULT_INDENT = "    "
"""How deep a result sits in a serialized response: inside the object, inside ``results``."""

ARRAY_CLOSE = "\n  "
"""The line that closes a non-empty ``results`` array, which the empty frame does not print."""

TOOL_ENVELOPE_TOKENS = 96
"""The JSON-RPC framing around a tool result, charged once: a stated, generous constant."""


class Cost(Protocol):
    def frame(self, response: QueryResponse) -> int: ...

    def result(self, rank: int, result: Result) -> int: ...


def priced_frame(response: QueryResponse) -> QueryResponse:
    """The response without its results, as if every one of them had been dropped."""
    if not response.results:
        return response
    return response.model_copy(
        update={
            "results": [],
            "truncated": True,
            "dropped_results": response.dropped_results + len(response.results),
        }
    )


def _nested_element(value: object) -> int:
    return estimate_tokens(RESULT_INDENT + nested(value, RESULT_INDENT) + ",\n")


class StructuredCost:
    """The complete response as its own two-space-indented serialization."""

    def frame(self, response: QueryResponse) -> int:
        framed = priced_frame(response)
        close = ARRAY_CLOSE if response.results else ""
        return estimate_tokens(json_document(framed.to_json()) + close)

    def result(self, rank: int, result: Result) -> int:
        return _nested_element(result.to_json())


class StructuredPointerCost:
    """The pointer projection, serialized; a projected result carries its rank as a field."""

    def frame(self, response: QueryResponse) -> int:
        framed = priced_frame(response)
        close = ARRAY_CLOSE if response.results else ""
        return estimate_tokens(json_document(pointer_projection(framed)) + close)

    def result(self, rank: int, result: Result) -> int:
        return _nested_element(project_result(rank, result))


class HumanCost:
    """The CLI's human tiers, priced by running the renderer."""

    def __init__(self, *, explain: bool) -> None:
        self.explain = explain

    def frame(self, response: QueryResponse) -> int:
        from broker.render import human  # the renderers load with the surface that prints them

        return estimate_tokens(human.render_query(priced_frame(response), explain=self.explain))

    def result(self, rank: int, result: Result) -> int:
        from broker.render import human

        return estimate_tokens(human.render_result(rank, result, explain=self.explain))


class ToolCost:
    """An MCP tool result: compact structured content plus the text block, in an envelope.

    The text block is charged as the JSON string it travels as, so its quoting
    and escaping are paid for.
    """

    def __init__(self, *, explain: bool) -> None:
        self.explain = explain

    def frame(self, response: QueryResponse) -> int:
        from broker.render import tool

        framed = priced_frame(response)
        structured = framed.to_json() if self.explain else pointer_projection(framed)
        return (
            estimate_tokens(compact(structured))
            + estimate_tokens(compact(tool.query_text(framed)))
            + TOOL_ENVELOPE_TOKENS
        )

    def result(self, rank: int, result: Result) -> int:
        from broker.render import tool

        structured = result.to_json() if self.explain else project_result(rank, result)
        return estimate_tokens(compact(structured)) + estimate_tokens(
            compact(tool.result_text(rank, result))
        )


def cost_for(surface: Surface | str) -> Cost:
    """The cost of ``surface``; an unknown surface is priced as ``structured``."""
    match surface:
        case Surface.pointer:
            return HumanCost(explain=False)
        case Surface.explained:
            return HumanCost(explain=True)
        case Surface.structured_pointer:
            return StructuredPointerCost()
        case Surface.tool:
            return ToolCost(explain=False)
        case Surface.tool_explained:
            return ToolCost(explain=True)
    return StructuredCost()
