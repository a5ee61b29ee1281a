"""Render installed manual pages to markdown notes for an evaluation corpus.

    python eval/corpora/man_pages.py OUT_DIR PAGE_FILE...

Each page is formatted by ``man`` at 80 columns, its running header and footer
dropped, the seven-space body indent removed, and every section name (a line
starting in column one) made a level-2 heading, every subsection name (three
spaces in) a level-3 one, under a ``# name(section)``
title. The text is otherwise man's own. ``OUT_DIR/<name>.md`` is written; a
page whose name is already taken (a link to another page) is skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

_PAGE = re.compile(r"^(?P<name>.+)\.(?P<section>[1-9][a-z]*)(?:\.gz)?$")
BODY_INDENT = 7
SUBSECTION = re.compile(r"^ {3}\S")  # man indents a subsection name by three spaces


def render(page: Path) -> str:
    env = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "", "LC_ALL": "C.UTF-8"}
    shown = subprocess.run(["man", "--nh", "--nj", "-l", str(page)], env=env, capture_output=True, check=True).stdout
    plain = subprocess.run(["col", "-bx"], input=shown, capture_output=True, check=True).stdout
    return plain.decode("utf-8", errors="replace")


def to_markdown(name: str, section: str, text: str) -> str:
    lines = text.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    body = lines[1:-1]  # man's running header and footer
    out = [f"# {name}({section})", ""]
    for line in body:
        if line and not line[0].isspace():
            if out[-1] != "":
                out.append("")
            out += [f"## {line.strip()}", ""]
        elif SUBSECTION.match(line):
            if out[-1] != "":
                out.append("")
            out += [f"### {line.strip()}", ""]
        else:
            text = line[BODY_INDENT:] if line[:BODY_INDENT].isspace() else line.strip()
            # a line markdown would read as a heading (a shell prompt, a comment) stays indented
            out.append("    " + text.lstrip() if text.lstrip().startswith("#") and len(text) - len(text.lstrip()) < 4 else text)
    collapsed: list[str] = []
    for line in out:
        if line.strip() or (collapsed and collapsed[-1].strip()):
            collapsed.append(line.rstrip())
    return "\n".join(collapsed).rstrip() + "\n"


def main(argv: list[str]) -> int:
    out_dir = Path(argv[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    seen: set[Path] = set()
    for arg in argv[1:]:
        page = Path(arg)
        match = _PAGE.match(page.name)
        if not match:
            raise SystemExit(f"{page}: not a manual page file name")
        real = page.resolve()
        target = out_dir / f"{match['name']}.md"
        if real in seen or target.exists():
            continue
        seen.add(real)
        target.write_text(to_markdown(match["name"], match["section"], render(page)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
