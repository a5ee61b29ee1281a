"""Run the commands of docs/quickstart.md the way a new user would.

    python scripts/check_quickstart.py            sections 2-4, in a throwaway home
    python scripts/check_quickstart.py --install  also the venv install, in a scratch copy

Fenced blocks tagged ``sh`` run in order in one bash session (``set -e``) from the
checkout, with HOME and XDG folders in a temp directory and this interpreter's
``bin`` on PATH. ``sh install`` blocks run only with ``--install``. ``sh host``
blocks register recall with an agent host that is not installed here; for them the
script checks what the host would start: ``recall mcp`` answering ``initialize``.
``json`` blocks must parse and name a command that is on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "docs" / "quickstart.md"
FENCE = re.compile(r"^```(\w+)(?: (\w+))?\n(.*?)^```$", re.M | re.S)


def blocks(text: str) -> list[tuple[str, str, str]]:
    return [(m.group(1), m.group(2) or "", m.group(3)) for m in FENCE.finditer(text)]


def run_shell(script: str, env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        raise SystemExit(f"check_quickstart: a block failed (exit {done.returncode}):\n"
                         f"{script}\n--- stderr ---\n{done.stderr}")


def check_mcp_handshake(env: dict[str, str]) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "quickstart-check", "version": "0"}}}
    done = subprocess.run(["recall", "mcp"], input=json.dumps(request) + "\n", env=env,
                          capture_output=True, text=True, timeout=60)
    first = done.stdout.splitlines()[0] if done.stdout else ""
    if '"serverInfo"' not in first:
        raise SystemExit(f"check_quickstart: recall mcp did not answer initialize:\n"
                         f"{done.stdout}\n{done.stderr}")


def check_host_json(body: str, env: dict[str, str]) -> None:
    for name, server in json.loads(body)["mcpServers"].items():
        if shutil.which(server["command"], path=env["PATH"]) is None:
            raise SystemExit(f"check_quickstart: mcpServers.{name}.command is not on PATH")


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="recall-quickstart-") as scratch:
        home = Path(scratch)
        env = {
            "HOME": str(home), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".state"),
            "XDG_CACHE_HOME": str(home / ".cache"), "RECALL_DAEMON": "0",
            "LANG": os.environ.get("LANG", "C.UTF-8"),
        }
        shell: list[str] = []
        for language, tag, body in blocks(QUICKSTART.read_text(encoding="utf-8")):
            if language == "sh" and tag == "install":
                if "--install" in argv and "venv" in body:
                    copy = home / "checkout"
                    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git"))
                    run_shell(body + "\nrecall version\n", env, copy)
            elif language == "sh" and tag == "host":
                check_mcp_handshake(env)
            elif language == "sh":
                shell.append(body)
            elif language == "json":
                check_host_json(body, env)
        run_shell("\n".join(shell), env, ROOT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
