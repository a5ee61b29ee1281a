"""Run the eventstore adapter on stdio: ``python -m adapters.eventstore`` or ``recall-eventstore``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.eventstore.adapter import EventStoreAdapter


def main() -> None:
    from adapter_sdk import serve_quietly

    serve_quietly(_adapter)


def _adapter() -> EventStoreAdapter:
    from adapters.eventstore.adapter import EventStoreAdapter

    return EventStoreAdapter()


if __name__ == "__main__":
    main()
