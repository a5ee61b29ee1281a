"""The surfaces' workspace (fixture sources, a refreshed notes folder) for the compatibility tests."""

from __future__ import annotations

from tests.broker.surfaces.conftest import workspace  # noqa: F401  (a fixture)
