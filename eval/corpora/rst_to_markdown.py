"""Turn reStructuredText section titles into markdown headings; keep every other line.

    python eval/corpora/rst_to_markdown.py SRC_DIR OUT_DIR

Every ``*.rst.txt`` or ``*.rst`` file under SRC_DIR becomes ``<stem>.md`` at the
same relative place under OUT_DIR. A title is a line of text under (and perhaps
over) a line of one repeated punctuation character at least as long; its level
is the order in which the file first uses that adornment, as reStructuredText
defines it. The adornment lines are dropped, and a line that markdown would read as a
heading (a code comment starting within three spaces) is indented by four;
nothing else changes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_HASH_LINE = re.compile(r"^ {0,3}#")
_ADORNMENT = re.compile(r"^([=\-~^*#\"'`:.+_])\1{2,}\s*$")


def _adornment(line: str) -> str | None:
    match = _ADORNMENT.match(line)
    return match.group(1) if match else None


def convert(text: str) -> str:
    lines = text.splitlines()
    styles: list[tuple[str, bool]] = []
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = _adornment(line)
        title_at = i + 1 if over else i
        if title_at + 1 < len(lines):
            title = lines[title_at]
            under = _adornment(lines[title_at + 1])
            fits = under and title.strip() and not _adornment(title) and len(lines[title_at + 1].rstrip()) >= len(title.strip())
            if fits and (not over or over == under) and not title.startswith(" " * 4):
                style = (under or "", bool(over))
                if style not in styles:
                    styles.append(style)
                level = min(styles.index(style) + 1, 6)
                out.append(f"{'#' * level} {title.strip()}")
                i = title_at + 2
                continue
        # a line markdown would read as a heading (a code comment) is indented past it
        out.append("    " + line.lstrip() if _HASH_LINE.match(line) else line)
        i += 1
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    src, dst = Path(argv[0]), Path(argv[1])
    for path in sorted(src.rglob("*.rst*")):
        stem = path.name.removesuffix(".txt").removesuffix(".rst")
        target = dst / path.relative_to(src).parent / f"{stem}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(convert(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
