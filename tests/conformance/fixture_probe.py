"""A stand-in adapter that reports where its location is, for the fixture-binding tests.

Every request is answered with ``{"fixture_in_place": B}``, B true when the
location is a case's committed ``fixture/`` (its parent holds the case's
``manifest.json``). With ``FIXTURE_PROBE_WRITE`` set it first writes that file
name into the location, as a store that keeps its log beside its data would.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main() -> None:
    location: Path | None = None
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("method") == "recall/initialize":
            location = Path(request["params"]["location"])
            written = os.environ.get("FIXTURE_PROBE_WRITE")
            if written:
                (location / written).write_text("written by the adapter\n")
        in_place = location is not None and (location.parent / "manifest.json").is_file()
        reply = {"jsonrpc": "2.0", "id": request.get("id"), "result": {"fixture_in_place": in_place}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
