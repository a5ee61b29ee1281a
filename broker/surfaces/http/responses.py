"""The JSON responses every HTTP route of the broker answers with, its typed refusals, and the media type it reads."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from broker.render.encode import json_bytes


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json_bytes(body), status, headers=headers, media_type="application/json")


def problem(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return json_response({"error": {"code": code, "message": message}}, status, headers)


def media_type(request: Request) -> str:
    """The request body's media type, without parameters, lowercased."""
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class Problem(Exception):
    """A request refused with a typed error body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def response(self) -> Response:
        return problem(self.status, self.code, self.message)
