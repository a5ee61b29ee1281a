"""Run the eventstore adapter on stdio: ``python -m adapters.eventstore`` or ``recall-eventstore``."""

from __future__ import annotations


def main() -> None:
    from adapter_sdk import start_quietly

    start_quietly()  # before the imports: they allocate much, none of it garbage
    from adapter_sdk import run
    from adapters.eventstore.adapter import EventStoreAdapter

    run(EventStoreAdapter())


if __name__ == "__main__":
    main()
