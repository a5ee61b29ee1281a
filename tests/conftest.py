"""Suite-wide settings.

Property tests explore random examples on a developer's machine; CI sets
``HYPOTHESIS_PROFILE=ci`` so a landing is judged on the same examples every time
(a new failing example found locally is kept in ``.hypothesis/`` and replayed).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
