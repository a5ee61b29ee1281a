"""The Sidecar plugin (``recall sidecar-plugin``): :func:`answer` one request, :func:`encode` the response."""

from broker.surfaces.sidecar.plugin import answer
from broker.surfaces.sidecar.protocol import MAX_REQUEST_BYTES, deadline_budget, encode

__all__ = ["MAX_REQUEST_BYTES", "answer", "deadline_budget", "encode"]
