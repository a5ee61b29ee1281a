"""An adapter process's start: quiet the collector, then build and serve the adapter."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapter_sdk.session import Adapter


def serve_quietly(make_adapter: Callable[[], Adapter]) -> None:
    """Serve the adapter ``make_adapter`` builds on stdio, as :func:`run` does.

    The collector is quieted first, before the server and ``make_adapter`` import
    their modules: those imports allocate much, none of it garbage. So
    ``make_adapter`` should import the adapter's own module itself.
    """
    from adapter_sdk.collector import start_quietly

    start_quietly()
    from adapter_sdk.server import run

    run(make_adapter())
