"""Entry point: ``python -m adapters.tasks`` / ``recall-tasks`` serves protocol v1 on stdio."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.tasks.adapter import TasksAdapter


def main() -> None:
    from adapter_sdk import serve_quietly

    serve_quietly(_adapter)


def _adapter() -> TasksAdapter:
    from adapters.tasks.adapter import TasksAdapter

    return TasksAdapter()


if __name__ == "__main__":
    main()
