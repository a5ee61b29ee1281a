"""recall version: the installed distribution's version, and the commit it was built from."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from broker.surfaces.streams import Streams

HELP = "print the version"
EXIT_CODES = """exit codes:
  0  printed
  1  bad usage"""

DISTRIBUTION = "recall-broker"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print as JSON")


def installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from broker import __version__

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a source tree that was never installed
        return __version__


def source_commit() -> str | None:
    """The commit of a git checkout the code runs from (an editable install), if any."""
    package_dir = Path(__file__).resolve().parents[3]
    if not (package_dir / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(package_dir), "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def run(args: argparse.Namespace, io: Streams) -> int:
    version, commit = installed_version(), source_commit()
    if args.json:
        import orjson

        io.stdout.write(orjson.dumps({"version": version, "commit": commit}).decode() + "\n")
    else:
        io.stdout.write(f"recall {version}" + (f" (commit {commit})" if commit else "") + "\n")
    return 0
