"""The HTTP API (``recall serve``): ``/v1`` routes over one long-lived broker, and the page beside them.

Adapters stay warm for the server's lifetime: the broker is opened in the
application's lifespan and every request reuses its adapter processes; leaving
the lifespan (graceful shutdown) stops them all.

The package's rooms: :mod:`~broker.surfaces.http.guard` (what every request
passes first), :mod:`~broker.surfaces.http.api_routes` (the ``/v1`` routes),
:mod:`~broker.surfaces.http.responses` (the JSON bodies and typed refusals they
answer with) and :mod:`~broker.surfaces.http.asgi_app` (the application that joins
them with the page). Errors are ``{"error": {"code", "message"}}``.
"""
