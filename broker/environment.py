"""The environment variables that choose how a command runs, each named once.

Imports nothing: the thin client reads these before anything else is loaded.
"""

from __future__ import annotations

SERVER_ENV = "RECALL_SERVER"
"""URL of a running ``recall serve``: commands that talk to sources ask it instead."""
DAEMON_ENV = "RECALL_DAEMON"
"""``0`` (or false, no, off) runs every command in process, never in the resident broker."""
DAEMON_IDLE_ENV = "RECALL_DAEMON_IDLE_SECONDS"
"""Seconds without a command after which the resident broker leaves."""
