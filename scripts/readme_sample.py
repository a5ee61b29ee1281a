"""Keep the README's sample output what the bundled sample really prints.

    python scripts/readme_sample.py          rewrite the block in README.md
    python scripts/readme_sample.py --check  exit 1 when the block is out of date

The block sits between ``<!-- sample:begin -->`` and ``<!-- sample:end -->``. It is
produced by running the installed ``recall`` over ``examples/sample`` in a
throwaway configuration, exactly as ``scripts/demo.sh`` does. Elapsed times vary
from run to run, so ``--check`` compares with them masked.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BEGIN, END = "<!-- sample:begin -->", "<!-- sample:end -->"
QUESTION = "how do we restore the database from a backup"
QUERY_ARGS = ["query", "--limit", "3", QUESTION]
ELAPSED = re.compile(r"elapsed \d+(\.\d+)?(ns|us|ms|s)\b")


def recall_executable() -> Path:
    return Path(sys.executable).parent / "recall"


def sample_output() -> str:
    """Configure the sample in a temp home, index it, and return the query's transcript."""
    recall = str(recall_executable())
    with tempfile.TemporaryDirectory(prefix="recall-sample-") as home:
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": f"{home}/config",
            "XDG_STATE_HOME": f"{home}/state",
            "XDG_CACHE_HOME": f"{home}/cache",
            "RECALL_DAEMON": "0",
        }
        env.pop("RECALL_SERVER", None)
        sample = ROOT / "examples" / "sample"
        for setup in (
            ["init", "--notes", str(sample / "notes"), "--tasks", str(sample / "todo.txt")],
            ["refresh"],
        ):
            subprocess.run([recall, *setup], env=env, check=True, capture_output=True, cwd=ROOT)
        done = subprocess.run([recall, *QUERY_ARGS], env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"readme_sample: the sample query exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def block(output: str) -> str:
    shown = " ".join(f'"{a}"' if " " in a else a for a in QUERY_ARGS)
    return f"{BEGIN}\n```\n$ recall {shown}\n{output.rstrip()}\n```\n{END}"


def current_block(readme: str) -> str:
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"readme_sample: {README} has no {BEGIN} ... {END} block")
    return readme[start : end + len(END)]


def main(argv: list[str]) -> int:
    readme = README.read_text(encoding="utf-8")
    old, new = current_block(readme), block(sample_output())
    if "--check" in argv:
        if ELAPSED.sub("elapsed _", old) == ELAPSED.sub("elapsed _", new):
            return 0
        sys.stderr.write(
            "README.md's sample output is out of date; run: python scripts/readme_sample.py\n"
        )
        return 1
    README.write_text(readme.replace(old, new), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
