"""Take the user guide's screenshot of the search page: a real search over the bundled sample.

Usage: .venv/bin/python scripts/page-screenshot.py [OUT.png [QUESTION]]
(default docs/images/page-search.png and a question about the backup tool decision)

Like scripts/demo.sh it keeps its configuration in a temporary directory. It
needs Debian's Chromium (/usr/bin/chromium) and the test extra (Playwright);
when pngquant is installed the image is reduced to a palette to stay small.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
RECALL = str(Path(sys.executable).parent / "recall")
QUESTION = sys.argv[2] if len(sys.argv) > 2 else "what did we decide about the backup tool"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images" / "page-search.png"
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, **{f"XDG_{kind}_HOME": f"{scratch}/{kind.lower()}" for kind in ("CONFIG", "STATE", "CACHE")}}
        sample = ROOT / "examples" / "sample"
        for step in (["init", "--notes", str(sample / "notes"), "--tasks", str(sample / "todo.txt")], ["refresh"]):
            subprocess.run([RECALL, *step], env=env, check=True, capture_output=True)
        server = subprocess.Popen([RECALL, "serve", "--addr", "127.0.0.1:0"], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert server.stdout is not None
            url = server.stdout.readline().rsplit(" at ", 1)[1].strip()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch_persistent_context(
                    f"{scratch}/chromium", executable_path="/usr/bin/chromium", headless=True, args=FLAGS,
                    viewport={"width": 960, "height": 900},
                )
                page = browser.new_page()
                page.goto(url)
                page.get_by_label("Question").fill(QUESTION)
                page.get_by_label("Question").press("Enter")
                page.wait_for_selector("section.outcome")
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out), full_page=True)
                browser.close()
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    if shutil.which("pngquant"):
        subprocess.run(["pngquant", "--force", "--quality", "60-85", "--speed", "1", "--output", str(out), str(out)],
                       check=True)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
