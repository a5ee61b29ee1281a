"""How a note as the folder holds it now is named as a revision."""

from __future__ import annotations

import hashlib

# a content digest, under a prefix no sanitizer reads as a URL scheme
REVISION_PREFIX = "sha256:"


def note_revision(data: bytes) -> str:
    """The revision of a note whose bytes are ``data``."""
    return REVISION_PREFIX + hashlib.sha256(data).hexdigest()[:12]
