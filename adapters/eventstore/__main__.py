"""Run the eventstore adapter on stdio: ``python -m adapters.eventstore`` or ``recall-eventstore``."""

from __future__ import annotations

from adapter_sdk.server import run
from adapters.eventstore.adapter import EventStoreAdapter


def main() -> None:
    run(EventStoreAdapter())


if __name__ == "__main__":
    main()
