"""The base of the broker's models."""

from __future__ import annotations

from typing import Any

from adapter_sdk.wire import WireModel


class Model(WireModel):
    """Base of the broker's models: validated on construction, unknown fields refused."""

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)
