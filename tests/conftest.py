"""Suite-wide settings.

Property tests explore random examples on a developer's machine; CI sets
``HYPOTHESIS_PROFILE=ci`` so a landing is judged on the same examples every time
(a new failing example found locally is kept in ``.hypothesis/`` and replayed).

Every ``recall`` a test starts runs in process: a resident broker started by one
test would outlive it. Tests of the resident broker turn it on for their own
commands and stop what they started.
"""

from __future__ import annotations

import os

from hypothesis import settings

os.environ["RECALL_DAEMON"] = "0"

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
