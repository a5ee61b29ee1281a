"""Entry point: ``python -m adapters.tasks`` / ``recall-tasks`` serves protocol v1 on stdio."""

from __future__ import annotations


def main() -> None:
    from adapter_sdk import start_quietly

    start_quietly()  # before the imports: they allocate much, none of it garbage
    from adapter_sdk import run
    from adapters.tasks.adapter import TasksAdapter

    run(TasksAdapter())


if __name__ == "__main__":
    main()
