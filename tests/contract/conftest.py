"""The surfaces' workspace: one configuration, a ``recall serve`` per profile, real adapters."""

from __future__ import annotations

from tests.broker.surfaces.conftest import (  # noqa: F401 - fixtures shared with the surface tests
    anyio_backend,
    default_server,
    wide_server,
    workspace,
)
